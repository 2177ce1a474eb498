/**
 * The horizontal pod autoscaler controller (model: Kubernetes 1.21 `pkg/controller/podautoscaler/horizontal.go`).
 * It reads every HPA as autoscaling/v1 and works on its autoscaling/v2beta2 form (the v2 metrics, behaviour and
 * conditions live in v1's annotations, as 1.21 converts them; a v1 HPA without a CPU target gets 1.21's default of
 * 80%). Every `--horizontal-pod-autoscaler-sync-period` each HPA reads its target's scale subresource and:
 * - a target scaled to zero disables autoscaling (ScalingActive False, ScalingDisabled);
 * - a replica count above `maxReplicas` or below `minReplicas` is rescaled into range (SuccessfulRescale);
 * - otherwise each metric proposes a replica count and the highest wins. Resource metrics (`cpu`, `memory`:
 *   utilization of the requests, or an average value) are read from the resource metrics API
 *   (`metrics.platform/v1beta1`, see `metrics-client.ts`) and computed as 1.21 does (`replica-calculator.ts`);
 *   the proposal is then stabilized and limited (`replicas.ts`: `--horizontal-pod-autoscaler-downscale-
 *   stabilization`, or the HPA's `behavior`) before the target is rescaled.
 * Without the metrics API, as 1.21 without a metrics server, the HPA gets ScalingActive False with reason
 * FailedGetResourceMetric, the Events FailedGetResourceMetric and FailedComputeMetricsReplicas, and keeps its
 * replica count (said once in the log). Pods, Object and External metrics need the custom and external metrics
 * APIs, which this controller does not read: such a metric is refused with a condition and an Event saying so.
 */
