/**
 * The job controller (model: Kubernetes 1.21 `pkg/controller/job/job_controller.go`): runs a Job's pods to
 * completion. It keeps `parallelism` pods active (fewer once fewer completions remain), counts succeeded and failed
 * pods into the status, completes the job once `completions` pods succeeded (or, without completions, once one
 * succeeded and none is active), and fails it when `backoffLimit` is exceeded or it ran past
 * `activeDeadlineSeconds` (its active pods are then deleted). A job with new failed pods is synced again after an
 * exponential back-off (10 s doubling, at most 6 min), so replacements of failing pods slow down. With the
 * IndexedJob gate, `completionMode: Indexed` gives each pod a completion index (see `indexed.ts`).
 */
import {
  type ApiObject,
  isConflict,
  isNotFound,
  type Kind,
  type Job,
  JobKind,
  labelSelectorAsSelector,
  type Pod,
  PodKind,
  type Selector,
  semanticEqual,
} from '@platform/api';
import {
  isDeletedFinalStateUnknown,
  ItemExponentialFailureRateLimiter,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  type ResourceClient,
  WorkQueue,
} from '@platform/client';
import { type FeatureGateReader, type FlagDef } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import {
  claimObjects,
  compareForDeletion,
  controllerRefOf,
  errorText,
  Expectations,
  isPodActive,
  newControllerRef,
  ownerStillExists,
  podFromTemplate,
  runWorkerLoop,
  slowStartBatch,
} from '../workload-util/workload-util';
import {
  addCompletionIndex,
  firstPendingIndexes,
  formatIndexes,
  isIndexedJob,
  redundantIndexedPods,
  succeededIndexes,
} from './indexed';

/** What the job controller runs with. */
export interface JobControllerConfig {
  /** Workers (`ConcurrentJobSyncs`; 1.21 has no flag for it). */
  concurrentJobSyncs: number;
  /** The IndexedJob feature gate (alpha in 1.21, off by default). */
  indexedJob: boolean;
  /** First back-off after a pod failure (`DefaultJobBackOff`, 10 s); doubles up to {@link backoffMaxMs}. */
  backoffBaseMs: number;
  /** Longest back-off (`MaxJobBackOff`, 6 min). */
  backoffMaxMs: number;
  /** The clock (tests move it). */
  now: () => number;
}

/** The job controller's option family: no flag in 1.21 (`ConcurrentJobSyncs` is 5). */
export class JobControllerOptions extends ControllerOptions<JobControllerConfig> {
  concurrentJobSyncs = 5;
  private collected?: { featureGate?: FeatureGateReader };

  constructor() {
    super('Job controller');
  }

  protected flagDefs(): FlagDef[] {
    return [];
  }

  /**
   * Keeps the daemon's collected configuration: its feature gate (`--feature-gates`, applied after this family)
   * decides IndexedJob when {@link values} is read.
   */
  override applyTo(config?: { featureGate?: FeatureGateReader }): void {
    this.collected = config;
  }

  values(): JobControllerConfig {
    return {
      concurrentJobSyncs: this.concurrentJobSyncs,
      indexedJob: this.collected?.featureGate?.enabled('IndexedJob') ?? false,
      backoffBaseMs: 10_000,
      backoffMaxMs: 360_000,
      now: Date.now,
    };
  }
}

const JOB_KIND = JobKind as unknown as Kind;

/** Pods created at once at most per sync (`burstReplicas`). */
const BURST_REPLICAS = 500;

