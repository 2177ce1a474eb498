/** Samples of the flowcontrol.apiserver.platform kinds for the kind tests (every field set once). */
const META = { name: 'sample', uid: '6f1c1c3e-1d8e-4b43-9f1e-5a7d8c9b0a11', resourceVersion: '42', generation: 1 };

/** Keyed like SAMPLES: `<apiVersion>/<kind>`. */
export const FLOWCONTROL_SAMPLES: Record<string, Record<string, unknown>> = {
  'flowcontrol.apiserver.platform/v1beta1/FlowSchema': {
    metadata: META,
    spec: {
      priorityLevelConfiguration: { name: 'workload-low' },
      matchingPrecedence: 9000,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [
            { kind: 'User', user: { name: 'alice' } },
            { kind: 'Group', group: { name: 'system:authenticated' } },
            { kind: 'ServiceAccount', serviceAccount: { namespace: 'system', name: '*' } },
          ],
          resourceRules: [
            { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], clusterScope: true, namespaces: ['*'] },
          ],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] }],
        },
      ],
    },
    status: {
      conditions: [
        {
          type: 'Dangling',
          status: 'False',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'Found',
          message:
            'This FlowSchema references the PriorityLevelConfiguration object named "workload-low" and it exists',
        },
      ],
    },
  },
  'flowcontrol.apiserver.platform/v1beta1/PriorityLevelConfiguration': {
    metadata: META,
    spec: {
      type: 'Limited',
      limited: {
        assuredConcurrencyShares: 20,
        limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
      },
    },
    status: {
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2021-04-08T12:00:00Z', reason: 'R', message: 'm' },
      ],
    },
  },
};
