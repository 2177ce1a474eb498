/** apps/v1 ReplicaSet: keeps a number of pod replicas running. */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { defaultPodTemplate } from '../../core/v1/pod-defaults';
import { PodTemplateSpecSchema } from '../../core/v1/types';
import { workloadWideColumns } from '../../printing';
import { APPS_V1, workloadCondition } from './types';

/** ReplicaSetSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicaSetSpecSchema = object(`${APPS_V1}ReplicaSetSpec`, {
  replicas: opt(1, ptr(t.int32()), 'Number of desired pods. Defaults to 1.'),
  minReadySeconds: opt(4, t.int32(), 'Seconds a new pod must be ready to count as available.'),
  selector: req(2, ref(LabelSelectorSchema), "Label query over pods; must match the template's labels."),
  template: opt(3, ref(PodTemplateSpecSchema), 'The pods created when replicas are missing.'),
});

/** ReplicaSetCondition, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicaSetConditionSchema = workloadCondition('ReplicaSetCondition');

/** ReplicaSetStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicaSetStatusSchema = object(`${APPS_V1}ReplicaSetStatus`, {
  replicas: req(1, t.int32(), 'Most recently observed number of replicas.'),
  fullyLabeledReplicas: opt(2, t.int32()),
  readyReplicas: opt(4, t.int32()),
  availableReplicas: opt(5, t.int32()),
  observedGeneration: opt(3, t.int64()),
  conditions: opt(6, t.array(ref(ReplicaSetConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' })),
});

/** ReplicaSet, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicaSetSchema = object(
  `${APPS_V1}ReplicaSet`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(ReplicaSetSpecSchema), 'Desired behavior of the ReplicaSet.'),
    status: opt(3, ref(ReplicaSetStatusSchema), 'Most recently observed status of the ReplicaSet.'),
  },
  { description: 'ReplicaSet ensures that a specified number of pod replicas are running at any given time.' },
);
/** A ReplicaSet object in its JSON form. */
export type ReplicaSet = Static<typeof ReplicaSetSchema>;

/** The ReplicaSet kind: discovery facts, defaults, printer columns and field selectors. */
export const ReplicaSetKind = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  plural: 'replicasets',
  shortNames: ['rs'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: {
    status: { verbs: ['get', 'patch', 'update'] },
    scale: { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
  },
  schema: ReplicaSetSchema,
  defaults(rs) {
    if (!rs.spec) return;
    rs.spec.replicas ??= 1;
    defaultPodTemplate(rs.spec.template);
  },
  columns: [
    { name: 'Desired', type: 'integer', description: 'Desired pods.', cell: (o) => o.spec?.replicas ?? 0 },
    { name: 'Current', type: 'integer', description: 'Actual pods.', cell: (o) => o.status?.replicas ?? 0 },
    { name: 'Ready', type: 'integer', description: 'Ready pods.', cell: (o) => o.status?.readyReplicas ?? 0 },
    AGE_COLUMN,
    ...workloadWideColumns<ReplicaSet>(
      (o) => o.spec?.template,
      (o) => o.spec?.selector,
    ),
  ],
  fields: { 'status.replicas': (o) => String(o.status?.replicas ?? 0) },
});