import {
  type ApiObject,
  DeploymentKind,
  DEFAULT_CPU_UTILIZATION,
  HPA_ANNOTATIONS,
  type HorizontalPodAutoscaler,
  HorizontalPodAutoscalerKind,
  type HorizontalPodAutoscalerV2beta2,
  hpaToV1,
  hpaToV2beta2,
  isLabelSelectorParseError,
  isNotFound,
  type Kind,
  newMilliQuantity,
  parseQuantity,
  parseSelector,
  type Pod,
  PodKind,
  ReplicaSetKind,
  ReplicationControllerKind,
  type Scale,
  type Selector,
  StatefulSetKind,
} from '@platform/api';
import {
  ItemExponentialFailureRateLimiter,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  runWorkers,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';
import { durationFlag, type FlagDef, floatFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { waitForSynced } from '../util/wait-synced';
import { METRICS_NOT_SERVED, ResourceMetricsClient, type ResourceMetrics } from './metrics-client';
import { type CalculatorConfig, rawResourceReplicas, resourceReplicas } from './replica-calculator';
import {
  type Behavior,
  type Condition,
  newScalingHistory,
  normalizeWithBehavior,
  normalizeWithoutBehavior,
  recordScaleEvent,
  type ScalingHistory,
  type ScalingRules,
  setCondition,
} from './replicas';

/** Where 1.21 keeps the v2 conditions of an autoscaling/v1 HPA. */
export const CONDITIONS_ANNOTATION = HPA_ANNOTATIONS.conditions;

/** The values of the HPA controller's options (durations in ms). */
export interface HPAControllerConfig {
  syncPeriodMs: number;
  tolerance: number;
  downscaleStabilizationMs: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

/** `--horizontal-pod-autoscaler-*`. */
export class HPAControllerOptions extends ControllerOptions<HPAControllerConfig> {
  private readonly v: HPAControllerConfig = {
    syncPeriodMs: 15_000,
    tolerance: 0.1,
    downscaleStabilizationMs: 5 * 60_000,
    cpuInitializationPeriodMs: 5 * 60_000,
    initialReadinessDelayMs: 30_000,
  };

  constructor() {
    super('Horizontal pod autoscaling controller');
  }

  protected flagDefs(): FlagDef[] {
    const p = 'horizontal-pod-autoscaler-';
    return [
      durationFlag(
        `${p}sync-period`,
        'The period for syncing the number of pods in horizontal pod autoscaler.',
        this.v.syncPeriodMs,
        (x) => (this.v.syncPeriodMs = x),
      ),
      floatFlag(
        `${p}tolerance`,
        'The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.',
        this.v.tolerance,
        (x) => (this.v.tolerance = x),
      ),
      durationFlag(
        `${p}downscale-stabilization`,
        'Period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.',
        this.v.downscaleStabilizationMs,
        (x) => (this.v.downscaleStabilizationMs = x),
      ),
      durationFlag(
        `${p}cpu-initialization-period`,
        'The period after pod start when CPU samples might be skipped.',
        this.v.cpuInitializationPeriodMs,
        (x) => (this.v.cpuInitializationPeriodMs = x),
      ),
      durationFlag(
        `${p}initial-readiness-delay`,
        'The period after pod start during which readiness changes will be treated as initial readiness.',
        this.v.initialReadinessDelayMs,
        (x) => (this.v.initialReadinessDelayMs = x),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    if (this.v.syncPeriodMs <= 0)
      errs.push(new Error('--horizontal-pod-autoscaler-sync-period must be greater than 0'));
    if (!(this.v.tolerance >= 0))
      errs.push(new Error(`--horizontal-pod-autoscaler-tolerance must not be negative, got ${this.v.tolerance}`));
    return errs;
  }

  values(): HPAControllerConfig {
    return { ...this.v };
  }
}

/** The kinds whose scale subresource an HPA can drive, by `group/Kind`. */
const SCALABLE: readonly Kind[] = [DeploymentKind, ReplicaSetKind, StatefulSetKind, ReplicationControllerKind];

function targetKind(ref: { kind?: string; apiVersion?: string }): Kind | undefined {
  const group = (ref.apiVersion ?? '').includes('/') ? (ref.apiVersion ?? '').split('/')[0] : '';
  return SCALABLE.find((k) => k.kind === ref.kind && k.group === group);
}

/** 1.21's error when the resource metrics API is not served. */
export const NO_METRICS_ERROR = `failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: ${METRICS_NOT_SERVED}`;

type V2 = HorizontalPodAutoscalerV2beta2;
type V2Spec = NonNullable<V2['spec']>;
type V2Status = NonNullable<V2['status']>;
type MetricSpec = NonNullable<V2Spec['metrics']>[number];
type MetricStatus = NonNullable<V2Status['currentMetrics']>[number];

/** The HPA as autoscaling/v2beta2 with the defaults 1.21's conversion gives a v1 HPA (CPU at 80%, minReplicas 1). */
export function asV2(hpa: HorizontalPodAutoscaler): V2 {
  const v2 = hpaToV2beta2(hpa);
  const spec = v2.spec!;
  spec.minReplicas ??= 1;
  if (!spec.metrics || spec.metrics.length === 0)
    spec.metrics = [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } },
      },
    ];
  return v2;
}

/** A behaviour's rules with 1.21's defaults; a scale-down window left unset is `--…-downscale-stabilization`. */
export function defaultedBehavior(b: NonNullable<V2Spec['behavior']>, downscaleStabilizationMs: number): Behavior {
  const rules = (r: NonNullable<V2Spec['behavior']>['scaleUp'], d: ScalingRules): ScalingRules => ({
    stabilizationWindowSeconds: r?.stabilizationWindowSeconds ?? d.stabilizationWindowSeconds,
    selectPolicy: r?.selectPolicy ?? d.selectPolicy,
    policies: r?.policies ?? d.policies,
  });
  return {
    scaleUp: rules(b.scaleUp, {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    }),
    scaleDown: rules(b.scaleDown, {
      stabilizationWindowSeconds: Math.trunc(downscaleStabilizationMs / 1000),
      selectPolicy: 'Max',
      policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
    }),
  };
}

/** What a metric failed with: the ScalingActive condition 1.21 sets for it, and the error. */
class MetricError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** One metric's proposal. */
interface Proposal {
  replicas: number;
  metric: string;
  status: MetricStatus;
}

/** The HPA's state in one sync: the v2 form, its conditions (changed in place) and the time. */
interface SyncState {
  hpa: HorizontalPodAutoscaler;
  v2: V2;
  conditions: Condition[];
  now: string;
}

class Autoscaler {
  private readonly hpas;
  private readonly pods;
  readonly queue: WorkQueue<string>;
  private readonly metricsClient: ResourceMetricsClient;
  private readonly history = new Map<string, ScalingHistory>();
  private warnedNoMetrics = false;

  constructor(
    private readonly ctx: ControllerContext,
    readonly o: HPAControllerConfig,
  ) {
    this.hpas = ctx.informers.informerFor(HorizontalPodAutoscalerKind);
    this.pods = ctx.informers.informerFor(PodKind);
    // A failed sync is tried again one sync period later, not sooner (1.21's `NewDefaultHPARateLimiter`): each try
    // records Events, and what failed (metrics, a scale) seldom comes back within milliseconds.
    this.queue = new WorkQueue<string>({
      name: 'horizontalpodautoscaler',
      metrics: ctx.metrics,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(o.syncPeriodMs, o.syncPeriodMs),
    });
    this.metricsClient = new ResourceMetricsClient(ctx.client.rest, o.syncPeriodMs);
    const add = (h: HorizontalPodAutoscaler): void => this.queue.add(metaNamespaceKey(h));
    this.hpas.addEventHandler({
      onAdd: add,
      onUpdate: (old, h) => {
        // Our own status and conditions writes do not call for another sync; a change of the spec does.
        if (specText(old) !== specText(h)) add(h);
      },
      // The sync of a deleted HPA forgets its history.
      onDelete: (h) => add(unwrapTombstone(h)),
    });
  }

  synced(): Promise<boolean> {
    return waitForSynced(this.ctx.signal, [this.hpas, this.pods]);
  }

  resyncAll(): void {
    for (const h of this.hpas.indexer.list()) this.queue.add(metaNamespaceKey(h));
  }

  private get calculator(): CalculatorConfig {
    return {
      tolerance: this.o.tolerance,
      cpuInitializationPeriodMs: this.o.cpuInitializationPeriodMs,
      initialReadinessDelayMs: this.o.initialReadinessDelayMs,
    };
  }

  async sync(key: string): Promise<void> {
    const { namespace: ns, name } = splitMetaNamespaceKey(key);
    if (!this.hpas.indexer.get(key)) {
      this.history.delete(key);
      return;
    }
    // The cache may be behind our last write: work from the stored object.
    let hpa: HorizontalPodAutoscaler;
    try {
      hpa = await this.ctx.client
        .resource(HorizontalPodAutoscalerKind)
        .namespace(ns)
        .get(name, { signal: this.ctx.signal });
    } catch (err) {
      if (isNotFound(err)) {
        this.history.delete(key);
        return;
      }
      throw err;
    }
    const v2 = asV2(hpa);
    const s: SyncState = { hpa, v2, conditions: structuredClone(v2.status?.conditions ?? []) as Condition[], now: '' };
    s.now = new Date().toISOString();
    const set = (type: string, status: 'True' | 'False', reason: string, message: string): void =>
      setCondition(s.conditions, { type, status, reason, message }, s.now);
    const spec = v2.spec!;
    const minReplicas = spec.minReplicas ?? 1;
    const ref = spec.scaleTargetRef;
    const kind = targetKind(ref);
    const old = v2.status;
    const keepStatus = (current: number): V2Status => ({
      currentReplicas: current,
      desiredReplicas: old?.desiredReplicas ?? 0,
      ...(old?.lastScaleTime ? { lastScaleTime: old.lastScaleTime } : {}),
      ...(old?.currentMetrics ? { currentMetrics: old.currentMetrics } : {}),
    });

    let scale: Scale | undefined;
    if (kind) {
      try {
        scale = await this.readScale(kind, ns, ref.name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (!scale) {
      const why = kind
        ? `${kind.plural}.${kind.group || 'core'} "${ref.name}" not found`
        : `no matches for kind "${ref.kind}" in group "${(ref.apiVersion ?? '').split('/')[0]}"`;
      this.ctx.recorder.event(hpa, 'Warning', 'FailedGetScale', why);
      set(
        'AbleToScale',
        'False',
        'FailedGetScale',
        `the HPA controller was unable to get the target's current scale: ${why}`,
      );
      await this.writeStatus(s, keepStatus(old?.currentReplicas ?? 0));
      return;
    }
    set('AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
    const current = scale.spec?.replicas ?? 0;
    const nowMs = Date.parse(s.now);
    if (!this.history.has(key)) this.history.set(key, newScalingHistory(current, nowMs));
    const history = this.history.get(key)!;

    let desired = 0;
    let reason = '';
    let rescale = true;
    let metricStatuses: MetricStatus[] | undefined;
    if (current === 0 && minReplicas !== 0) {
      rescale = false;
      set(
        'ScalingActive',
        'False',
        'ScalingDisabled',
        'scaling is disabled since the replica count of the target is zero',
      );
    } else if (current > spec.maxReplicas) {
      desired = spec.maxReplicas;
      reason = 'Current number of replicas above Spec.MaxReplicas';
    } else if (current < minReplicas) {
      desired = minReplicas;
      reason = 'Current number of replicas below Spec.MinReplicas';
    } else {
      let computed: { replicas: number; metric: string; statuses: MetricStatus[] };
      try {
        computed = await this.computeReplicasForMetrics(s, scale, set);
      } catch (err) {
        await this.writeStatus(s, keepStatus(current));
        this.ctx.recorder.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', (err as Error).message);
        // Said as a log line by the worker, which tries again a sync period later.
        throw new Error(
          `failed to compute desired number of replicas based on listed metrics for ${ref.kind}/${ns}/${ref.name}: ${(err as Error).message}`,
        );
      }
      metricStatuses = computed.statuses;
      const args = {
        currentReplicas: current,
        desiredReplicas: computed.replicas,
        minReplicas,
        maxReplicas: spec.maxReplicas,
      };
      const n = spec.behavior
        ? normalizeWithBehavior(history, args, defaultedBehavior(spec.behavior, this.o.downscaleStabilizationMs), nowMs)
        : normalizeWithoutBehavior(history, args, this.o.downscaleStabilizationMs, nowMs);
      set('AbleToScale', n.ableToScale.status, n.ableToScale.reason, n.ableToScale.message);
      set('ScalingLimited', n.scalingLimited.status, n.scalingLimited.reason, n.scalingLimited.message);
      desired = n.replicas;
      rescale = desired !== current;
      if (desired > current) reason = `${computed.metric} above target`;
      if (desired < current) reason = 'All metrics below target';
    }

    let lastScaleTime = old?.lastScaleTime;
    if (rescale) {
      try {
        await this.ctx.client
          .resource(kind!)
          .namespace(ns)
          .patch(ref.name, 'merge', { spec: { replicas: desired } }, { subresource: 'scale', signal: this.ctx.signal });
      } catch (err) {
        const msg = (err as Error).message;
        this.ctx.recorder.event(
          hpa,
          'Warning',
          'FailedRescale',
          `New size: ${desired}; reason: ${reason}; error: ${msg}`,
        );
        set(
          'AbleToScale',
          'False',
          'FailedUpdateScale',
          `the HPA controller was unable to update the target scale: ${msg}`,
        );
        await this.writeStatus(s, keepStatus(current));
        throw err;
      }
      set(
        'AbleToScale',
        'True',
        'SucceededRescale',
        `the HPA controller was able to update the target scale to ${desired}`,
      );
      this.ctx.recorder.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      if (spec.behavior)
        recordScaleEvent(
          history,
          defaultedBehavior(spec.behavior, this.o.downscaleStabilizationMs),
          current,
          desired,
          nowMs,
        );
      this.ctx.logger.info('Successful rescale', {
        hpa: key,
        currentReplicas: current,
        desiredReplicas: desired,
        reason,
      });
      lastScaleTime = s.now;
    } else {
      desired = current;
    }
    await this.writeStatus(s, {
      currentReplicas: current,
      desiredReplicas: desired,
      ...(lastScaleTime ? { lastScaleTime } : {}),
      ...(metricStatuses ? { currentMetrics: metricStatuses } : {}),
    });
  }

  /**
   * 1.21's `computeReplicasForMetrics`: the highest proposal of the valid metrics. Throws (after setting
   * ScalingActive False from the first invalid metric) when every metric is invalid, or some are and the valid
   * ones would scale down.
   */
  private async computeReplicasForMetrics(
    s: SyncState,
    scale: Scale,
    set: (type: string, status: 'True' | 'False', reason: string, message: string) => void,
  ): Promise<{ replicas: number; metric: string; statuses: MetricStatus[] }> {
    const text = scale.status?.selector ?? '';
    if (!text) {
      this.ctx.recorder.event(s.hpa, 'Warning', 'SelectorRequired', 'selector is required');
      set('ScalingActive', 'False', 'InvalidSelector', "the HPA target's scale is missing a selector");
      throw new Error('selector is required');
    }
    let selector: Selector;
    try {
      selector = parseSelector(text);
    } catch (err) {
      if (!isLabelSelectorParseError(err)) throw err;
      const msg = `couldn't convert selector into a corresponding internal selector object: ${err.message}`;
      this.ctx.recorder.event(s.hpa, 'Warning', 'InvalidSelector', msg);
      set('ScalingActive', 'False', 'InvalidSelector', msg);
      throw new Error(msg);
    }
    const specs = s.v2.spec!.metrics ?? [];
    const current = scale.spec?.replicas ?? 0;
    const statuses: MetricStatus[] = specs.map(() => ({ type: '' }));
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let first: MetricError | undefined;
    for (const [i, m] of specs.entries()) {
      try {
        const p = await this.computeReplicasForMetric(s, m, current, text, selector);
        statuses[i] = p.status;
        if (replicas === 0 || p.replicas > replicas) {
          replicas = p.replicas;
          metric = p.metric;
        }
      } catch (err) {
        const e = err instanceof MetricError ? err : new MetricError('FailedGetResourceMetric', (err as Error).message);
        this.ctx.recorder.event(s.hpa, 'Warning', e.reason, e.message);
        first ??= e;
        invalid++;
      }
    }
    if (first && (invalid >= specs.length || replicas < current)) {
      set('ScalingActive', 'False', first.reason, `the HPA was unable to compute the replica count: ${first.message}`);
      throw new Error(`invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${first.message}`);
    }
    set(
      'ScalingActive',
      'True',
      'ValidMetricFound',
      `the HPA was able to successfully calculate a replica count from ${metric}`,
    );
    return { replicas, metric, statuses };
  }

  /** One metric's proposal; throws a MetricError carrying 1.21's condition reason. */
  private async computeReplicasForMetric(
    s: SyncState,
    m: MetricSpec,
    current: number,
    selectorText: string,
    selector: Selector,
  ): Promise<Proposal> {
    switch (m.type) {
      case 'Resource':
        return this.resourceProposal(s, m, current, selectorText, selector);
      case 'Pods':
        throw new MetricError(
          'FailedGetPodsMetric',
          `failed to get pods metric value: unable to get metric ${m.pods?.metric.name ?? ''}: the custom metrics API (custom.metrics.platform) is not supported yet by this controller`,
        );
      case 'Object':
        throw new MetricError(
          'FailedGetObjectMetric',
          `failed to get object metric value: unable to get metric ${m.object?.metric.name ?? ''}: the custom metrics API (custom.metrics.platform) is not supported yet by this controller`,
        );
      case 'External':
        throw new MetricError(
          'FailedGetExternalMetric',
          `failed to get external metric value: unable to get external metric ${m.external?.metric.name ?? ''}: the external metrics API (external.metrics.platform) is not supported yet by this controller`,
        );
      case 'ContainerResource':
        throw new MetricError(
          'FailedGetContainerResourceMetric',
          `failed to get ${m.containerResource?.name ?? ''} container metric value: container resource metrics (the HPAContainerMetrics feature, off in 1.21) are not supported yet by this controller`,
        );
      default:
        throw new MetricError('InvalidMetricSourceType', `unknown metric source type "${m.type}"`);
    }
  }

  /** 1.21's `computeStatusForResourceMetric`: utilization of requests, or an average value. */
  private async resourceProposal(
    s: SyncState,
    m: MetricSpec,
    current: number,
    selectorText: string,
    selector: Selector,
  ): Promise<Proposal> {
    const resource = m.resource?.name ?? '';
    const target = m.resource?.target;
    const fail = (why: string): MetricError =>
      new MetricError('FailedGetResourceMetric', `failed to get ${resource} utilization: ${why}`);
    if (!target || (target.averageValue === undefined && target.averageUtilization == null))
      throw new MetricError(
        'FailedGetResourceMetric',
        'invalid resource metric source: neither a utilization target nor a value target was set',
      );
    const ns = s.hpa.metadata!.namespace!;
    let samples: ResourceMetrics;
    try {
      samples = await this.metricsClient.resourceMetric(resource, ns, selectorText, this.ctx.signal);
      this.warnedNoMetrics = false;
    } catch (err) {
      if ((err as Error).message.endsWith(METRICS_NOT_SERVED) && !this.warnedNoMetrics) {
        this.warnedNoMetrics = true;
        this.ctx.logger.info(
          'No resource metrics API (metrics.platform) is served: horizontal pod autoscalers keep their replica count within their limits and report FailedGetResourceMetric',
        );
      }
      throw fail(`unable to get metrics for resource ${resource}: ${(err as Error).message}`);
    }
    const pods = (this.pods.indexer.byIndex(NAMESPACE_INDEX, ns) as Pod[]).filter((p) =>
      selector.matches(p.metadata?.labels ?? undefined),
    );
    const input = {
      currentReplicas: current,
      resource,
      metrics: samples.metrics,
      pods,
      config: this.calculator,
      nowMs: Date.parse(s.now),
    };
    try {
      if (target.averageValue !== undefined) {
        const want = parseQuantity(String(target.averageValue)).milliValueNumber();
        const r = rawResourceReplicas(input, want);
        return {
          replicas: r.replicas,
          metric: `${resource} resource`,
          status: {
            type: 'Resource',
            resource: { name: resource, current: { averageValue: newMilliQuantity(r.utilization).toString() } },
          },
        };
      }
      const r = resourceReplicas(input, target.averageUtilization!);
      return {
        replicas: r.replicas,
        metric: `${resource} resource utilization (percentage of request)`,
        status: {
          type: 'Resource',
          resource: {
            name: resource,
            current: {
              averageUtilization: r.utilization,
              averageValue: newMilliQuantity(r.rawUtilization).toString(),
            },
          },
        },
      };
    } catch (err) {
      throw fail((err as Error).message);
    }
  }

  private async readScale(kind: Kind, ns: string, name: string): Promise<Scale> {
    const api = this.ctx.client.resource(kind).namespace(ns);
    return api.rest.request<Scale>({ method: 'GET', path: api.path(name, 'scale'), signal: this.ctx.signal });
  }

  /**
   * Writes the v2 status as autoscaling/v1 does (1.21's `updateStatusIfNeeded` through the v1 conversion): the
   * conditions and the metrics v1 has no field for go to their annotations, the rest to `/status`; each write
   * only when it changes something.
   */
  private async writeStatus(s: SyncState, status: V2Status): Promise<void> {
    const full: V2Status = { ...status, conditions: s.conditions as V2Status['conditions'] };
    const v1 = hpaToV1({
      apiVersion: 'autoscaling/v2beta2',
      kind: 'HorizontalPodAutoscaler',
      metadata: {},
      status: full,
    });
    const api = this.ctx.client.resource(HorizontalPodAutoscalerKind).namespace(s.hpa.metadata!.namespace!);
    const name = s.hpa.metadata!.name!;
    const annotations: Record<string, string | null> = {};
    for (const key of [HPA_ANNOTATIONS.conditions, HPA_ANNOTATIONS.currentMetrics]) {
      const want = v1.metadata?.annotations?.[key];
      if (s.hpa.metadata?.annotations?.[key] !== want) annotations[key] = want ?? null;
    }
    if (Object.keys(annotations).length > 0)
      await api.patch(name, 'merge', { metadata: { annotations } }, { signal: this.ctx.signal });
    const next = (v1.status ?? {}) as Record<string, unknown>;
    const prev = (s.hpa.status ?? {}) as Record<string, unknown>;
    const patch: Record<string, unknown> = {};
    for (const k of new Set([...Object.keys(prev), ...Object.keys(next)]))
      if (JSON.stringify(prev[k]) !== JSON.stringify(next[k])) patch[k] = next[k] ?? null;
    if (Object.keys(patch).length > 0)
      await api.patch(name, 'merge', { status: patch }, { subresource: 'status', signal: this.ctx.signal });
  }
}

/** What of an HPA calls for a sync when it changes: its spec and the v2 spec kept in annotations. */
function specText(h: HorizontalPodAutoscaler): string {
  const a = h.metadata?.annotations ?? {};
  return JSON.stringify([h.spec, a[HPA_ANNOTATIONS.metrics], a[HPA_ANNOTATIONS.behavior]]);
}

/** The conditions of a v1 HPA, from its annotation (none when it is missing or unreadable). */
export function readConditions(hpa: ApiObject): Condition[] {
  try {
    const v = JSON.parse(hpa.metadata?.annotations?.[CONDITIONS_ANNOTATION] ?? '[]') as unknown;
    return Array.isArray(v) ? (v as Condition[]) : [];
  } catch {
    return [];
  }
}

async function run(ctx: ControllerContext, o: HPAControllerConfig): Promise<void> {
  const a = new Autoscaler(ctx, o);
  ctx.signal.addEventListener('abort', () => a.queue.shutDown(), { once: true });
  if (!(await a.synced())) return;
  const timer = setInterval(() => a.resyncAll(), o.syncPeriodMs);
  try {
    await runWorkers(
      a.queue,
      1,
      (k) => a.sync(k),
      (key, err) => {
        if (!ctx.signal.aborted)
          ctx.logger.info('Failed to sync a horizontal pod autoscaler', { hpa: key, error: String(err) });
      },
    );
  } finally {
    clearInterval(timer);
  }
}

/** The `horizontalpodautoscaling` controller. */
export const horizontalPodAutoscalingController: ControllerDefinition<HPAControllerConfig> = {
  name: 'horizontalpodautoscaling',
  enabledByDefault: true,
  serviceAccount: 'horizontal-pod-autoscaler',
  options: () => new HPAControllerOptions(),
  run,
};
