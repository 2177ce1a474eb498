/**
 * What every stand-in controller of `platform up` does around its sync function: start its informers, wait for their
 * caches, run workers on its queue until the signal aborts, then stop the informers.
 */
import { type InformerFactory, runWorkers, type WorkQueue } from '@platform/client';

/**
 * Runs `workers` workers calling `sync` on the keys of `queue` once the informers of `factory` have synced, until
 * `signal` aborts; `onError` hears of failed syncs (retried with back-off), but not of those cut short by the
 * shutdown. Resolves once it has stopped.
 */
export async function runController<K>(
  factory: InformerFactory,
  queue: WorkQueue<K>,
  signal: AbortSignal,
  workers: number,
  sync: (key: K) => Promise<void>,
  onError: (key: K, err: unknown) => void,
): Promise<void> {
  factory.start(signal);
  signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  if (await factory.waitForCacheSync(signal))
    await runWorkers(queue, workers, sync, (key, err) => {
      if (!signal.aborted) onError(key, err);
    });
  else queue.shutDown();
  await factory.shutdown();
}
