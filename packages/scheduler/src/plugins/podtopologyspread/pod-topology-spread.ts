/**
 * PodTopologySpread (1.21 `podtopologyspread`): spreads matching pods over topology domains.
 *
 * Filter (DoNotSchedule constraints): on a node with the constraint's key, `matching pods in its domain + 1 (if
 * the pod matches itself) − the least matching pods of any domain` must not exceed `maxSkew`; only nodes that pass
 * the pod's node selector and required node affinity count. Score (ScheduleAnyway constraints, or the cluster
 * defaults — maxSkew 3 per zone, 5 per host — for a pod without constraints, selecting like the Services that
 * select it): fewer matching pods in the node's domains, weighted by log(domains + 2), is better.
 */
import { type LabelSelector, labelSelectorAsSelector, type Pod, type Selector, selectorFromSet } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
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
  Status,
  unresolvable,
  unschedulable,
} from '../../framework/types';
import { podMatchesNodeSelectorAndAffinity } from '../nodeaffinity/node-affinity';

export const NAME = 'PodTopologySpread';
export const ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const ERR_REASON_NODE_LABEL_NOT_MATCH = `${ERR_REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;
const PRE_FILTER_KEY = `PreFilter${NAME}`;
const PRE_SCORE_KEY = `PreScore${NAME}`;
const HOSTNAME = 'kubernetes.io/hostname';

/** A constraint without its selector text, as configured in the plugin args. */
export interface DefaultConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
}

/** 1.21's system default constraints. */
export const SYSTEM_DEFAULT_CONSTRAINTS: DefaultConstraint[] = [
  { topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: HOSTNAME, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
];

/** PodTopologySpreadArgs. */
export interface PodTopologySpreadArgs {
  defaultConstraints?: DefaultConstraint[];
  defaultingType?: 'System' | 'List';
}

interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: Selector;
}

const pairKey = (k: string, v: string): string => `${k}\0${v}`;

function countMatching(node: NodeInfo, c: Constraint, ns: string): number {
  let n = 0;
  for (const p of node.pods) {
    const pod = p.pod;
    if (pod.metadata?.deletionTimestamp || (pod.metadata?.namespace ?? 'default') !== ns) continue;
    if (c.selector.matches(pod.metadata?.labels)) n++;
  }
  return n;
}

function hasAllKeys(node: NodeInfo, cs: readonly Constraint[]): boolean {
  const l = node.node?.metadata?.labels;
  if (!l) return false;
  for (const c of cs) if (l[c.topologyKey] === undefined) return false;
  return true;
}

class FilterState {
  private readonly mins = new Map<string, number>();
  constructor(
    readonly constraints: Constraint[],
    readonly counts: Map<string, number>,
  ) {}
  clone(): FilterState {
    return new FilterState(this.constraints, new Map(this.counts));
  }
  set(k: string, v: number): void {
    this.counts.set(k, v);
    this.mins.clear();
  }
  /** The least count of any domain of `key` (memoized until a count changes). */
  min(key: string): number {
    let m = this.mins.get(key);
    if (m !== undefined) return m;
    m = Infinity;
    const prefix = `${key}\0`;
    for (const [k, v] of this.counts) if (k.startsWith(prefix) && v < m) m = v;
    if (m === Infinity) m = 0;
    this.mins.set(key, m);
    return m;
  }
}

interface ScoreState {
  constraints: Constraint[];
  ignored: Set<string>;
  counts: Map<string, number>;
  weights: number[];
}

export class PodTopologySpread
  implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions
{
  readonly name = NAME;
  private readonly defaults: DefaultConstraint[];
  constructor(
    private readonly handle: FrameworkHandle,
    args: PodTopologySpreadArgs = {},
  ) {
    this.defaults =
      args.defaultingType === 'List'
        ? (args.defaultConstraints ?? [])
        : (args.defaultConstraints ?? SYSTEM_DEFAULT_CONSTRAINTS);
  }

  eventsToRegister(): ClusterEvent[] {
    return ['AssignedPodAdd', 'AssignedPodUpdate', 'AssignedPodDelete', 'NodeAdd', 'NodeUpdate'];
  }

  /** The pod's own constraints of a kind, or the defaults (selecting like the Services that select the pod). */
  private constraints(pod: Pod, when: 'DoNotSchedule' | 'ScheduleAnyway'): Constraint[] {
    const own = pod.spec?.topologySpreadConstraints ?? [];
    if (own.length)
      return own
        .filter((c) => c.whenUnsatisfiable === when)
        .map((c) => ({ maxSkew: c.maxSkew, topologyKey: c.topologyKey, selector: safe(c.labelSelector) }));
    const defs = this.defaults.filter((c) => c.whenUnsatisfiable === when);
    if (!defs.length) return [];
    const selector = this.defaultSelector(pod);
    if (!selector) return [];
    return defs.map((c) => ({ maxSkew: c.maxSkew, topologyKey: c.topologyKey, selector }));
  }

  private defaultSelector(pod: Pod): Selector | undefined {
    const labels = pod.metadata?.labels;
    if (!labels) return undefined;
    const reqs = [];
    for (const s of this.handle.lister('services').list() as {
      metadata?: { namespace?: string };
      spec?: { selector?: Record<string, string> };
    }[]) {
      const sel = s.spec?.selector;
      if (!sel || !Object.keys(sel).length || s.metadata?.namespace !== pod.metadata?.namespace) continue;
      const set = selectorFromSet(sel);
      if (set.matches(labels)) reqs.push(...set.requirements());
    }
    if (!reqs.length) return undefined;
    return selectorFromSet({}).add(...reqs);
  }

  preFilter(state: CycleState, pod: Pod): Status | undefined {
    const cs = this.constraints(pod, 'DoNotSchedule');
    if (!cs.length) {
      state.skipFilter.add(NAME);
      return undefined;
    }
    const counts = new Map<string, number>();
    const ns = pod.metadata?.namespace ?? 'default';
    for (const node of this.handle.snapshot().list()) {
      if (!hasAllKeys(node, cs) || !podMatchesNodeSelectorAndAffinity(pod, node)) continue;
      const labels = node.node?.metadata?.labels as Record<string, string>;
      for (const c of cs) {
        const k = pairKey(c.topologyKey, labels[c.topologyKey] as string);
        counts.set(k, (counts.get(k) ?? 0) + countMatching(node, c, ns));
      }
    }
    state.write(PRE_FILTER_KEY, new FilterState(cs, counts));
    return undefined;
  }

  private update(state: CycleState, pod: Pod, other: Pod, node: NodeInfo, sign: number): Status | undefined {
    const s = state.read<FilterState>(PRE_FILTER_KEY);
    if (!s || (other.metadata?.namespace ?? 'default') !== (pod.metadata?.namespace ?? 'default')) return undefined;
    if (!hasAllKeys(node, s.constraints) || !podMatchesNodeSelectorAndAffinity(pod, node)) return undefined;
    const labels = node.node?.metadata?.labels as Record<string, string>;
    for (const c of s.constraints) {
      if (!c.selector.matches(other.metadata?.labels)) continue;
      const k = pairKey(c.topologyKey, labels[c.topologyKey] as string);
      s.set(k, (s.counts.get(k) ?? 0) + sign);
    }
    return undefined;
  }

  addPod(state: CycleState, pod: Pod, toAdd: Pod, node: NodeInfo): Status | undefined {
    return this.update(state, pod, toAdd, node, 1);
  }

  removePod(state: CycleState, pod: Pod, toRemove: Pod, node: NodeInfo): Status | undefined {
    return this.update(state, pod, toRemove, node, -1);
  }

  filter(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    const s = state.read<FilterState>(PRE_FILTER_KEY);
    if (!s) return undefined;
    const labels = node.node?.metadata?.labels ?? {};
    for (const c of s.constraints) {
      const v = labels[c.topologyKey];
      if (v === undefined) return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH);
      const self = c.selector.matches(pod.metadata?.labels) ? 1 : 0;
      const skew = (s.counts.get(pairKey(c.topologyKey, v)) ?? 0) + self - s.min(c.topologyKey);
      if (skew > c.maxSkew) return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH);
    }
    return undefined;
  }

  preScore(state: CycleState, pod: Pod, filtered: readonly NodeInfo[]): Status | undefined {
    const cs = this.constraints(pod, 'ScheduleAnyway');
    if (!cs.length) return new Status('Skip');
    const ignored = new Set<string>();
    const counts = new Map<string, number>();
    const domains = cs.map(() => new Set<string>());
    for (const node of filtered) {
      if (!hasAllKeys(node, cs)) {
        ignored.add(node.name);
        continue;
      }
      const labels = node.node?.metadata?.labels as Record<string, string>;
      cs.forEach((c, i) => {
        if (c.topologyKey === HOSTNAME) return;
        const v = labels[c.topologyKey] as string;
        domains[i]?.add(v);
        counts.set(pairKey(c.topologyKey, v), 0);
      });
    }
    const weights = cs.map((c, i) =>
      Math.log((c.topologyKey === HOSTNAME ? filtered.length - ignored.size : (domains[i] as Set<string>).size) + 2),
    );
    const ns = pod.metadata?.namespace ?? 'default';
    for (const node of this.handle.snapshot().list()) {
      if (!hasAllKeys(node, cs) || !podMatchesNodeSelectorAndAffinity(pod, node)) continue;
      const labels = node.node?.metadata?.labels as Record<string, string>;
      for (const c of cs) {
        if (c.topologyKey === HOSTNAME) continue;
        const k = pairKey(c.topologyKey, labels[c.topologyKey] as string);
        if (!counts.has(k)) continue;
        counts.set(k, (counts.get(k) as number) + countMatching(node, c, ns));
      }
    }
    state.write(PRE_SCORE_KEY, { constraints: cs, ignored, counts, weights } satisfies ScoreState);
    return undefined;
  }

  score(state: CycleState, pod: Pod, node: NodeInfo): number {
    const s = state.read<ScoreState>(PRE_SCORE_KEY);
    if (!s || s.ignored.has(node.name)) return 0;
    const labels = node.node?.metadata?.labels ?? {};
    const ns = pod.metadata?.namespace ?? 'default';
    let score = 0;
    s.constraints.forEach((c, i) => {
      const v = labels[c.topologyKey];
      if (v === undefined) return;
      const cnt =
        c.topologyKey === HOSTNAME ? countMatching(node, c, ns) : (s.counts.get(pairKey(c.topologyKey, v)) ?? 0);
      score += cnt * (s.weights[i] as number) + (c.maxSkew - 1);
    });
    // 1.21 truncates (`int64(score)`); rounding came with 1.24.
    return Math.trunc(score);
  }

  normalizeScore(state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    const s = state.read<ScoreState>(PRE_SCORE_KEY);
    if (!s) return undefined;
    let min = Infinity;
    let max = 0;
    for (const x of scores) {
      if (s.ignored.has(x.name)) continue;
      if (x.score < min) min = x.score;
      if (x.score > max) max = x.score;
    }
    for (const x of scores) {
      if (s.ignored.has(x.name)) x.score = 0;
      else if (max === 0) x.score = MAX_NODE_SCORE;
      else x.score = Math.trunc((MAX_NODE_SCORE * (max + min - x.score)) / max);
    }
    return undefined;
  }
}

function safe(ls: LabelSelector | undefined): Selector {
  try {
    return labelSelectorAsSelector(ls);
  } catch {
    return labelSelectorAsSelector(undefined);
  }
}

export const factory: PluginFactory = (args, handle) =>
  new PodTopologySpread(handle, (args ?? {}) as PodTopologySpreadArgs);
