/** core/v1 Node: a machine that runs pods. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import {
  AttachedVolumeSchema,
  ContainerImageSchema,
  NodeAddressSchema,
  NodeConditionSchema,
  NodeConfigSourceSchema,
  NodeConfigStatusSchema,
  NodeDaemonEndpointsSchema,
  NodeSystemInfoSchema,
  TaintSchema,
} from './types';

const P = schemaPrefix('', 'v1');

/** NodeSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NodeSpecSchema = object(`${P}NodeSpec`, {
  podCIDR: opt(1, t.string(), 'Pod IP range assigned to the node.'),
  podCIDRs: opt(7, t.array(t.string(), { patchStrategy: 'merge' }), 'Pod IP ranges assigned to the node.'),
  providerID: opt(3, t.string(), 'ID of the node assigned by the cloud provider.'),
  unschedulable: opt(4, t.bool(), 'If true, new pods are not scheduled onto the node.'),
  taints: opt(5, t.array(ref(TaintSchema)), "The node's taints."),
  configSource: opt(6, ref(NodeConfigSourceSchema), 'Deprecated.'),
  externalID: opt(2, t.string(), 'Deprecated.'),
});

/** NodeStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NodeStatusSchema = object(`${P}NodeStatus`, {
  capacity: opt(1, t.map(t.quantity()), 'Total resources of the node.'),
  allocatable: opt(2, t.map(t.quantity()), 'Resources available for scheduling. Defaults to capacity.'),
  phase: opt(3, t.string(), 'Deprecated; never populated.'),
  conditions: opt(
    4,
    t.array(ref(NodeConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
    'Current observed node conditions.',
  ),
  addresses: opt(
    5,
    t.array(ref(NodeAddressSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
    'Addresses reachable to the node.',
  ),
  daemonEndpoints: opt(6, ref(NodeDaemonEndpointsSchema), 'Endpoints of daemons running on the node.'),
  nodeInfo: opt(7, ref(NodeSystemInfoSchema), 'Identifiers and versions of the node.'),
  images: opt(8, t.array(ref(ContainerImageSchema)), 'Container images on the node.'),
  volumesInUse: opt(9, t.array(t.string())),
  volumesAttached: opt(10, t.array(ref(AttachedVolumeSchema))),
  config: opt(11, ref(NodeConfigStatusSchema), 'Deprecated.'),
});

/** Node, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NodeSchema = object(
  `${P}Node`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(NodeSpecSchema), 'Behavior of the node.'),
    status: opt(3, ref(NodeStatusSchema), 'Most recently observed status of the node. Read-only.'),
  },
  { description: 'Node is a worker node that runs pods.' },
);
/** A Node object in its JSON form. */
export type Node = Static<typeof NodeSchema>;

/** Label prefixes naming a node's roles (`node-role.platform/<role>`; the Kubernetes spelling is read too). */
export const NODE_ROLE_LABEL_PREFIXES = ['node-role.platform/', 'node-role.kubernetes.io/'];

/** The roles of a node from its labels, sorted (`findNodeRoles`). */
export function nodeRoles(node: Node): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata?.labels ?? {})) {
    for (const prefix of NODE_ROLE_LABEL_PREFIXES) {
      if (key.startsWith(prefix) && key.length > prefix.length) roles.add(key.slice(prefix.length));
    }
    if (key === 'kubernetes.io/role' && value) roles.add(value);
  }
  return [...roles].sort();
}

/** `Ready`, `NotReady` or `Unknown`, then `SchedulingDisabled` when cordoned, comma-separated (`printNode`). */
export function nodeStatus(node: Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  return status.join(',');
}

function address(node: Node, type: string): string {
  return node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>';
}

/** The Node kind: discovery facts, defaults, printer columns and field selectors. */
export const NodeKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  shortNames: ['no'],
  scope: 'Cluster',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: NodeSchema,
  defaults(node) {
    const status = node.status;
    if (status?.capacity && !status.allocatable) status.allocatable = { ...status.capacity };
  },
  columns: [
    { name: 'Status', type: 'string', description: 'The status of the node.', cell: (o) => nodeStatus(o) },
    {
      name: 'Roles',
      type: 'string',
      description: 'The roles of the node.',
      cell: (o) => nodeRoles(o).join(',') || '<none>',
    },
    AGE_COLUMN,
    {
      name: 'Version',
      type: 'string',
      description: 'Version of the node agent.',
      cell: (o) => o.status?.nodeInfo?.kubeletVersion ?? '',
    },
    {
      name: 'Internal-IP',
      type: 'string',
      priority: 1,
      description: 'The internal IP of the node.',
      cell: (o) => address(o, 'InternalIP'),
    },
    {
      name: 'External-IP',
      type: 'string',
      priority: 1,
      description: 'The external IP of the node.',
      cell: (o) => address(o, 'ExternalIP'),
    },
    {
      name: 'OS-Image',
      type: 'string',
      priority: 1,
      description: 'OS image reported by the node.',
      cell: (o) => o.status?.nodeInfo?.osImage || '<unknown>',
    },
    {
      name: 'Kernel-Version',
      type: 'string',
      priority: 1,
      description: 'Kernel version reported by the node.',
      cell: (o) => o.status?.nodeInfo?.kernelVersion || '<unknown>',
    },
    {
      name: 'Container-Runtime',
      type: 'string',
      priority: 1,
      description: 'Container runtime version reported by the node.',
      cell: (o) => o.status?.nodeInfo?.containerRuntimeVersion || '<unknown>',
    },
  ],
  fields: { 'spec.unschedulable': (o) => String(o.spec?.unschedulable ?? false) },
});
