/** core/v1 ReplicationController: keeps a number of pod replicas running (the predecessor of ReplicaSet). */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import { formatLabels, workloadWideColumns } from '../../printing';
import { defaultPodTemplate } from './pod-defaults';
import { PodTemplateSpecSchema } from './types';

const P = schemaPrefix('', 'v1');

/** ReplicationControllerSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicationControllerSpecSchema = object(`${P}ReplicationControllerSpec`, {
  replicas: opt(1, ptr(t.int32()), 'Number of desired replicas. Defaults to 1.'),
  minReadySeconds: opt(4, t.int32(), 'Seconds a new pod must be ready to count as available.'),
  selector: opt(2, t.map(t.string()), "Label query over pods; defaults to the template's labels."),
  template: opt(3, ref(PodTemplateSpecSchema), 'The pods created when replicas are missing.'),
});

/** ReplicationControllerCondition, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicationControllerConditionSchema = object(`${P}ReplicationControllerCondition`, {
  type: req(1, t.string()),
  status: req(2, t.enumOf(['True', 'False', 'Unknown'])),
  lastTransitionTime: opt(3, t.time()),
  reason: opt(4, t.string()),
  message: opt(5, t.string()),
});

/** ReplicationControllerStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicationControllerStatusSchema = object(`${P}ReplicationControllerStatus`, {
  replicas: req(1, t.int32(), 'Most recently observed number of replicas.'),
  fullyLabeledReplicas: opt(2, t.int32()),
  readyReplicas: opt(4, t.int32()),
  availableReplicas: opt(5, t.int32()),
  observedGeneration: opt(3, t.int64()),
  conditions: opt(
    6,
    t.array(ref(ReplicationControllerConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
  ),
});

/** ReplicationController, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ReplicationControllerSchema = object(
  `${P}ReplicationController`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(ReplicationControllerSpecSchema), 'Desired behavior of the replication controller.'),
    status: opt(3, ref(ReplicationControllerStatusSchema), 'Most recently observed status. Read-only.'),
  },
  { description: 'ReplicationController represents the configuration of a replication controller.' },
);
/** A ReplicationController object in its JSON form. */
export type ReplicationController = Static<typeof ReplicationControllerSchema>;

/** The ReplicationController kind: discovery facts, defaults, printer columns and field selectors. */
export const ReplicationControllerKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'ReplicationController',
  plural: 'replicationcontrollers',
  shortNames: ['rc'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: {
    status: { verbs: ['get', 'patch', 'update'] },
    scale: { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
  },
  schema: ReplicationControllerSchema,
  defaults(rc) {
    const spec = (rc.spec ??= {});
    const labels = spec.template?.metadata?.labels;
    if (labels) {
      if (!spec.selector || Object.keys(spec.selector).length === 0) spec.selector = { ...labels };
      const meta = (rc.metadata ??= {});
      if (!meta.labels || Object.keys(meta.labels).length === 0) meta.labels = { ...labels };
    }
    spec.replicas ??= 1;
    defaultPodTemplate(spec.template);
  },
  columns: [
    {
      name: 'Desired',
      type: 'integer',
      description: 'Number of desired pods.',
      cell: (o) => o.spec?.replicas ?? 0,
    },
    {
      name: 'Current',
      type: 'integer',
      description: 'Number of actual replicas.',
      cell: (o) => o.status?.replicas ?? 0,
    },
    {
      name: 'Ready',
      type: 'integer',
      description: 'Number of ready replicas.',
      cell: (o) => o.status?.readyReplicas ?? 0,
    },
    AGE_COLUMN,
    ...workloadWideColumns<ReplicationController>(
      (o) => o.spec?.template,
      () => undefined,
    ).slice(0, 2),
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      description: 'Label query over the pods.',
      cell: (o) => formatLabels(o.spec?.selector),
    },
  ],
  fields: { 'status.replicas': (o) => String(o.status?.replicas ?? 0) },
});