function condition(job: Job, type: string): boolean {
  return job.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

/** A job with a Complete or Failed condition that is True (`IsJobFinished`). */
export function isJobFinished(job: Job): boolean {
  return condition(job, 'Complete') || condition(job, 'Failed');
}

function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** One running job controller. */
class JobController {
  private readonly jobs;
  private readonly pods;
  private readonly queue: WorkQueue<string>;
  private readonly limiter: ItemExponentialFailureRateLimiter<string>;
  private readonly expectations: Expectations;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cfg: JobControllerConfig,
  ) {
    this.jobs = ctx.informers.informerFor(JobKind);
    this.pods = ctx.informers.informerFor(PodKind);
    this.limiter = new ItemExponentialFailureRateLimiter<string>(cfg.backoffBaseMs, cfg.backoffMaxMs);
    this.queue = new WorkQueue<string>({ name: 'job', metrics: ctx.metrics, rateLimiter: this.limiter });
    this.expectations = new Expectations(cfg.now);
    this.jobs.addEventHandler({
      onAdd: (j) => this.enqueue(j, true),
      onUpdate: (old, cur) => {
        this.enqueue(cur, true);
        const ads = cur.spec?.activeDeadlineSeconds;
        if (ads != null && ads !== old.spec?.activeDeadlineSeconds && cur.status?.startTime) {
          const left = Date.parse(cur.status.startTime) + ads * 1000 - cfg.now();
          this.queue.addAfter(metaNamespaceKey(cur), Math.max(0, left));
        }
      },
      onDelete: (j) => this.enqueue(isDeletedFinalStateUnknown(j) ? j.obj : j, true),
    });
    this.pods.addEventHandler({
      onAdd: (p) => this.podAdded(p),
      onUpdate: (old, cur) => this.podUpdated(old, cur),
      onDelete: (p) => this.podDeleted(isDeletedFinalStateUnknown(p) ? p.obj : p),
    });
  }

  async run(): Promise<void> {
    await runWorkerLoop(
      this.ctx,
      this.queue,
      this.cfg.concurrentJobSyncs,
      () => this.jobs.hasSynced() && this.pods.hasSynced(),
      (key) => this.sync(key),
    );
  }

  /** The back-off of a key: 0 before any failure, then base × 2^(failures-1) (`getBackoff`). */
  private backoff(key: string): number {
    const n = this.limiter.numRequeues(key);
    return n <= 0 ? 0 : Math.min(this.cfg.backoffMaxMs, this.cfg.backoffBaseMs * 2 ** (n - 1));
  }

  private enqueue(job: ApiObject, immediate: boolean): void {
    const key = metaNamespaceKey(job);
    this.queue.addAfter(key, immediate ? 0 : this.backoff(key));
  }

  private jobOf(pod: Pod): Job | undefined {
    const ref = controllerRefOf(pod);
    if (!ref || ref.kind !== 'Job' || ref.apiVersion.split('/')[0] !== 'batch') return undefined;
    const job = this.jobs.indexer.get(`${pod.metadata?.namespace}/${ref.name}`);
    return job?.metadata?.uid === ref.uid ? job : undefined;
  }

  /** Jobs of the pod's namespace whose selector matches it (for orphans). */
  private jobsMatching(pod: Pod): Job[] {
    return this.jobs.indexer.byIndex(NAMESPACE_INDEX, pod.metadata?.namespace ?? '').filter((j) => {
      try {
        return labelSelectorAsSelector(j.spec?.selector).matches(pod.metadata?.labels ?? {});
      } catch {
        return false;
      }
    });
  }

  private podAdded(pod: Pod): void {
    if (pod.metadata?.deletionTimestamp) return this.podDeleted(pod);
    const job = this.jobOf(pod);
    if (job) {
      this.expectations.creationObserved(metaNamespaceKey(job));
      return this.enqueue(job, true);
    }
    if (!controllerRefOf(pod)) for (const j of this.jobsMatching(pod)) this.enqueue(j, true);
  }

  private podUpdated(old: Pod, cur: Pod): void {
    if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
    if (cur.metadata?.deletionTimestamp) return this.podDeleted(cur);
    // A failed pod brings its job back only after the back-off: replacements of failing pods slow down.
    const immediate = cur.status?.phase !== 'Failed';
    const oldJob = this.jobOf(old);
    const job = this.jobOf(cur);
    if (oldJob && oldJob.metadata?.uid !== job?.metadata?.uid) this.enqueue(oldJob, immediate);
    if (job) return this.enqueue(job, immediate);
    if (!controllerRefOf(cur)) for (const j of this.jobsMatching(cur)) this.enqueue(j, immediate);
  }

  private podDeleted(pod: Pod): void {
    const job = this.jobOf(pod);
    if (!job) return;
    const key = metaNamespaceKey(job);
    this.expectations.deletionObserved(key, metaNamespaceKey(pod));
    this.enqueue(job, true);
  }

  private async sync(key: string): Promise<boolean> {
    const cached = this.jobs.indexer.get(key);
    if (!cached) {
      this.expectations.delete(key);
      return true;
    }
    // List items may come without their kind; Events need it in involvedObject.
    const job: Job = { ...structuredClone(cached), apiVersion: JobKind.apiVersion, kind: JobKind.kind };
    if (isJobFinished(job)) return true;
    const spec = job.spec ?? { template: {} };
    if (isIndexedJob(job) && !this.cfg.indexedJob) {
      this.ctx.recorder.event(
        job,
        'Warning',
        'IndexedJobDisabled',
        'Skipped Indexed Job sync because feature is disabled.',
      );
      return true;
    }
    const previousRetry = this.limiter.numRequeues(key);
    const needsSync = this.expectations.satisfied(key);
    const pods = await this.claimPods(job);
    const activePods = pods.filter(isPodActive);
    let active = activePods.length;
    const completions = spec.completions ?? undefined;
    const indexed = isIndexedJob(job) && completions != null;
    const doneIndexes = indexed ? succeededIndexes(pods, completions) : [];
    const succeeded = indexed ? doneIndexes.length : pods.filter((p) => p.status?.phase === 'Succeeded').length;
    let failed = pods.filter((p) => p.status?.phase === 'Failed').length;
    const now = this.cfg.now();
    const status = (job.status ??= {});
    const conditionsBefore = status.conditions?.length ?? 0;

    if (!status.startTime) {
      status.startTime = iso(now);
      if (spec.activeDeadlineSeconds != null) this.queue.addAfter(key, spec.activeDeadlineSeconds * 1000);
    }
    const backoffLimit = spec.backoffLimit ?? 6;
    const parallelism = spec.parallelism ?? 1;
    const hasNewFailure = failed > (status.failed ?? 0);
    // 1.21 counts retries by the key's requeues; failed pods count too, so a restarted controller agrees.
    const exceedsBackoffLimit =
      hasNewFailure && active !== parallelism && Math.max(previousRetry + 1, failed) > backoffLimit;

    let failureReason: string | undefined;
    let failureMessage = '';
    if (exceedsBackoffLimit || this.pastBackoffLimitOnFailure(job, activePods)) {
      failureReason = 'BackoffLimitExceeded';
      failureMessage = 'Job has reached the specified backoff limit';
    } else if (
      spec.activeDeadlineSeconds != null &&
      now - Date.parse(status.startTime) >= spec.activeDeadlineSeconds * 1000
    ) {
      failureReason = 'DeadlineExceeded';
      failureMessage = 'Job was active longer than specified deadline';
    }

    if (failureReason && !needsSync) {
      // Pods it created or deleted are not all in the cache yet: fail the job once they are, so that every
      // active pod is deleted and counted (the expectations' observations requeue the key; this is the fallback).
      this.queue.addAfter(key, 1000);
      return true;
    }
    if (failureReason) {
      const deleted = await this.deletePods(job, key, activePods);
      failed += deleted;
      active -= deleted;
      this.addCondition(job, 'Failed', failureReason, failureMessage, now);
      this.ctx.recorder.event(job, 'Warning', failureReason, failureMessage);
    } else {
      if (needsSync && !job.metadata?.deletionTimestamp) {
        active = await this.manageJob(job, key, activePods, succeeded, doneIndexes);
      }
      let complete: boolean;
      if (indexed) complete = doneIndexes.length >= completions;
      else if (completions == null) complete = succeeded > 0 && active === 0;
      else complete = succeeded >= completions;
      if (complete) {
        this.addCondition(job, 'Complete', undefined, undefined, now);
        status.completionTime = iso(now);
        this.ctx.recorder.event(job, 'Normal', 'Completed', 'Job completed');
        if (completions != null) {
          if (active > 0) {
            this.ctx.recorder.event(
              job,
              'Warning',
              'TooManyActivePods',
              'Too many active pods running after completion count reached',
            );
          }
          if (succeeded > completions) {
            this.ctx.recorder.event(
              job,
              'Warning',
              'TooManySucceededPods',
              'Too many succeeded pods running after completion count reached',
            );
          }
        }
      }
    }
    const completedIndexes = indexed ? formatIndexes(doneIndexes) : undefined;
    const changed =
      status.active !== active ||
      status.succeeded !== succeeded ||
      status.failed !== failed ||
      (status.conditions?.length ?? 0) !== conditionsBefore ||
      cached.status?.startTime !== status.startTime ||
      (indexed && (cached.status?.completedIndexes ?? '') !== completedIndexes);
    if (changed) {
      status.active = active;
      status.succeeded = succeeded;
      status.failed = failed;
      if (indexed) status.completedIndexes = completedIndexes;
      if (!(await this.updateStatus(job, cached))) return false;
      if (hasNewFailure && !isJobFinished(job)) {
        // As 1.21: an error re-adds the key after the back-off, so the next replacement waits longer.
        throw new Error(`failed pod(s) detected for job key "${key}"`);
      }
      return true;
    }
    return !hasNewFailure;
  }

  /** Restart counts of an OnFailure job's active pods reached the back-off limit (`pastBackoffLimitOnFailure`). */
  private pastBackoffLimitOnFailure(job: Job, active: Pod[]): boolean {
    if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
    let restarts = 0;
    for (const p of active) {
      if (p.status?.phase !== 'Running') continue;
      for (const s of [...(p.status.initContainerStatuses ?? []), ...(p.status.containerStatuses ?? [])]) {
        restarts += s.restartCount ?? 0;
      }
    }
    const limit = job.spec.backoffLimit ?? 6;
    return limit === 0 ? restarts > 0 : restarts >= limit;
  }

  private addCondition(job: Job, type: string, reason: string | undefined, message: string | undefined, now: number) {
    const t = iso(now);
    const status = (job.status ??= {});
    status.conditions = [
      ...(status.conditions ?? []),
      {
        type,
        status: 'True',
        lastProbeTime: t,
        lastTransitionTime: t,
        ...(reason ? { reason } : {}),
        ...(message ? { message } : {}),
      },
    ];
  }

  private selectorOf(job: Job): Selector {
    return labelSelectorAsSelector(job.spec?.selector);
  }

  private async claimPods(job: Job): Promise<Pod[]> {
    let selector: Selector;
    try {
      selector = this.selectorOf(job);
    } catch {
      return [];
    }
    const ns = job.metadata?.namespace ?? '';
    const candidates = this.pods.indexer.byIndex(NAMESPACE_INDEX, ns);
    return claimObjects(
      this.ctx.client.resource(PodKind, ns),
      job,
      JOB_KIND,
      (p) => selector.matches(p.metadata?.labels ?? {}),
      candidates,
      ownerStillExists(this.ctx.client.resource(JobKind, ns) as unknown as ResourceClient, job),
    );
  }

  /** Deletes `pods` (in parallel), recording each; resolves with how many were deleted. */
  private async deletePods(job: Job, key: string, pods: Pod[]): Promise<number> {
    if (pods.length === 0) return 0;
    const ns = job.metadata?.namespace ?? '';
    const client = this.ctx.client.resource(PodKind, ns);
    this.expectations.expect(key, 0, pods.map(metaNamespaceKey));
    let deleted = 0;
    let firstError: unknown;
    await Promise.all(
      pods.map(async (p) => {
        const name = p.metadata?.name ?? '';
        try {
          await client.delete(name);
          deleted++;
          this.ctx.recorder.event(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
        } catch (err) {
          this.expectations.deletionObserved(key, metaNamespaceKey(p));
          if (isNotFound(err)) {
            deleted++;
            return;
          }
          this.ctx.recorder.event(job, 'Warning', 'FailedDelete', `Error deleting: ${errorText(err)}`);
          firstError ??= err;
        }
      }),
    );
    if (firstError) throw firstError;
    return deleted;
  }

  /** Creates or deletes pods so that the right number is active; resolves with the new active count. */
  private async manageJob(job: Job, key: string, active: Pod[], succeeded: number, done: number[]): Promise<number> {
    const spec = job.spec ?? { template: {} };
    const parallelism = spec.parallelism ?? 1;
    const completions = spec.completions ?? undefined;
    const indexed = isIndexedJob(job) && completions != null;
    let count = active.length;

    // Pods to remove: redundant indexed pods, then the worst-ranked ones over parallelism.
    const toRemove: Pod[] = indexed ? redundantIndexedPods(active, done, completions) : [];
    const rest = active.filter((p) => !toRemove.includes(p)).sort(compareForDeletion);
    const over = count - toRemove.length - parallelism;
    if (over > 0) toRemove.push(...rest.slice(0, over));
    if (toRemove.length > 0) {
      count -= await this.deletePods(job, key, toRemove);
      return count;
    }

    let wantActive: number;
    if (completions == null) wantActive = succeeded > 0 ? count : parallelism;
    else wantActive = Math.max(0, Math.min(completions - succeeded, parallelism));
    let diff = Math.min(wantActive - count, BURST_REPLICAS);
    if (diff <= 0) return count;
    const indexes = indexed ? firstPendingIndexes(active, done, diff, completions) : [];
    if (indexed) diff = indexes.length;
    if (diff <= 0) return count;

    const ns = job.metadata?.namespace ?? '';
    const client = this.ctx.client.resource(PodKind, ns);
    const ref = newControllerRef(job, JOB_KIND);
    this.expectations.expect(key, diff, []);
    const { successes, error } = await slowStartBatch(diff, 1, async (i) => {
      const index = indexes[i];
      const pod = podFromTemplate(spec.template, job, ref, {
        generateName: index === undefined ? `${job.metadata?.name}-` : `${job.metadata?.name}-${index}-`,
      });
      if (index !== undefined) addCompletionIndex(pod, index);
      try {
        const created = await client.create(pod);
        this.ctx.recorder.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata?.name}`);
      } catch (err) {
        this.expectations.creationObserved(key);
        this.ctx.recorder.event(job, 'Warning', 'FailedCreate', `Error creating: ${errorText(err)}`);
        throw err;
      }
    });
    // Creations never attempted will not be observed either.
    const attempted = successes + (error ? 1 : 0);
    for (let i = attempted; i < diff; i++) this.expectations.creationObserved(key);
    count += successes;
    if (error) throw error;
    return count;
  }

  /** Writes the status (the one computed from `job`); on a conflict re-reads the job and writes again. */
  /**
   * Writes the job's status computed from `base` (the cached job). On a conflict the status is written over the
   * newer job only when that job's status is still `base`'s: another client changed its metadata or spec. When
   * the status changed (this controller's own earlier write, not yet in the cache), resolves false without
   * writing: the status holds counts the pods no longer show (active pods deleted at a deadline count as failed),
   * and the stale job's would overwrite them. The newer job reaches the informer, which syncs it again.
   */
  private async updateStatus(job: Job, base: Job): Promise<boolean> {
    const client = this.ctx.client.resource(JobKind, job.metadata?.namespace ?? '');
    let target = job;
    for (let attempt = 0; ; attempt++) {
      try {
        await client.updateStatus(target);
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        if (!isConflict(err) || attempt >= 2) throw err;
        const fresh = await client.get(job.metadata?.name ?? '');
        if (fresh.metadata?.uid !== job.metadata?.uid) return false;
        if (!semanticEqual(fresh.status, base.status)) return false;
        target = { ...fresh, status: job.status };
      }
    }
  }
}

/** The `job` controller of the controller manager. */
export const jobController: ControllerDefinition<JobControllerConfig> = {
  name: 'job',
  enabledByDefault: true,
  options: () => new JobControllerOptions(),
  run: (ctx, cfg) => new JobController(ctx, cfg).run(),
};
