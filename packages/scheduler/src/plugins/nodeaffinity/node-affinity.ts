/**
 * NodeAffinity (1.21 `nodeaffinity`): filter — the node must match the pod's `spec.nodeSelector` and its required
 * node affinity (and the plugin's `addedAffinity`); score — the sum of the weights of the preferred terms the
 * node matches, normalized to [0, 100].
 */
import { matchesNodeSelectorMap, type NodeSelectorLike, NodeSelectorMatcher, type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  type FilterPlugin,
  MAX_NODE_SCORE,
  type NodeScore,
  type PluginFactory,
  type ScorePlugin,
  type Status,
  unresolvable,
} from '../../framework/types';
import { defaultNormalizeScore } from '../helper/helper';

export const NAME = 'NodeAffinity';
export const ERR_REASON_POD = "node(s) didn't match Pod's node affinity";
export const ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity";

interface PreferredTerm {
  weight: number;
  preference: { matchExpressions?: unknown[]; matchFields?: unknown[] };
}

/** NodeAffinityArgs. */
export interface NodeAffinityArgs {
  addedAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: NodeSelectorLike;
    preferredDuringSchedulingIgnoredDuringExecution?: PreferredTerm[];
  };
}

interface Compiled {
  required?: NodeSelectorMatcher;
  preferred: { weight: number; m: NodeSelectorMatcher }[];
}

function compilePreferred(terms: PreferredTerm[] | undefined): { weight: number; m: NodeSelectorMatcher }[] {
  return (terms ?? [])
    .filter((t) => t.weight !== 0)
    .map((t) => ({
      weight: t.weight,
      m: new NodeSelectorMatcher({ nodeSelectorTerms: [t.preference] } as NodeSelectorLike),
    }));
}

const memo = new WeakMap<Pod, Compiled>();
function compiled(pod: Pod): Compiled {
  let c = memo.get(pod);
  if (!c) {
    const na = pod.spec?.affinity?.nodeAffinity;
    const req = na?.requiredDuringSchedulingIgnoredDuringExecution as NodeSelectorLike | undefined;
    c = {
      required: req ? new NodeSelectorMatcher(req) : undefined,
      preferred: compilePreferred(na?.preferredDuringSchedulingIgnoredDuringExecution as PreferredTerm[] | undefined),
    };
    memo.set(pod, c);
  }
  return c;
}

/** Whether a node satisfies the pod's node selector and required node affinity (`PodMatchesNodeSelectorAndAffinityTerms`). */
export function podMatchesNodeSelectorAndAffinity(pod: Pod, node: NodeInfo): boolean {
  const n = node.node;
  if (!n) return false;
  if (pod.spec?.nodeSelector && !matchesNodeSelectorMap(pod.spec.nodeSelector, n.metadata?.labels)) return false;
  const c = compiled(pod);
  return !c.required || c.required.matches(n);
}

export class NodeAffinity implements FilterPlugin, ScorePlugin, EnqueueExtensions {
  readonly name = NAME;
  private readonly addedRequired?: NodeSelectorMatcher;
  private readonly addedPreferred: { weight: number; m: NodeSelectorMatcher }[];

  constructor(args: NodeAffinityArgs = {}) {
    const a = args.addedAffinity;
    if (a?.requiredDuringSchedulingIgnoredDuringExecution)
      this.addedRequired = new NodeSelectorMatcher(a.requiredDuringSchedulingIgnoredDuringExecution);
    this.addedPreferred = compilePreferred(a?.preferredDuringSchedulingIgnoredDuringExecution);
  }

  eventsToRegister(): ClusterEvent[] {
    return ['NodeAdd', 'NodeUpdate'];
  }

  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    if (this.addedRequired && node.node && !this.addedRequired.matches(node.node))
      return unresolvable(ERR_REASON_ENFORCED);
    return podMatchesNodeSelectorAndAffinity(pod, node) ? undefined : unresolvable(ERR_REASON_POD);
  }

  score(_s: CycleState, pod: Pod, node: NodeInfo): number {
    const n = node.node;
    if (!n) return 0;
    let count = 0;
    for (const t of this.addedPreferred) if (t.m.matches(n)) count += t.weight;
    for (const t of compiled(pod).preferred) if (t.m.matches(n)) count += t.weight;
    return count;
  }

  normalizeScore(_s: CycleState, _p: Pod, scores: NodeScore[]): Status | undefined {
    defaultNormalizeScore(MAX_NODE_SCORE, false, scores);
    return undefined;
  }
}

export const factory: PluginFactory = (args) => new NodeAffinity((args ?? {}) as NodeAffinityArgs);
