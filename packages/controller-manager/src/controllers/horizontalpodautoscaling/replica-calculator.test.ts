/**
 * The replica calculator against Kubernetes 1.21's `replica_calculator_test.go`: the same inputs (pods of two
 * containers, each container using `level` milli-units and requesting `request`; samples taken at Go's zero time
 * over one minute; a CPU initialization period of 2 minutes and an initial readiness delay of 10 seconds, 1.21's
 * testing values) and the same expected replicas, utilization and raw value.
 */
import { type Pod } from '@platform/api';

import { podMetricsOf } from './metrics-client';
import {
  type CalculatorConfig,
  groupPods,
  type PodMetricsInfo,
  rawResourceReplicas,
  resourceReplicas,
} from './replica-calculator';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const ZERO = '0001-01-01T00:00:00Z';
const HOT = new Date(NOW).toISOString();
const COOL = new Date(NOW - 3 * 60_000).toISOString();
const CONFIG: CalculatorConfig = {
  tolerance: 0.1,
  cpuInitializationPeriodMs: 2 * 60_000,
  initialReadinessDelayMs: 10_000,
};
const ZERO_MS = Date.parse(ZERO);

type Ready = 'True' | 'False';
type Phase = 'Running' | 'Pending' | 'Failed';

/** One of 1.21's `replicaCalcTestCase`s with a resource. */
interface Case {
  name: string;
  current: number;
  expected?: number;
  error?: string;
  readiness?: Ready[];
  startTime?: string[];
  phase?: Phase[];
  deleted?: boolean[];
  /** CPU request of each container of pod i (cores); pods beyond the list have none. */
  requests: string[];
  levels: number[];
  podNames?: string[];
  target: number;
  utilization?: number;
  raw?: number;
}

function podsOf(c: Pick<Case, 'current' | 'readiness' | 'startTime' | 'phase' | 'deleted' | 'requests'>): Pod[] {
  const count = Math.max(c.current, c.phase?.length ?? 0);
  return Array.from({ length: count }, (_, i): Pod => {
    const request = c.requests[i];
    const container = { name: '', image: 'x', ...(request ? { resources: { requests: { cpu: request } } } : {}) };
    return {
      metadata: {
        name: `test-pod-${i}`,
        labels: { name: 'test-pod' },
        ...(c.deleted?.[i] ? { deletionTimestamp: new Date(NOW).toISOString() } : {}),
      },
      spec: { containers: [container, { ...container }] },
      status: {
        phase: c.phase?.[i] ?? 'Running',
        startTime: c.startTime?.[i] ?? ZERO,
        conditions: [{ type: 'Ready', status: c.readiness?.[i] ?? 'True' }],
      },
    } as Pod;
  });
}

function metricsOf(levels: number[], perPod: number, names?: string[]): PodMetricsInfo {
  return new Map(
    levels.map((l, i) => [
      names?.[i] ?? `test-pod-${i}`,
      { timestampMs: ZERO_MS, windowMs: 60_000, value: l * perPod },
    ]),
  );
}

const ONE = ['1.0', '1.0', '1.0', '1.0', '1.0', '1.0', '1.0'];

