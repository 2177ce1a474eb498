/** core/v1 ServiceAccount: an identity for processes in pods. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { LocalObjectReferenceSchema, ObjectReferenceSchema } from './types';

const P = schemaPrefix('', 'v1');

/** ServiceAccount, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ServiceAccountSchema = object(
  `${P}ServiceAccount`,
  {
    ...OBJECT_HEAD,
    secrets: opt(
      2,
      t.array(ref(ObjectReferenceSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'Secrets pods running as this service account may use.',
    ),
    imagePullSecrets: opt(3, t.array(ref(LocalObjectReferenceSchema)), 'Secrets used to pull images of its pods.'),
    automountServiceAccountToken: opt(4, ptr(t.bool()), 'Whether pods get an API token mounted.'),
  },
  {
    description:
      'ServiceAccount binds together a name understood by users, a principal that can be authenticated and authorized, and a set of secrets.',
  },
);
/** A ServiceAccount object in its JSON form. */
export type ServiceAccount = Static<typeof ServiceAccountSchema>;

/** The ServiceAccount kind: discovery facts, defaults, printer columns and field selectors. */
export const ServiceAccountKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  shortNames: ['sa'],
  scope: 'Namespaced',
  subresources: {
    token: { kind: { group: 'authentication.platform', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] },
  },
  schema: ServiceAccountSchema,
  columns: [
    {
      name: 'Secrets',
      type: 'string',
      description: 'Number of secrets of the service account.',
      cell: (o) => o.secrets?.length ?? 0,
    },
    AGE_COLUMN,
  ],
});
