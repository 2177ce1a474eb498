/**
 * Which volume a claim binds to (model: Kubernetes 1.21 `pkg/controller/volume/persistentvolume/util`
 * `FindMatchingVolume`): the smallest volume that has the claim's class, volume mode and access modes, at least its
 * requested storage, labels its selector matches, and is free, or pre-bound to the claim (`spec.claimRef`).
 */
import {
  matchesLabelSelector,
  type PersistentVolume,
  type PersistentVolumeClaim,
  parseQuantity,
  type Quantity,
} from '@platform/api';

/** Kubernetes' `v1.BetaStorageClassAnnotation`, still read as the class when `storageClassName` is unset. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

function parse(v: string | undefined): Quantity | undefined {
  try {
    return v === undefined ? undefined : parseQuantity(v);
  } catch {
    return undefined;
  }
}

/** The claim's class (`GetPersistentVolumeClaimClass`): the beta annotation first, then `storageClassName`. */
export function claimClass(c: PersistentVolumeClaim): string {
  return c.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] ?? c.spec?.storageClassName ?? '';
}

/** The volume's class (`GetPersistentVolumeClass`). */
export function volumeClass(pv: PersistentVolume): string {
  return pv.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] ?? pv.spec?.storageClassName ?? '';
}

/** Whether the claim's and the volume's volume modes differ (both default to Filesystem). */
export function volumeModeMismatch(c: PersistentVolumeClaim, pv: PersistentVolume): boolean {
  return (c.spec?.volumeMode ?? 'Filesystem') !== (pv.spec?.volumeMode ?? 'Filesystem');
}

/** Whether `pv.spec.claimRef` names `c` (by namespace and name, and by uid when it has one). */
export function isBoundTo(pv: PersistentVolume, c: PersistentVolumeClaim): boolean {
  const r = pv.spec?.claimRef;
  if (!r || r.name !== c.metadata?.name || r.namespace !== c.metadata?.namespace) return false;
  return !r.uid || r.uid === c.metadata?.uid;
}

/** Whether the volume offers every access mode the claim asks for. */
function hasAccessModes(pv: PersistentVolume, c: PersistentVolumeClaim): boolean {
  const offered = new Set(pv.spec?.accessModes ?? []);
  return (c.spec?.accessModes ?? []).every((m) => offered.has(m));
}

/** The volume `c` should bind to among `volumes`, or undefined. */
export function findMatchingVolume(
  c: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
): PersistentVolume | undefined {
  const requested = parse(c.spec?.resources?.requests?.storage as string | undefined) ?? parseQuantity('0');
  let best: { pv: PersistentVolume; size: Quantity } | undefined;
  for (const pv of volumes) {
    const size = parse(pv.spec?.capacity?.storage as string | undefined);
    if (!size || size.cmp(requested) < 0) continue;
    if (volumeModeMismatch(c, pv) || !hasAccessModes(pv, c)) continue;
    if (pv.metadata?.deletionTimestamp) continue;
    // A volume pre-bound to this claim wins whatever its class and labels.
    if (isBoundTo(pv, c)) return pv;
    if (pv.spec?.claimRef) continue;
    if (pv.status?.phase && pv.status.phase !== 'Available' && pv.status.phase !== 'Pending') continue;
    if (c.spec?.selector && !matchesLabelSelector(c.spec.selector, pv.metadata?.labels)) continue;
    if (volumeClass(pv) !== claimClass(c)) continue;
    if (!best || size.cmp(best.size) < 0) best = { pv, size };
  }
  return best?.pv;
}
