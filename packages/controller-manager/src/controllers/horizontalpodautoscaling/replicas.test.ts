import {
  type Behavior,
  type Condition,
  newScalingHistory,
  normalizeWithBehavior,
  normalizeWithoutBehavior,
  recordScaleEvent,
  scaleDownLimitWithRules,
  scaleUpLimitWithRules,
  type ScalingRules,
  setCondition,
  stabilize,
} from './replicas';
import { defaultedBehavior } from './index';

const T0 = 1_000_000_000;
const S = 1000;

test('a condition keeps its transition time while its status stays', () => {
  const list: Condition[] = [];
  setCondition(list, { type: 'A', status: 'True', reason: 'x' }, 't1');
  setCondition(list, { type: 'A', status: 'True', reason: 'y' }, 't2');
  expect(list).toEqual([{ type: 'A', status: 'True', reason: 'y', lastTransitionTime: 't1' }]);
  setCondition(list, { type: 'A', status: 'False', reason: 'z' }, 't3');
  expect(list[0]?.lastTransitionTime).toBe('t3');
});

test('downscale stabilization: the highest recommendation of the window; one that left it is replaced', () => {
  const h = newScalingHistory(5, T0);
  expect(stabilize(h, 2, T0 + 100 * S, 300 * S)).toBe(5);
  expect(stabilize(h, 3, T0 + 350 * S, 300 * S)).toBe(3);
  expect(h.recommendations).toEqual([
    { atMs: T0 + 350 * S, replicas: 3 },
    { atMs: T0 + 100 * S, replicas: 2 },
  ]);
});

describe('without a behaviour (1.21 normalizeDesiredReplicas)', () => {
  const cases: [string, number, number, number, number, number, string, string, string][] = [
    // name, current, desired, min, max, → replicas, AbleToScale reason, ScalingLimited status, reason
    ['within range', 3, 5, 1, 10, 5, 'ReadyForNewScale', 'False', 'DesiredWithinRange'],
    ['at most twice the current count', 3, 10, 1, 20, 6, 'ReadyForNewScale', 'True', 'ScaleUpLimit'],
    ['at least 4 on the way up', 1, 10, 1, 20, 4, 'ReadyForNewScale', 'True', 'ScaleUpLimit'],
    ['maxReplicas below the rate limit', 3, 10, 1, 5, 5, 'ReadyForNewScale', 'True', 'TooManyReplicas'],
    ['minReplicas', 3, 1, 2, 10, 2, 'ReadyForNewScale', 'True', 'TooFewReplicas'],
  ];
  test.each(cases)('%s', (_n, current, desired, min, max, replicas, able, limitedStatus, limitedReason) => {
    const h = newScalingHistory(0, T0);
    const n = normalizeWithoutBehavior(
      h,
      { currentReplicas: current, desiredReplicas: desired, minReplicas: min, maxReplicas: max },
      0,
      T0 + S,
    );
    expect(n.replicas).toBe(replicas);
    expect(n.ableToScale.reason).toBe(able);
    expect(n.scalingLimited).toMatchObject({ status: limitedStatus, reason: limitedReason });
  });

  test('a recent higher recommendation holds a scale-down', () => {
    const h = newScalingHistory(4, T0);
    const args = { currentReplicas: 4, desiredReplicas: 1, minReplicas: 1, maxReplicas: 10 };
    const held = normalizeWithoutBehavior(h, args, 300 * S, T0 + 10 * S);
    expect(held).toEqual({
      replicas: 4,
      ableToScale: {
        status: 'True',
        reason: 'ScaleDownStabilized',
        message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
      },
      scalingLimited: {
        status: 'False',
        reason: 'DesiredWithinRange',
        message: 'the desired count is within the acceptable range',
      },
    });
    expect(normalizeWithoutBehavior(h, args, 300 * S, T0 + 301 * S).replicas).toBe(1);
  });
});

