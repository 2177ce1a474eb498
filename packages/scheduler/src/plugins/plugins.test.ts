/**
 * Table tests of the plugins' filter and score results on small node/pod sets, with the figures 1.21's formulas
 * give (computed by hand from `resource_allocation.go`, `balanced_allocation.go`, `requested_to_capacity_ratio.go`,
 * `image_locality.go`, `numFeasibleNodesToFind` and `FitError.Error`).
 */
import { Snapshot } from '../cache/cache';
import { CycleState, type NodeScore, Status } from '../framework/types';
import { SchedulingQueue } from '../queue/scheduling-queue';
import { fitErrorMessage, numFeasibleNodesToFind } from '../scheduler';
import { makeNode, makePod } from '../testing/objects';
import { DefaultPreemption } from './defaultpreemption/default-preemption';
import { calculatePriority } from './imagelocality/image-locality';
import { NodeAffinity } from './nodeaffinity/node-affinity';
import { BalancedAllocation } from './noderesources/balanced-allocation';
import { Fit } from './noderesources/fit';
import { LeastAllocated } from './noderesources/least-allocated';
import { MostAllocated } from './noderesources/most-allocated';
import { RequestedToCapacityRatio } from './noderesources/requested-to-capacity-ratio';
import { NodeName } from './nodename/node-name';
import { ERR_REASON as NODE_PORTS_REASON, NodePorts } from './nodeports/node-ports';
import { NodePreferAvoidPods } from './nodepreferavoidpods/node-prefer-avoid-pods';
import { NodeUnschedulable } from './nodeunschedulable/node-unschedulable';
import { PrioritySort } from './prioritysort/priority-sort';
import { TaintToleration } from './tainttoleration/taint-toleration';

const node = (pods = []) => Snapshot.of([makeNode('n', { cpu: '4', memory: '8Gi' })], pods).get('n')!;

it.each([
  ['LeastAllocated', new LeastAllocated(), 75],
  ['MostAllocated', new MostAllocated(), 25],
  ['BalancedAllocation', new BalancedAllocation(), 100],
  ['RequestedToCapacityRatio (default shape)', new RequestedToCapacityRatio(), 75],
  [
    'RequestedToCapacityRatio (bin packing shape)',
    new RequestedToCapacityRatio({
      shape: [
        { utilization: 0, score: 0 },
        { utilization: 100, score: 10 },
      ],
    }),
    25,
  ],
])('%s scores a 1 cpu / 2Gi pod on an empty 4 cpu / 8Gi node', (_n, plugin, want) => {
  expect(plugin.score(new CycleState(), makePod('p', { cpu: '1', memory: '2Gi' }), node())).toBe(want);
});

it('NodeResourcesFit names each shortage, counting init containers and overhead', () => {
  const fit = new Fit();
  const pod = makePod('p', {
    cpu: '1',
    spec: {
      initContainers: [{ name: 'i', image: 'x', resources: { requests: { cpu: '3500m', 'example.com/gpu': '1' } } }],
      overhead: { cpu: '600m' },
    },
  });
  const s = new CycleState();
  fit.preFilter(s, pod);
  expect(fit.filter(s, pod, node())?.reasons).toEqual(['Insufficient cpu', 'Insufficient example.com/gpu']);
  expect(fit.filter(new CycleState(), makePod('q', { cpu: '4' }), node())).toBeUndefined();
});

it('TaintToleration writes the 1.21 reason and prefers fewer untolerated PreferNoSchedule taints', () => {
  const tt = new TaintToleration();
  const tainted = Snapshot.of([
    makeNode('a', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] }),
    makeNode('b', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }),
  ]);
  const pod = makePod('p');
  expect(tt.filter(new CycleState(), pod, tainted.get('a')!)?.reasons).toEqual([
    "node(s) had taint {k: v}, that the pod didn't tolerate",
  ]);
  const scores: NodeScore[] = [
    { name: 'a', score: tt.score(new CycleState(), pod, tainted.get('a')!) },
    { name: 'b', score: tt.score(new CycleState(), pod, tainted.get('b')!) },
  ];
  tt.normalizeScore(new CycleState(), pod, scores);
  expect(scores.map((s) => s.score)).toEqual([100, 0]);
});

