/**
 * The horizontal pod autoscaler controller (model: Kubernetes 1.21 `pkg/controller/podautoscaler/horizontal.go`).
 * The API server serves autoscaling/v1 only; as 1.21 does for v1 objects, the v2 conditions are kept in the
 * annotation `autoscaling.alpha.kubernetes.io/conditions`. Every `--horizontal-pod-autoscaler-sync-period` each
 * HPA reads its target's scale subresource and:
 * - a target scaled to zero disables autoscaling (ScalingActive False, ScalingDisabled);
 * - a replica count above `maxReplicas` or below `minReplicas` is rescaled into range (SuccessfulRescale);
 * - otherwise the replica count comes from the CPU utilization of the target's pods, read from the resource
 *   metrics API (`metrics.platform`). No such API is served here, so, as 1.21 does without a metrics server, the
 *   HPA gets ScalingActive False with reason FailedGetResourceMetric, the Events FailedGetResourceMetric and
 *   FailedComputeMetricsReplicas, and keeps its replica count. Said once in the log.
 * The recommendation arithmetic (`--horizontal-pod-autoscaler-tolerance` and `-downscale-stabilization`) is in
 * `replicas.ts`; `-cpu-initialization-period` and `-initial-readiness-delay` only concern CPU samples, of which
 * there are none without a metrics API.
 */
