/**
 * autoscaling/v2beta2 HorizontalPodAutoscaler: scaling on several metrics (resource, container resource, pods,
 * object, external) with scaling behaviour. Stored as autoscaling/v1, the metrics that v1 cannot hold kept in its
 * annotations as Kubernetes 1.21 does (see `convert.ts`).
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { LabelSelectorSchema, type ObjectMeta } from '../../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, type KindSpec, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN, type TableColumn } from '../../../table/table';

const P = schemaPrefix('autoscaling', 'v2beta2');

/** CrossVersionObjectReference, as in Kubernetes 1.21 (v2beta1 has the same). */
export const CrossVersionObjectReferenceV2beta2Schema = object(`${P}CrossVersionObjectReference`, {
  kind: req(1, t.string(), 'Kind of the referent.'),
  name: req(2, t.string(), 'Name of the referent.'),
  apiVersion: opt(3, t.string(), 'API version of the referent.'),
});
const MetricIdentifier = object(`${P}MetricIdentifier`, {
  name: req(1, t.string(), 'Name of the metric.'),
  selector: opt(2, ref(LabelSelectorSchema), 'Labels narrowing the metric.'),
});
const MetricTarget = object(`${P}MetricTarget`, {
  type: req(1, t.string(), 'Utilization, Value or AverageValue.'),
  value: opt(2, t.quantity(), 'Target value of the metric.'),
  averageValue: opt(3, t.quantity(), 'Target value of the average of the metric across pods.'),
  averageUtilization: opt(4, ptr(t.int32()), 'Target average utilization, in percent of the requests.'),
});
const MetricValueStatus = object(`${P}MetricValueStatus`, {
  value: opt(1, t.quantity(), 'Current value of the metric.'),
  averageValue: opt(2, t.quantity(), 'Current average value of the metric across pods.'),
  averageUtilization: opt(3, ptr(t.int32()), 'Current average utilization, in percent of the requests.'),
});
const ResourceMetricSource = object(`${P}ResourceMetricSource`, {
  name: req(1, t.string(), 'Name of the resource.'),
  target: req(2, ref(MetricTarget), 'Target value.'),
});
const ContainerResourceMetricSource = object(`${P}ContainerResourceMetricSource`, {
  name: req(1, t.string(), 'Name of the resource.'),
  target: req(2, ref(MetricTarget), 'Target value.'),
  container: req(3, t.string(), 'Name of the container.'),
});
const PodsMetricSource = object(`${P}PodsMetricSource`, {
  metric: req(1, ref(MetricIdentifier), 'The metric.'),
  target: req(2, ref(MetricTarget), 'Target value.'),
});
const ObjectMetricSource = object(`${P}ObjectMetricSource`, {
  describedObject: req(1, ref(CrossVersionObjectReferenceV2beta2Schema), 'The object the metric describes.'),
  target: req(2, ref(MetricTarget), 'Target value.'),
  metric: req(3, ref(MetricIdentifier), 'The metric.'),
});
const ExternalMetricSource = object(`${P}ExternalMetricSource`, {
  metric: req(1, ref(MetricIdentifier), 'The metric.'),
  target: req(2, ref(MetricTarget), 'Target value.'),
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
  current: req(2, ref(MetricValueStatus), 'Current value.'),
});
const ContainerResourceMetricStatus = object(`${P}ContainerResourceMetricStatus`, {
  name: req(1, t.string(), 'Name of the resource.'),
  current: req(2, ref(MetricValueStatus), 'Current value.'),
  container: req(3, t.string(), 'Name of the container.'),
});
const PodsMetricStatus = object(`${P}PodsMetricStatus`, {
  metric: req(1, ref(MetricIdentifier), 'The metric.'),
  current: req(2, ref(MetricValueStatus), 'Current value.'),
});
const ObjectMetricStatus = object(`${P}ObjectMetricStatus`, {
  metric: req(1, ref(MetricIdentifier), 'The metric.'),
  current: req(2, ref(MetricValueStatus), 'Current value.'),
  describedObject: req(3, ref(CrossVersionObjectReferenceV2beta2Schema), 'The object the metric describes.'),
});
const ExternalMetricStatus = object(`${P}ExternalMetricStatus`, {
  metric: req(1, ref(MetricIdentifier), 'The metric.'),
  current: req(2, ref(MetricValueStatus), 'Current value.'),
});
const MetricStatus = object(`${P}MetricStatus`, {
  type: req(1, t.string(), 'ContainerResource, External, Object, Pods or Resource.'),
  object: opt(2, ref(ObjectMetricStatus), 'Status of an object metric.'),
  pods: opt(3, ref(PodsMetricStatus), 'Status of a pods metric.'),
  resource: opt(4, ref(ResourceMetricStatus), 'Status of a resource metric.'),
  containerResource: opt(7, ref(ContainerResourceMetricStatus), 'Status of a container resource metric.'),
  external: opt(5, ref(ExternalMetricStatus), 'Status of an external metric.'),
});
const HPAScalingPolicy = object(`${P}HPAScalingPolicy`, {
  type: req(1, t.string(), 'Pods or Percent.'),
  value: req(2, t.int32(), 'Amount of change the policy permits.'),
  periodSeconds: req(3, t.int32(), 'Window over which the policy holds.'),
});
const HPAScalingRules = object(`${P}HPAScalingRules`, {
  stabilizationWindowSeconds: opt(3, ptr(t.int32()), 'Past recommendations considered.'),
  selectPolicy: opt(1, ptr(t.string()), 'Max, Min or Disabled.'),
  policies: opt(2, t.array(ref(HPAScalingPolicy)), 'Policies of the scaling.'),
});
const Behavior = object(`${P}HorizontalPodAutoscalerBehavior`, {
  scaleUp: opt(1, ref(HPAScalingRules), 'Scaling up.'),
  scaleDown: opt(2, ref(HPAScalingRules), 'Scaling down.'),
});
/** HorizontalPodAutoscalerCondition, as in Kubernetes 1.21 (v2beta1 has the same). */
export const HPAConditionV2beta2Schema = object(`${P}HorizontalPodAutoscalerCondition`, {
  type: req(1, t.string(), 'AbleToScale, ScalingActive or ScalingLimited.'),
  status: req(2, t.string(), 'True, False or Unknown.'),
  lastTransitionTime: opt(3, t.time(), 'Last change of the condition.'),
  reason: opt(4, t.string(), 'Why the condition last changed.'),
  message: opt(5, t.string(), 'Details of the last change.'),
});
const Spec = object(`${P}HorizontalPodAutoscalerSpec`, {
  scaleTargetRef: req(1, ref(CrossVersionObjectReferenceV2beta2Schema), 'The resource to scale.'),
  minReplicas: opt(2, ptr(t.int32()), 'Lower limit of replicas. Defaults to 1.'),
  maxReplicas: req(3, t.int32(), 'Upper limit of replicas.'),
  metrics: opt(4, t.array(ref(MetricSpec)), 'Metrics the replica count is computed from.'),
  behavior: opt(5, ref(Behavior), 'Scaling behaviour up and down.'),
});
const Status = object(`${P}HorizontalPodAutoscalerStatus`, {
  observedGeneration: opt(1, ptr(t.int64()), 'Most recent generation observed.'),
  lastScaleTime: opt(2, t.time(), 'Last time the autoscaler scaled.'),
  currentReplicas: req(3, t.int32(), 'Current number of replicas.'),
  desiredReplicas: req(4, t.int32(), 'Desired number of replicas.'),
  currentMetrics: opt(5, t.array(ref(MetricStatus)), 'Last read state of the metrics.'),
  conditions: opt(6, t.array(ref(HPAConditionV2beta2Schema)), 'Conditions of the autoscaler.'),
});

