/**
 * The scheduler's cache (model: Kubernetes 1.21 `pkg/scheduler/internal/cache`): nodes and the pods on them, fed
 * by the informers, plus the pods the scheduler has *assumed* onto a node before their binding showed up. The
 * next pod is scheduled against the assumed state without waiting for the binding's round trip. An assumed pod
 * is confirmed when the informer delivers it bound, forgotten when its binding fails, and expired when its
 * binding finished but the bound pod never arrived within the TTL.
 *
 * Every change marks its node dirty; {@link SchedulerCache.updateSnapshot} copies only dirty nodes into the
 * per-cycle {@link Snapshot}, so a cycle costs what changed since the last one, not the cluster's size.
 */
import { type Node, type Pod } from '@platform/api';
import { type Clock, REAL_CLOCK } from '@platform/client';

import { type ImageStateSummary, NodeInfo, podKey } from '../framework/node-info';
import { type SnapshotLister } from '../framework/types';

interface PodState {
  pod: Pod;
  /** When an assumed pod expires (ms); set when its binding finished. */
  deadline?: number;
  bindingFinished: boolean;
}

/** The zone labels, newest first. */
const ZONE_LABELS = ['topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'];
const REGION_LABELS = ['topology.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/region'];

/** The zone key of a node (`region:\0zone`), as 1.21's `GetZoneKey`. */
export function zoneKey(node: Node | undefined): string {
  const l = node?.metadata?.labels ?? {};
  const zone = ZONE_LABELS.map((k) => l[k]).find((v) => v !== undefined) ?? '';
  const region = REGION_LABELS.map((k) => l[k]).find((v) => v !== undefined) ?? '';
  return region === '' && zone === '' ? '' : `${region}:\x00:${zone}`;
}

/** The read-only node view of one scheduling cycle. */
export class Snapshot implements SnapshotLister {
  readonly nodeInfoMap = new Map<string, NodeInfo>();
  nodeInfoList: NodeInfo[] = [];
  /** Where each node is in `nodeInfoList`, so a changed node is swapped in without a walk of the list. */
  nodeInfoIndex = new Map<string, number>();
  /** Nodes with pods that have affinity, and with pods that have required anti-affinity (in no set order). */
  readonly affinity = new NodeSubset();
  readonly antiAffinity = new NodeSubset();
  list(): readonly NodeInfo[] {
    return this.nodeInfoList;
  }
  get(name: string): NodeInfo | undefined {
    return this.nodeInfoMap.get(name);
  }
  havePodsWithAffinity(): readonly NodeInfo[] {
    return this.affinity.list;
  }
  havePodsWithRequiredAntiAffinity(): readonly NodeInfo[] {
    return this.antiAffinity.list;
  }
  /** A snapshot of fixed nodes and pods (tests, and what-ifs). */
  static of(nodes: Node[], pods: Pod[] = []): Snapshot {
    const c = new SchedulerCache();
    for (const n of nodes) c.addNode(n);
    for (const p of pods) c.addPod(p);
    const s = new Snapshot();
    c.updateSnapshot(s);
    return s;
  }
}

/** A set of nodes kept as a list for iteration, each put, replaced or taken out in constant time. */
export class NodeSubset {
  readonly list: NodeInfo[] = [];
  private readonly index = new Map<string, number>();
  /** Puts `ni` in (or replaces the node of that name) when `member`, else takes the node of that name out. */
  set(name: string, ni: NodeInfo | undefined, member: boolean): void {
    const i = this.index.get(name);
    if (member && ni) {
      if (i === undefined) {
        this.index.set(name, this.list.length);
        this.list.push(ni);
      } else this.list[i] = ni;
      return;
    }
    if (i === undefined) return;
    const last = this.list.pop() as NodeInfo;
    this.index.delete(name);
    if (i < this.list.length) {
      this.list[i] = last;
      this.index.set(last.name, i);
    }
  }
}

/** Nodes, pods and assumed pods. */
export class SchedulerCache {
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly podStates = new Map<string, PodState>();
  private readonly assumed = new Set<string>();
  private readonly dirty = new Set<string>();
  private nodeSetChanged = true;
  private readonly images = new Map<string, ImageStateSummary & { nodes: Set<string> }>();
  private readonly clock: Clock;
  /** How long an assumed pod whose binding finished may wait for its bound self (ms). */
  readonly ttlMs: number;