const CASES: Case[] = [
  {
    name: 'ScaleUp',
    current: 3,
    expected: 5,
    requests: ONE,
    levels: [300, 500, 700],
    target: 30,
    utilization: 50,
    raw: 1000,
  },
  {
    name: 'ScaleUpUnreadyLessScale',
    current: 3,
    expected: 4,
    readiness: ['False', 'True', 'True'],
    requests: ONE,
    levels: [300, 500, 700],
    target: 30,
    utilization: 60,
    raw: 1200,
  },
  {
    name: 'ScaleUpHotCpuLessScale',
    current: 3,
    expected: 4,
    startTime: [HOT, COOL, COOL],
    requests: ONE,
    levels: [300, 500, 700],
    target: 30,
    utilization: 60,
    raw: 1200,
  },
  {
    name: 'ScaleUpUnreadyNoScale',
    current: 3,
    expected: 3,
    readiness: ['True', 'False', 'False'],
    requests: ONE,
    levels: [400, 500, 700],
    target: 30,
    utilization: 40,
    raw: 800,
  },
  {
    name: 'ScaleHotCpuNoScale',
    current: 3,
    expected: 3,
    readiness: ['True', 'False', 'False'],
    startTime: [COOL, HOT, HOT],
    requests: ONE,
    levels: [400, 500, 700],
    target: 30,
    utilization: 40,
    raw: 800,
  },
  {
    name: 'ScaleUpIgnoresFailedPods',
    current: 2,
    expected: 4,
    readiness: ['True', 'True', 'False', 'False'],
    phase: ['Running', 'Running', 'Failed', 'Failed'],
    requests: ONE,
    levels: [500, 700],
    target: 30,
    utilization: 60,
    raw: 1200,
  },
  {
    name: 'ScaleUpIgnoresDeletionPods',
    current: 2,
    expected: 4,
    readiness: ['True', 'True', 'False', 'False'],
    phase: ['Running', 'Running', 'Running', 'Running'],
    deleted: [false, false, true, true],
    requests: ONE,
    levels: [500, 700],
    target: 30,
    utilization: 60,
    raw: 1200,
  },
  {
    name: 'ScaleDown',
    current: 5,
    expected: 3,
    requests: ONE,
    levels: [100, 300, 500, 250, 250],
    target: 50,
    utilization: 28,
    raw: 560,
  },
  {
    name: 'ScaleDownIncludeUnreadyPods',
    current: 5,
    expected: 2,
    readiness: ['True', 'True', 'True', 'False', 'False'],
    requests: ONE,
    levels: [100, 300, 500, 250, 250],
    target: 50,
    utilization: 30,
    raw: 600,
  },
  {
    name: 'ScaleDownExcludeUnscheduledPods',
    current: 5,
    expected: 1,
    readiness: ['True', 'False', 'False', 'False', 'False'],
    phase: ['Running', 'Pending', 'Pending', 'Pending', 'Pending'],
    requests: ONE,
    levels: [100],
    target: 50,
    utilization: 10,
    raw: 200,
  },
  {
    name: 'ScaleDownIgnoreHotCpuPods',
    current: 5,
    expected: 2,
    startTime: [COOL, COOL, COOL, HOT, HOT],
    requests: ONE,
    levels: [100, 300, 500, 250, 250],
    target: 50,
    utilization: 30,
    raw: 600,
  },
  {
    name: 'ScaleDownIgnoresFailedPods',
    current: 5,
    expected: 3,
    readiness: ['True', 'True', 'True', 'True', 'True', 'False', 'False'],
    phase: ['Running', 'Running', 'Running', 'Running', 'Running', 'Failed', 'Failed'],
    requests: ONE,
    levels: [100, 300, 500, 250, 250],
    target: 50,
    utilization: 28,
    raw: 560,
  },
  {
    name: 'ScaleDownIgnoresDeletionPods',
    current: 5,
    expected: 3,
    readiness: ['True', 'True', 'True', 'True', 'True', 'False', 'False'],
    phase: ['Running', 'Running', 'Running', 'Running', 'Running', 'Running', 'Running'],
    deleted: [false, false, false, false, false, true, true],
    requests: ONE,
    levels: [100, 300, 500, 250, 250],
    target: 50,
    utilization: 28,
    raw: 560,
  },
  {
    name: 'Tolerance',
    current: 3,
    expected: 3,
    requests: ['0.9', '1.0', '1.1'],
    levels: [1010, 1030, 1020],
    target: 100,
    utilization: 102,
    raw: 2040,
  },
  {
    name: 'SuperfluousMetrics',
    current: 4,
    expected: 24,
    requests: ONE,
    levels: [4000, 9500, 3000, 7000, 3200, 2000],
    target: 100,
    utilization: 587,
    raw: 11750,
  },
  {
    name: 'MissingMetrics',
    current: 4,
    expected: 3,
    requests: ONE,
    levels: [400, 95],
    target: 100,
    utilization: 24,
    raw: 495,
  },
  {
    name: 'MissingMetricsNoChangeEq',
    current: 2,
    expected: 2,
    requests: ONE,
    levels: [1000],
    target: 100,
    utilization: 100,
    raw: 2000,
  },
  {
    name: 'MissingMetricsNoChangeGt',
    current: 2,
    expected: 2,
    requests: ONE,
    levels: [1900],
    target: 100,
    utilization: 190,
    raw: 3800,
  },
  {
    name: 'MissingMetricsNoChangeLt',
    current: 2,
    expected: 2,
    requests: ONE,
    levels: [600],
    target: 100,
    utilization: 60,
    raw: 1200,
  },
  {
    name: 'MissingMetricsUnreadyChange',
    current: 3,
    expected: 3,
    readiness: ['False', 'True', 'True'],
    requests: ONE,
    levels: [100, 450],
    target: 50,
    utilization: 45,
    raw: 900,
  },
  {
    name: 'MissingMetricsHotCpuNoChange',
    current: 3,
    expected: 3,
    startTime: [HOT, COOL, COOL],
    requests: ONE,
    levels: [100, 450],
    target: 50,
    utilization: 45,
    raw: 900,
  },
  {
    name: 'MissingMetricsUnreadyScaleUp',
    current: 3,
    expected: 4,
    readiness: ['False', 'True', 'True'],
    requests: ONE,
    levels: [100, 2000],
    target: 50,
    utilization: 200,
    raw: 4000,
  },
  {
    name: 'MissingMetricsHotCpuScaleUp',
    current: 3,
    expected: 4,
    readiness: ['False', 'True', 'True'],
    startTime: [HOT, COOL, COOL],
    requests: ONE,
    levels: [100, 2000],
    target: 50,
    utilization: 200,
    raw: 4000,
  },
  {
    name: 'MissingMetricsUnreadyScaleDown',
    current: 4,
    expected: 3,
    readiness: ['False', 'True', 'True', 'True'],
    requests: ONE,
    levels: [100, 100, 100],
    target: 50,
    utilization: 10,
    raw: 200,
  },
  {
    name: 'DuringRollingUpdateWithMaxSurge',
    current: 2,
    expected: 2,
    phase: ['Running', 'Running', 'Running'],
    requests: ONE,
    levels: [100, 100],
    target: 50,
    utilization: 10,
    raw: 200,
  },
  {
    name: 'DisjointResourcesMetrics',
    current: 1,
    error: 'no metrics returned matched known pods',
    requests: ONE,
    levels: [100],
    podNames: ['an-older-pod-name'],
    target: 100,
  },
  { name: 'EmptyCPURequest', current: 1, error: 'missing request for cpu', requests: [], levels: [200], target: 100 },
];