/** HorizontalPodAutoscaler in autoscaling/v2beta2, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const HorizontalPodAutoscalerV2beta2Schema = object(
  `${P}HorizontalPodAutoscaler`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(Spec), 'Behaviour of the autoscaler.'),
    status: opt(3, ref(Status), 'Current information about the autoscaler.'),
  },
  { description: 'HorizontalPodAutoscaler is the configuration for a horizontal pod autoscaler.' },
);
/** An autoscaling/v2beta2 HorizontalPodAutoscaler in its JSON form. */
export type HorizontalPodAutoscalerV2beta2 = Static<typeof HorizontalPodAutoscalerV2beta2Schema>;
type Metric = Static<typeof MetricSpec>;
type MetricStatusT = Static<typeof MetricStatus>;
type Rules = Static<typeof HPAScalingRules>;

/** The default CPU utilization target of an autoscaler without metrics. */
export const DEFAULT_CPU_UTILIZATION = 80;

function scaleUpDefaults(r: Rules = {}): Rules {
  return {
    stabilizationWindowSeconds: r.stabilizationWindowSeconds ?? 0,
    selectPolicy: r.selectPolicy ?? 'Max',
    policies: r.policies ?? [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ],
  };
}

/** 1.21 leaves the scale-down window unset, so that the controller's --horizontal-pod-autoscaler-downscale-stabilization applies. */
function scaleDownDefaults(r: Rules = {}): Rules {
  return {
    ...(r.stabilizationWindowSeconds === undefined ? {} : { stabilizationWindowSeconds: r.stabilizationWindowSeconds }),
    selectPolicy: r.selectPolicy ?? 'Max',
    policies: r.policies ?? [{ type: 'Percent', value: 100, periodSeconds: 15 }],
  };
}

