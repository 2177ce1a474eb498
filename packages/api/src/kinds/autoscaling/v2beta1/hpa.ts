/**
 * autoscaling/v2beta1 HorizontalPodAutoscaler: the first multi-metric version, its targets written as
 * `targetAverageUtilization`, `targetAverageValue` and `targetValue` instead of v2beta2's `MetricTarget`, and no
 * scaling behaviour (kept in an annotation, see `convert.ts`). Stored as autoscaling/v1 like every autoscaler.
 */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../../meta/v1/types';
import { schemaInVersion } from '../../../schema/retarget';
import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { metricFromV2beta1, metricStatusFromV2beta1 } from '../metrics';
import {
  CrossVersionObjectReferenceV2beta2Schema,
  DEFAULT_CPU_UTILIZATION,
  formatHPAMetrics,
  HPA_KIND_FACTS,
  hpaColumns,
  HPAConditionV2beta2Schema,
  type HorizontalPodAutoscalerV2beta2,
} from '../v2beta2/hpa';

type V2Metric = NonNullable<NonNullable<HorizontalPodAutoscalerV2beta2['spec']>['metrics']>[number];
type V2MetricStatus = NonNullable<NonNullable<HorizontalPodAutoscalerV2beta2['status']>['currentMetrics']>[number];

const P = schemaPrefix('autoscaling', 'v2beta1');
const V2BETA2 = schemaPrefix('autoscaling', 'v2beta2');

/** The types v2beta1 shares with v2beta2, field for field. */
const CrossVersionObjectReference = schemaInVersion(CrossVersionObjectReferenceV2beta2Schema, V2BETA2, P);
const Condition = schemaInVersion(HPAConditionV2beta2Schema, V2BETA2, P);
const ResourceMetricSource = object(`${P}ResourceMetricSource`, {
  name: req(1, t.string(), 'Name of the resource.'),
  targetAverageUtilization: opt(2, ptr(t.int32()), 'Target average utilization, in percent of the requests.'),
  targetAverageValue: opt(3, t.quantity(), 'Target average value, as a raw value.'),
});
const ContainerResourceMetricSource = object(`${P}ContainerResourceMetricSource`, {
  name: req(1, t.string(), 'Name of the resource.'),
  targetAverageUtilization: opt(2, ptr(t.int32()), 'Target average utilization, in percent of the requests.'),
  targetAverageValue: opt(3, t.quantity(), 'Target average value, as a raw value.'),
  container: req(4, t.string(), 'Name of the container.'),
});
const PodsMetricSource = object(`${P}PodsMetricSource`, {
  metricName: req(1, t.string(), 'Name of the metric.'),
  targetAverageValue: req(2, t.quantity(), 'Target value of the average of the metric across pods.'),
  selector: opt(3, ref(LabelSelectorSchema), 'Labels narrowing the metric.'),
});
const ObjectMetricSource = object(`${P}ObjectMetricSource`, {
  target: req(1, ref(CrossVersionObjectReference), 'The object the metric describes.'),
  metricName: req(2, t.string(), 'Name of the metric.'),
  targetValue: req(3, t.quantity(), 'Target value of the metric.'),
  selector: opt(4, ref(LabelSelectorSchema), 'Labels narrowing the metric.'),
  averageValue: opt(5, t.quantity(), 'Target value of the average of the metric across pods.'),
});
const ExternalMetricSource = object(`${P}ExternalMetricSource`, {
  metricName: req(1, t.string(), 'Name of the metric.'),
  metricSelector: opt(2, ref(LabelSelectorSchema), 'Labels narrowing the metric.'),
  targetValue: opt(3, t.quantity(), 'Target value of the metric.'),
  targetAverageValue: opt(4, t.quantity(), 'Target value of the average of the metric across pods.'),
});
const MetricSpec = object(`${P}MetricSpec`, {
  type: req(1, t.string(), 'ContainerResource, External, Object, Pods or Resource.'),
  object: opt(2, ref(ObjectMetricSource), 'A metric describing one object.'),
  pods: opt(3, ref(PodsMetricSource), 'A metric of each pod, averaged.'),
  resource: opt(4, ref(ResourceMetricSource), 'A resource of each pod, averaged.'),
  containerResource: opt(7, ref(ContainerResourceMetricSource), 'A resource of one container of each pod.'),
  external: opt(5, ref(ExternalMetricSource), 'A metric from outside the cluster.'),
});
const ResourceMetricStatus = object(`${P}ResourceMetricStatus`, {
  name: req(1, t.string(), 'Name of the resource.'),
  currentAverageUtilization: opt(2, ptr(t.int32()), 'Current average utilization, in percent of the requests.'),
  currentAverageValue: req(3, t.quantity(), 'Current average value, as a raw value.'),
});
const ContainerResourceMetricStatus = object(`${P}ContainerResourceMetricStatus`, {
  name: req(1, t.string(), 'Name of the resource.'),
  currentAverageUtilization: opt(2, ptr(t.int32()), 'Current average utilization, in percent of the requests.'),
  currentAverageValue: req(3, t.quantity(), 'Current average value, as a raw value.'),
  container: req(4, t.string(), 'Name of the container.'),
});
const PodsMetricStatus = object(`${P}PodsMetricStatus`, {
  metricName: req(1, t.string(), 'Name of the metric.'),
  currentAverageValue: req(2, t.quantity(), 'Current average value of the metric across pods.'),
  selector: opt(3, ref(LabelSelectorSchema), 'Labels narrowing the metric.'),
});
const ObjectMetricStatus = object(`${P}ObjectMetricStatus`, {
  target: req(1, ref(CrossVersionObjectReference), 'The object the metric describes.'),
  metricName: req(2, t.string(), 'Name of the metric.'),
  currentValue: req(3, t.quantity(), 'Current value of the metric.'),
  selector: opt(4, ref(LabelSelectorSchema), 'Labels narrowing the metric.'),
  averageValue: opt(5, t.quantity(), 'Current average value of the metric across pods.'),
});
const ExternalMetricStatus = object(`${P}ExternalMetricStatus`, {
  metricName: req(1, t.string(), 'Name of the metric.'),
  metricSelector: opt(2, ref(LabelSelectorSchema), 'Labels narrowing the metric.'),
  currentValue: req(3, t.quantity(), 'Current value of the metric.'),
  currentAverageValue: opt(4, t.quantity(), 'Current average value of the metric across pods.'),
});
const MetricStatus = object(`${P}MetricStatus`, {
  type: req(1, t.string(), 'ContainerResource, External, Object, Pods or Resource.'),
  object: opt(2, ref(ObjectMetricStatus), 'Status of an object metric.'),
  pods: opt(3, ref(PodsMetricStatus), 'Status of a pods metric.'),
  resource: opt(4, ref(ResourceMetricStatus), 'Status of a resource metric.'),
  containerResource: opt(7, ref(ContainerResourceMetricStatus), 'Status of a container resource metric.'),
  external: opt(5, ref(ExternalMetricStatus), 'Status of an external metric.'),
});
const Spec = object(`${P}HorizontalPodAutoscalerSpec`, {
  scaleTargetRef: req(1, ref(CrossVersionObjectReference), 'The resource to scale.'),
  minReplicas: opt(2, ptr(t.int32()), 'Lower limit of replicas. Defaults to 1.'),
  maxReplicas: req(3, t.int32(), 'Upper limit of replicas.'),
  metrics: opt(4, t.array(ref(MetricSpec)), 'Metrics the replica count is computed from.'),
});
const Status = object(`${P}HorizontalPodAutoscalerStatus`, {
  observedGeneration: opt(1, ptr(t.int64()), 'Most recent generation observed.'),
  lastScaleTime: opt(2, t.time(), 'Last time the autoscaler scaled.'),
  currentReplicas: req(3, t.int32(), 'Current number of replicas.'),
  desiredReplicas: req(4, t.int32(), 'Desired number of replicas.'),
  currentMetrics: opt(5, t.array(ref(MetricStatus)), 'Last read state of the metrics.'),
  conditions: opt(6, t.array(ref(Condition)), 'Conditions of the autoscaler.'),
});