describe('resourceReplicas: 1.21 test cases (TestReplicaCalc*)', () => {
  test.each(CASES)('$name', (c) => {
    const input = {
      currentReplicas: c.current,
      resource: 'cpu',
      metrics: metricsOf(c.levels, 2, c.podNames),
      pods: podsOf(c),
      config: CONFIG,
      nowMs: NOW,
    };
    if (c.error) {
      expect(() => resourceReplicas(input, c.target)).toThrow(c.error);
      return;
    }
    expect(resourceReplicas(input, c.target)).toEqual({
      replicas: c.expected,
      utilization: c.utilization,
      rawUtilization: c.raw,
    });
  });

  test('ComputedToleranceAlgImplementation: just past the tolerance scales, just inside it does not', () => {
    // 10 pods using 150m of 300m on average (50%), requests spread around 300m.
    const requests = [400, 200, 310, 290, 302, 298, 301, 299, 300, 300].map((m) => `${m}m`);
    const input = {
      currentReplicas: 10,
      resource: 'cpu',
      metrics: metricsOf(Array(10).fill(150) as number[], 2),
      pods: podsOf({ current: 10, requests }),
      config: CONFIG,
      nowMs: NOW,
    };
    expect(resourceReplicas(input, 56)).toEqual({ replicas: 9, utilization: 50, rawUtilization: 300 });
    expect(resourceReplicas(input, 55)).toEqual({ replicas: 10, utilization: 50, rawUtilization: 300 });
  });

  test('no pods, no ready pods', () => {
    const base = { currentReplicas: 1, resource: 'cpu', config: CONFIG, nowMs: NOW };
    expect(() => resourceReplicas({ ...base, metrics: metricsOf([100], 2), pods: [] }, 50)).toThrow(
      'no pods returned by selector while calculating replica count',
    );
    const unready = podsOf({ current: 1, requests: ONE, readiness: ['False'] });
    expect(() => resourceReplicas({ ...base, metrics: metricsOf([100], 2), pods: unready }, 50)).toThrow(
      'did not receive metrics for any ready pods',
    );
  });
});