/** One metric as kubectl's `formatHPAMetrics` prints it. */
function formatMetric(spec: Metric, status: MetricStatusT | undefined): string {
  const pair = (cur: string | undefined, target: string | undefined, avg = ''): string =>
    `${cur ?? '<unknown>'}/${target ?? ''}${avg}`;
  switch (spec.type) {
    case 'External':
      return spec.external?.target.averageValue !== undefined
        ? pair(status?.external?.current.averageValue, spec.external.target.averageValue, ' (avg)')
        : pair(status?.external?.current.value, spec.external?.target.value);
    case 'Pods':
      return pair(status?.pods?.current.averageValue, spec.pods?.target.averageValue);
    case 'Object':
      return spec.object?.target.averageValue !== undefined
        ? pair(status?.object?.current.averageValue, spec.object.target.averageValue, ' (avg)')
        : pair(status?.object?.current.value, spec.object?.target.value);
    case 'Resource':
    case 'ContainerResource': {
      const target = spec.type === 'Resource' ? spec.resource?.target : spec.containerResource?.target;
      const current = spec.type === 'Resource' ? status?.resource?.current : status?.containerResource?.current;
      if (target?.averageValue !== undefined) return pair(current?.averageValue, target.averageValue);
      const cur = current?.averageUtilization !== undefined ? `${current.averageUtilization}%` : '<unknown>';
      const want = target?.averageUtilization !== undefined ? `${target.averageUtilization}%` : '<auto>';
      return `${cur}/${want}`;
    }
    default:
      return '<unknown type>';
  }
}

/** The Targets column: up to two metrics, `<none>` without any. */
export function formatHPAMetrics(specs: Metric[] | undefined, statuses: MetricStatusT[] | undefined): string {
  if (!specs || specs.length === 0) return '<none>';
  const list = specs.map((s, i) => formatMetric(s, statuses?.[i]));
  const max = 2;
  if (list.length > max) return `${list.slice(0, max).join(', ')} + ${list.length - max} more...`;
  return list.join(', ');
}

/** What the columns of an autoscaler read, in every version. */
interface AutoscalerFields {
  metadata?: ObjectMeta;
  spec?: { scaleTargetRef?: { kind?: string; name?: string }; minReplicas?: number | null; maxReplicas?: number };
  status?: { currentReplicas?: number };
}

/** The columns of an autoscaler of any version (kubectl's), its Targets cell from `targets`. */
export function hpaColumns<T extends AutoscalerFields>(targets: (o: T) => string): TableColumn<T>[] {
  return [
    {
      name: 'Reference',
      type: 'string',
      description: 'The resource being scaled.',
      cell: (o) => `${o.spec?.scaleTargetRef?.kind ?? ''}/${o.spec?.scaleTargetRef?.name ?? ''}`,
    },
    { name: 'Targets', type: 'string', description: 'Current/target value of each metric.', cell: targets },
    { name: 'MinPods', type: 'string', description: 'Lower limit of replicas.', cell: (o) => o.spec?.minReplicas ?? 1 },
    { name: 'MaxPods', type: 'string', description: 'Upper limit of replicas.', cell: (o) => o.spec?.maxReplicas ?? 0 },
    { name: 'Replicas', type: 'string', description: 'Current replicas.', cell: (o) => o.status?.currentReplicas ?? 0 },
    AGE_COLUMN,
  ];
}

/** What the versions of the autoscaler kind share: group, names, scope and subresources. */
export const HPA_KIND_FACTS: Pick<
  KindSpec<TObject>,
  'group' | 'kind' | 'plural' | 'shortNames' | 'categories' | 'scope' | 'subresources'
> = {
  group: 'autoscaling',
  kind: 'HorizontalPodAutoscaler',
  plural: 'horizontalpodautoscalers',
  shortNames: ['hpa'],
  categories: ['all'],
  scope: 'Namespaced',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
};

/** The HorizontalPodAutoscaler kind in autoscaling/v2beta2 (defaults: 1.21's `SetDefaults_HorizontalPodAutoscaler`). */
export const HorizontalPodAutoscalerV2beta2Kind = defineKind({
  ...HPA_KIND_FACTS,
  version: 'v2beta2',
  schema: HorizontalPodAutoscalerV2beta2Schema,
  defaults(hpa) {
    const spec = hpa.spec;
    if (!spec) return;
    spec.minReplicas ??= 1;
    if (!spec.metrics || spec.metrics.length === 0) {
      spec.metrics = [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } },
        },
      ];
    }
    if (spec.behavior) {
      spec.behavior.scaleUp = scaleUpDefaults(spec.behavior.scaleUp);
      spec.behavior.scaleDown = scaleDownDefaults(spec.behavior.scaleDown);
    }
  },
  columns: hpaColumns<HorizontalPodAutoscalerV2beta2>((o) =>
    formatHPAMetrics(o.spec?.metrics, o.status?.currentMetrics),
  ),
});
