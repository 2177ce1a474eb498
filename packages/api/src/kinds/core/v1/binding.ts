/** core/v1 Binding: binds a pod to a node (`pods/binding`, used by schedulers). */
import { type Static } from '@sinclair/typebox';

import { object, ref, req } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { ObjectReferenceSchema } from './types';

const P = schemaPrefix('', 'v1');

/** Binding, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const BindingSchema = object(
  `${P}Binding`,
  {
    ...OBJECT_HEAD,
    target: req(2, ref(ObjectReferenceSchema), 'The target object (a Node) to bind to.'),
  },
  { description: 'Binding ties one object to another; for example, a pod is bound to a node by a scheduler.' },
);
/** A Binding object in its JSON form. */
export type Binding = Static<typeof BindingSchema>;

/** The Binding kind: discovery facts, defaults, printer columns and field selectors. */
export const BindingKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Binding',
  plural: 'bindings',
  scope: 'Namespaced',
  verbs: ['create'],
  schema: BindingSchema,
});
