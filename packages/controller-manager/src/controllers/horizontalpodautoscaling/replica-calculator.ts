/**
 * The replica calculator of the HPA for resource metrics (model: Kubernetes 1.21
 * `pkg/controller/podautoscaler/replica_calculator.go` and `metrics/utilization.go`): from the pods of a target
 * and their usage of one resource, the replica count that brings the average to the target, either a utilization
 * of the pods' requests (`resourceReplicas`) or a raw average value (`rawResourceReplicas`). Pure functions of
 * their inputs (time included), so that they can be checked against 1.21's test cases. Values are milli-units, as
 * 1.21 reads them with `MilliValue()`; the integer divisions are 1.21's.
 *
 * How pods count (1.21's `groupPods`): a pod being deleted or Failed is left out entirely; a Pending pod is
 * "unready"; a pod without a metric is "missing"; for CPU, a pod without a Ready condition or start time, a pod
 * within `--horizontal-pod-autoscaler-cpu-initialization-period` of its start that is unready or whose sample was
 * taken less than one metric window after its last readiness change, and a pod that is unready and never was ready
 * (`--horizontal-pod-autoscaler-initial-readiness-delay`) are "unready". Unready pods' samples are dropped; on a
 * scale-up they count as 0% of their requests, and missing pods count as 0% on a scale-up and 100% on a scale-down,
 * so that the autoscaler scales conservatively; a result that would reverse the direction keeps the replica count.
 */
import { parseQuantity, type Pod } from '@platform/api';

/** One pod's sample: its usage of the resource in milli-units, when it was taken and over what window. */
export interface PodMetric {
  timestampMs: number;
  windowMs: number;
  value: number;
}

/** Samples by pod name. */
export type PodMetricsInfo = Map<string, PodMetric>;

/** The tunables of the calculator (`--horizontal-pod-autoscaler-*`). */
export interface CalculatorConfig {
  tolerance: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

/** Go's zero time, for a timestamp that is not set (every comparison with a real time comes out as in 1.21). */
const ZERO_TIME_MS = -62135596800000;

function timeOf(s: string | undefined | null): number {
  if (!s) return ZERO_TIME_MS;
  const t = Date.parse(s);
  return Number.isNaN(t) ? ZERO_TIME_MS : t;
}

/** How the pods of a target divide for one resource (1.21's `groupPods`). */
export interface PodGroups {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

/** Sorts `pods` into ready, unready, missing and ignored ones for `resource` at `nowMs`. */
export function groupPods(
  pods: readonly Pod[],
  metrics: PodMetricsInfo,
  resource: string,
  c: Pick<CalculatorConfig, 'cpuInitializationPeriodMs' | 'initialReadinessDelayMs'>,
  nowMs: number,
): PodGroups {
  const g: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    const phase = pod.status?.phase;
    if (pod.metadata?.deletionTimestamp || phase === 'Failed') {
      g.ignored.add(name);
      continue;
    }
    if (phase === 'Pending') {
      g.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      g.missing.add(name);
      continue;
    }
    if (resource === 'cpu' && isCpuSampleUnready(pod, metric, c, nowMs)) {
      g.unready.add(name);
      continue;
    }
    g.readyPodCount++;
  }
  return g;
}

function isCpuSampleUnready(
  pod: Pod,
  metric: PodMetric,
  c: Pick<CalculatorConfig, 'cpuInitializationPeriodMs' | 'initialReadinessDelayMs'>,
  nowMs: number,
): boolean {
  const condition = pod.status?.conditions?.find((x) => x.type === 'Ready');
  if (!condition || !pod.status?.startTime) return true;
  const start = timeOf(pod.status.startTime);
  const transition = timeOf(condition.lastTransitionTime);
  if (start + c.cpuInitializationPeriodMs > nowMs) {
    // Still initializing: unready, or ready for less than one metric window (the sample may predate readiness).
    return condition.status === 'False' || metric.timestampMs < transition + metric.windowMs;
  }
  // Past initialization: only a pod that is unready and has never been ready.
  return condition.status === 'False' && start + c.initialReadinessDelayMs > transition;
}

/**
 * The sum of each pod's containers' requests of `resource`, by pod name (1.21's `calculatePodRequests`); throws
 * `missing request for <resource>` when a container has none.
 */
export function podRequests(pods: readonly Pod[], resource: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    for (const c of pod.spec?.containers ?? []) {
      const q = (c.resources?.requests as Record<string, string> | undefined)?.[resource];
      if (q === undefined) throw new Error(`missing request for ${resource}`);
      sum += parseQuantity(String(q)).milliValueNumber();
    }
    out.set(pod.metadata?.name ?? '', sum);
  }
  return out;
}

/** Utilization of the requests (1.21's `GetResourceUtilizationRatio`). */
export function resourceUtilizationRatio(
  metrics: PodMetricsInfo,
  requests: Map<string, number>,
  targetUtilization: number,
): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entities = 0;
  for (const [name, m] of metrics) {
    const request = requests.get(name);
    // A sample of a pod we do not know of is extraneous.
    if (request === undefined) continue;
    metricsTotal += m.value;
    requestsTotal += request;
    entities++;
  }
  if (requestsTotal === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / entities) };
}