describe('scaling policies (1.21 calculateScale{Up,Down}Limit…)', () => {
  const up: ScalingRules = {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Pods', value: 4, periodSeconds: 60 },
      { type: 'Percent', value: 100, periodSeconds: 60 },
    ],
  };
  const down: ScalingRules = {
    stabilizationWindowSeconds: 0,
    selectPolicy: 'Max',
    policies: [
      { type: 'Percent', value: 50, periodSeconds: 60 },
      { type: 'Pods', value: 3, periodSeconds: 60 },
    ],
  };
  test.each([
    ['Max: the largest change', 'Max', [], 20],
    ['Min: the smallest change', 'Min', [], 14],
    ['Disabled: no change', 'Disabled', [], 10],
    ['changes within the period count from where the period started', 'Max', [{ atMs: T0 - 30 * S, change: 5 }], 10],
    ['changes older than the period do not', 'Max', [{ atMs: T0 - 61 * S, change: 5 }], 20],
  ] as const)('up, %s', (_n, selectPolicy, events, limit) => {
    expect(scaleUpLimitWithRules(10, [...events], { ...up, selectPolicy }, T0)).toBe(limit);
  });
  test.each([
    ['Max: the largest change', 'Max', [], 5],
    ['Min: the smallest change', 'Min', [], 7],
    ['Disabled: no change', 'Disabled', [], 10],
    ['changes within the period count from where the period started', 'Max', [{ atMs: T0 - 30 * S, change: 2 }], 6],
  ] as const)('down, %s', (_n, selectPolicy, events, limit) => {
    expect(scaleDownLimitWithRules(10, [...events], { ...down, selectPolicy }, T0)).toBe(limit);
  });
  test('Percent rounds up on the way up and down on the way down', () => {
    const onePercent = (r: ScalingRules): ScalingRules => ({
      ...r,
      policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }],
    });
    expect(scaleUpLimitWithRules(3, [], onePercent(up), T0)).toBe(4);
    expect(scaleDownLimitWithRules(3, [], onePercent(down), T0)).toBe(2);
  });
});

describe('with a behaviour (1.21 normalizeDesiredReplicasWithBehaviors)', () => {
  const behavior = (o: { up?: Partial<ScalingRules>; down?: Partial<ScalingRules> } = {}): Behavior => ({
    ...defaultedBehavior({}, 0),
    scaleUp: { ...defaultedBehavior({}, 0).scaleUp, ...o.up },
    scaleDown: { ...defaultedBehavior({}, 0).scaleDown, ...o.down },
  });

  test("1.21's defaults; the scale-down window comes from --horizontal-pod-autoscaler-downscale-stabilization", () => {
    expect(defaultedBehavior({ scaleDown: { selectPolicy: 'Min' } }, 300_500)).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: {
        stabilizationWindowSeconds: 300,
        selectPolicy: 'Min',
        policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
      },
    });
  });

  test('a scale-down policy limits each step, and the steps of its period add up', () => {
    const b = behavior({ down: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } });
    const h = newScalingHistory(4, T0);
    const first = normalizeWithBehavior(
      h,
      { currentReplicas: 4, desiredReplicas: 1, minReplicas: 1, maxReplicas: 10 },
      b,
      T0 + S,
    );
    expect(first.replicas).toBe(3);
    expect(first.scalingLimited).toEqual({
      status: 'True',
      reason: 'ScaleDownLimit',
      message: 'the desired replica count is decreasing faster than the maximum scale rate',
    });
    recordScaleEvent(h, b, 4, 3, T0 + S);
    const args = { currentReplicas: 3, desiredReplicas: 1, minReplicas: 1, maxReplicas: 10 };
    expect(normalizeWithBehavior(h, args, b, T0 + 30 * S).replicas).toBe(3);
    expect(normalizeWithBehavior(h, args, b, T0 + 62 * S).replicas).toBe(2);
  });

  test('a scale-up window takes the lowest recent recommendation', () => {
    const b = behavior({ up: { stabilizationWindowSeconds: 60 } });
    const h = newScalingHistory(2, T0);
    const n = normalizeWithBehavior(
      h,
      { currentReplicas: 2, desiredReplicas: 5, minReplicas: 1, maxReplicas: 10 },
      b,
      T0 + 10 * S,
    );
    expect(n.replicas).toBe(2);
    expect(n.ableToScale.reason).toBe('ScaleUpStabilized');
    const later = normalizeWithBehavior(
      h,
      { currentReplicas: 2, desiredReplicas: 5, minReplicas: 1, maxReplicas: 10 },
      b,
      T0 + 61 * S,
    );
    expect(later.replicas).toBe(5);
  });

  test('maxReplicas and the scale-up rate', () => {
    const h = newScalingHistory(2, T0);
    const fast = normalizeWithBehavior(
      h,
      { currentReplicas: 2, desiredReplicas: 50, minReplicas: 1, maxReplicas: 100 },
      behavior(),
      T0,
    );
    expect(fast).toMatchObject({ replicas: 6, scalingLimited: { status: 'True', reason: 'ScaleUpLimit' } });
    const capped = normalizeWithBehavior(
      h,
      { currentReplicas: 2, desiredReplicas: 50, minReplicas: 1, maxReplicas: 5 },
      behavior(),
      T0,
    );
    expect(capped).toMatchObject({ replicas: 5, scalingLimited: { status: 'True', reason: 'TooManyReplicas' } });
  });

  test('selectPolicy Disabled holds the count', () => {
    const b = behavior({ down: { selectPolicy: 'Disabled' } });
    const n = normalizeWithBehavior(
      newScalingHistory(4, T0),
      { currentReplicas: 4, desiredReplicas: 1, minReplicas: 1, maxReplicas: 10 },
      b,
      T0,
    );
    expect(n).toMatchObject({ replicas: 4, scalingLimited: { status: 'True', reason: 'ScaleDownLimit' } });
  });
});
