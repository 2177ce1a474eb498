/**
 * The namespace controller (model: Kubernetes 1.21 `pkg/controller/namespace/namespace_controller.go`): watches
 * namespaces and, for each one with a `deletionTimestamp`, empties it and removes the `platform` finalizer
 * ({@link NamespacedResourcesDeleter}). A namespace event is handled 5 s after it arrives (as Kubernetes does, so
 * that objects created at the last moment are seen); content still going away brings the namespace back after
 * half the estimate plus one second.
 */
import { isConflict, type Namespace, NamespaceKind } from '@platform/api';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  runWorkers,
  WorkQueue,
} from '@platform/client';
import { durationFlag, type FlagDef, intFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { waitForSynced } from '../util/wait-synced';
import { NamespacedResourcesDeleter, ResourcesRemainingError } from './deleter';

/** The values of the namespace controller's options. */
export interface NamespaceControllerConfig {
  /** `--concurrent-namespace-syncs`. */
  concurrentNamespaceSyncs: number;
  /** `--namespace-sync-period` (ms): how often every namespace is looked at again. */
  namespaceSyncPeriodMs: number;
  /** Delay before a namespace event is handled (ms); Kubernetes' `namespaceDeletionGracePeriod`, 5 s. */
  deletionGracePeriodMs: number;
}

/** `--concurrent-namespace-syncs`, `--namespace-sync-period`. */
export class NamespaceControllerOptions extends ControllerOptions<NamespaceControllerConfig> {
  concurrentNamespaceSyncs = 10;
  namespaceSyncPeriodMs = 5 * 60_000;

  constructor() {
    super('Namespace controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-namespace-syncs',
        'The number of namespace objects that are allowed to sync concurrently. Larger number = more responsive namespace termination, but more CPU (and network) load',
        this.concurrentNamespaceSyncs,
        (v) => (this.concurrentNamespaceSyncs = v),
        { type: 'int32' },
      ),
      durationFlag(
        'namespace-sync-period',
        'The period for syncing namespace life-cycle updates',
        this.namespaceSyncPeriodMs,
        (v) => (this.namespaceSyncPeriodMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.concurrentNamespaceSyncs < 1
      ? [new Error(`--concurrent-namespace-syncs must be at least 1, got ${this.concurrentNamespaceSyncs}`)]
      : [];
  }

  values(): NamespaceControllerConfig {
    return {
      concurrentNamespaceSyncs: this.concurrentNamespaceSyncs,
      namespaceSyncPeriodMs: this.namespaceSyncPeriodMs,
      deletionGracePeriodMs: 5_000,
    };
  }
}

async function run(ctx: ControllerContext, o: NamespaceControllerConfig): Promise<void> {
  const informer = ctx.informers.informerFor(NamespaceKind);
  // Kubernetes' nsControllerRateLimiter: exponential 5 ms → 60 s per item, 10/s burst 100 overall.
  const queue = new WorkQueue<string>({
    name: 'namespace',
    metrics: ctx.metrics,
    rateLimiter: new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter<string>(5, 60_000),
      new BucketRateLimiter<string>(10, 100),
    ),
  });
  const enqueue = (ns: Namespace): void => {
    if (!ns.metadata?.deletionTimestamp || !ns.metadata.name) return;
    queue.addAfter(ns.metadata.name, o.deletionGracePeriodMs);
  };
  informer.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_old, ns) => enqueue(ns),
  });
  const deleter = new NamespacedResourcesDeleter(ctx.client, ctx.signal);

  const sync = async (name: string): Promise<void> => {
    const started = Date.now();
    try {
      if (!informer.indexer.get(name)) return;
      await deleter.delete(name);
    } catch (err) {
      if (err instanceof ResourcesRemainingError) {
        queue.addAfter(name, (Math.floor(err.estimate / 2) + 1) * 1000);
        ctx.logger.info('Content remaining in namespace', { namespace: name, estimateSeconds: err.estimate });
        return;
      }
      throw err;
    } finally {
      ctx.logger.debug('Finished syncing namespace', { namespace: name, durationMs: Date.now() - started });
    }
  };

  const stop = (): void => queue.shutDown();
  ctx.signal.addEventListener('abort', stop, { once: true });
  if (!(await waitForSynced(ctx.signal, [informer]))) {
    queue.shutDown();
    return;
  }
  const resync = setInterval(() => {
    for (const ns of informer.indexer.list()) enqueue(ns);
  }, o.namespaceSyncPeriodMs);
  try {
    await runWorkers(queue, o.concurrentNamespaceSyncs, sync, (key, err) => {
      if (ctx.signal.aborted) return;
      if (isConflict(err)) ctx.logger.info('Conflict syncing namespace; requeued', { namespace: key });
      else ctx.logger.error('Unable to sync namespace', { namespace: key, error: String(err) });
    });
  } finally {
    clearInterval(resync);
    ctx.signal.removeEventListener('abort', stop);
  }
}

/** The `namespace` controller. */
export const namespaceController: ControllerDefinition<NamespaceControllerConfig> = {
  name: 'namespace',
  enabledByDefault: true,
  options: () => new NamespaceControllerOptions(),
  run,
};
