/**
 * Samples of autoscaling/v2beta1 and of the authorization.platform and admissionregistration.platform v1beta1 kinds
 * (see `samples.ts`), keyed by `apiVersion/kind`; `SAME_AS_GA` lists the kinds whose sample is their v1 kind's.
 */
const META = {
  name: 'sample',
  namespace: 'default',
  uid: '6b1f1b9e-0000-4000-8000-000000000003',
  resourceVersion: '42',
  creationTimestamp: '2021-04-08T12:00:00Z',
  labels: { app: 'web' },
  annotations: { 'example.com/note': 'sample' },
};

const ACCESS_REVIEW_SPEC = {
  resourceAttributes: { namespace: 'default', verb: 'get', group: 'apps', resource: 'deployments', name: 'web' },
  user: 'alice',
  group: ['dev', 'system:authenticated'],
  extra: { 'example.com/team': ['platform'] },
  uid: '1',
};

/** The samples of the kinds these versions define apart from v1's. */
export const BETA_SAMPLES: Record<string, Record<string, unknown>> = {
  'autoscaling/v2beta1/HorizontalPodAutoscaler': {
    metadata: META,
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        {
          type: 'Pods',
          pods: { metricName: 'qps', targetAverageValue: '100', selector: { matchLabels: { app: 'web' } } },
        },
        {
          type: 'Object',
          object: {
            target: { apiVersion: 'networking.platform/v1', kind: 'Ingress', name: 'web' },
            metricName: 'requests',
            targetValue: '2k',
            averageValue: '200',
          },
        },
        { type: 'External', external: { metricName: 'queue', targetAverageValue: '30' } },
        {
          type: 'ContainerResource',
          containerResource: { name: 'memory', container: 'web', targetAverageValue: '512Mi' },
        },
        { type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 70 } },
      ],
    },
    status: {
      observedGeneration: 3,
      lastScaleTime: '2021-04-08T12:00:00Z',
      currentReplicas: 3,
      desiredReplicas: 4,
      currentMetrics: [
        { type: 'Pods', pods: { metricName: 'qps', currentAverageValue: '120' } },
        {
          type: 'Object',
          object: {
            target: { apiVersion: 'networking.platform/v1', kind: 'Ingress', name: 'web' },
            metricName: 'requests',
            currentValue: '2500',
          },
        },
        { type: 'External', external: { metricName: 'queue', currentValue: '12', currentAverageValue: '4' } },
        { type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 85, currentAverageValue: '425m' } },
      ],
      conditions: [
        {
          type: 'AbleToScale',
          status: 'True',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'ReadyForNewScale',
          message: 'ok',
        },
      ],
    },
  },
  'authorization.platform/v1beta1/SubjectAccessReview': {
    spec: ACCESS_REVIEW_SPEC,
    status: { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "dev"' },
  },
  'authorization.platform/v1beta1/LocalSubjectAccessReview': {
    metadata: { namespace: 'default' },
    spec: ACCESS_REVIEW_SPEC,
    status: { allowed: false, denied: true, evaluationError: 'x' },
  },
};

/** [v1 sample, beta kind]: kinds whose v1beta1 sample is their v1 kind's. */
export const SAME_AS_GA: readonly (readonly [string, string])[] = [
  ['authorization.platform/v1/SelfSubjectAccessReview', 'authorization.platform/v1beta1/SelfSubjectAccessReview'],
  ['authorization.platform/v1/SelfSubjectRulesReview', 'authorization.platform/v1beta1/SelfSubjectRulesReview'],
  [
    'admissionregistration.platform/v1/MutatingWebhookConfiguration',
    'admissionregistration.platform/v1beta1/MutatingWebhookConfiguration',
  ],
  [
    'admissionregistration.platform/v1/ValidatingWebhookConfiguration',
    'admissionregistration.platform/v1beta1/ValidatingWebhookConfiguration',
  ],
];
