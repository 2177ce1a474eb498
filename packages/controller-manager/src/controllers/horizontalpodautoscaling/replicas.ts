/**
 * The arithmetic of the HPA (model: Kubernetes 1.21 `pkg/controller/podautoscaler/replica_calculator.go` and
 * `stabilizeRecommendation` of `horizontal.go`), kept apart from the controller so it can be tested alone, and the
 * v2 conditions it reports.
 */

/** A HorizontalPodAutoscalerCondition of autoscaling/v2beta2. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** Sets condition `c` in `list`, keeping its transition time unless the status changes (1.21's `setConditionInList`). */
export function setCondition(list: Condition[], c: Condition, now: string): void {
  const i = list.findIndex((x) => x.type === c.type);
  if (i < 0) {
    list.push({ ...c, lastTransitionTime: now });
    return;
  }
  const old = list[i]!;
  list[i] = { ...c, lastTransitionTime: old.status === c.status ? old.lastTransitionTime : now };
}

/**
 * Replicas for a utilization ratio (usage / target): unchanged within `tolerance` of 1.0, else
 * ceil(ratio × current) (`GetResourceReplicas` with every pod's metric present).
 */
export function replicasForUtilization(current: number, usageRatio: number, tolerance: number): number {
  if (Math.abs(1 - usageRatio) <= tolerance) return current;
  return Math.ceil(usageRatio * current);
}

/**
 * The recommendation after downscale stabilization: the highest recommendation of the last `windowMs`
 * (1.21's `stabilizeRecommendation`). `history` is updated in place (entries older than the window dropped).
 */
export function stabilize(
  history: { at: number; replicas: number }[],
  recommendation: number,
  now: number,
  windowMs: number,
): number {
  const kept = history.filter((r) => r.at > now - windowMs);
  kept.push({ at: now, replicas: recommendation });
  history.splice(0, history.length, ...kept);
  return Math.max(...kept.map((r) => r.replicas));
}
