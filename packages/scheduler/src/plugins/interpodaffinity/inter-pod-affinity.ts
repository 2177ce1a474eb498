/**
 * InterPodAffinity (1.21 `interpodaffinity`): required and preferred pod affinity and anti-affinity over topology
 * domains (a node label's value), in the namespaces the term names (the pod's own by default, or those matching
 * `namespaceSelector`).
 *
 * Filter: the node's domains must hold no pod whose required anti-affinity matches the incoming pod, no pod the
 * incoming pod's required anti-affinity matches, and, for each required affinity term, some pod it matches (the
 * first pod of a group that matches its own terms may go anywhere). Score: per domain, the weights of the
 * incoming pod's preferred terms that existing pods match (anti-affinity negative), plus the existing pods' terms
 * that match the incoming pod (their required affinity counting `hardPodAffinityWeight`), normalized min–max.
 */
import { type Pod } from '@platform/api';

import { type AffinityTerm, type NodeInfo, type PodInfo, podInfoOf, termMatches } from '../../framework/node-info';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  type FilterPlugin,
  type FrameworkHandle,
  MAX_NODE_SCORE,
  type NodeScore,
  type PluginFactory,
  type PreFilterPlugin,
  type PreScorePlugin,
  type ScorePlugin,
  type Status,
  unresolvable,
  unschedulable,
} from '../../framework/types';

export const NAME = 'InterPodAffinity';
export const ERR_REASON_AFFINITY_NOT_MATCH = "node(s) didn't match pod affinity/anti-affinity";
export const ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";
export const ERR_REASON_AFFINITY_RULES = "node(s) didn't match pod affinity rules";
export const ERR_REASON_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules";
const PRE_FILTER_KEY = `PreFilter${NAME}`;
const PRE_SCORE_KEY = `PreScore${NAME}`;

/** InterPodAffinityArgs. */
export interface InterPodAffinityArgs {
  hardPodAffinityWeight?: number;
}

/** Pod counts by topology key, then by the key's value (a domain). */
type Counts = Map<string, Map<string, number>>;

function add(m: Counts, key: string, value: string, v: number): void {
  let byValue = m.get(key);
  if (!byValue) m.set(key, (byValue = new Map()));
  const n = (byValue.get(value) ?? 0) + v;
  if (n === 0) {
    byValue.delete(value);
    if (byValue.size === 0) m.delete(key);
  } else byValue.set(value, n);
}

/** Whether the node's domain for `key` has a positive count. */
function positive(m: Counts, key: string, labels: Record<string, string>): boolean {
  const v = labels[key];
  return v !== undefined && (m.get(key)?.get(v) ?? 0) > 0;
}

const deepCopy = (m: Counts): Counts => new Map([...m].map(([k, byValue]) => [k, new Map(byValue)]));

/** A namespace's labels, looked up once per namespace within a cycle. */
type NsLabels = (ns: string) => Record<string, string> | undefined;

class PreFilterState {
  constructor(
    readonly existingAnti: Counts,
    readonly affinity: Counts,
    readonly anti: Counts,
    readonly nsLabels: NsLabels,
  ) {}
  clone(): PreFilterState {
    return new PreFilterState(deepCopy(this.existingAnti), deepCopy(this.affinity), deepCopy(this.anti), this.nsLabels);
  }
}

function matchesAll(terms: readonly AffinityTerm[], pod: Pod, ns?: Record<string, string>): boolean {
  if (terms.length === 0) return false;
  for (const t of terms) if (!termMatches(t, pod, ns)) return false;
  return true;
}

const namespaceOf = (pod: Pod): string => pod.metadata?.namespace ?? 'default';

export class InterPodAffinity implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {
  readonly name = NAME;
  private readonly hardWeight: number;
  constructor(
    private readonly handle: FrameworkHandle,
    args: InterPodAffinityArgs = {},
  ) {
    this.hardWeight = args.hardPodAffinityWeight ?? handle.hardPodAffinitySymmetricWeight ?? 1;
  }

