/**
 * The FlowSchemas and PriorityLevelConfigurations the API server keeps (model: Kubernetes 1.21
 * `apiserver/pkg/apis/flowcontrol/bootstrap/default.go`), renamed to this platform as the RBAC bootstrap policy is:
 * `kube-system` is `system`, the `kube-*` components are ours (`system:platform-controller-manager`, the
 * `platform-controller-manager` schema ...), and `apf.kubernetes.io/autoupdate-spec` is `apf.platform.io/autoupdate-spec`.
 *
 * Mandatory objects (`exempt`, `catch-all`) are recreated when deleted and have their spec put back when changed;
 * suggested ones are created when missing and updated while their autoupdate annotation says `"true"`.
 * Pure data: every call builds fresh objects.
 */
import {
  FLOWCONTROL_GROUP,
  type FlowSchema,
  type FlowSubject,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
} from '@platform/api';

import { CONTROLLER_MANAGER_USER, SCHEDULER_USER, SYSTEM_NAMESPACE } from '../server/bootstrap/rbac-policy';

/** `"true"`: the server keeps the object's spec as it bootstraps it; `"false"`: the spec is the user's. */
export const AUTOUPDATE_SPEC_ANNOTATION = 'apf.platform.io/autoupdate-spec';

const API_VERSION = `${FLOWCONTROL_GROUP}/v1beta1`;

function meta(name: string): { name: string; annotations: Record<string, string> } {
  return { name, annotations: { [AUTOUPDATE_SPEC_ANNOTATION]: 'true' } };
}

function limited(
  name: string,
  shares: number,
  queuing?: { queues: number; handSize: number; queueLengthLimit: number },
): PriorityLevelConfiguration {
  return {
    apiVersion: API_VERSION,
    kind: 'PriorityLevelConfiguration',
    metadata: meta(name),
    spec: {
      type: 'Limited',
      limited: {
        assuredConcurrencyShares: shares,
        limitResponse: queuing ? { type: 'Queue', queuing } : { type: 'Reject' },
      },
    },
  };
}

const groups = (...names: string[]): FlowSubject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): FlowSubject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const systemServiceAccounts = (): FlowSubject[] => [
  { kind: 'ServiceAccount', serviceAccount: { namespace: SYSTEM_NAMESPACE, name: '*' } },
];

/** Every resource and every non-resource URL, for `subjects`. */
function all(subjects: FlowSubject[]): PolicyRulesWithSubjects {
  return {
    subjects,
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  };
}

function flowSchema(
  name: string,
  priorityLevel: string,
  matchingPrecedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' | undefined,
  ...rules: PolicyRulesWithSubjects[]
): FlowSchema {
  return {
    apiVersion: API_VERSION,
    kind: 'FlowSchema',
    metadata: meta(name),
    spec: {
      priorityLevelConfiguration: { name: priorityLevel },
      matchingPrecedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules,
    },
  };
}

/** The mandatory priority levels: `exempt` and `catch-all`. */
export function mandatoryPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    { apiVersion: API_VERSION, kind: 'PriorityLevelConfiguration', metadata: meta('exempt'), spec: { type: 'Exempt' } },
    limited('catch-all', 5),
  ];
}

/** The mandatory flow schemas: `system:masters` exempt, everyone else caught by `catch-all`. */
export function mandatoryFlowSchemas(): FlowSchema[] {
  return [
    flowSchema('exempt', 'exempt', 1, undefined, all(groups('system:masters'))),
    flowSchema(
      'catch-all',
      'catch-all',
      10000,
      'ByUser',
      all(groups('system:unauthenticated', 'system:authenticated')),
    ),
  ];
}

/** The suggested priority levels. */
export function suggestedPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    limited('system', 30, { queues: 64, handSize: 6, queueLengthLimit: 50 }),
    limited('node-high', 40, { queues: 64, handSize: 6, queueLengthLimit: 50 }),
    limited('leader-election', 10, { queues: 16, handSize: 4, queueLengthLimit: 50 }),
    limited('workload-high', 40, { queues: 128, handSize: 6, queueLengthLimit: 50 }),
    limited('workload-low', 100, { queues: 128, handSize: 6, queueLengthLimit: 50 }),
    limited('global-default', 20, { queues: 128, handSize: 6, queueLengthLimit: 50 }),
  ];
}

const LEADER_ELECTION_VERBS = ['get', 'create', 'update'];

/** The suggested flow schemas. */
export function suggestedFlowSchemas(): FlowSchema[] {
  return [
    flowSchema('system-nodes', 'system', 500, 'ByUser', all(groups('system:nodes'))),
    flowSchema('system-node-high', 'node-high', 400, 'ByUser', {
      subjects: groups('system:nodes'),
      resourceRules: [
        { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true, namespaces: ['*'] },
        { verbs: ['*'], apiGroups: ['coordination.platform'], resources: ['leases'], namespaces: ['*'] },
      ],
    }),
    flowSchema('probes', 'exempt', 2, undefined, {
      subjects: groups('system:unauthenticated', 'system:authenticated'),
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
    }),
    flowSchema('system-leader-election', 'leader-election', 100, 'ByUser', {
      subjects: [...users(CONTROLLER_MANAGER_USER, SCHEDULER_USER), ...systemServiceAccounts()],
      resourceRules: [
        {
          verbs: LEADER_ELECTION_VERBS,
          apiGroups: [''],
          resources: ['endpoints', 'configmaps'],
          namespaces: [SYSTEM_NAMESPACE],
        },
        {
          verbs: LEADER_ELECTION_VERBS,
          apiGroups: ['coordination.platform'],
          resources: ['leases'],
          namespaces: ['*'],
        },
      ],
    }),
    flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', {
      subjects: systemServiceAccounts(),
      resourceRules: [
        { verbs: LEADER_ELECTION_VERBS, apiGroups: [''], resources: ['endpoints', 'configmaps'], namespaces: ['*'] },
        {
          verbs: LEADER_ELECTION_VERBS,
          apiGroups: ['coordination.platform'],
          resources: ['leases'],
          namespaces: ['*'],
        },
      ],
    }),
    flowSchema('platform-controller-manager', 'workload-high', 800, 'ByNamespace', all(users(CONTROLLER_MANAGER_USER))),
    flowSchema('platform-scheduler', 'workload-high', 800, 'ByNamespace', all(users(SCHEDULER_USER))),
    flowSchema('system-service-accounts', 'workload-high', 900, 'ByNamespace', all(systemServiceAccounts())),
    flowSchema('service-accounts', 'workload-low', 9000, 'ByUser', all(groups('system:serviceaccounts'))),
    flowSchema(
      'global-default',
      'global-default',
      9900,
      'ByUser',
      all(groups('system:unauthenticated', 'system:authenticated')),
    ),
  ];
}
