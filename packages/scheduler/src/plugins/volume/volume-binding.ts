/**
 * VolumeBinding (model: Kubernetes 1.21 `pkg/scheduler/framework/plugins/volumebinding/volume_binding.go` and
 * `pkg/controller/volume/scheduling/scheduler_binder.go`): the pod's claims decide where it may run, and claims of a
 * `WaitForFirstConsumer` class are bound for the node it gets.
 * - PreFilter: every claim of the pod must exist; a claim not fully bound must be of a `WaitForFirstConsumer`
 *   class (an immediate one waits for the persistent volume binder: unresolvable until then).
 * - Filter, per node: bound volumes' node affinity must match it; each late-binding claim needs an Available
 *   volume that matches it and the node (smallest first, one per claim), or a class that can provision there
 *   (a provisioner other than `kubernetes.io/no-provisioner`, allowed topologies matching the node); a claim the
 *   scheduler already chose a node for (`volume.kubernetes.io/selected-node`) fits that node only.
 * - Reserve assumes the chosen bindings in the plugin's assume caches, so the next pods do not pick the same volumes;
 *   Unreserve forgets them.
 * - PreBind writes them (each volume's `claimRef`, each claim to provision's `volume.kubernetes.io/selected-node`),
 *   then waits, checking every second, until the persistent volume binder has bound every claim, or
 *   `bindTimeoutSeconds` (600) passes; a binder that failed to provision removes the annotation, which fails the
 *   attempt so that the pod is scheduled again.
 * Not done: the CSIStorageCapacity check (every class is taken to have room) and the volume-capacity score.
 */
import {
  ANN_SELECTED_NODE,
  type ApiObject,
  bindVolumeToClaim,
  claimClass,
  claimStorageRequest,
  findMatchingVolume,
  isClaimFullyBound,
  matchTopologySelectorTerms,
  type Node,
  NOT_SUPPORTED_PROVISIONER,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  type Pod,
  type StorageClass,
  volumeClass,
  volumeNodeAffinityMatches,
} from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  errorStatus,
  type FilterPlugin,
  type FrameworkHandle,
  type PluginFactory,
  type PreBindPlugin,
  type PreFilterPlugin,
  type ReservePlugin,
  type Status,
  unresolvable,
} from '../../framework/types';

export const VOLUME_BINDING = 'VolumeBinding';

export const ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_REASON_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
export const ERR_REASON_PV_NOT_EXIST = 'pvc(s) bound to non-existent pv(s)';

/** `VolumeBindingArgs.bindTimeoutSeconds` of 1.21's v1beta1 defaults. */
export const DEFAULT_BIND_TIMEOUT_SECONDS = 600;
/** How often PreBind looks whether the claims are bound (1.21's `wait.Poll` interval). */
const POLL_MS = 1000;

/** `VolumeBindingArgs`. */
export interface VolumeBindingArgs {
  bindTimeoutSeconds?: number;
  shape?: unknown;
}

/** The names of the claims of the pod's persistentVolumeClaim volumes. */
export function claimNames(pod: Pod): string[] {
  return (pod.spec?.volumes ?? []).map((v) => v.persistentVolumeClaim?.claimName).filter((n): n is string => !!n);
}

/** A claim and the volume chosen for it on a node. */
interface Binding {
  pv: PersistentVolume;
  pvc: PersistentVolumeClaim;
}

/** What the pod's late-binding claims need on one node (1.21 `PodVolumes`). */
interface PodVolumes {
  staticBindings: Binding[];
  dynamicProvisions: PersistentVolumeClaim[];
}

/** The cycle's state (shared, not copied, by preemption's clones: as 1.21's `stateData.Clone`). */
interface StateData {
  skip: boolean;
  boundClaims: PersistentVolumeClaim[];
  claimsToBind: PersistentVolumeClaim[];
  podVolumesByNode: Map<string, PodVolumes>;
  allBound: boolean;
}

const STATE_KEY = `PreFilter${VOLUME_BINDING}`;