it('NodeAffinity filters by nodeSelector and sums preferred weights', () => {
  const na = new NodeAffinity();
  const snap = Snapshot.of([makeNode('a', { labels: { disk: 'ssd' } }), makeNode('b')]);
  const pod = makePod('p', {
    spec: {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 7, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
          ],
        },
      },
    },
  });
  expect(na.score(new CycleState(), pod, snap.get('a')!)).toBe(7);
  expect(na.score(new CycleState(), pod, snap.get('b')!)).toBe(0);
  const picky = makePod('q', { spec: { nodeSelector: { disk: 'ssd' } } });
  expect(na.filter(new CycleState(), picky, snap.get('b')!)?.reasons).toEqual([
    "node(s) didn't match Pod's node affinity",
  ]);
});

it('ImageLocality clamps between 23 MB and 1000 MB per container', () => {
  expect(calculatePriority(0, 1)).toBe(0);
  expect(calculatePriority(1000 * 1024 * 1024, 1)).toBe(100);
  expect(calculatePriority(500 * 1024 * 1024, 1)).toBe(48);
});

it('examines as many nodes as 1.21 does and summarizes a failure as 1.21 does', () => {
  expect([50, 100, 1000, 5000, 10000].map((n) => numFeasibleNodesToFind(n))).toEqual([50, 100, 420, 500, 500]);
  const statuses = new Map([
    ['a', new Status('Unschedulable', ['Insufficient cpu'])],
    ['b', new Status('UnschedulableAndUnresolvable', ["node(s) had taint {k: v}, that the pod didn't tolerate"])],
    ['c', new Status('UnschedulableAndUnresolvable', ["node(s) had taint {k: v}, that the pod didn't tolerate"])],
  ]);
  expect(fitErrorMessage(3, statuses)).toBe(
    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had taint {k: v}, that the pod didn't tolerate.",
  );
});

it('backs off 1 s doubling to 10 s', () => {
  const q = new SchedulingQueue({ less: () => false });
  expect([1, 2, 3, 4, 5, 6].map((a) => q.backoffDuration(a))).toEqual([1000, 2000, 4000, 8000, 10000, 10000]);
});