import {
  type ApiObject,
  DeploymentKind,
  type HorizontalPodAutoscaler,
  HorizontalPodAutoscalerKind,
  isNotFound,
  type Kind,
  ReplicaSetKind,
  ReplicationControllerKind,
  type Scale,
  StatefulSetKind,
} from '@platform/api';
import { metaNamespaceKey, runWorkers, splitMetaNamespaceKey, WorkQueue } from '@platform/client';
import { durationFlag, type FlagDef, floatFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { waitForSynced } from '../util/wait-synced';
import { type Condition, setCondition } from './replicas';

/** Where 1.21 keeps the v2 conditions of an autoscaling/v1 HPA. */
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';

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

/** 1.21's error when the resource metrics API answers 404. */
export const NO_METRICS_ERROR =
  'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.platform)';

class Autoscaler {
  private readonly hpas;
  readonly queue: WorkQueue<string>;
  private warnedNoMetrics = false;

  constructor(
    private readonly ctx: ControllerContext,
    readonly o: HPAControllerConfig,
  ) {
    this.hpas = ctx.informers.informerFor(HorizontalPodAutoscalerKind);
    this.queue = new WorkQueue<string>({ name: 'horizontalpodautoscaler', metrics: ctx.metrics });
    const add = (h: HorizontalPodAutoscaler): void => this.queue.add(metaNamespaceKey(h));
    this.hpas.addEventHandler({
      onAdd: add,
      onUpdate: (old, h) => {
        // Our own status and annotation writes do not call for another sync; a spec change does.
        if (JSON.stringify(old.spec) !== JSON.stringify(h.spec)) add(h);
      },
    });
  }

  synced(): Promise<boolean> {
    return waitForSynced(this.ctx.signal, [this.hpas]);
  }

  resyncAll(): void {
    for (const h of this.hpas.indexer.list()) this.queue.add(metaNamespaceKey(h));
  }

  async sync(key: string): Promise<void> {
    const cached: HorizontalPodAutoscaler | undefined = this.hpas.indexer.get(key);
    if (!cached) return;
    const { namespace: ns, name } = splitMetaNamespaceKey(key);
    // The cache may be behind our last write: work from the stored object.
    let hpa: HorizontalPodAutoscaler;
    try {
      hpa = await this.ctx.client
        .resource(HorizontalPodAutoscalerKind)
        .namespace(ns)
        .get(name, { signal: this.ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const conditions = readConditions(hpa);
    const now = new Date().toISOString();
    const set = (type: string, status: 'True' | 'False', reason: string, message: string): void =>
      setCondition(conditions, { type, status, reason, message }, now);
    const spec = hpa.spec!;
    const minReplicas = spec.minReplicas ?? 1;
    const ref = spec.scaleTargetRef;
    const kind = targetKind(ref);
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
      const msg = `the HPA controller was unable to get the target's current scale: ${why}`;
      this.ctx.recorder.event(hpa, 'Warning', 'FailedGetScale', why);
      set('AbleToScale', 'False', 'FailedGetScale', msg);
      await this.writeStatus(hpa, conditions, hpa.status?.currentReplicas ?? 0, hpa.status?.desiredReplicas ?? 0);
      return;
    }
    set('AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
    const current = scale.spec?.replicas ?? 0;
    let desired = current;
    let reason = '';
    if (current === 0 && minReplicas !== 0) {
      desired = 0;
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
      // The CPU utilization would come from the resource metrics API, which is not served.
      if (!this.warnedNoMetrics) {
        this.warnedNoMetrics = true;
        this.ctx.logger.info(
          'No resource metrics API (metrics.platform) is served: horizontal pod autoscalers keep their replica count within their limits and report FailedGetResourceMetric',
        );
      }
      this.ctx.recorder.event(hpa, 'Warning', 'FailedGetResourceMetric', NO_METRICS_ERROR);
      set(
        'ScalingActive',
        'False',
        'FailedGetResourceMetric',
        `the HPA was unable to compute the replica count: ${NO_METRICS_ERROR}`,
      );
      this.ctx.recorder.event(
        hpa,
        'Warning',
        'FailedComputeMetricsReplicas',
        `invalid metrics (1 invalid out of 1), first error is: ${NO_METRICS_ERROR}`,
      );
      await this.writeStatus(hpa, conditions, current, hpa.status?.desiredReplicas ?? current);
      return;
    }
    let scaledAt: string | undefined;
    if (reason) {
      try {
        await this.ctx.client
          .resource(kind!)
          .namespace(ns)
          .patch(ref.name, 'merge', { spec: { replicas: desired } }, { subresource: 'scale', signal: this.ctx.signal });
      } catch (err) {
        this.ctx.recorder.event(
          hpa,
          'Warning',
          'FailedRescale',
          `New size: ${desired}; reason: ${reason}; error: ${String(err)}`,
        );
        set(
          'AbleToScale',
          'False',
          'FailedUpdateScale',
          `the HPA controller was unable to update the target scale: ${String(err)}`,
        );
        await this.writeStatus(hpa, conditions, current, hpa.status?.desiredReplicas ?? current);
        throw err;
      }
      set(
        'AbleToScale',
        'True',
        'SucceededRescale',
        `the HPA controller was able to update the target scale to ${desired}`,
      );
      this.ctx.recorder.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      scaledAt = now;
    }
    await this.writeStatus(hpa, conditions, current, desired, scaledAt);
  }

  private async readScale(kind: Kind, ns: string, name: string): Promise<Scale> {
    const api = this.ctx.client.resource(kind).namespace(ns);
    return api.rest.request<Scale>({ method: 'GET', path: api.path(name, 'scale'), signal: this.ctx.signal });
  }

  /** Writes the conditions annotation and the status, each only when it changed. */
  private async writeStatus(
    hpa: HorizontalPodAutoscaler,
    conditions: Condition[],
    current: number,
    desired: number,
    lastScaleTime?: string,
  ): Promise<void> {
    const api = this.ctx.client.resource(HorizontalPodAutoscalerKind).namespace(hpa.metadata!.namespace!);
    const name = hpa.metadata!.name!;
    const text = JSON.stringify(conditions);
    if (hpa.metadata?.annotations?.[CONDITIONS_ANNOTATION] !== text)
      await api.patch(
        name,
        'merge',
        { metadata: { annotations: { [CONDITIONS_ANNOTATION]: text } } },
        { signal: this.ctx.signal },
      );
    const status = {
      ...hpa.status,
      observedGeneration: hpa.metadata?.generation,
      currentReplicas: current,
      desiredReplicas: desired,
      ...(lastScaleTime ? { lastScaleTime } : {}),
    };
    if (JSON.stringify(status) !== JSON.stringify(hpa.status))
      await api.patch(name, 'merge', { status }, { subresource: 'status', signal: this.ctx.signal });
  }
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