/** HorizontalPodAutoscaler in autoscaling/v2beta1, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const HorizontalPodAutoscalerV2beta1Schema = object(
  `${P}HorizontalPodAutoscaler`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(Spec), 'Behaviour of the autoscaler.'),
    status: opt(3, ref(Status), 'Current information about the autoscaler.'),
  },
  { description: 'HorizontalPodAutoscaler is the configuration for a horizontal pod autoscaler.' },
);
/** An autoscaling/v2beta1 HorizontalPodAutoscaler in its JSON form. */
export type HorizontalPodAutoscalerV2beta1 = Static<typeof HorizontalPodAutoscalerV2beta1Schema>;

/**
 * The HorizontalPodAutoscaler kind in autoscaling/v2beta1 (defaults: 1.21's v2beta1 `SetDefaults_HorizontalPodAutoscaler`;
 * the columns are v2beta2's, printed from the metrics in v2beta2's shape as 1.21 prints the internal type).
 */
export const HorizontalPodAutoscalerV2beta1Kind = defineKind({
  ...HPA_KIND_FACTS,
  version: 'v2beta1',
  schema: HorizontalPodAutoscalerV2beta1Schema,
  defaults(hpa) {
    const spec = hpa.spec;
    if (!spec) return;
    spec.minReplicas ??= 1;
    if (!spec.metrics || spec.metrics.length === 0) {
      spec.metrics = [
        { type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: DEFAULT_CPU_UTILIZATION } },
      ];
    }
  },
  columns: hpaColumns<HorizontalPodAutoscalerV2beta1>((o) =>
    formatHPAMetrics(
      o.spec?.metrics?.map((m) => metricFromV2beta1(m) as V2Metric),
      o.status?.currentMetrics?.map((m) => metricStatusFromV2beta1(m) as V2MetricStatus),
    ),
  ),
});