describe('rawResourceReplicas: AverageValue targets (1.21 calcPlainMetricReplicas cases)', () => {
  const cases: (Omit<Case, 'requests' | 'raw'> & { resource: string })[] = [
    {
      name: 'ScaleUpCM',
      resource: 'cpu',
      current: 3,
      expected: 4,
      levels: [20000, 10000, 30000],
      target: 15000,
      utilization: 20000,
    },
    {
      name: 'ScaleUpCMUnreadyHotCpuNoLessScale (not CPU: readiness does not count)',
      resource: 'memory',
      current: 3,
      expected: 6,
      readiness: ['True', 'True', 'False'],
      startTime: [COOL, COOL, HOT],
      levels: [50000, 10000, 30000],
      target: 15000,
      utilization: 30000,
    },
    {
      name: 'ScaleUpCMUnreadyHotCpuScaleWouldScaleDown',
      resource: 'memory',
      current: 3,
      expected: 7,
      readiness: ['False', 'True', 'False'],
      startTime: [HOT, COOL, HOT],
      levels: [50000, 15000, 30000],
      target: 15000,
      utilization: 31666,
    },
    {
      name: 'ScaleDownCM',
      resource: 'cpu',
      current: 5,
      expected: 3,
      levels: [12000, 12000, 12000, 12000, 12000],
      target: 20000,
      utilization: 12000,
    },
    {
      name: 'ToleranceCM',
      resource: 'cpu',
      current: 3,
      expected: 3,
      levels: [20000, 21000, 21000],
      target: 20000,
      utilization: 20666,
    },
    {
      name: 'CPU: an unready pod counts as 0 on a scale-up',
      resource: 'cpu',
      current: 3,
      expected: 4,
      readiness: ['False', 'True', 'True'],
      levels: [30000, 30000, 30000],
      target: 15000,
      utilization: 30000,
    },
    {
      name: 'missing pods count as the target on a scale-down',
      resource: 'cpu',
      current: 4,
      expected: 3,
      levels: [1000, 1000],
      target: 10000,
      utilization: 1000,
    },
  ];
  test.each(cases)('$name', (c) => {
    const input = {
      currentReplicas: c.current,
      resource: c.resource,
      metrics: metricsOf(c.levels, 1),
      pods: podsOf({ ...c, requests: [] }),
      config: CONFIG,
      nowMs: NOW,
    };
    expect(rawResourceReplicas(input, c.target)).toEqual({ replicas: c.expected, utilization: c.utilization });
  });
});

