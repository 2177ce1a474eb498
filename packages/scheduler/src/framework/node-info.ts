/**
 * What the scheduler knows of a node: the Node, the pods on it (bound or assumed), the resources they request,
 * the host ports they use and the images present (model: Kubernetes 1.21 `framework.NodeInfo` and `PodInfo`).
 * A pod's affinity terms are parsed once, in its {@link PodInfo}.
 */
import { type LabelSelector, labelSelectorAsSelector, type Node, type Pod, type Selector } from '@platform/api';

import { podRequests, Resource } from './resource';

/** A parsed pod (anti-)affinity term. */
export interface AffinityTerm {
  namespaces: Set<string>;
  selector: Selector;
  topologyKey: string;
  /** `namespaceSelector`, matched against namespace labels; undefined when absent. */
  namespaceSelector?: Selector;
}

/** A parsed weighted term. */
export interface WeightedAffinityTerm extends AffinityTerm {
  weight: number;
}

interface RawTerm {
  labelSelector?: LabelSelector;
  namespaces?: string[];
  topologyKey: string;
  namespaceSelector?: LabelSelector;
}

function safeSelector(ls: LabelSelector | undefined): Selector {
  try {
    return labelSelectorAsSelector(ls);
  } catch {
    return labelSelectorAsSelector(undefined);
  }
}

function parseTerm(pod: Pod, t: RawTerm): AffinityTerm {
  const namespaces = new Set(t.namespaces ?? []);
  const term: AffinityTerm = { namespaces, selector: safeSelector(t.labelSelector), topologyKey: t.topologyKey };
  if (t.namespaceSelector) term.namespaceSelector = safeSelector(t.namespaceSelector);
  if (namespaces.size === 0 && !t.namespaceSelector) namespaces.add(pod.metadata?.namespace ?? 'default');
  return term;
}

/** Whether `pod` (in namespace labels `nsLabels`) matches an affinity term. */
export function termMatches(term: AffinityTerm, pod: Pod, nsLabels?: Record<string, string>): boolean {
  const ns = pod.metadata?.namespace ?? 'default';
  if (!term.namespaces.has(ns)) {
    if (!term.namespaceSelector || !term.namespaceSelector.matches(nsLabels)) return false;
  }
  return term.selector.matches(pod.metadata?.labels);
}

