/**
 * autoscaling/v1 Scale (the body of every `<resource>/scale` subresource) and HorizontalPodAutoscaler.
 * Scale has no resource of its own: its kind declares no verbs, which discovery reads as "subresource only".
 */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';

const P = schemaPrefix('autoscaling', 'v1');

/** ScaleSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ScaleSpecSchema = object(`${P}ScaleSpec`, {
  replicas: opt(1, t.int32(), 'Desired number of instances for the scaled object.'),
});

/** ScaleStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ScaleStatusSchema = object(`${P}ScaleStatus`, {
  replicas: req(1, t.int32(), 'Actual number of observed instances of the scaled object.'),
  selector: opt(2, t.string(), 'Label query over pods, in the string form of a label selector.'),
});

/** Scale, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ScaleSchema = object(
  `${P}Scale`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(ScaleSpecSchema), 'Desired state of the scale.'),
    status: opt(3, ref(ScaleStatusSchema), 'Current status of the scale. Read-only.'),
  },
  { description: 'Scale represents a scaling request for a resource.' },
);
/** A Scale object in its JSON form. */
export type Scale = Static<typeof ScaleSchema>;

/** The Scale kind: discovery facts, defaults, printer columns and field selectors. */
export const ScaleKind = defineKind({
  group: 'autoscaling',
  version: 'v1',
  kind: 'Scale',
  plural: 'scales',
  scope: 'Namespaced',
  verbs: [],
  persisted: false,
  schema: ScaleSchema,
});

/** CrossVersionObjectReference, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CrossVersionObjectReferenceSchema = object(`${P}CrossVersionObjectReference`, {
  kind: req(1, t.string(), 'Kind of the referent.'),
  name: req(2, t.string(), 'Name of the referent.'),
  apiVersion: opt(3, t.string(), 'API version of the referent.'),
});

/** HorizontalPodAutoscalerSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const HorizontalPodAutoscalerSpecSchema = object(`${P}HorizontalPodAutoscalerSpec`, {
  scaleTargetRef: req(1, ref(CrossVersionObjectReferenceSchema), 'The resource to scale.'),
  minReplicas: opt(2, ptr(t.int32()), 'Lower limit of replicas. Defaults to 1.'),
  maxReplicas: req(3, t.int32(), 'Upper limit of replicas.'),
  targetCPUUtilizationPercentage: opt(4, ptr(t.int32()), 'Target average CPU utilization.'),
});

/** HorizontalPodAutoscalerStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const HorizontalPodAutoscalerStatusSchema = object(`${P}HorizontalPodAutoscalerStatus`, {
  observedGeneration: opt(1, ptr(t.int64())),
  lastScaleTime: opt(2, t.time()),
  currentReplicas: req(3, t.int32()),
  desiredReplicas: req(4, t.int32()),
  currentCPUUtilizationPercentage: opt(5, ptr(t.int32())),
});

/** HorizontalPodAutoscaler, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const HorizontalPodAutoscalerSchema = object(
  `${P}HorizontalPodAutoscaler`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(HorizontalPodAutoscalerSpecSchema), 'Behaviour of the autoscaler.'),
    status: opt(3, ref(HorizontalPodAutoscalerStatusSchema), 'Current information about the autoscaler.'),
  },
  { description: 'Configuration of a horizontal pod autoscaler.' },
);
/** A HorizontalPodAutoscaler object in its JSON form. */
export type HorizontalPodAutoscaler = Static<typeof HorizontalPodAutoscalerSchema>;

/** The HorizontalPodAutoscaler kind: discovery facts, defaults, printer columns and field selectors. */
export const HorizontalPodAutoscalerKind = defineKind({
  group: 'autoscaling',
  version: 'v1',
  kind: 'HorizontalPodAutoscaler',
  plural: 'horizontalpodautoscalers',
  shortNames: ['hpa'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: HorizontalPodAutoscalerSchema,
  defaults(hpa) {
    if (hpa.spec) hpa.spec.minReplicas ??= 1;
  },
  columns: [
    {
      name: 'Reference',
      type: 'string',
      description: 'The resource being scaled.',
      cell: (o) => `${o.spec?.scaleTargetRef?.kind ?? ''}/${o.spec?.scaleTargetRef?.name ?? ''}`,
    },
    {
      name: 'Targets',
      type: 'string',
      description: 'Current/target CPU utilization.',
      cell: (o) => {
        const target = o.spec?.targetCPUUtilizationPercentage;
        if (target === undefined) return '<none>';
        const current = o.status?.currentCPUUtilizationPercentage;
        return `${current === undefined ? '<unknown>' : `${current}%`}/${target}%`;
      },
    },
    { name: 'MinPods', type: 'string', description: 'Lower limit of replicas.', cell: (o) => o.spec?.minReplicas ?? 1 },
    { name: 'MaxPods', type: 'string', description: 'Upper limit of replicas.', cell: (o) => o.spec?.maxReplicas ?? 0 },
    {
      name: 'Replicas',
      type: 'string',
      description: 'Current replicas.',
      cell: (o) => o.status?.currentReplicas ?? 0,
    },
    AGE_COLUMN,
  ],
});
