/** Builders of Nodes and Pods for the scheduler's tests. */
import { type Node, type Pod } from '@platform/api';

/** A Node with allocatable cpu, memory and pods (and optional labels, taints, images). */
export function makeNode(
  name: string,
  o: {
    cpu?: string;
    memory?: string;
    pods?: string;
    labels?: Record<string, string>;
    taints?: NonNullable<Node['spec']>['taints'];
    unschedulable?: boolean;
    extra?: Record<string, string>;
    images?: { names: string[]; sizeBytes: number }[];
  } = {},
): Node {
  const allocatable = { cpu: o.cpu ?? '4', memory: o.memory ?? '8Gi', pods: o.pods ?? '110', ...o.extra };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: {
      capacity: allocatable,
      allocatable,
      conditions: [{ type: 'Ready', status: 'True' }],
      ...(o.images ? { images: o.images } : {}),
    },
  } as Node;
}

/** A Pod with one container requesting cpu/memory (and whatever `spec` adds). */
export function makePod(
  name: string,
  o: {
    namespace?: string;
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    nodeName?: string;
    priority?: number;
    spec?: Partial<NonNullable<Pod['spec']>>;
    uid?: string;
  } = {},
): Pod {
  const requests: Record<string, string> = {};
  if (o.cpu) requests.cpu = o.cpu;
  if (o.memory) requests.memory = o.memory;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      labels: o.labels,
      uid: o.uid ?? `uid-${name}`,
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: {
      containers: [
        { name: 'c', image: 'busybox', ...(Object.keys(requests).length ? { resources: { requests } } : {}) },
      ],
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      ...o.spec,
    },
  } as Pod;
}
