/** Helpers shared by the plugins (model: 1.21 `framework/plugins/helper`, `v1helper` toleration matching). */
import { type Pod, type Taint, type Toleration } from '@platform/api';

import { MAX_NODE_SCORE, type NodeScore } from '../../framework/types';

/**
 * Scales scores to [0, maxPriority] by the highest score; `reverse` turns high into low. All-zero scores stay 0
 * (or all become maxPriority when reversed), as 1.21's `DefaultNormalizeScore`.
 */
export function defaultNormalizeScore(maxPriority: number, reverse: boolean, scores: NodeScore[]): void {
  let max = 0;
  for (const s of scores) if (s.score > max) max = s.score;
  if (max === 0) {
    if (reverse) for (const s of scores) s.score = maxPriority;
    return;
  }
  for (const s of scores) {
    let v = Math.trunc((maxPriority * s.score) / max);
    if (reverse) v = maxPriority - v;
    s.score = v;
  }
}

/** Whether a toleration tolerates a taint (`Toleration.ToleratesTaint`). */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** Whether some toleration tolerates the taint. */
export function taintTolerated(taint: Taint, tolerations: readonly Toleration[] | undefined): boolean {
  for (const t of tolerations ?? []) if (toleratesTaint(t, taint)) return true;
  return false;
}

/** The first taint (of those `filter` keeps) that no toleration tolerates. */
export function findUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  filter: (t: Taint) => boolean,
): Taint | undefined {
  for (const taint of taints ?? []) {
    if (!filter(taint)) continue;
    if (!taintTolerated(taint, tolerations)) return taint;
  }
  return undefined;
}

/** A pod's priority (0 when unset). */
export function podPriority(pod: Pod): number {
  return pod.spec?.priority ?? 0;
}

export { MAX_NODE_SCORE };
