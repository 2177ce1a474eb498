/**
 * TaintToleration (1.21 `tainttoleration`): filter — a node with a NoSchedule or NoExecute taint the pod does not
 * tolerate is rejected; score — the fewer PreferNoSchedule taints the pod does not tolerate, the better
 * (normalized in reverse).
 */
import { type Pod, type Taint, type Toleration } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  type FilterPlugin,
  MAX_NODE_SCORE,
  type NodeScore,
  type PluginFactory,
  type PreScorePlugin,
  type ScorePlugin,
  type Status,
  unresolvable,
} from '../../framework/types';
import { defaultNormalizeScore, findUntoleratedTaint, taintTolerated } from '../helper/helper';

export const NAME = 'TaintToleration';
const PRE_SCORE_KEY = `PreScore${NAME}`;

/** The reason of a taint the pod does not tolerate, as 1.21 writes it. */
export function errReasonNotMatch(taint: Taint): string {
  return `node(s) had taint {${taint.key}: ${taint.value ?? ''}}, that the pod didn't tolerate`;
}

const scheduleEffects = (t: Taint): boolean => t.effect === 'NoSchedule' || t.effect === 'NoExecute';

export class TaintToleration implements FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {
  readonly name = NAME;
  eventsToRegister(): ClusterEvent[] {
    return ['NodeAdd', 'NodeUpdate'];
  }
  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    const taints = node.node?.spec?.taints;
    if (!taints?.length) return undefined;
    const t = findUntoleratedTaint(taints, pod.spec?.tolerations, scheduleEffects);
    return t ? unresolvable(errReasonNotMatch(t)) : undefined;
  }
  preScore(state: CycleState, pod: Pod): Status | undefined {
    const tols = (pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
    state.write(PRE_SCORE_KEY, tols);
    return undefined;
  }
  score(state: CycleState, pod: Pod, node: NodeInfo): number {
    const tols =
      state.read<Toleration[]>(PRE_SCORE_KEY) ??
      (pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
    let n = 0;
    for (const taint of node.node?.spec?.taints ?? [])
      if (taint.effect === 'PreferNoSchedule' && !taintTolerated(taint, tols)) n++;
    return n;
  }
  normalizeScore(_s: CycleState, _p: Pod, scores: NodeScore[]): Status | undefined {
    defaultNormalizeScore(MAX_NODE_SCORE, true, scores);
    return undefined;
  }
}

export const factory: PluginFactory = () => new TaintToleration();
