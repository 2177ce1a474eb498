/** core/v1 Pod: a group of containers run together on one node. */
import { type Static } from '@sinclair/typebox';

import { object, opt, ref } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { defaultPodOnly, defaultPodSpec } from './pod-defaults';
import { PodSpecSchema, PodStatusSchema } from './types';

const P = schemaPrefix('', 'v1');

/** Pod, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PodSchema = object(
  `${P}Pod`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(PodSpecSchema), 'Specification of the desired behavior of the pod.'),
    status: opt(3, ref(PodStatusSchema), 'Most recently observed status of the pod. Read-only.'),
  },
  { description: 'Pod is a collection of containers that can run on a host.' },
);
/** A Pod object in its JSON form. */
export type Pod = Static<typeof PodSchema>;

/** The reason a pod is reported unknown when its node stopped answering (Kubernetes' `NodeUnreachablePodReason`). */
export const NODE_UNREACHABLE_POD_REASON = 'NodeLost';

/** What `kubectl get pods` prints for a pod: ready containers, the status reason and the restart count. */
export interface PodSummary {
  ready: number;
  total: number;
  reason: string;
  restarts: number;
}

/** Kubernetes' `printPod` logic: init container progress, waiting/terminated reasons, `Terminating`. */
export function podSummary(pod: Pod): PodSummary {
  const spec = pod.spec;
  const status = pod.status ?? {};
  const total = spec?.containers?.length ?? 0;
  let ready = 0;
  let restarts = 0;
  let reason: string = status.reason || status.phase || '';
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    if (!c) continue;
    restarts += c.restartCount ?? 0;
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (terminated) {
      if (!terminated.reason) {
        reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode ?? 0}`;
      } else {
        reason = `Init:${terminated.reason}`;
      }
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${spec?.initContainers?.length ?? 0}`;
    }
    initializing = true;
    break;
  }
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      if (!c) continue;
      restarts += c.restartCount ?? 0;
      const waiting = c.state?.waiting;
      const terminated = c.state?.terminated;
      if (waiting?.reason) {
        reason = waiting.reason;
      } else if (terminated?.reason) {
        reason = terminated.reason;
      } else if (terminated) {
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`;
      } else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    // Back to "Running" when a container still runs after another completed.
    if (reason === 'Completed' && hasRunning) {
      const readyCondition = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
      reason = readyCondition ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata?.deletionTimestamp && status.reason === NODE_UNREACHABLE_POD_REASON) reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp) reason = 'Terminating';
  return { ready, total, reason, restarts };
}

function readinessGates(pod: Pod): string {
  const gates = pod.spec?.readinessGates ?? [];
  if (gates.length === 0) return '<none>';
  let trueConditions = 0;
  for (const gate of gates) {
    const condition = (pod.status?.conditions ?? []).find((c) => c.type === gate.conditionType);
    if (condition?.status === 'True') trueConditions++;
  }
  return `${trueConditions}/${gates.length}`;
}

/** The Pod kind: discovery facts, defaults, printer columns and field selectors. */
export const PodKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  shortNames: ['po'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: {
    status: { verbs: ['get', 'patch', 'update'] },
    binding: { kind: { group: '', version: 'v1', kind: 'Binding' }, verbs: ['create'] },
    eviction: { kind: { group: 'policy', version: 'v1beta1', kind: 'Eviction' }, verbs: ['create'] },
    // Served by the node agent of the pod's node, through the API server.
    log: { verbs: ['get'] },
    exec: { verbs: ['create', 'get'] },
    attach: { verbs: ['create', 'get'] },
    portforward: { verbs: ['create', 'get'] },
  },
  schema: PodSchema,
  defaults(pod) {
    if (!pod.spec) return;
    defaultPodSpec(pod.spec);
    defaultPodOnly(pod.spec);
  },
  columns: [
    {
      name: 'Ready',
      type: 'string',
      description: 'The aggregate readiness state of this pod for accepting traffic.',
      cell: (o) => {
        const s = podSummary(o);
        return `${s.ready}/${s.total}`;
      },
    },
    {
      name: 'Status',
      type: 'string',
      description: 'The aggregate status of the containers in this pod.',
      cell: (o) => podSummary(o).reason,
    },
    {
      name: 'Restarts',
      type: 'integer',
      description: 'The number of times the containers in this pod have been restarted.',
      cell: (o) => podSummary(o).restarts,
    },
    AGE_COLUMN,
    {
      name: 'IP',
      type: 'string',
      priority: 1,
      description: 'IP address allocated to the pod.',
      cell: (o) => o.status?.podIPs?.[0]?.ip || o.status?.podIP || '<none>',
    },
    {
      name: 'Node',
      type: 'string',
      priority: 1,
      description: 'Name of the node this pod is assigned to.',
      cell: (o) => o.spec?.nodeName || '<none>',
    },
    {
      name: 'Nominated Node',
      type: 'string',
      priority: 1,
      description: 'Node where this pod preempted other pods.',
      cell: (o) => o.status?.nominatedNodeName || '<none>',
    },
    {
      name: 'Readiness Gates',
      type: 'string',
      priority: 1,
      description: 'Readiness gates that are True, of all readiness gates.',
      cell: (o) => readinessGates(o),
    },
  ],
  fields: {
    'spec.nodeName': (o) => o.spec?.nodeName ?? '',
    'spec.restartPolicy': (o) => o.spec?.restartPolicy ?? '',
    'spec.schedulerName': (o) => o.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (o) => o.spec?.serviceAccountName ?? '',
    'status.phase': (o) => o.status?.phase ?? '',
    'status.podIP': (o) => o.status?.podIPs?.[0]?.ip ?? o.status?.podIP ?? '',
    'status.nominatedNodeName': (o) => o.status?.nominatedNodeName ?? '',
  },
});
