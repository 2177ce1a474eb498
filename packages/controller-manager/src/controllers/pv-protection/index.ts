/**
 * The PV protection controller (model: Kubernetes 1.21 `pkg/controller/volume/pvprotection`). Every
 * PersistentVolume carries the finalizer `kubernetes.io/pv-protection` (added here, as 1.21's controller does);
 * once the volume is being deleted the finalizer is removed when no claim is bound to it, which 1.21 reads as the
 * volume's phase not being `Bound` (the binder moves it to Released or Available when its claim goes).
 */
import { isConflict, isNotFound, type PersistentVolume, PersistentVolumeKind } from '@platform/api';
import { metaNamespaceKey, runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { withFinalizer, withoutFinalizer } from '../util/finalizers';
import { waitForSynced } from '../util/wait-synced';

/** Kubernetes' `volumeutil.PVProtectionFinalizer`. */
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** The finalizer change `pv` needs: a copy to write, or undefined (Kubernetes' `processPV`). */
export function pvProtectionChange(pv: PersistentVolume): PersistentVolume | undefined {
  const has = (pv.metadata?.finalizers ?? []).includes(PV_PROTECTION_FINALIZER);
  if (!pv.metadata?.deletionTimestamp) return has ? undefined : withFinalizer(pv, PV_PROTECTION_FINALIZER);
  if (has && pv.status?.phase !== 'Bound') return withoutFinalizer(pv, PV_PROTECTION_FINALIZER);
  return undefined;
}

async function run(ctx: ControllerContext): Promise<void> {
  const volumes = ctx.informers.informerFor(PersistentVolumeKind);
  const queue = new WorkQueue<string>({ name: 'pvprotection', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const enqueue = (pv: PersistentVolume): void => queue.add(metaNamespaceKey(pv));
  volumes.addEventHandler({ onAdd: enqueue, onUpdate: (_old, pv) => enqueue(pv) });
  const sync = async (key: string): Promise<void> => {
    const pv: PersistentVolume | undefined = volumes.indexer.get(key);
    const next = pv && pvProtectionChange(pv);
    if (!next) return;
    try {
      await ctx.client.resource(PersistentVolumeKind).update(next, { signal: ctx.signal });
    } catch (err) {
      // A conflict means the cache is behind: the newer volume's event syncs it again.
      if (isConflict(err)) queue.addRateLimited(key);
      else if (!isNotFound(err)) throw err;
    }
  };
  if (!(await waitForSynced(ctx.signal, [volumes]))) return;
  await runWorkers(queue, 1, sync, (key, err) => {
    if (!ctx.signal.aborted) ctx.logger.info('Failed to sync a PV, retrying', { pv: key, error: String(err) });
  });
}

/** The `pv-protection` controller. */
export const pvProtectionController: ControllerDefinition = {
  name: 'pv-protection',
  enabledByDefault: true,
  serviceAccount: 'pv-protection-controller',
  run: (ctx) => run(ctx),
};
