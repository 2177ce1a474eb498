/**
 * autoscaling/v2beta2 ↔ autoscaling/v1 HorizontalPodAutoscaler, as Kubernetes 1.21 converts them
 * (`pkg/apis/autoscaling/v1/conversion.go`): v1 holds a CPU utilization target and current value in its own fields,
 * and every other metric, the current metrics, the conditions and the behaviour as JSON in annotations
 * (`autoscaling.alpha.kubernetes.io/metrics`, `current-metrics`, `conditions`, `behavior`), the metrics in v1's
 * older metric shape, which is v2beta1's (`targetAverageValue`, `metricName` ...; see `../metrics.ts`). Every current
 * metric goes to the annotation, the CPU one included, so its raw value survives. Both functions return new objects
 * and never fail: an annotation that is not valid JSON is ignored.
 */
import { clean, metricFromV2beta1, metricStatusFromV2beta1, metricStatusToV2beta1, metricToV2beta1 } from '../metrics';
import { type HorizontalPodAutoscaler } from '../v1/scale';
import { DEFAULT_CPU_UTILIZATION, type HorizontalPodAutoscalerV2beta2 } from './hpa';

/** The annotations v1 keeps the rest of a v2 autoscaler in. */
export const HPA_ANNOTATIONS = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
} as const;

type Json = Record<string, unknown>;
type V2 = HorizontalPodAutoscalerV2beta2;
type V2Spec = NonNullable<V2['spec']>;
type V2Status = NonNullable<V2['status']>;
type V2Metric = NonNullable<V2Spec['metrics']>[number];
type V2MetricStatus = NonNullable<V2Status['currentMetrics']>[number];

function isCpuUtilization(m: V2Metric): boolean {
  return m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target.averageUtilization !== undefined;
}

/** The JSON of an annotation; undefined when it is absent or not JSON. */
export function parseAnnotation(s: string | undefined): unknown[] | Json | undefined {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s) as unknown[] | Json;
  } catch {
    return undefined;
  }
}

/** Sets `metadata.annotations` of a converted object to `annotations`, or removes it when they are none. */
export function withAnnotations<T extends { metadata?: { annotations?: Record<string, string> } }>(
  out: T,
  annotations: Record<string, string>,
): T {
  if (out.metadata) {
    if (Object.keys(annotations).length > 0) out.metadata.annotations = annotations;
    else delete out.metadata.annotations;
  }
  return out;
}

/** An autoscaling/v2beta2 autoscaler as autoscaling/v1, the rest of its metrics kept in annotations. */
export function hpaToV1(obj: V2): HorizontalPodAutoscaler {
  const { spec, status, ...rest } = structuredClone(obj);
  const annotations: Record<string, string> = { ...(rest.metadata?.annotations ?? {}) };
  for (const a of Object.values(HPA_ANNOTATIONS)) delete annotations[a];
  const out: HorizontalPodAutoscaler = { ...rest, apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler' };
  if (spec) {
    const cpu = spec.metrics?.find(isCpuUtilization);
    const others = (spec.metrics ?? []).filter((m) => m !== cpu);
    if (others.length > 0) annotations[HPA_ANNOTATIONS.metrics] = JSON.stringify(others.map(metricToV2beta1));
    if (spec.behavior) annotations[HPA_ANNOTATIONS.behavior] = JSON.stringify(spec.behavior);
    out.spec = clean({
      scaleTargetRef: spec.scaleTargetRef,
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
      targetCPUUtilizationPercentage: cpu?.resource?.target.averageUtilization,
    });
  }
  if (status) {
    const cpu = status.currentMetrics?.find(
      (m) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.current.averageUtilization !== undefined,
    );
    // Every current metric, the CPU one too: v1's field keeps only its utilization, not its raw value (1.21).
    if (status.currentMetrics?.length)
      annotations[HPA_ANNOTATIONS.currentMetrics] = JSON.stringify(status.currentMetrics.map(metricStatusToV2beta1));
    if (status.conditions?.length) annotations[HPA_ANNOTATIONS.conditions] = JSON.stringify(status.conditions);
    out.status = clean({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas,
      currentCPUUtilizationPercentage: cpu?.resource?.current.averageUtilization,
    });
  }
  withAnnotations(out, annotations);
  return out;
}

/** An autoscaling/v1 autoscaler as autoscaling/v2beta2, its annotations read back into metrics and conditions. */
export function hpaToV2beta2(obj: HorizontalPodAutoscaler): V2 {
  const { spec, status, ...rest } = structuredClone(obj);
  const annotations: Record<string, string> = { ...(rest.metadata?.annotations ?? {}) };
  const read = (key: string): unknown => {
    const v = parseAnnotation(annotations[key]);
    delete annotations[key];
    return v;
  };
  const metrics = read(HPA_ANNOTATIONS.metrics);
  const current = read(HPA_ANNOTATIONS.currentMetrics);
  const conditions = read(HPA_ANNOTATIONS.conditions);
  const behavior = read(HPA_ANNOTATIONS.behavior);
  const out: V2 = { ...rest, apiVersion: 'autoscaling/v2beta2', kind: 'HorizontalPodAutoscaler' };
  withAnnotations(out, annotations);
  if (spec) {
    const list = Array.isArray(metrics) ? (metrics as Json[]).map((m) => metricFromV2beta1(m) as V2Metric) : [];
    // v1's CPU target last; without any metric, v1's implicit default (80%), which 1.21 writes out when it reads v1.
    const cpu = spec.targetCPUUtilizationPercentage ?? (list.length === 0 ? DEFAULT_CPU_UTILIZATION : undefined);
    if (cpu !== undefined) {
      list.push({
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } },
      });
    }
    out.spec = {
      scaleTargetRef: spec.scaleTargetRef,
      ...(spec.minReplicas !== undefined ? { minReplicas: spec.minReplicas } : {}),
      maxReplicas: spec.maxReplicas,
      ...(list.length > 0 ? { metrics: list } : {}),
      ...(behavior && !Array.isArray(behavior) ? { behavior: behavior as V2Spec['behavior'] } : {}),
    };
  }
  if (status) {
    // The annotation holds every current metric when present; v1's CPU field is read only without it (1.21).
    const list = Array.isArray(current)
      ? (current as Json[]).map((m) => metricStatusFromV2beta1(m) as V2MetricStatus)
      : [];
    if (!Array.isArray(current) && status.currentCPUUtilizationPercentage != null) {
      list.push({
        type: 'Resource',
        resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } },
      });
    }
    out.status = clean({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas,
      currentMetrics: list.length > 0 ? list : undefined,
      conditions: Array.isArray(conditions) ? (conditions as V2Status['conditions']) : undefined,
    }) as V2Status;
  }
  return out;
}