/** Average of raw values (1.21's `GetMetricUtilizationRatio`). */
export function metricUtilizationRatio(metrics: PodMetricsInfo, target: number): { ratio: number; average: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const average = Math.trunc(total / metrics.size);
  return { ratio: average / target, average };
}

/** The inputs of one calculation. */
export interface CalculationInput {
  currentReplicas: number;
  resource: string;
  /** The samples of the pods the target's selector selects (the calculator drops some; it works on a copy). */
  metrics: PodMetricsInfo;
  /** The pods the target's selector selects. */
  pods: readonly Pod[];
  config: CalculatorConfig;
  nowMs: number;
}

/** A utilization proposal: replicas, the utilization in percent and the raw average usage per pod (milli). */
export interface UtilizationProposal {
  replicas: number;
  utilization: number;
  rawUtilization: number;
}

function withFilled(metrics: PodMetricsInfo, names: Iterable<string>, value: (name: string) => number): void {
  for (const name of names) metrics.set(name, { timestampMs: ZERO_TIME_MS, windowMs: 0, value: value(name) });
}

/**
 * Replicas for a target utilization (percent of requests) of `resource` (1.21's `GetResourceReplicas`). Throws,
 * with 1.21's messages, when there are no pods, a container has no request or no ready pod has a sample.
 */
export function resourceReplicas(input: CalculationInput, targetUtilization: number): UtilizationProposal {
  const { currentReplicas, resource, pods, config } = input;
  const metrics: PodMetricsInfo = new Map(input.metrics);
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, metrics, resource, config, input.nowMs);
  for (const name of [...g.ignored, ...g.unready]) metrics.delete(name);
  const requests = podRequests(pods, resource);
  if (metrics.size === 0) throw new Error('did not receive metrics for any ready pods');

  const { ratio, utilization, rawAverage } = resourceUtilizationRatio(metrics, requests, targetUtilization);
  const result = (replicas: number): UtilizationProposal => ({ replicas, utilization, rawUtilization: rawAverage });
  const rebalanceUnready = g.unready.size > 0 && ratio > 1.0;
  if (!rebalanceUnready && g.missing.size === 0) {
    if (Math.abs(1.0 - ratio) <= config.tolerance) return result(currentReplicas);
    return result(Math.ceil(ratio * g.readyPodCount));
  }
  if (g.missing.size > 0) {
    // Scale-down: missing pods use 100% of their requests; scale-up: 0%.
    if (ratio < 1.0) withFilled(metrics, g.missing, (n) => requests.get(n) ?? 0);
    else if (ratio > 1.0) withFilled(metrics, g.missing, () => 0);
  }
  if (rebalanceUnready) withFilled(metrics, g.unready, () => 0);

  const next = resourceUtilizationRatio(metrics, requests, targetUtilization).ratio;
  if (Math.abs(1.0 - next) <= config.tolerance || (ratio < 1.0 && next > 1.0) || (ratio > 1.0 && next < 1.0))
    return result(currentReplicas);
  const replicas = Math.ceil(next * metrics.size);
  // More pods counted than replicas (a rolling update's surge) must not turn a scale-down into a scale-up.
  if ((next < 1.0 && replicas > currentReplicas) || (next > 1.0 && replicas < currentReplicas))
    return result(currentReplicas);
  return result(replicas);
}

/**
 * Replicas for a target average value (milli-units per pod) of `resource` (1.21's `GetRawResourceReplicas` through
 * `calcPlainMetricReplicas`); returns the average usage (milli) as `utilization`.
 */
export function rawResourceReplicas(
  input: CalculationInput,
  targetAverage: number,
): { replicas: number; utilization: number } {
  const { currentReplicas, resource, pods, config } = input;
  const metrics: PodMetricsInfo = new Map(input.metrics);
  if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, metrics, resource, config, input.nowMs);
  for (const name of [...g.ignored, ...g.unready]) metrics.delete(name);
  if (metrics.size === 0) throw new Error('did not receive metrics for any ready pods');

  const { ratio, average } = metricUtilizationRatio(metrics, targetAverage);
  const result = (replicas: number): { replicas: number; utilization: number } => ({ replicas, utilization: average });
  const rebalanceUnready = g.unready.size > 0 && ratio > 1.0;
  if (!rebalanceUnready && g.missing.size === 0) {
    if (Math.abs(1.0 - ratio) <= config.tolerance) return result(currentReplicas);
    return result(Math.ceil(ratio * g.readyPodCount));
  }
  if (g.missing.size > 0) withFilled(metrics, g.missing, () => (ratio < 1.0 ? targetAverage : 0));
  if (rebalanceUnready) withFilled(metrics, g.unready, () => 0);

  const next = metricUtilizationRatio(metrics, targetAverage).ratio;
  if (Math.abs(1.0 - next) <= config.tolerance || (ratio < 1.0 && next > 1.0) || (ratio > 1.0 && next < 1.0))
    return result(currentReplicas);
  return result(Math.ceil(next * metrics.size));
}
