/**
 * What the HPA does with a metrics recommendation before it scales (model: Kubernetes 1.21
 * `pkg/controller/podautoscaler/horizontal.go`): downscale stabilization over past recommendations, the scale-up
 * limit, min/max replicas, and with a v2beta2 `behavior` its stabilization windows, scaling policies and
 * `selectPolicy` over the scale events of each policy's period. Kept apart from the controller, on an injected
 * time, so it can be tested alone; the conditions it reports are 1.21's (AbleToScale, ScalingLimited).
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

/** A v2beta2 HPAScalingPolicy. */
export interface ScalingPolicy {
  type: string;
  value: number;
  periodSeconds: number;
}

/** A v2beta2 HPAScalingRules after defaulting (the controller fills the scale-down window from its option). */
export interface ScalingRules {
  stabilizationWindowSeconds: number;
  selectPolicy: string;
  policies: ScalingPolicy[];
}

/** What the controller remembers of one HPA between syncs (lost on restart, as in 1.21). */
export interface ScalingHistory {
  recommendations: { atMs: number; replicas: number }[];
  scaleUpEvents: { atMs: number; change: number }[];
  scaleDownEvents: { atMs: number; change: number }[];
}

/** A new history whose first recommendation is the current replica count (1.21's `recordInitialRecommendation`). */
export function newScalingHistory(currentReplicas: number, nowMs: number): ScalingHistory {
  return { recommendations: [{ atMs: nowMs, replicas: currentReplicas }], scaleUpEvents: [], scaleDownEvents: [] };
}

