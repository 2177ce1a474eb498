/** apps/v1 DaemonSet: one pod on every (selected) node. */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { defaultPodTemplate } from '../../core/v1/pod-defaults';
import { PodTemplateSpecSchema } from '../../core/v1/types';
import { formatLabels, workloadWideColumns } from '../../printing';
import { APPS_V1, workloadCondition } from './types';

/** RollingUpdateDaemonSet, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RollingUpdateDaemonSetSchema = object(`${APPS_V1}RollingUpdateDaemonSet`, {
  maxUnavailable: opt(1, t.intOrString(), 'Pods that can be unavailable during the update. Defaults to 1.'),
  maxSurge: opt(2, t.intOrString(), 'Nodes that can run an updated pod next to the old one. Defaults to 0.'),
});

/** DaemonSetUpdateStrategy, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DaemonSetUpdateStrategySchema = object(`${APPS_V1}DaemonSetUpdateStrategy`, {
  type: opt(1, t.enumOf(['RollingUpdate', 'OnDelete']), 'RollingUpdate (default) or OnDelete.'),
  rollingUpdate: opt(2, ref(RollingUpdateDaemonSetSchema)),
});

/** DaemonSetSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DaemonSetSpecSchema = object(`${APPS_V1}DaemonSetSpec`, {
  selector: req(1, ref(LabelSelectorSchema), "Label query over pods; must match the template's labels."),
  template: req(2, ref(PodTemplateSpecSchema), 'The pod created on each node.'),
  updateStrategy: opt(3, ref(DaemonSetUpdateStrategySchema), 'How pods are replaced.'),
  minReadySeconds: opt(4, t.int32(), 'Seconds a new pod must be ready to count as available.'),
  revisionHistoryLimit: opt(6, ptr(t.int32()), 'Old history to retain for rollback. Defaults to 10.'),
});

/** DaemonSetCondition, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DaemonSetConditionSchema = workloadCondition('DaemonSetCondition');

/** DaemonSetStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DaemonSetStatusSchema = object(`${APPS_V1}DaemonSetStatus`, {
  currentNumberScheduled: req(1, t.int32(), 'Nodes running at least one daemon pod that should.'),
  numberMisscheduled: req(2, t.int32(), 'Nodes running the daemon pod that should not.'),
  desiredNumberScheduled: req(3, t.int32(), 'Nodes that should run the daemon pod.'),
  numberReady: req(4, t.int32(), 'Nodes running a ready daemon pod.'),
  observedGeneration: opt(5, t.int64()),
  updatedNumberScheduled: opt(6, t.int32()),
  numberAvailable: opt(7, t.int32()),
  numberUnavailable: opt(8, t.int32()),
  collisionCount: opt(9, ptr(t.int32())),
  conditions: opt(10, t.array(ref(DaemonSetConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' })),
});

/** DaemonSet, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const DaemonSetSchema = object(
  `${APPS_V1}DaemonSet`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(DaemonSetSpecSchema), 'Desired behavior of the daemon set.'),
    status: opt(3, ref(DaemonSetStatusSchema), 'Current status of the daemon set.'),
  },
  { description: 'DaemonSet represents the configuration of a daemon set.' },
);
/** A DaemonSet object in its JSON form. */
export type DaemonSet = Static<typeof DaemonSetSchema>;

/** The DaemonSet kind: discovery facts, defaults, printer columns and field selectors. */
export const DaemonSetKind = defineKind({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  plural: 'daemonsets',
  shortNames: ['ds'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: DaemonSetSchema,
  defaults(ds) {
    if (!ds.spec) return;
    const spec = ds.spec;
    const strategy = (spec.updateStrategy ??= {});
    strategy.type ||= 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const ru = (strategy.rollingUpdate ??= {});
      ru.maxUnavailable ??= 1;
      ru.maxSurge ??= 0;
    }
    spec.revisionHistoryLimit ??= 10;
    defaultPodTemplate(spec.template);
  },
  columns: [
    {
      name: 'Desired',
      type: 'integer',
      description: 'Nodes that should run the daemon pod.',
      cell: (o) => o.status?.desiredNumberScheduled ?? 0,
    },
    {
      name: 'Current',
      type: 'integer',
      description: 'Nodes running the daemon pod.',
      cell: (o) => o.status?.currentNumberScheduled ?? 0,
    },
    { name: 'Ready', type: 'integer', description: 'Ready daemon pods.', cell: (o) => o.status?.numberReady ?? 0 },
    {
      name: 'Up-to-date',
      type: 'integer',
      description: 'Nodes running the updated daemon pod.',
      cell: (o) => o.status?.updatedNumberScheduled ?? 0,
    },
    {
      name: 'Available',
      type: 'integer',
      description: 'Nodes running an available daemon pod.',
      cell: (o) => o.status?.numberAvailable ?? 0,
    },
    {
      name: 'Node Selector',
      type: 'string',
      description: 'Node selector of the daemon pods.',
      cell: (o) => formatLabels(o.spec?.template?.spec?.nodeSelector),
    },
    AGE_COLUMN,
    ...workloadWideColumns<DaemonSet>(
      (o) => o.spec?.template,
      (o) => o.spec?.selector,
    ),
  ],
});
