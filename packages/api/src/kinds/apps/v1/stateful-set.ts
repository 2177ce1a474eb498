/** apps/v1 StatefulSet: pods with stable identities and storage. */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { defaultPersistentVolumeClaim, PersistentVolumeClaimSchema } from '../../core/v1/persistent-volume';
import { defaultPodTemplate } from '../../core/v1/pod-defaults';
import { PodTemplateSpecSchema } from '../../core/v1/types';
import { workloadWideColumns } from '../../printing';
import { APPS_V1, workloadCondition } from './types';

/** RollingUpdateStatefulSetStrategy, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RollingUpdateStatefulSetStrategySchema = object(`${APPS_V1}RollingUpdateStatefulSetStrategy`, {
  partition: opt(1, ptr(t.int32()), 'Ordinal at which the StatefulSet is partitioned for updates. Defaults to 0.'),
});

/** StatefulSetUpdateStrategy, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const StatefulSetUpdateStrategySchema = object(`${APPS_V1}StatefulSetUpdateStrategy`, {
  type: opt(1, t.enumOf(['RollingUpdate', 'OnDelete']), 'RollingUpdate (default) or OnDelete.'),
  rollingUpdate: opt(2, ref(RollingUpdateStatefulSetStrategySchema)),
});

/** StatefulSetSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const StatefulSetSpecSchema = object(`${APPS_V1}StatefulSetSpec`, {
  replicas: opt(1, ptr(t.int32()), 'Desired number of replicas. Defaults to 1.'),
  selector: req(2, ref(LabelSelectorSchema), "Label query over pods; must match the template's labels."),
  template: req(3, ref(PodTemplateSpecSchema), 'The pods created; each with a unique identity.'),
  volumeClaimTemplates: opt(4, t.array(ref(PersistentVolumeClaimSchema)), 'Claims the pods may reference.'),
  serviceName: req(5, t.string(), 'The service that governs this StatefulSet.'),
  podManagementPolicy: opt(6, t.enumOf(['OrderedReady', 'Parallel']), 'OrderedReady (default) or Parallel.'),
  updateStrategy: opt(7, ref(StatefulSetUpdateStrategySchema), 'How pods are updated.'),
  revisionHistoryLimit: opt(8, ptr(t.int32()), 'Revisions kept in the history. Defaults to 10.'),
});

/** StatefulSetCondition, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const StatefulSetConditionSchema = workloadCondition('StatefulSetCondition');

/** StatefulSetStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const StatefulSetStatusSchema = object(`${APPS_V1}StatefulSetStatus`, {
  observedGeneration: opt(1, t.int64()),
  replicas: req(2, t.int32(), 'Number of pods created by the controller.'),
  readyReplicas: opt(3, t.int32()),
  currentReplicas: opt(4, t.int32()),
  updatedReplicas: opt(5, t.int32()),
  currentRevision: opt(6, t.string()),
  updateRevision: opt(7, t.string()),
  collisionCount: opt(9, ptr(t.int32())),
  conditions: opt(10, t.array(ref(StatefulSetConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' })),
});

/** StatefulSet, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const StatefulSetSchema = object(
  `${APPS_V1}StatefulSet`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(StatefulSetSpecSchema), 'Desired identities of pods in this set.'),
    status: opt(3, ref(StatefulSetStatusSchema), 'Current status of the pods in this set.'),
  },
  { description: 'StatefulSet represents a set of pods with consistent identities.' },
);
/** A StatefulSet object in its JSON form. */
export type StatefulSet = Static<typeof StatefulSetSchema>;

/** The StatefulSet kind: discovery facts, defaults, printer columns and field selectors. */
export const StatefulSetKind = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  shortNames: ['sts'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: {
    status: { verbs: ['get', 'patch', 'update'] },
    scale: { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
  },
  schema: StatefulSetSchema,
  defaults(s) {
    if (!s.spec) return;
    const spec = s.spec;
    spec.podManagementPolicy ||= 'OrderedReady';
    const strategy = (spec.updateStrategy ??= {});
    if (!strategy.type) {
      strategy.type = 'RollingUpdate';
      strategy.rollingUpdate ??= {};
    }
    if (strategy.type === 'RollingUpdate' && strategy.rollingUpdate) strategy.rollingUpdate.partition ??= 0;
    spec.replicas ??= 1;
    spec.revisionHistoryLimit ??= 10;
    defaultPodTemplate(spec.template);
    for (const claim of spec.volumeClaimTemplates ?? []) defaultPersistentVolumeClaim(claim);
  },
  columns: [
    {
      name: 'Ready',
      type: 'string',
      description: 'Ready pods out of the desired number.',
      cell: (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`,
    },
    AGE_COLUMN,
    ...workloadWideColumns<StatefulSet>(
      (o) => o.spec?.template,
      (o) => o.spec?.selector,
    ).slice(0, 2),
  ],
});
