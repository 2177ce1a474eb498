/**
 * autoscaling/v2beta2 ↔ autoscaling/v1 HorizontalPodAutoscaler, as Kubernetes 1.21 converts them
 * (`pkg/apis/autoscaling/v1/conversion.go`): v1 holds a CPU utilization target and current value in its own fields,
 * and every other metric, the current metrics, the conditions and the behaviour as JSON in annotations
 * (`autoscaling.alpha.kubernetes.io/metrics`, `current-metrics`, `conditions`, `behavior`), the metrics in v1's
 * older metric shape (`targetAverageValue`, `metricName` ...). Both functions return new objects and never fail: an
 * annotation that is not valid JSON is ignored.
 */
import { type HorizontalPodAutoscaler } from '../v1/scale';
import { type HorizontalPodAutoscalerV2beta2 } from './hpa';

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

/** Drops undefined values (JSON would omit them; tests compare objects). */
function clean<T extends Json>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function targetOf(type: string, value?: unknown, averageValue?: unknown, averageUtilization?: unknown): Json {
  return clean({ type, value, averageValue, averageUtilization });
}

function metricToV1(m: V2Metric): Json {
  const out: Json = { type: m.type };
  if (m.resource)
    out.resource = clean({
      name: m.resource.name,
      targetAverageUtilization: m.resource.target.averageUtilization,
      targetAverageValue: m.resource.target.averageValue,
    });
  if (m.containerResource)
    out.containerResource = clean({
      name: m.containerResource.name,
      container: m.containerResource.container,
      targetAverageUtilization: m.containerResource.target.averageUtilization,
      targetAverageValue: m.containerResource.target.averageValue,
    });
  if (m.pods)
    out.pods = clean({
      metricName: m.pods.metric.name,
      selector: m.pods.metric.selector,
      targetAverageValue: m.pods.target.averageValue,
    });
  if (m.object)
    out.object = clean({
      target: m.object.describedObject,
      metricName: m.object.metric.name,
      selector: m.object.metric.selector,
      targetValue: m.object.target.value,
      averageValue: m.object.target.averageValue,
    });
  if (m.external)
    out.external = clean({
      metricName: m.external.metric.name,
      metricSelector: m.external.metric.selector,
      targetValue: m.external.target.value,
      targetAverageValue: m.external.target.averageValue,
    });
  return out;
}

function metricFromV1(m: Json): V2Metric {
  const r = m.resource as Json | undefined;
  const cr = m.containerResource as Json | undefined;
  const p = m.pods as Json | undefined;
  const o = m.object as Json | undefined;
  const e = m.external as Json | undefined;
  const id = (name: unknown, selector: unknown): Json => clean({ name: name ?? '', selector });
  const resourceTarget = (x: Json): Json =>
    x.targetAverageUtilization !== undefined
      ? targetOf('Utilization', undefined, undefined, x.targetAverageUtilization)
      : targetOf('AverageValue', undefined, x.targetAverageValue);
  const out: Json = { type: m.type };
  if (r) out.resource = { name: r.name, target: resourceTarget(r) };
  if (cr) out.containerResource = { name: cr.name, container: cr.container, target: resourceTarget(cr) };
  if (p)
    out.pods = {
      metric: id(p.metricName, p.selector),
      target: targetOf('AverageValue', undefined, p.targetAverageValue),
    };
  if (o)
    out.object = {
      describedObject: o.target,
      metric: id(o.metricName, o.selector),
      target:
        o.averageValue !== undefined
          ? targetOf('AverageValue', undefined, o.averageValue)
          : targetOf('Value', o.targetValue),
    };
  if (e)
    out.external = {
      metric: id(e.metricName, e.metricSelector),
      target:
        e.targetAverageValue !== undefined
          ? targetOf('AverageValue', undefined, e.targetAverageValue)
          : targetOf('Value', e.targetValue),
    };
  return out as unknown as V2Metric;
}

function statusToV1(m: V2MetricStatus): Json {
  const out: Json = { type: m.type };
  if (m.resource)
    out.resource = clean({
      name: m.resource.name,
      currentAverageUtilization: m.resource.current.averageUtilization,
      currentAverageValue: m.resource.current.averageValue,
    });
  if (m.containerResource)
    out.containerResource = clean({
      name: m.containerResource.name,
      container: m.containerResource.container,
      currentAverageUtilization: m.containerResource.current.averageUtilization,
      currentAverageValue: m.containerResource.current.averageValue,
    });
  if (m.pods)
    out.pods = clean({
      metricName: m.pods.metric.name,
      selector: m.pods.metric.selector,
      currentAverageValue: m.pods.current.averageValue,
    });
  if (m.object)
    out.object = clean({
      target: m.object.describedObject,
      metricName: m.object.metric.name,
      selector: m.object.metric.selector,
      currentValue: m.object.current.value,
      averageValue: m.object.current.averageValue,
    });
  if (m.external)
    out.external = clean({
      metricName: m.external.metric.name,
      metricSelector: m.external.metric.selector,
      currentValue: m.external.current.value,
      currentAverageValue: m.external.current.averageValue,
    });
  return out;
}