  eventsToRegister(): ClusterEvent[] {
    return ['AssignedPodAdd', 'AssignedPodUpdate', 'AssignedPodDelete', 'NodeAdd', 'NodeUpdate'];
  }

  private nsLabels(): NsLabels {
    const lister = this.handle.lister('namespaces');
    const seen = new Map<string, Record<string, string> | undefined>();
    return (ns) => {
      if (seen.has(ns)) return seen.get(ns);
      const labels = (lister.get(ns) as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata
        ?.labels;
      seen.set(ns, labels);
      return labels;
    };
  }

  /** Updates the counts for `existing` on `node` by `sign` (PreFilter, AddPod, RemovePod). */
  private account(s: PreFilterState, incoming: PodInfo, ex: PodInfo, node: NodeInfo, sign: number): void {
    const labels = node.node?.metadata?.labels;
    if (!labels) return;
    const pod = incoming.pod;
    const existing = ex.pod;
    if (ex.requiredAntiAffinityTerms.length) {
      const nsPod = s.nsLabels(namespaceOf(pod));
      for (const t of ex.requiredAntiAffinityTerms) {
        const v = labels[t.topologyKey];
        if (v !== undefined && termMatches(t, pod, nsPod)) add(s.existingAnti, t.topologyKey, v, sign);
      }
    }
    if (incoming.requiredAffinityTerms.length === 0 && incoming.requiredAntiAffinityTerms.length === 0) return;
    const nsEx = s.nsLabels(namespaceOf(existing));
    if (incoming.requiredAffinityTerms.length && matchesAll(incoming.requiredAffinityTerms, existing, nsEx))
      for (const t of incoming.requiredAffinityTerms) {
        const v = labels[t.topologyKey];
        if (v !== undefined) add(s.affinity, t.topologyKey, v, sign);
      }
    for (const t of incoming.requiredAntiAffinityTerms) {
      const v = labels[t.topologyKey];
      if (v !== undefined && termMatches(t, existing, nsEx)) add(s.anti, t.topologyKey, v, sign);
    }
  }

  preFilter(state: CycleState, pod: Pod): Status | undefined {
    const s = new PreFilterState(new Map(), new Map(), new Map(), this.nsLabels());
    const snap = this.handle.snapshot();
    const incoming = podInfoOf(pod);
    const all = incoming.requiredAffinityTerms.length > 0 || incoming.requiredAntiAffinityTerms.length > 0;
    for (const node of all ? snap.list() : snap.havePodsWithRequiredAntiAffinity())
      for (const p of all ? node.pods : node.podsWithRequiredAntiAffinity) this.account(s, incoming, p, node, 1);
    state.write(PRE_FILTER_KEY, s);
    return undefined;
  }

  addPod(state: CycleState, pod: Pod, toAdd: Pod, node: NodeInfo): Status | undefined {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (s) this.account(s, podInfoOf(pod), podInfoOf(toAdd), node, 1);
    return undefined;
  }

  removePod(state: CycleState, pod: Pod, toRemove: Pod, node: NodeInfo): Status | undefined {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (s) this.account(s, podInfoOf(pod), podInfoOf(toRemove), node, -1);
    return undefined;
  }

  filter(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    const s = state.read<PreFilterState>(PRE_FILTER_KEY);
    if (!s) return undefined;
    const labels = node.node?.metadata?.labels ?? {};
    for (const key of s.existingAnti.keys())
      if (positive(s.existingAnti, key, labels))
        return unschedulable(ERR_REASON_AFFINITY_NOT_MATCH, ERR_REASON_EXISTING_ANTI_AFFINITY);
    const pi = podInfoOf(pod);
    for (const t of pi.requiredAntiAffinityTerms)
      if (positive(s.anti, t.topologyKey, labels))
        return unschedulable(ERR_REASON_AFFINITY_NOT_MATCH, ERR_REASON_ANTI_AFFINITY_RULES);
    if (pi.requiredAffinityTerms.length) {
      let podsExist = true;
      for (const t of pi.requiredAffinityTerms) {
        const v = labels[t.topologyKey];
        if (v === undefined) return unresolvable(ERR_REASON_AFFINITY_NOT_MATCH, ERR_REASON_AFFINITY_RULES);
        if ((s.affinity.get(t.topologyKey)?.get(v) ?? 0) <= 0) podsExist = false;
      }
      if (!podsExist) {
        // The first pod of a group whose terms match itself may go to any node that has the topology labels.
        const selfMatch =
          s.affinity.size === 0 && matchesAll(pi.requiredAffinityTerms, pod, s.nsLabels(namespaceOf(pod)));
        if (!selfMatch) return unresolvable(ERR_REASON_AFFINITY_NOT_MATCH, ERR_REASON_AFFINITY_RULES);
      }
    }
    return undefined;
  }

  preScore(state: CycleState, pod: Pod): Status | undefined {
    const snap = this.handle.snapshot();
    const pi = podInfoOf(pod);
    const hasPreferred = pi.preferredAffinityTerms.length > 0 || pi.preferredAntiAffinityTerms.length > 0;
    const nodes = hasPreferred ? snap.list() : snap.havePodsWithAffinity();
    const scores = new Map<string, Map<string, number>>();
    const nsLabels = this.nsLabels();
    const nsPod = nsLabels(namespaceOf(pod));
    const bump = (labels: Record<string, string>, key: string, w: number): void => {
      const v = labels[key];
      if (v === undefined || w === 0) return;
      let m = scores.get(key);
      if (!m) scores.set(key, (m = new Map()));
      m.set(v, (m.get(v) ?? 0) + w);
    };
    for (const node of nodes) {
      const labels = node.node?.metadata?.labels;
      if (!labels) continue;
      const pods = hasPreferred ? node.pods : node.podsWithAffinity;
      for (const ex of pods) {
        // Without preferred terms of its own, the pod is scored only by existing pods' terms that can score.
        if (
          !hasPreferred &&
          ex.preferredAffinityTerms.length === 0 &&
          ex.preferredAntiAffinityTerms.length === 0 &&
          (this.hardWeight <= 0 || ex.requiredAffinityTerms.length === 0)
        )
          continue;
        const nsEx = nsLabels(namespaceOf(ex.pod));
        for (const t of pi.preferredAffinityTerms)
          if (termMatches(t, ex.pod, nsEx)) bump(labels, t.topologyKey, t.weight);
        for (const t of pi.preferredAntiAffinityTerms)
          if (termMatches(t, ex.pod, nsEx)) bump(labels, t.topologyKey, -t.weight);
        if (this.hardWeight > 0)
          for (const t of ex.requiredAffinityTerms)
            if (termMatches(t, pod, nsPod)) bump(labels, t.topologyKey, this.hardWeight);
        for (const t of ex.preferredAffinityTerms)
          if (termMatches(t, pod, nsPod)) bump(labels, t.topologyKey, t.weight);
        for (const t of ex.preferredAntiAffinityTerms)
          if (termMatches(t, pod, nsPod)) bump(labels, t.topologyKey, -t.weight);
      }
    }
    state.write(PRE_SCORE_KEY, scores);
    return undefined;
  }

  score(state: CycleState, _pod: Pod, node: NodeInfo): number {
    const scores = state.read<Map<string, Map<string, number>>>(PRE_SCORE_KEY);
    if (!scores?.size) return 0;
    const labels = node.node?.metadata?.labels ?? {};
    let total = 0;
    for (const [key, m] of scores) {
      const v = labels[key];
      if (v !== undefined) total += m.get(v) ?? 0;
    }
    return total;
  }

  normalizeScore(state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    const s = state.read<Map<string, Map<string, number>>>(PRE_SCORE_KEY);
    if (!s?.size) return undefined;
    let min = Infinity;
    let max = -Infinity;
    for (const x of scores) {
      if (x.score > max) max = x.score;
      if (x.score < min) min = x.score;
    }
    const diff = max - min;
    for (const x of scores) x.score = diff > 0 ? Math.trunc((MAX_NODE_SCORE * (x.score - min)) / diff) : 0;
    return undefined;
  }
}

export const factory: PluginFactory = (args, handle) =>
  new InterPodAffinity(handle, (args ?? {}) as InterPodAffinityArgs);