describe('the small filters, as 1.21 gives them', () => {
  const snap = Snapshot.of(
    [makeNode('a'), makeNode('cordoned', { unschedulable: true })],
    [
      makePod('web', {
        nodeName: 'a',
        spec: {
          containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }] }],
        },
      }),
    ],
  );
  const withPort = (hostPort: number, protocol: 'TCP' | 'UDP' = 'TCP', hostIP?: string) =>
    makePod('p', {
      spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 1, hostPort, protocol, hostIP }] }] },
    });

  it.each([
    ['the same host port and protocol', withPort(8080), [NODE_PORTS_REASON]],
    [
      'the same port on one host IP (the used one binds 0.0.0.0)',
      withPort(8080, 'TCP', '127.0.0.1'),
      [NODE_PORTS_REASON],
    ],
    ['the same port over UDP', withPort(8080, 'UDP'), undefined],
    ['another port', withPort(8081), undefined],
  ])('NodePorts: %s', (_n, pod, want) => {
    const np = new NodePorts();
    const s = new CycleState();
    np.preFilter(s, pod);
    expect(np.filter(s, pod, snap.get('a')!)?.reasons).toEqual(want);
  });

  it('NodeName passes only the named node', () => {
    const pod = makePod('p', { spec: { nodeName: 'cordoned' } });
    expect(new NodeName().filter(new CycleState(), pod, snap.get('cordoned')!)).toBeUndefined();
    expect(new NodeName().filter(new CycleState(), pod, snap.get('a')!)?.reasons).toEqual([
      "node(s) didn't match the requested hostname",
    ]);
  });

  it('NodeUnschedulable rejects a cordoned node unless the pod tolerates the unschedulable taint', () => {
    const nu = new NodeUnschedulable();
    expect(nu.filter(new CycleState(), makePod('p'), snap.get('cordoned')!)?.reasons).toEqual([
      'node(s) were unschedulable',
    ]);
    const tolerant = makePod('t', {
      spec: { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] },
    });
    expect(nu.filter(new CycleState(), tolerant, snap.get('cordoned')!)).toBeUndefined();
    expect(nu.filter(new CycleState(), makePod('p'), snap.get('a')!)).toBeUndefined();
  });

  it("NodePreferAvoidPods scores 0 only where the annotation names the pod's controller", () => {
    const avoid = makeNode('avoid');
    avoid.metadata!.annotations = {
      'scheduler.alpha.kubernetes.io/preferAvoidPods': JSON.stringify({
        preferAvoidPods: [{ podSignature: { podController: { kind: 'ReplicaSet', uid: 'rs-1' } } }],
      }),
    };
    const ni = Snapshot.of([avoid]).get('avoid')!;
    const owned = (uid: string, kind = 'ReplicaSet') => {
      const p = makePod('p');
      p.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind, name: 'x', uid, controller: true }];
      return p;
    };
    const npap = new NodePreferAvoidPods();
    expect(npap.score(new CycleState(), owned('rs-1'), ni)).toBe(0);
    expect(npap.score(new CycleState(), owned('rs-2'), ni)).toBe(100);
    expect(npap.score(new CycleState(), owned('rs-1', 'StatefulSet'), ni)).toBe(100);
    expect(npap.score(new CycleState(), makePod('p'), ni)).toBe(100);
  });

  it('PrioritySort puts the higher priority first, then the earlier queued', () => {
    const ps = new PrioritySort();
    const q = (priority: number, timestamp: number) => ({ pod: makePod('p', { priority }), timestamp }) as never;
    expect(ps.less(q(10, 5), q(1, 1))).toBe(true);
    expect(ps.less(q(1, 1), q(10, 5))).toBe(false);
    expect(ps.less(q(5, 1), q(5, 2))).toBe(true);
    expect(ps.less(q(5, 2), q(5, 1))).toBe(false);
  });
});

describe("DefaultPreemption picks the node as 1.21's pickOneNodeForPreemption does", () => {
  const victim = (name: string, priority: number, start = '2026-01-01T00:00:00Z') => {
    const p = makePod(name, { priority });
    p.status = { startTime: start };
    return p;
  };
  const cand = (name: string, victims: ReturnType<typeof victim>[], numPDBViolations = 0) => ({
    name,
    victims,
    numPDBViolations,
  });

  it.each([
    ['a node that needs no victims', [cand('a', [victim('x', 1)]), cand('b', [])], 'b'],
    ['the fewest PDB violations', [cand('a', [victim('x', 1)], 1), cand('b', [victim('y', 5)], 0)], 'b'],
    [
      'the lowest highest-priority victim',
      [cand('a', [victim('x', 5)]), cand('b', [victim('y', 1), victim('z', 2)])],
      'b',
    ],
    [
      'the smallest sum of priorities',
      [cand('a', [victim('x', 3), victim('y', 3)]), cand('b', [victim('z', 3), victim('w', 1)])],
      'b',
    ],
    ['the fewest victims', [cand('a', [victim('x', 0), victim('y', 0)]), cand('b', [victim('z', 0)])], 'b'],
    [
      'the latest start among the highest-priority victims',
      [cand('a', [victim('x', 3, '2026-01-01T00:00:00Z')]), cand('b', [victim('y', 3, '2026-01-02T00:00:00Z')])],
      'b',
    ],
  ])('prefers %s', (_n, cands, want) => {
    expect(DefaultPreemption.pick(cands)?.name).toBe(want);
  });

  it('has nothing to pick from no candidates', () => {
    expect(DefaultPreemption.pick([])).toBeUndefined();
  });
});
