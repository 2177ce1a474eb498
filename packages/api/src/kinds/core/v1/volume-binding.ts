/**
 * How claims and volumes meet (model: Kubernetes 1.21 `pkg/controller/volume/persistentvolume/util/util.go` and
 * `pkg/volume/util`): the annotations of a bind, a claim's and a volume's class, the volume a claim binds to, and
 * whether a node satisfies a volume's node affinity or a class's allowed topologies. The persistent volume binder
 * (without a node) and the scheduler's VolumeBinding plugin (with the node it tries) share these, as the two share
 * `FindMatchingVolume` in 1.21.
 */
import { matchesLabelSelector } from '../../../labels/label-selector';
import { type NodeLike, type NodeSelectorLike, NodeSelectorMatcher } from '../../../labels/node-selector';
import { parseQuantity, type Quantity } from '../../../quantity/quantity';
import { type PersistentVolume, type PersistentVolumeClaim } from './persistent-volume';

/** `pv.kubernetes.io/bind-completed`: the binder finished binding the claim. */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** `pv.kubernetes.io/bound-by-controller`: the binder (not the user) set the claim's volume or the volume's claim. */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** `pv.kubernetes.io/provisioned-by`: the provisioner that made the volume (and deletes it). */
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
/** `volume.beta.kubernetes.io/storage-provisioner`: the provisioner asked to provision the claim. */
export const ANN_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** `volume.kubernetes.io/selected-node`: the node the scheduler chose for a claim of a delayed-binding class. */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** Kubernetes' `v1.BetaStorageClassAnnotation`, still read as the class when `storageClassName` is unset. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';
/** The provisioner of classes whose volumes are made by hand (local volumes): nothing provisions them. */
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';

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

/** The claim's requested storage (0 when missing or unparsable). */
export function claimStorageRequest(c: PersistentVolumeClaim): Quantity {
  return parse(c.spec?.resources?.requests?.storage as string | undefined) ?? parseQuantity('0');
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

/** Whether the claim is bound and the bind finished (1.21 `isPVCFullyBound`). */
export function isClaimFullyBound(c: PersistentVolumeClaim): boolean {
  return !!c.spec?.volumeName && c.metadata?.annotations?.[ANN_BIND_COMPLETED] !== undefined;
}

/** The reference to a claim that a volume's `spec.claimRef` holds (1.21 `reference.GetReference`). */
export function claimReference(
  c: PersistentVolumeClaim,
): NonNullable<NonNullable<PersistentVolume['spec']>['claimRef']> {
  return {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    namespace: c.metadata?.namespace,
    name: c.metadata?.name,
    uid: c.metadata?.uid,
    resourceVersion: c.metadata?.resourceVersion,
  };
}

/**
 * The volume bound to the claim (1.21 `GetBindVolumeToClaim`): a copy with `spec.claimRef` naming the claim and, when
 * the volume was not already bound to it (by a user's pre-binding), `pv.kubernetes.io/bound-by-controller`; the
 * volume itself when it has both already. Never mutates `pv`.
 */
export function bindVolumeToClaim(pv: PersistentVolume, c: PersistentVolumeClaim): PersistentVolume {
  const ref = pv.spec?.claimRef;
  const setRef =
    !ref || ref.name !== c.metadata?.name || ref.namespace !== c.metadata?.namespace || ref.uid !== c.metadata?.uid;
  const setAnnotation = !isBoundTo(pv, c) && pv.metadata?.annotations?.[ANN_BOUND_BY_CONTROLLER] === undefined;
  if (!setRef && !setAnnotation) return pv;
  const next = structuredClone(pv);
  if (setRef) next.spec = { ...next.spec, claimRef: claimReference(c) };
  if (setAnnotation)
    next.metadata = {
      ...next.metadata,
      annotations: { ...next.metadata?.annotations, [ANN_BOUND_BY_CONTROLLER]: 'yes' },
    };
  return next;
}

/** Whether the volume offers every access mode the claim asks for. */
function hasAccessModes(pv: PersistentVolume, c: PersistentVolumeClaim): boolean {
  const offered = new Set(pv.spec?.accessModes ?? []);
  return (c.spec?.accessModes ?? []).every((m) => offered.has(m));
}

/** Whether `node` satisfies the volume's required node affinity (1.21 `CheckNodeAffinity`; none: every node). */
export function volumeNodeAffinityMatches(pv: PersistentVolume, node: NodeLike): boolean {
  const required = pv.spec?.nodeAffinity?.required as NodeSelectorLike | undefined;
  return !required || new NodeSelectorMatcher(required).matches(node);
}

/** A class's `allowedTopologies` term. */
export interface TopologySelectorTermLike {
  matchLabelExpressions?: { key: string; values: string[] }[];
}

/** Whether node labels satisfy a class's allowed topologies (1.21 `MatchTopologySelectorTerms`; none: any). */
export function matchTopologySelectorTerms(
  terms: readonly TopologySelectorTermLike[] | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!terms || terms.length === 0) return true;
  return terms.some((t) =>
    (t.matchLabelExpressions ?? []).every((r) => {
      const v = labels?.[r.key];
      return v !== undefined && r.values.includes(v);
    }),
  );
}

/** What {@link findMatchingVolume} also takes into account. */
export interface VolumeMatchOptions {
  /** The scheduler's path: the node tried, whose labels the volume's node affinity must match. */
  node?: NodeLike;
  /** The claim's class binds late: without a node, only a volume pre-bound to the claim matches. */
  delayBinding?: boolean;
  /** Volumes already chosen for other claims of the same pod, by name. */
  excluded?: ReadonlySet<string>;
}

/**
 * The volume `c` should bind to among `volumes`, or undefined (1.21 `FindMatchingVolume`): the smallest volume
 * that has the claim's class, volume mode and access modes, at least its requested storage, labels its selector
 * matches, and is free, or pre-bound to the claim (`spec.claimRef`), which wins.
 */
export function findMatchingVolume(
  c: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  o: VolumeMatchOptions = {},
): PersistentVolume | undefined {
  const requested = claimStorageRequest(c);
  let best: { pv: PersistentVolume; size: Quantity } | undefined;
  for (const pv of volumes) {
    if (o.excluded?.has(pv.metadata?.name ?? '')) continue;
    const size = parse(pv.spec?.capacity?.storage as string | undefined);
    if (!size || size.cmp(requested) < 0) continue;
    if (volumeModeMismatch(c, pv) || !hasAccessModes(pv, c)) continue;
    if (pv.metadata?.deletionTimestamp) continue;
    const affinityOk = !o.node || volumeNodeAffinityMatches(pv, o.node);
    // A volume pre-bound to this claim wins whatever its class and labels (unless the node cannot reach it).
    if (isBoundTo(pv, c)) return affinityOk ? pv : undefined;
    // Without a node, a late-binding claim is left to the scheduler.
    if (!o.node && o.delayBinding) continue;
    if (pv.spec?.claimRef) continue;
    if (o.node) {
      // The scheduler takes only volumes already Available, as 1.21 does (others are about to change).
      if (pv.status?.phase !== 'Available') continue;
    } else if (pv.status?.phase && pv.status.phase !== 'Available' && pv.status.phase !== 'Pending') continue;
    if (c.spec?.selector && !matchesLabelSelector(c.spec.selector, pv.metadata?.labels)) continue;
    if (volumeClass(pv) !== claimClass(c)) continue;
    if (!affinityOk) continue;
    if (!best || size.cmp(best.size) < 0) best = { pv, size };
  }
  return best?.pv;
}