function statusFromV1(m: Json): V2MetricStatus {
  const r = m.resource as Json | undefined;
  const cr = m.containerResource as Json | undefined;
  const p = m.pods as Json | undefined;
  const o = m.object as Json | undefined;
  const e = m.external as Json | undefined;
  const id = (name: unknown, selector: unknown): Json => clean({ name: name ?? '', selector });
  const cur = (x: Json): Json =>
    clean({ averageUtilization: x.currentAverageUtilization, averageValue: x.currentAverageValue });
  const out: Json = { type: m.type };
  if (r) out.resource = { name: r.name, current: cur(r) };
  if (cr) out.containerResource = { name: cr.name, container: cr.container, current: cur(cr) };
  if (p) out.pods = { metric: id(p.metricName, p.selector), current: clean({ averageValue: p.currentAverageValue }) };
  if (o)
    out.object = {
      describedObject: o.target,
      metric: id(o.metricName, o.selector),
      current: clean({ value: o.currentValue, averageValue: o.averageValue }),
    };
  if (e)
    out.external = {
      metric: id(e.metricName, e.metricSelector),
      current: clean({ value: e.currentValue, averageValue: e.currentAverageValue }),
    };
  return out as unknown as V2MetricStatus;
}

function isCpuUtilization(m: V2Metric): boolean {
  return m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target.averageUtilization !== undefined;
}

function parse(s: string | undefined): unknown[] | Json | undefined {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s) as unknown[] | Json;
  } catch {
    return undefined;
  }
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
    if (others.length > 0) annotations[HPA_ANNOTATIONS.metrics] = JSON.stringify(others.map(metricToV1));
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
    const others = (status.currentMetrics ?? []).filter((m) => m !== cpu);
    if (others.length > 0) annotations[HPA_ANNOTATIONS.currentMetrics] = JSON.stringify(others.map(statusToV1));
    if (status.conditions?.length) annotations[HPA_ANNOTATIONS.conditions] = JSON.stringify(status.conditions);
    out.status = clean({
      observedGeneration: status.observedGeneration,
      lastScaleTime: status.lastScaleTime,
      currentReplicas: status.currentReplicas,
      desiredReplicas: status.desiredReplicas,
      currentCPUUtilizationPercentage: cpu?.resource?.current.averageUtilization,
    });
  }
  if (out.metadata) {
    if (Object.keys(annotations).length > 0) out.metadata.annotations = annotations;
    else delete out.metadata.annotations;
  }
  return out;
}

/** An autoscaling/v1 autoscaler as autoscaling/v2beta2, its annotations read back into metrics and conditions. */
export function hpaToV2beta2(obj: HorizontalPodAutoscaler): V2 {
  const { spec, status, ...rest } = structuredClone(obj);
  const annotations: Record<string, string> = { ...(rest.metadata?.annotations ?? {}) };
  const read = (key: string): unknown => {
    const v = parse(annotations[key]);
    delete annotations[key];
    return v;
  };
  const metrics = read(HPA_ANNOTATIONS.metrics);
  const current = read(HPA_ANNOTATIONS.currentMetrics);
  const conditions = read(HPA_ANNOTATIONS.conditions);
  const behavior = read(HPA_ANNOTATIONS.behavior);
  const out: V2 = { ...rest, apiVersion: 'autoscaling/v2beta2', kind: 'HorizontalPodAutoscaler' };
  if (out.metadata) {
    if (Object.keys(annotations).length > 0) out.metadata.annotations = annotations;
    else delete out.metadata.annotations;
  }
  if (spec) {
    const list: V2Metric[] = Array.isArray(metrics) ? (metrics as Json[]).map(metricFromV1) : [];
    if (spec.targetCPUUtilizationPercentage !== undefined && spec.targetCPUUtilizationPercentage !== null) {
      list.push({
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage },
        },
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
    const list: V2MetricStatus[] = Array.isArray(current) ? (current as Json[]).map(statusFromV1) : [];
    if (status.currentCPUUtilizationPercentage !== undefined && status.currentCPUUtilizationPercentage !== null) {
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
