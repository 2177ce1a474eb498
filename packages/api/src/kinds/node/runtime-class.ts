/**
 * node.platform RuntimeClass in v1 and v1beta1 (Kubernetes 1.21 serves both, with the same fields): a container
 * runtime configuration pods select with `spec.runtimeClassName`.
 */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, req, t } from '../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';
import { TolerationSchema } from '../core/v1/types';
import { kindInVersion } from '../versions';

/** The node API group. */
export const NODE_GROUP = 'node.platform';

const P = schemaPrefix(NODE_GROUP, 'v1');

const OverheadSchema = object(`${P}Overhead`, {
  podFixed: opt(1, t.map(t.quantity()), 'Resources a pod of this class uses beyond its containers.'),
});
const SchedulingSchema = object(`${P}Scheduling`, {
  nodeSelector: opt(1, t.map(t.string()), 'Labels the nodes running pods of this class have.'),
  tolerations: opt(2, t.array(ref(TolerationSchema), { listType: 'atomic' }), 'Tolerations added to the pods.'),
});

/** RuntimeClass, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RuntimeClassSchema = object(
  `${P}RuntimeClass`,
  {
    ...OBJECT_HEAD,
    handler: req(2, t.string(), 'The CRI handler (a DNS-1123 label) that runs pods of this class.'),
    overhead: opt(3, ref(OverheadSchema), 'Overhead of running a pod of this class.'),
    scheduling: opt(4, ref(SchedulingSchema), 'Nodes that support this class.'),
  },
  { description: 'RuntimeClass defines a class of container runtime supported in the cluster.' },
);
/** A RuntimeClass object in its JSON form. */
export type RuntimeClass = Static<typeof RuntimeClassSchema>;

/** The RuntimeClass kind in node.platform/v1. */
export const RuntimeClassKind = defineKind({
  group: NODE_GROUP,
  version: 'v1',
  kind: 'RuntimeClass',
  plural: 'runtimeclasses',
  scope: 'Cluster',
  schema: RuntimeClassSchema,
  columns: [
    { name: 'Handler', type: 'string', description: 'The CRI handler.', cell: (o) => o.handler ?? '' },
    AGE_COLUMN,
  ],
});

/** The RuntimeClass kind in node.platform/v1beta1. */
export const RuntimeClassV1beta1Kind = kindInVersion(RuntimeClassKind, 'v1beta1');
