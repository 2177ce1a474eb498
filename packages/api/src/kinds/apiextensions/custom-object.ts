/**
 * The shape every custom object is decoded into: `apiVersion`, `kind`, `metadata` (ObjectMeta, so metadata is
 * pruned to its known fields as in 1.21) and any other field, kept as sent. A CRD's own schema validates, defaults
 * and prunes the rest (packages/apiserver `apiextensions/`); this schema only makes the generic handlers accept
 * the object. Custom objects are never Protobuf: 1.21 serves and stores them as JSON only.
 */
import { type Static } from '@sinclair/typebox';

import { ListMetaSchema } from '../../meta/v1/types';
import { object, opt, ref, t } from '../../schema/schema';
import { OBJECT_HEAD, TYPE_META } from '../../scheme/kind';

/** Any custom object. */
export const CustomObjectSchema = object(
  'io.platform.api.apiextensions.CustomObject',
  { ...OBJECT_HEAD },
  { description: 'An object of a kind a CustomResourceDefinition defines.' },
);
// Unknown fields are the custom object's own: kept here, pruned by the CRD's schema. Server-side apply reads the
// object's fields as it finds them (structured-merge-diff's deduced type), as 1.21 does for unknown fields.
Object.assign(CustomObjectSchema, { additionalProperties: true, 'x-kubernetes-preserve-unknown-fields': true });

/** A list of custom objects. */
export const CustomObjectListSchema = object('io.platform.api.apiextensions.CustomObjectList', {
  ...TYPE_META,
  metadata: opt(1, ref(ListMetaSchema), 'Standard list metadata.'),
  items: opt(2, t.array(ref(CustomObjectSchema)), 'The objects.'),
});

/** A custom object in its JSON form. */
export type CustomObject = Static<typeof CustomObjectSchema> & Record<string, unknown>;
