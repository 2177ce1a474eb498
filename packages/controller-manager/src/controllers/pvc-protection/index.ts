/**
 * The PVC protection controller (model: Kubernetes 1.21 `pkg/controller/volume/pvcprotection`). Every
 * PersistentVolumeClaim carries the finalizer `kubernetes.io/pvc-protection` (this controller adds it, as 1.21's
 * does; the API server's StorageObjectInUseProtection admission would add it at create time). Once a claim is being
 * deleted, the finalizer is removed when no scheduled pod uses the claim: a pod naming it in a
 * `persistentVolumeClaim` volume, or (GenericEphemeralVolume) the pod that owns the claim of its ephemeral volume,
 * unless that pod has finished. The informer's answer "unused" is checked against a live list of the namespace's
 * pods before the finalizer goes, since the cache may not have seen a pod created a moment ago.
 */
import {
  isConflict,
  isNotFound,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  type Pod,
  PodKind,
} from '@platform/api';
import {
  isDeletedFinalStateUnknown,
  metaNamespaceKey,
  runWorkers,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { waitForSynced } from '../util/wait-synced';
import { gateEnabled, withFinalizer, withoutFinalizer } from '../util/finalizers';

/** Kubernetes' `volumeutil.PVCProtectionFinalizer`. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

/** The values of the PVC protection controller (no flags). */
export interface PVCProtectionConfig {
  /** The GenericEphemeralVolume gate when the daemon does not pass its gates (`ctx.featureGates`). */
  genericEphemeralVolume?: boolean;
}

/** Whether `pod` keeps `pvc` from being deleted (Kubernetes' `podUsesPVC`). */
export function podUsesPVC(pod: Pod, pvc: PersistentVolumeClaim, genericEphemeral: boolean): boolean {
  // Unscheduled pods do not count: the scheduler does not place pods whose claim is being deleted.
  if (!pod.spec?.nodeName) return false;
  const name = pvc.metadata?.name;
  const shutDown = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  for (const v of pod.spec.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName === name) return true;
    if (
      genericEphemeral &&
      !shutDown &&
      v.ephemeral &&
      `${pod.metadata?.name}-${v.name}` === name &&
      (pvc.metadata?.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata?.uid)
    )
      return true;
  }
  return false;
}

/** The claims a pod names (directly or through its ephemeral volumes), as `namespace/name` keys. */
export function claimKeysOf(pod: Pod): string[] {
  const ns = pod.metadata?.namespace ?? '';
  const out: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName) out.push(`${ns}/${v.persistentVolumeClaim.claimName}`);
    else if (v.ephemeral) out.push(`${ns}/${pod.metadata?.name}-${v.name}`);
  }
  return out;
}

async function run(ctx: ControllerContext, o: PVCProtectionConfig): Promise<void> {
  const genericEphemeral = gateEnabled(ctx, 'GenericEphemeralVolume', o.genericEphemeralVolume);
  const claims = ctx.informers.informerFor(PersistentVolumeClaimKind);
  const pods = ctx.informers.informerFor(PodKind);
  const queue = new WorkQueue<string>({ name: 'pvcprotection', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const enqueue = (c: PersistentVolumeClaim): void => queue.add(metaNamespaceKey(c));
  claims.addEventHandler({ onAdd: enqueue, onUpdate: (_old, c) => enqueue(c) });
  const podChanged = (p: Pod): void => {
    for (const k of claimKeysOf(p)) queue.add(k);
  };
  pods.addEventHandler({
    onAdd: podChanged,
    onUpdate: (_old, p) => podChanged(p),
    onDelete: (p) => podChanged(isDeletedFinalStateUnknown(p) ? (p.obj as Pod) : p),
  });

  const inUse = async (pvc: PersistentVolumeClaim): Promise<boolean> => {
    const ns = pvc.metadata?.namespace ?? '';
    if (pods.indexer.byIndex('namespace', ns).some((p) => podUsesPVC(p, pvc, genericEphemeral))) return true;
    const live = await ctx.client.resource(PodKind).namespace(ns).list({ signal: ctx.signal });
    return live.items.some((p) => podUsesPVC(p, pvc, genericEphemeral));
  };

  const sync = async (key: string): Promise<void> => {
    const pvc: PersistentVolumeClaim | undefined = claims.indexer.get(key);
    if (!pvc) return;
    const { namespace: ns } = splitMetaNamespaceKey(key);
    const has = (pvc.metadata?.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER);
    let next: PersistentVolumeClaim | undefined;
    if (!pvc.metadata?.deletionTimestamp) {
      if (!has) next = withFinalizer(pvc, PVC_PROTECTION_FINALIZER);
    } else if (has && !(await inUse(pvc))) {
      next = withoutFinalizer(pvc, PVC_PROTECTION_FINALIZER);
      ctx.logger.info('Removing the PVC protection finalizer: no pod uses the claim', { pvc: key });
    }
    if (!next) return;
    try {
      await ctx.client.resource(PersistentVolumeClaimKind).namespace(ns).update(next, { signal: ctx.signal });
    } catch (err) {
      // NotFound: gone already. Conflict: the cache is behind; the claim is synced again.
      if (isConflict(err)) queue.addRateLimited(key);
      else if (!isNotFound(err)) throw err;
    }
  };
  if (!(await waitForSynced(ctx.signal, [claims, pods]))) return;
  await runWorkers(queue, 1, sync, (key, err) => {
    if (!ctx.signal.aborted) ctx.logger.info('Failed to sync a PVC, retrying', { pvc: key, error: String(err) });
  });
}

/** The `pvc-protection` controller. */
export const pvcProtectionController: ControllerDefinition<PVCProtectionConfig> = {
  name: 'pvc-protection',
  enabledByDefault: true,
  serviceAccount: 'pvc-protection-controller',
  run: (ctx, o) => run(ctx, o ?? {}),
};
