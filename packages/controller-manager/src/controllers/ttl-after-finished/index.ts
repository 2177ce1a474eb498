/**
 * The TTL-after-finished controller (model: Kubernetes 1.21 `pkg/controller/ttlafterfinished`): a Job with
 * `spec.ttlSecondsAfterFinished` is deleted (Foreground propagation, so its pods go first) that many seconds after
 * its Complete or Failed condition became True. Before deleting, the Job is read again from the API server, so a
 * Job whose TTL was just raised or removed is kept. The TTLAfterFinished feature gate (beta, on by default in
 * 1.21) switches it: when off, the controller does nothing.
 */
import { isNotFound, type Job, JobKind } from '@platform/api';
import { metaNamespaceKey, runWorkers, splitMetaNamespaceKey, WorkQueue } from '@platform/client';
import { CONTROL_PLANE_FEATURES, type FeatureGateReader, type FlagDef, INT32, intFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { waitForSynced } from '../util/wait-synced';

/** The values of the controller's options. */
export interface TTLAfterFinishedConfig {
  /** `--concurrent-ttl-after-finished-syncs`. */
  workers: number;
  /**
   * The TTLAfterFinished gate when the controller manager does not pass its gates (`ctx.featureGates`); the
   * gate's 1.21 default otherwise.
   */
  gateEnabled?: boolean;
}

/** `--concurrent-ttl-after-finished-syncs`. */
export class TTLAfterFinishedOptions extends ControllerOptions<TTLAfterFinishedConfig> {
  workers = 5;

  constructor() {
    super('TTL-after-finished controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-ttl-after-finished-syncs',
        'The number of TTL-after-finished controller workers that are allowed to sync concurrently.',
        this.workers,
        (v) => (this.workers = v),
        { range: INT32, type: 'int32' },
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.workers < 1
      ? [new Error(`--concurrent-ttl-after-finished-syncs must be at least 1, got ${this.workers}`)]
      : [];
  }

  values(): TTLAfterFinishedConfig {
    return { workers: this.workers };
  }
}

/** When the Job finished (its Complete or Failed condition turned True), in ms; undefined while it runs. */
export function finishedAt(job: Job): number | undefined {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') {
      const t = Date.parse(c.lastTransitionTime ?? '');
      return Number.isNaN(t) ? Date.now() : t;
    }
  }
  return undefined;
}

function needsCleanup(job: Job): boolean {
  const ttl = job.spec?.ttlSecondsAfterFinished;
  return ttl !== undefined && ttl !== null && finishedAt(job) !== undefined;
}

/** Milliseconds until the Job expires (≤ 0: expired); undefined when it has no TTL or has not finished. */
function timeLeft(job: Job, now: number): number | undefined {
  if (!needsCleanup(job)) return undefined;
  const at = (finishedAt(job) as number) + (job.spec?.ttlSecondsAfterFinished as number) * 1000;
  return at - now;
}

function gateOn(ctx: ControllerContext, o: TTLAfterFinishedConfig): boolean {
  const gates = (ctx as ControllerContext & { featureGates?: FeatureGateReader }).featureGates;
  if (gates) return gates.enabled('TTLAfterFinished');
  return o.gateEnabled ?? CONTROL_PLANE_FEATURES.get('TTLAfterFinished')?.default ?? false;
}

async function run(ctx: ControllerContext, o: TTLAfterFinishedConfig): Promise<void> {
  if (!gateOn(ctx, o)) {
    ctx.logger.info('TTL-after-finished controller is disabled (feature gate TTLAfterFinished is off)');
    if (!ctx.signal.aborted) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    return;
  }
  const jobs = ctx.informers.informerFor(JobKind);
  const queue = new WorkQueue<string>({ name: 'ttl_jobs_to_delete', metrics: ctx.metrics });
  const enqueue = (job: Job): void => {
    if (!job.metadata?.deletionTimestamp && needsCleanup(job)) queue.add(metaNamespaceKey(job));
  };
  jobs.addEventHandler({ onAdd: enqueue, onUpdate: (_old, job) => enqueue(job) });

  const sync = async (key: string): Promise<void> => {
    const cached = jobs.indexer.get(key);
    if (!cached || cached.metadata?.deletionTimestamp) return;
    const left = timeLeft(cached, Date.now());
    if (left === undefined) return;
    if (left > 0) {
      queue.addAfter(key, left);
      return;
    }
    // The cache may be stale: the TTL may have been changed since. Check the Job as stored.
    const { namespace, name } = splitMetaNamespaceKey(key);
    const client = ctx.client.resource(JobKind, namespace);
    let fresh: Job;
    try {
      fresh = await client.get(name, { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (fresh.metadata?.deletionTimestamp) return;
    const freshLeft = timeLeft(fresh, Date.now());
    if (freshLeft === undefined) return;
    if (freshLeft > 0) {
      queue.addAfter(key, freshLeft);
      return;
    }
    ctx.logger.info('Cleaning up Job', { job: key });
    try {
      await client.delete(name, {
        propagationPolicy: 'Foreground',
        preconditions: { uid: fresh.metadata?.uid },
        signal: ctx.signal,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };

  const stop = (): void => queue.shutDown();
  ctx.signal.addEventListener('abort', stop, { once: true });
  try {
    if (!(await waitForSynced(ctx.signal, [jobs]))) return;
    await runWorkers(queue, o.workers, sync, (key, err) => {
      if (!ctx.signal.aborted) ctx.logger.error('Error cleaning up Job', { job: key, error: String(err) });
    });
  } finally {
    stop();
    ctx.signal.removeEventListener('abort', stop);
  }
}

/** The `ttl-after-finished` controller. */
export const ttlAfterFinishedController: ControllerDefinition<TTLAfterFinishedConfig> = {
  name: 'ttl-after-finished',
  enabledByDefault: true,
  options: () => new TTLAfterFinishedOptions(),
  run,
};