  constructor(o: { ttlMs?: number; clock?: Clock } = {}) {
    this.ttlMs = o.ttlMs ?? 15 * 60_000;
    this.clock = o.clock ?? REAL_CLOCK;
  }

  private nodeInfo(name: string): NodeInfo {
    let ni = this.nodes.get(name);
    if (!ni) {
      ni = new NodeInfo();
      this.nodes.set(name, ni);
    }
    this.dirty.add(name);
    return ni;
  }

  /** Counts of nodes (with a Node object) and pods, for tests and logs. */
  counts(): { nodes: number; pods: number; assumed: number } {
    let nodes = 0;
    for (const ni of this.nodes.values()) if (ni.node) nodes++;
    return { nodes, pods: this.podStates.size, assumed: this.assumed.size };
  }

  isAssumedPod(pod: Pod): boolean {
    return this.assumed.has(podKey(pod));
  }

  /** The cached pod with the key of `pod`. */
  getPod(pod: Pod): Pod | undefined {
    return this.podStates.get(podKey(pod))?.pod;
  }

  /** Puts a pod (with `spec.nodeName` set) on its node before the binding is confirmed. */
  assumePod(pod: Pod): void {
    const key = podKey(pod);
    if (this.podStates.has(key)) throw new Error(`pod ${key} is in the cache, so can't be assumed`);
    this.addPodToNode(pod);
    this.podStates.set(key, { pod, bindingFinished: false });
    this.assumed.add(key);
  }

  /** The binding of an assumed pod was sent: it expires after the TTL unless confirmed. */
  finishBinding(pod: Pod): void {
    const key = podKey(pod);
    const ps = this.podStates.get(key);
    if (ps && this.assumed.has(key)) {
      ps.bindingFinished = true;
      ps.deadline = this.clock.now() + this.ttlMs;
    }
  }

  /** Drops an assumed pod (its binding failed). */
  forgetPod(pod: Pod): void {
    const key = podKey(pod);
    const ps = this.podStates.get(key);
    if (ps && this.assumed.has(key)) {
      this.removePodFromNode(ps.pod);
      this.podStates.delete(key);
      this.assumed.delete(key);
    }
  }

  /** A bound pod arrived from the informer: confirms an assumed pod or adds it. */
  addPod(pod: Pod): void {
    const key = podKey(pod);
    const ps = this.podStates.get(key);
    if (ps && this.assumed.has(key)) {
      this.removePodFromNode(ps.pod);
      this.addPodToNode(pod);
      this.assumed.delete(key);
      this.podStates.set(key, { pod, bindingFinished: true });
      return;
    }
    if (ps) {
      this.updatePod(ps.pod, pod);
      return;
    }
    this.addPodToNode(pod);
    this.podStates.set(key, { pod, bindingFinished: true });
  }

  updatePod(_old: Pod, pod: Pod): void {
    const key = podKey(pod);
    const ps = this.podStates.get(key);
    if (!ps || this.assumed.has(key)) {
      this.addPod(pod);
      return;
    }
    this.removePodFromNode(ps.pod);
    this.addPodToNode(pod);
    ps.pod = pod;
  }

  removePod(pod: Pod): void {
    const key = podKey(pod);
    const ps = this.podStates.get(key);
    if (!ps) return;
    this.removePodFromNode(ps.pod);
    this.podStates.delete(key);
    this.assumed.delete(key);
  }

  private addPodToNode(pod: Pod): void {
    this.nodeInfo(pod.spec?.nodeName ?? '').addPod(pod);
  }

  private removePodFromNode(pod: Pod): void {
    const name = pod.spec?.nodeName ?? '';
    const ni = this.nodes.get(name);
    if (!ni) return;
    ni.removePod(pod);
    this.dirty.add(name);
    if (!ni.node && ni.pods.length === 0) this.nodes.delete(name);
  }

  addNode(node: Node): void {
    const name = node.metadata?.name ?? '';
    const ni = this.nodeInfo(name);
    if (!ni.node) this.nodeSetChanged = true;
    else this.removeImages(name, ni.node);
    ni.setNode(node);
    this.addImages(name, node, ni);
  }