/** A condition to set: status, reason, message. */
export interface ConditionUpdate {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** The normalized replica count and the AbleToScale and ScalingLimited conditions that explain it. */
export interface Normalized {
  replicas: number;
  ableToScale: ConditionUpdate;
  scalingLimited: ConditionUpdate;
}

const READY_FOR_NEW_SCALE: ConditionUpdate = {
  status: 'True',
  reason: 'ReadyForNewScale',
  message: 'recommended size matches current size',
};
const SCALE_DOWN_STABILIZED: ConditionUpdate = {
  status: 'True',
  reason: 'ScaleDownStabilized',
  message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
};
const SCALE_UP_STABILIZED: ConditionUpdate = {
  status: 'True',
  reason: 'ScaleUpStabilized',
  message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
};
const WITHIN_RANGE = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
const TOO_MANY = {
  reason: 'TooManyReplicas',
  message: 'the desired replica count is more than the maximum replica count',
};
const TOO_FEW = {
  reason: 'TooFewReplicas',
  message: 'the desired replica count is less than the minimum replica count',
};
const SCALE_UP_LIMIT = {
  reason: 'ScaleUpLimit',
  message: 'the desired replica count is increasing faster than the maximum scale rate',
};
const SCALE_DOWN_LIMIT = {
  reason: 'ScaleDownLimit',
  message: 'the desired replica count is decreasing faster than the maximum scale rate',
};

/** Without a behaviour, a scale-up goes to at most twice the current count, or 4 (1.21's `calculateScaleUpLimit`). */
export function scaleUpLimit(currentReplicas: number): number {
  return Math.max(2 * currentReplicas, 4);
}

/**
 * The highest recommendation of the last `windowMs` (1.21's `stabilizeRecommendation`); the recommendation is
 * recorded, in the place of one that fell out of the window when there is one.
 */
export function stabilize(h: ScalingHistory, recommendation: number, nowMs: number, windowMs: number): number {
  let max = recommendation;
  let old = -1;
  const cutoff = nowMs - windowMs;
  h.recommendations.forEach((r, i) => {
    if (r.atMs < cutoff) old = i;
    else if (r.replicas > max) max = r.replicas;
  });
  const rec = { atMs: nowMs, replicas: recommendation };
  if (old >= 0) h.recommendations[old] = rec;
  else h.recommendations.push(rec);
  return max;
}

/** 1.21's `normalizeDesiredReplicas`: an HPA without `behavior`. */
export function normalizeWithoutBehavior(
  h: ScalingHistory,
  a: { currentReplicas: number; desiredReplicas: number; minReplicas: number; maxReplicas: number },
  downscaleStabilizationMs: number,
  nowMs: number,
): Normalized {
  const stabilized = stabilize(h, a.desiredReplicas, nowMs, downscaleStabilizationMs);
  const ableToScale = stabilized !== a.desiredReplicas ? SCALE_DOWN_STABILIZED : READY_FOR_NEW_SCALE;
  const upLimit = scaleUpLimit(a.currentReplicas);
  let max = a.maxReplicas;
  let limit = TOO_MANY;
  if (a.maxReplicas > upLimit) {
    max = upLimit;
    limit = SCALE_UP_LIMIT;
  }
  let replicas = stabilized;
  let why = WITHIN_RANGE;
  if (stabilized < a.minReplicas) {
    replicas = a.minReplicas;
    why = TOO_FEW;
  } else if (stabilized > max) {
    replicas = max;
    why = limit;
  }
  return { replicas, ableToScale, scalingLimited: { status: replicas === stabilized ? 'False' : 'True', ...why } };
}

/** The change of the replica count by the events of the last `periodSeconds`. */
function changeInPeriod(events: ScalingHistory['scaleUpEvents'], periodSeconds: number, nowMs: number): number {
  const cutoff = nowMs - periodSeconds * 1000;
  return events.filter((e) => e.atMs > cutoff).reduce((sum, e) => sum + e.change, 0);
}

/** The most replicas the scale-up policies allow now (1.21's `calculateScaleUpLimitWithScalingRules`). */
export function scaleUpLimitWithRules(
  currentReplicas: number,
  events: ScalingHistory['scaleUpEvents'],
  rules: ScalingRules,
  nowMs: number,
): number {
  if (rules.selectPolicy === 'Disabled') return currentReplicas;
  // Min: the policy allowing the smallest change; otherwise (Max) the largest.
  const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
  let result = rules.selectPolicy === 'Min' ? 2 ** 31 - 1 : -(2 ** 31);
  for (const p of rules.policies) {
    const periodStart = currentReplicas - changeInPeriod(events, p.periodSeconds, nowMs);
    const proposed = p.type === 'Pods' ? periodStart + p.value : Math.ceil(periodStart * (1 + p.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

/** The fewest replicas the scale-down policies allow now (1.21's `calculateScaleDownLimitWithBehaviors`). */
export function scaleDownLimitWithRules(
  currentReplicas: number,
  events: ScalingHistory['scaleDownEvents'],
  rules: ScalingRules,
  nowMs: number,
): number {
  if (rules.selectPolicy === 'Disabled') return currentReplicas;
  const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
  let result = rules.selectPolicy === 'Min' ? -(2 ** 31) : 2 ** 31 - 1;
  for (const p of rules.policies) {
    const periodStart = currentReplicas + changeInPeriod(events, p.periodSeconds, nowMs);
    const proposed = p.type === 'Pods' ? periodStart - p.value : Math.trunc(periodStart * (1 - p.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

/** The scale-up and scale-down rules of a behaviour, defaulted. */
export interface Behavior {
  scaleUp: ScalingRules;
  scaleDown: ScalingRules;
}

/** 1.21's `normalizeDesiredReplicasWithBehaviors`: stabilization windows, then the policies' rate and min/max. */
export function normalizeWithBehavior(
  h: ScalingHistory,
  a: { currentReplicas: number; desiredReplicas: number; minReplicas: number; maxReplicas: number },
  b: Behavior,
  nowMs: number,
): Normalized {
  // Stabilization: the lowest recent recommendation on the way up, the highest on the way down.
  const up = a.desiredReplicas >= a.currentReplicas;
  const windowSeconds = up ? b.scaleUp.stabilizationWindowSeconds : b.scaleDown.stabilizationWindowSeconds;
  const pick = up ? Math.min : Math.max;
  const obsolete =
    nowMs - Math.max(b.scaleUp.stabilizationWindowSeconds, b.scaleDown.stabilizationWindowSeconds) * 1000;
  const cutoff = nowMs - windowSeconds * 1000;
  let stabilized = a.desiredReplicas;
  let old = -1;
  h.recommendations.forEach((r, i) => {
    if (r.atMs > cutoff) stabilized = pick(r.replicas, stabilized);
    if (r.atMs < obsolete) old = i;
  });
  const rec = { atMs: nowMs, replicas: a.desiredReplicas };
  if (old >= 0) h.recommendations[old] = rec;
  else h.recommendations.push(rec);
  const ableToScale =
    stabilized !== a.desiredReplicas ? (up ? SCALE_UP_STABILIZED : SCALE_DOWN_STABILIZED) : READY_FOR_NEW_SCALE;

  let replicas = stabilized;
  let why = WITHIN_RANGE;
  if (stabilized > a.currentReplicas) {
    // Until old scale-ups leave their periods, a limit below the current count holds it.
    const limit = Math.max(
      scaleUpLimitWithRules(a.currentReplicas, h.scaleUpEvents, b.scaleUp, nowMs),
      a.currentReplicas,
    );
    const max = Math.min(a.maxReplicas, limit);
    if (stabilized > max) {
      replicas = max;
      why = a.maxReplicas > limit ? SCALE_UP_LIMIT : TOO_MANY;
    }
  } else if (stabilized < a.currentReplicas) {
    const limit = Math.min(
      scaleDownLimitWithRules(a.currentReplicas, h.scaleDownEvents, b.scaleDown, nowMs),
      a.currentReplicas,
    );
    const min = Math.max(a.minReplicas, limit);
    if (stabilized < min) {
      replicas = min;
      why = a.minReplicas < limit ? SCALE_DOWN_LIMIT : TOO_FEW;
    }
  }
  return { replicas, ableToScale, scalingLimited: { status: replicas === stabilized ? 'False' : 'True', ...why } };
}

/**
 * Records a rescale from `from` to `to` for the behaviour's policies (1.21's `storeScaleEvent`): an event older
 * than the direction's longest policy period is replaced, else the event is added.
 */
export function recordScaleEvent(h: ScalingHistory, b: Behavior, from: number, to: number, nowMs: number): void {
  const isUp = to > from;
  const events = isUp ? h.scaleUpEvents : h.scaleDownEvents;
  const rules = isUp ? b.scaleUp : b.scaleDown;
  const longest = Math.max(0, ...rules.policies.map((p) => p.periodSeconds));
  const old = events.findIndex((e) => e.atMs < nowMs - longest * 1000);
  const event = { atMs: nowMs, change: Math.abs(to - from) };
  if (old >= 0) events[old] = event;
  else events.push(event);
}
