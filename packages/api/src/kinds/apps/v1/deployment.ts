/** apps/v1 Deployment: declarative updates of pods through ReplicaSets. */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { defaultPodTemplate } from '../../core/v1/pod-defaults';
import { PodTemplateSpecSchema } from '../../core/v1/types';
import { workloadWideColumns } from '../../printing';
import { APPS_V1 } from './types';

/** RollingUpdateDeployment, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RollingUpdateDeploymentSchema = object(`${APPS_V1}RollingUpdateDeployment`, {
  maxUnavailable: opt(1, t.intOrString(), 'Pods that can be unavailable during the update. Defaults to 25%.'),
  maxSurge: opt(2, t.intOrString(), 'Pods that can be scheduled above the desired number. Defaults to 25%.'),
});

/** DeploymentStrategy, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DeploymentStrategySchema = object(`${APPS_V1}DeploymentStrategy`, {
  type: opt(1, t.enumOf(['Recreate', 'RollingUpdate']), 'Recreate or RollingUpdate (default).'),
  rollingUpdate: opt(2, ref(RollingUpdateDeploymentSchema), 'Rolling update parameters.'),
});

/** DeploymentSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DeploymentSpecSchema = object(`${APPS_V1}DeploymentSpec`, {
  replicas: opt(1, ptr(t.int32()), 'Number of desired pods. Defaults to 1.'),
  selector: req(2, ref(LabelSelectorSchema), "Label selector for pods; must match the template's labels."),
  template: req(3, ref(PodTemplateSpecSchema), 'The pods that will be created.'),
  strategy: opt(
    4,
    ref(DeploymentStrategySchema, { patchStrategy: 'retainKeys' }),
    'How existing pods are replaced with new ones.',
  ),
  minReadySeconds: opt(5, t.int32(), 'Seconds a new pod must be ready to count as available.'),
  revisionHistoryLimit: opt(6, ptr(t.int32()), 'Old ReplicaSets to retain for rollback. Defaults to 10.'),
  paused: opt(7, t.bool(), 'Indicates that the deployment is paused.'),
  progressDeadlineSeconds: opt(
    9,
    ptr(t.int32()),
    'Seconds for the deployment to make progress before it is failed. Defaults to 600.',
  ),
});

/** DeploymentCondition, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DeploymentConditionSchema = object(`${APPS_V1}DeploymentCondition`, {
  type: req(1, t.string(), 'Available, Progressing or ReplicaFailure.'),
  status: req(2, t.enumOf(['True', 'False', 'Unknown'])),
  lastUpdateTime: opt(6, t.time(), 'The last time this condition was updated.'),
  lastTransitionTime: opt(7, t.time()),
  reason: opt(4, t.string()),
  message: opt(5, t.string()),
});

/** DeploymentStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DeploymentStatusSchema = object(`${APPS_V1}DeploymentStatus`, {
  observedGeneration: opt(1, t.int64(), 'The generation observed by the deployment controller.'),
  replicas: opt(2, t.int32(), 'Total number of pods targeted by this deployment.'),
  updatedReplicas: opt(3, t.int32(), 'Pods that have the desired template.'),
  readyReplicas: opt(7, t.int32(), 'Ready pods targeted by this deployment.'),
  availableReplicas: opt(4, t.int32(), 'Available pods (ready for at least minReadySeconds).'),
  unavailableReplicas: opt(5, t.int32(), 'Pods still required for 100% available capacity.'),
  conditions: opt(
    6,
    t.array(ref(DeploymentConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
    "Latest observations of the deployment's state.",
  ),
  collisionCount: opt(8, ptr(t.int32()), 'Count of hash collisions for the Deployment.'),
});

/** Deployment, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DeploymentSchema = object(
  `${APPS_V1}Deployment`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(DeploymentSpecSchema), 'Desired behavior of the Deployment.'),
    status: opt(3, ref(DeploymentStatusSchema), 'Most recently observed status of the Deployment.'),
  },
  { description: 'Deployment enables declarative updates for Pods and ReplicaSets.' },
);
/** A Deployment object in its JSON form. */
export type Deployment = Static<typeof DeploymentSchema>;

/** The Deployment kind: discovery facts, defaults, printer columns and field selectors. */
export const DeploymentKind = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  shortNames: ['deploy'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: {
    status: { verbs: ['get', 'patch', 'update'] },
    scale: { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
  },
  schema: DeploymentSchema,
  defaults(d) {
    if (!d.spec) return;
    const spec = d.spec;
    spec.replicas ??= 1;
    const strategy = (spec.strategy ??= {});
    strategy.type ||= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const ru = (strategy.rollingUpdate ??= {});
      ru.maxUnavailable ??= '25%';
      ru.maxSurge ??= '25%';
    }
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    defaultPodTemplate(spec.template);
  },
  columns: [
    {
      name: 'Ready',
      type: 'string',
      description: 'Number of ready pods out of the desired number.',
      cell: (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`,
    },
    {
      name: 'Up-to-date',
      type: 'integer',
      description: 'Pods that have the desired template.',
      cell: (o) => o.status?.updatedReplicas ?? 0,
    },
    {
      name: 'Available',
      type: 'integer',
      description: 'Pods available to users.',
      cell: (o) => o.status?.availableReplicas ?? 0,
    },
    AGE_COLUMN,
    ...workloadWideColumns<Deployment>(
      (o) => o.spec?.template,
      (o) => o.spec?.selector,
    ),
  ],
});