describe('groupPods: 1.21 TestGroupPods (Pending is "unready" since 1.20; deleted and Failed pods are "ignored")', () => {
  const pod = (name: string, o: { phase?: string; start?: number; ready?: Ready; transition?: number }): Pod =>
    ({
      metadata: { name },
      status: {
        phase: o.phase ?? 'Succeeded',
        ...(o.start !== undefined ? { startTime: new Date(NOW + o.start).toISOString() } : {}),
        ...(o.ready
          ? {
              conditions: [
                {
                  type: 'Ready',
                  status: o.ready,
                  ...(o.transition !== undefined
                    ? { lastTransitionTime: new Date(NOW + o.transition).toISOString() }
                    : {}),
                },
              ],
            }
          : {}),
      },
    }) as Pod;
  const sample = (value: number, at = ZERO_MS - NOW, windowMs = 0) => ({ value, timestampMs: NOW + at, windowMs });
  const m = 60_000;
  const cases: [string, Pod[], [string, ReturnType<typeof sample>][], string, number, string[], string[]][] = [
    ['void', [], [], 'cpu', 0, [], []],
    ['count in a ready pod - memory', [pod('bentham', {})], [['bentham', sample(1, 0, m)]], 'memory', 1, [], []],
    [
      'ignore a pod without ready condition - CPU',
      [pod('lucretius', { start: 0 })],
      [['lucretius', sample(1)]],
      'cpu',
      0,
      ['lucretius'],
      [],
    ],
    [
      'count in a ready pod with fresh metrics during initialization period - CPU',
      [pod('bentham', { start: -m, ready: 'True', transition: -30_000 })],
      [['bentham', sample(1, 0, 30_000)]],
      'cpu',
      1,
      [],
      [],
    ],
    [
      'ignore a ready pod without fresh metrics during initialization period - CPU',
      [pod('bentham', { start: -m, ready: 'True', transition: -30_000 })],
      [['bentham', sample(1, 0, 60_000)]],
      'cpu',
      0,
      ['bentham'],
      [],
    ],
    [
      'ignore an unready pod during initialization period - CPU',
      [pod('lucretius', { start: -10 * m, ready: 'False', transition: -9 * m - 54_000 })],
      [['lucretius', sample(1)]],
      'cpu',
      0,
      ['lucretius'],
      [],
    ],
    [
      'count in a ready pod without fresh metrics after initialization period - CPU',
      [pod('bentham', { start: -3 * m, ready: 'True', transition: -3 * m })],
      [['bentham', sample(1, -2 * m, m)]],
      'cpu',
      1,
      [],
      [],
    ],
    [
      'count in an unready pod that was ready after initialization period - CPU',
      [pod('lucretius', { start: -10 * m, ready: 'False', transition: -9 * m })],
      [['lucretius', sample(1)]],
      'cpu',
      1,
      [],
      [],
    ],
    [
      'count in a pod unready at exactly the initial readiness delay - CPU',
      [pod('lucretius', { start: -10 * m, ready: 'False', transition: -9 * m - 50_000 })],
      [['lucretius', sample(1)]],
      'cpu',
      1,
      [],
      [],
    ],
    ['a missing pod', [pod('epicurus', { start: -3 * m })], [], 'cpu', 0, [], ['epicurus']],
    [
      'several pods',
      [
        pod('lucretius', { start: 0 }),
        pod('niccolo', { start: -3 * m, ready: 'True', transition: -3 * m }),
        pod('epicurus', { start: -3 * m }),
      ],
      [
        ['lucretius', sample(1)],
        ['niccolo', sample(1)],
      ],
      'cpu',
      1,
      ['lucretius'],
      ['epicurus'],
    ],
    ['pending pods are unready', [pod('unscheduled', { phase: 'Pending' })], [], 'cpu', 0, ['unscheduled'], []],
  ];
  test.each(cases)('%s', (_name, pods, samples, resource, ready, unready, missing) => {
    const g = groupPods(pods, new Map(samples), resource, CONFIG, NOW);
    expect(g.readyPodCount).toBe(ready);
    expect([...g.unready].sort()).toEqual(unready);
    expect([...g.missing].sort()).toEqual(missing);
  });

  test('deleted and Failed pods are ignored, not unready', () => {
    const g = groupPods(
      [
        pod('gone', { phase: 'Running' }),
        { ...pod('deleting', { phase: 'Running' }), metadata: { name: 'deleting', deletionTimestamp: HOT } },
      ],
      new Map(),
      'cpu',
      CONFIG,
      NOW,
    );
    expect([...g.ignored]).toEqual(['deleting']);
    const failed = groupPods([pod('f', { phase: 'Failed' })], new Map(), 'cpu', CONFIG, NOW);
    expect([...failed.ignored]).toEqual(['f']);
  });
});

describe('podMetricsOf: a PodMetricsList read as 1.21 reads it', () => {
  test('sums containers; a pod without containers or with a container lacking the resource has no sample', () => {
    const r = podMetricsOf(
      [
        {
          metadata: { name: 'a' },
          timestamp: '2026-11-26T12:00:00Z',
          window: '30s',
          containers: [
            { name: 'x', usage: { cpu: '250m', memory: '10Mi' } },
            { name: 'y', usage: { cpu: '1', memory: '1Mi' } },
          ],
        },
        { metadata: { name: 'b' }, timestamp: '2026-11-26T12:00:05Z', window: '1m', containers: [] },
        { metadata: { name: 'c' }, containers: [{ name: 'x', usage: { memory: '1Mi' } }] },
      ],
      'cpu',
    );
    expect([...r.metrics.entries()]).toEqual([['a', { value: 1250, timestampMs: NOW, windowMs: 30_000 }]]);
    expect(r.timestampMs).toBe(NOW);
  });
  test('TestReplicaCalcEmptyMetrics: an empty list is an error', () => {
    expect(() => podMetricsOf([], 'cpu')).toThrow('no metrics returned from resource metrics API');
  });
});