  updateNode(_old: Node, node: Node): void {
    this.addNode(node);
  }

  removeNode(node: Node): void {
    const name = node.metadata?.name ?? '';
    const ni = this.nodes.get(name);
    if (!ni) return;
    if (ni.node) this.removeImages(name, ni.node);
    this.nodeSetChanged = true;
    this.dirty.add(name);
    // A node with pods stays (without its Node) until they are gone, as 1.21 keeps it.
    if (ni.pods.length === 0) this.nodes.delete(name);
    else {
      ni.node = undefined;
      ni.generation++;
    }
  }

  private addImages(name: string, node: Node, ni: NodeInfo): void {
    ni.imageStates = new Map();
    for (const img of node.status?.images ?? []) {
      for (const n of img.names ?? []) {
        let s = this.images.get(n);
        if (!s) this.images.set(n, (s = { size: Number(img.sizeBytes ?? 0), numNodes: 0, nodes: new Set() }));
        s.nodes.add(name);
        s.numNodes = s.nodes.size;
        ni.imageStates.set(n, s);
      }
    }
  }

  private removeImages(name: string, node: Node): void {
    for (const img of node.status?.images ?? []) {
      for (const n of img.names ?? []) {
        const s = this.images.get(n);
        if (!s) continue;
        s.nodes.delete(name);
        s.numNodes = s.nodes.size;
        if (s.numNodes === 0) this.images.delete(n);
      }
    }
  }

  /** Expires assumed pods whose binding finished more than the TTL ago; returns them. */
  cleanupAssumedPods(now = this.clock.now()): Pod[] {
    const expired: Pod[] = [];
    for (const key of this.assumed) {
      const ps = this.podStates.get(key);
      if (ps?.bindingFinished && ps.deadline !== undefined && now >= ps.deadline) expired.push(ps.pod);
    }
    for (const p of expired) this.forgetPod(p);
    return expired;
  }

  /** Brings `snap` up to date with the cache, copying only the nodes that changed. */
  updateSnapshot(snap: Snapshot): void {
    if (this.dirty.size === 0 && !this.nodeSetChanged) return;
    for (const name of this.dirty) {
      const ni = this.nodes.get(name);
      const prev = snap.nodeInfoMap.get(name);
      if (!ni || !ni.node) {
        if (prev) {
          snap.nodeInfoMap.delete(name);
          this.nodeSetChanged = true;
        }
      } else if (!prev || prev.generation !== ni.generation) {
        if (!prev) this.nodeSetChanged = true;
        snap.nodeInfoMap.set(name, ni.clone());
      }
      const cur = snap.nodeInfoMap.get(name);
      snap.affinity.set(name, cur, !!cur && cur.podsWithAffinity.length > 0);
      snap.antiAffinity.set(name, cur, !!cur && cur.podsWithRequiredAntiAffinity.length > 0);
    }
    if (this.nodeSetChanged) {
      snap.nodeInfoList = interleaveZones([...snap.nodeInfoMap.values()]);
      snap.nodeInfoIndex = new Map(snap.nodeInfoList.map((n, i) => [n.name, i]));
      this.nodeSetChanged = false;
    } else {
      // Same nodes, new copies: swap them into the list in place.
      for (const name of this.dirty) {
        const i = snap.nodeInfoIndex.get(name);
        const cur = snap.nodeInfoMap.get(name);
        if (i !== undefined && cur) snap.nodeInfoList[i] = cur;
      }
    }
    this.dirty.clear();
  }
}

/** Nodes ordered zone by zone in turn (1.21's node tree), so the first nodes examined span the zones. */
function interleaveZones(nodes: NodeInfo[]): NodeInfo[] {
  const zones = new Map<string, NodeInfo[]>();
  for (const n of nodes) {
    const z = zoneKey(n.node);
    let l = zones.get(z);
    if (!l) zones.set(z, (l = []));
    l.push(n);
  }
  if (zones.size <= 1) return nodes;
  const lists = [...zones.values()];
  const out: NodeInfo[] = [];
  for (let i = 0; out.length < nodes.length; i++) for (const l of lists) if (i < l.length) out.push(l[i] as NodeInfo);
  return out;
}