function rv(o: ApiObject | undefined): bigint {
  try {
    return BigInt(o?.metadata?.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
}

/**
 * Objects the plugin has assumed written (1.21 `AssumeCache`), over the informer's: an assumed object is what
 * `get` answers until the informer's object changes (the write landed, or someone else wrote first), or until it
 * is restored.
 */
class AssumeCache<T extends ApiObject> {
  private readonly assumed = new Map<string, { obj: T; base: bigint }>();

  constructor(private readonly lister: () => { list(): unknown[]; get(key: string): unknown }) {}

  /** The informer's object, ignoring assumptions. */
  getAPI(key: string): T | undefined {
    return this.lister().get(key) as T | undefined;
  }

  get(key: string): T | undefined {
    const api = this.getAPI(key);
    const a = this.assumed.get(key);
    if (!a) return api;
    if (api && rv(api) === a.base) return a.obj;
    this.assumed.delete(key);
    return api;
  }

  list(): T[] {
    return (this.lister().list() as T[]).map((o) => this.get(keyOf(o)) ?? o);
  }

  assume(key: string, obj: T): void {
    this.assumed.set(key, { obj, base: rv(this.getAPI(key)) });
  }

  restore(key: string): void {
    this.assumed.delete(key);
  }
}

function keyOf(o: ApiObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name}` : (o.metadata?.name ?? '');
}

/** Which volumes the claims of a pod need on a node, or why the node does not do. */
interface NodeCheck {
  reasons: string[];
  podVolumes: PodVolumes;
}

/** The VolumeBinding plugin. */
export class VolumeBinding implements PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, EnqueueExtensions {
  readonly name = VOLUME_BINDING;
  private readonly pvcs: AssumeCache<PersistentVolumeClaim>;
  private readonly pvs: AssumeCache<PersistentVolume>;
  private readonly bindTimeoutMs: number;

  constructor(
    private readonly handle: FrameworkHandle,
    args: VolumeBindingArgs = {},
  ) {
    this.pvcs = new AssumeCache(() => handle.lister('persistentvolumeclaims'));
    this.pvs = new AssumeCache(() => handle.lister('persistentvolumes'));
    this.bindTimeoutMs = (args.bindTimeoutSeconds ?? DEFAULT_BIND_TIMEOUT_SECONDS) * 1000;
  }

  eventsToRegister(): ClusterEvent[] {
    return ['PvcAdd', 'PvcUpdate', 'PvAdd', 'PvUpdate', 'NodeAdd', 'NodeUpdate', 'StorageClassAdd'];
  }

  private storageClass(name: string): StorageClass | undefined {
    return this.handle.lister('storageclasses').get(name) as StorageClass | undefined;
  }

  /** 1.21 `IsDelayBindingMode`: the claim's class exists and waits for the first consumer. */
  private isDelayBinding(c: PersistentVolumeClaim): boolean {
    const name = claimClass(c);
    return !!name && this.storageClass(name)?.volumeBindingMode === 'WaitForFirstConsumer';
  }

  preFilter(state: CycleState, pod: Pod): Status | undefined {
    const names = claimNames(pod);
    const data: StateData = {
      skip: names.length === 0,
      boundClaims: [],
      claimsToBind: [],
      podVolumesByNode: new Map(),
      allBound: true,
    };
    state.write(STATE_KEY, data);
    if (data.skip) {
      state.skipFilter.add(this.name);
      return undefined;
    }
    const ns = pod.metadata?.namespace ?? 'default';
    let immediate = false;
    for (const name of names) {
      const pvc = this.pvcs.get(`${ns}/${name}`);
      if (!pvc) return unresolvable(`persistentvolumeclaim "${name}" not found`);
      if (pvc.metadata?.deletionTimestamp) return unresolvable(`persistentvolumeclaim "${name}" is being deleted`);
      if (isClaimFullyBound(pvc)) data.boundClaims.push(pvc);
      else if (this.isDelayBinding(pvc) && !pvc.spec?.volumeName) data.claimsToBind.push(pvc);
      else immediate = true;
    }
    // The persistent volume binder binds these; the pod is tried again when the claim changes.
    if (immediate) return unresolvable(ERR_REASON_UNBOUND_IMMEDIATE);
    return undefined;
  }

  filter(state: CycleState, _pod: Pod, node: NodeInfo): Status | undefined {
    const data = state.read<StateData>(STATE_KEY);
    if (!data || data.skip || !node.node) return undefined;
    let check: NodeCheck;
    try {
      check = this.findPodVolumes(data, node.node);
    } catch (err) {
      return errorStatus(err);
    }
    if (check.reasons.length) return unresolvable(...check.reasons);
    data.podVolumesByNode.set(node.name, check.podVolumes);
    return undefined;
  }

  /** 1.21 `FindPodVolumes`. Throws on a claim whose class is gone. */
  private findPodVolumes(data: StateData, node: Node): NodeCheck {
    let boundSatisfied = true;
    let boundFound = true;
    let unboundSatisfied = true;
    const podVolumes: PodVolumes = { staticBindings: [], dynamicProvisions: [] };
    for (const pvc of data.boundClaims) {
      const pv = this.pvs.get(pvc.spec?.volumeName ?? '');
      if (!pv) {
        boundFound = false;
        break;
      }
      if (!volumeNodeAffinityMatches(pv, node)) {
        boundSatisfied = false;
        break;
      }
    }
    const toProvision: PersistentVolumeClaim[] = [];
    const toMatch: PersistentVolumeClaim[] = [];
    for (const pvc of data.claimsToBind) {
      // The claim as assumed by an earlier pod's Reserve, if any.
      const c = this.pvcs.get(keyOf(pvc)) ?? pvc;
      const selected = c.metadata?.annotations?.[ANN_SELECTED_NODE];
      if (selected === undefined) toMatch.push(c);
      else if (selected === node.metadata?.name) toProvision.push(c);
      else unboundSatisfied = false;
    }
    if (unboundSatisfied && toMatch.length) {
      // The smallest claims first, so that each gets the smallest volume that fits it.
      toMatch.sort((a, b) => claimStorageRequest(a).cmp(claimStorageRequest(b)));
      const chosen = new Set<string>();
      const all = this.pvs.list();
      for (const pvc of toMatch) {
        const cls = claimClass(pvc);
        const pv = findMatchingVolume(
          pvc,
          all.filter((v) => volumeClass(v) === cls),
          { node, excluded: chosen },
        );
        if (!pv) toProvision.push(pvc);
        else {
          chosen.add(pv.metadata?.name ?? '');
          podVolumes.staticBindings.push({ pv, pvc });
        }
      }
    }
    if (unboundSatisfied && toProvision.length) {
      for (const pvc of toProvision) {
        const name = claimClass(pvc);
        const cls = this.storageClass(name);
        if (!cls) throw new Error(`failed to find storage class "${name}"`);
        const p = cls.provisioner;
        if (
          !p ||
          p === NOT_SUPPORTED_PROVISIONER ||
          !matchTopologySelectorTerms(cls.allowedTopologies, node.metadata?.labels)
        ) {
          unboundSatisfied = false;
          break;
        }
        podVolumes.dynamicProvisions.push(pvc);
      }
    }
    const reasons: string[] = [];
    if (!boundSatisfied) reasons.push(ERR_REASON_NODE_CONFLICT);
    if (!unboundSatisfied) reasons.push(ERR_REASON_BIND_CONFLICT);
    if (!boundFound) reasons.push(ERR_REASON_PV_NOT_EXIST);
    return { reasons, podVolumes };
  }

  reserve(state: CycleState, pod: Pod, nodeName: string): Status | undefined {
    const data = state.read<StateData>(STATE_KEY);
    const podVolumes = data?.podVolumesByNode.get(nodeName);
    if (!data || !podVolumes) return undefined;
    data.allBound = this.arePodVolumesBound(pod);
    if (data.allBound) return undefined;
    // 1.21 `AssumePodVolumes`: the volumes with their claimRef, the claims with their node.
    podVolumes.staticBindings = podVolumes.staticBindings.map(({ pv, pvc }) => {
      const next = bindVolumeToClaim(pv, pvc);
      if (next !== pv) this.pvs.assume(keyOf(next), next);
      return { pv: next, pvc };
    });
    podVolumes.dynamicProvisions = podVolumes.dynamicProvisions.map((pvc) => {
      const next = structuredClone(pvc);
      next.metadata = {
        ...next.metadata,
        annotations: { ...next.metadata?.annotations, [ANN_SELECTED_NODE]: nodeName },
      };
      this.pvcs.assume(keyOf(next), next);
      return next;
    });
    return undefined;
  }

  private arePodVolumesBound(pod: Pod): boolean {
    const ns = pod.metadata?.namespace ?? 'default';
    return claimNames(pod).every((n) => {
      const c = this.pvcs.get(`${ns}/${n}`);
      return !!c && isClaimFullyBound(c);
    });
  }

  unreserve(state: CycleState, _pod: Pod, nodeName: string): void {
    const podVolumes = state.read<StateData>(STATE_KEY)?.podVolumesByNode.get(nodeName);
    if (!podVolumes) return;
    for (const b of podVolumes.staticBindings) this.pvs.restore(keyOf(b.pv));
    for (const c of podVolumes.dynamicProvisions) this.pvcs.restore(keyOf(c));
  }

  async preBind(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    const data = state.read<StateData>(STATE_KEY);
    if (!data || data.skip || data.allBound) return undefined;
    const podVolumes = data.podVolumesByNode.get(nodeName);
    if (!podVolumes) return errorStatus(new Error(`no pod volumes found for node "${nodeName}"`));
    try {
      await this.bindAPIUpdate(podVolumes);
      await this.waitForBindings(pod, nodeName, podVolumes);
    } catch (err) {
      return errorStatus(err);
    }
    return undefined;
  }

  /** Writes the volumes' claimRefs and the claims' selected node; the persistent volume binder does the rest. */
  private async bindAPIUpdate(podVolumes: PodVolumes): Promise<void> {
    const client = this.handle.clientSet();
    const signal = this.handle.signal;
    for (const b of podVolumes.staticBindings)
      b.pv = await client.resource(PersistentVolumeKind).update(b.pv, { signal });
    podVolumes.dynamicProvisions = await Promise.all(
      podVolumes.dynamicProvisions.map((c) =>
        client.resource(PersistentVolumeClaimKind, c.metadata?.namespace).update(c, { signal }),
      ),
    );
  }

  /** Checks every second until the bindings are done; rejects on a failure, a stop, or after the time-out. */
  private async waitForBindings(pod: Pod, nodeName: string, podVolumes: PodVolumes): Promise<void> {
    const deadline = Date.now() + this.bindTimeoutMs;
    for (;;) {
      if (this.checkBindings(pod, nodeName, podVolumes)) return;
      if (Date.now() >= deadline) throw new Error('binding volumes: timed out waiting for the condition');
      await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), this.handle.signal);
    }
  }

  /** 1.21 `checkBindings`: true when every claim is fully bound; throws when waiting longer cannot help. */
  private checkBindings(pod: Pod, nodeName: string, podVolumes: PodVolumes): boolean {
    const fail = (msg: string): never => {
      throw new Error(`binding volumes: ${msg}`);
    };
    const node = this.handle.snapshot().get(nodeName)?.node;
    if (!node) fail(`failed to get node "${nodeName}": node "${nodeName}" not found`);
    const podKey = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    if (!this.handle.lister('pods').get(podKey))
      fail(`pod does not exist any more: pod "${pod.metadata?.name}" not found`);
    const affinity = (pv: PersistentVolume): void => {
      if (!volumeNodeAffinityMatches(pv, node!))
        fail(`pv "${pv.metadata?.name}" node affinity doesn't match node "${nodeName}": no matching NodeSelectorTerms`);
    };
    for (const b of podVolumes.staticBindings) {
      const pv = this.pvs.getAPI(keyOf(b.pv));
      if (!pv) fail(`failed to check binding: could not find v1.PersistentVolume "${b.pv.metadata?.name}"`);
      const pvc = this.pvcs.getAPI(keyOf(b.pvc));
      if (!pvc) fail(`failed to check binding: could not find v1.PersistentVolumeClaim "${keyOf(b.pvc)}"`);
      if (rv(b.pv) > rv(pv)) return false; // our write has not reached the informer yet
      affinity(pv!);
      if (!pv!.spec?.claimRef?.uid) fail(`ClaimRef got reset for pv "${pv!.metadata?.name}"`);
      if (!isClaimFullyBound(pvc!)) return false;
    }
    for (const c of podVolumes.dynamicProvisions) {
      const pvc = this.pvcs.getAPI(keyOf(c));
      if (!pvc) fail(`failed to check provisioning pvc: could not find v1.PersistentVolumeClaim "${keyOf(c)}"`);
      if (rv(c) > rv(pvc)) return false;
      const selected = pvc!.metadata?.annotations?.[ANN_SELECTED_NODE];
      if (!pvc!.metadata?.annotations) fail(`selectedNode annotation reset for PVC "${pvc!.metadata?.name}"`);
      // The binder removes the annotation when it could not provision on this node.
      if (selected !== nodeName) fail(`provisioning failed for PVC "${pvc!.metadata?.name}"`);
      if (pvc!.spec?.volumeName) {
        const pv = this.pvs.getAPI(pvc!.spec.volumeName);
        if (!pv) return false; // not in the informer yet
        affinity(pv);
      }
      if (!isClaimFullyBound(pvc!)) return false;
    }
    return true;
  }
}

/** Resolves after `ms`, or rejects when `signal` aborts (the scheduler stops). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error('binding volumes: the scheduler is stopping'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new Error('binding volumes: the scheduler is stopping'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const volumeBindingFactory: PluginFactory = (args, h) => new VolumeBinding(h, (args ?? {}) as VolumeBindingArgs);