/** A pod with its parsed affinity terms and requests. */
export class PodInfo {
  readonly requiredAffinityTerms: AffinityTerm[];
  readonly requiredAntiAffinityTerms: AffinityTerm[];
  readonly preferredAffinityTerms: WeightedAffinityTerm[];
  readonly preferredAntiAffinityTerms: WeightedAffinityTerm[];
  constructor(readonly pod: Pod) {
    const a = pod.spec?.affinity;
    const req = (ts: RawTerm[] | undefined): AffinityTerm[] => (ts ?? []).map((t) => parseTerm(pod, t));
    const pref = (ts: { weight: number; podAffinityTerm: RawTerm }[] | undefined): WeightedAffinityTerm[] =>
      (ts ?? []).map((w) => ({ ...parseTerm(pod, w.podAffinityTerm), weight: w.weight }));
    this.requiredAffinityTerms = req(a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
    this.requiredAntiAffinityTerms = req(a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
    this.preferredAffinityTerms = pref(a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
    this.preferredAntiAffinityTerms = pref(a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
  }
  hasAffinity(): boolean {
    const a = this.pod.spec?.affinity;
    return !!(a?.podAffinity || a?.podAntiAffinity);
  }
}

const podInfoMemo = new WeakMap<Pod, PodInfo>();

/** The PodInfo of a pod object (memoized). */
export function podInfoOf(pod: Pod): PodInfo {
  let pi = podInfoMemo.get(pod);
  if (!pi) {
    pi = new PodInfo(pod);
    podInfoMemo.set(pod, pi);
  }
  return pi;
}

/** `namespace/name` of a pod. */
export function podKey(pod: Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** The host ports in use on a node: `ip` → `protocol/port`. */
export class HostPortInfo {
  readonly ports = new Map<string, Map<string, number>>();
  private static norm(ip: string | undefined, protocol: string | undefined): { ip: string; protocol: string } {
    return { ip: ip || '0.0.0.0', protocol: protocol || 'TCP' };
  }
  add(ip: string | undefined, protocol: string | undefined, port: number, sign = 1): void {
    if (port <= 0) return;
    const n = HostPortInfo.norm(ip, protocol);
    let m = this.ports.get(n.ip);
    if (!m) this.ports.set(n.ip, (m = new Map()));
    const k = `${n.protocol}/${port}`;
    const v = (m.get(k) ?? 0) + sign;
    if (v <= 0) m.delete(k);
    else m.set(k, v);
    if (m.size === 0) this.ports.delete(n.ip);
  }
  /** Whether a host port conflicts (`0.0.0.0` conflicts with every address). */
  checkConflict(ip: string | undefined, protocol: string | undefined, port: number): boolean {
    if (port <= 0) return false;
    const n = HostPortInfo.norm(ip, protocol);
    const k = `${n.protocol}/${port}`;
    if (n.ip === '0.0.0.0') {
      for (const m of this.ports.values()) if (m.has(k)) return true;
      return false;
    }
    return !!(this.ports.get(n.ip)?.has(k) || this.ports.get('0.0.0.0')?.has(k));
  }
  clone(): HostPortInfo {
    const c = new HostPortInfo();
    for (const [ip, m] of this.ports) c.ports.set(ip, new Map(m));
    return c;
  }
}

/** An image on a node, with the number of nodes that have it. */
export interface ImageStateSummary {
  size: number;
  numNodes: number;
}

let generation = 0;
/** The next generation number (every NodeInfo change takes one). */
export function nextGeneration(): number {
  return ++generation;
}

/** A node and the pods on it. */
export class NodeInfo {
  node: Node | undefined;
  pods: PodInfo[] = [];
  podsWithAffinity: PodInfo[] = [];
  podsWithRequiredAntiAffinity: PodInfo[] = [];
  usedPorts = new HostPortInfo();
  /** Sum of the pods' requests. */
  requested = new Resource();
  /** Sum of the pods' requests with the scoring defaults for unset CPU and memory. */
  nonZeroRequested = new Resource();
  allocatable = new Resource();
  /** Images on the node by name (each name of an image). */
  imageStates = new Map<string, ImageStateSummary>();
  generation = nextGeneration();

  constructor(node?: Node) {
    if (node) this.setNode(node);
  }

  get name(): string {
    return this.node?.metadata?.name ?? '';
  }

  setNode(node: Node): void {
    this.node = node;
    this.allocatable = Resource.fromList(node.status?.allocatable as Record<string, string> | undefined);
    this.generation = nextGeneration();
  }

  addPod(pod: Pod): void {
    const pi = podInfoOf(pod);
    this.pods.push(pi);
    if (pi.hasAffinity()) this.podsWithAffinity.push(pi);
    if (pi.requiredAntiAffinityTerms.length) this.podsWithRequiredAntiAffinity.push(pi);
    this.account(pod, 1);
    this.generation = nextGeneration();
  }

  /** Removes the pod with the same namespace/name; false when it is not there. */
  removePod(pod: Pod): boolean {
    const key = podKey(pod);
    const i = this.pods.findIndex((p) => podKey(p.pod) === key);
    if (i < 0) return false;
    const old = (this.pods[i] as PodInfo).pod;
    this.pods.splice(i, 1);
    const drop = (list: PodInfo[]): void => {
      const j = list.findIndex((p) => podKey(p.pod) === key);
      if (j >= 0) list.splice(j, 1);
    };
    drop(this.podsWithAffinity);
    drop(this.podsWithRequiredAntiAffinity);
    this.account(old, -1);
    this.generation = nextGeneration();
    return true;
  }

  private account(pod: Pod, sign: number): void {
    const r = podRequests(pod);
    this.requested.add(r.request, sign);
    this.nonZeroRequested.milliCPU += sign * r.nonZeroCPU;
    this.nonZeroRequested.memory += sign * r.nonZeroMemory;
    for (const c of pod.spec?.containers ?? [])
      for (const p of c.ports ?? []) if (p.hostPort) this.usedPorts.add(p.hostIP, p.protocol, p.hostPort, sign);
  }

  clone(): NodeInfo {
    const c = new NodeInfo();
    c.node = this.node;
    c.pods = this.pods.slice();
    c.podsWithAffinity = this.podsWithAffinity.slice();
    c.podsWithRequiredAntiAffinity = this.podsWithRequiredAntiAffinity.slice();
    c.usedPorts = this.usedPorts.clone();
    c.requested = this.requested.clone();
    c.nonZeroRequested = this.nonZeroRequested.clone();
    c.allocatable = this.allocatable;
    c.imageStates = this.imageStates;
    c.generation = this.generation;
    return c;
  }
}
