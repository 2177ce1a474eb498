/**
 * PodTopologySpread on small node/pod sets. The scoring cases are the inputs and normalized scores of 1.21's
 * `podtopologyspread/scoring_test.go` (`TestPodTopologySpreadScore`); the filter cases follow `filtering_test.go`.
 */
import { type Node, type Pod } from '@platform/api';

import { Snapshot } from '../../cache/cache';
import { CycleState, type FrameworkHandle, type NodeScore } from '../../framework/types';
import { makeNode, makePod } from '../../testing/objects';
import {
  ERR_REASON_CONSTRAINTS_NOT_MATCH,
  ERR_REASON_NODE_LABEL_NOT_MATCH,
  PodTopologySpread,
  type PodTopologySpreadArgs,
} from './pod-topology-spread';

const HOST = 'kubernetes.io/hostname';

/** A node with exactly these labels (no hostname label unless given). */
function node(name: string, labels: Record<string, string>): Node {
  const n = makeNode(name);
  n.metadata = { name, labels };
  return n;
}
const host = (name: string, more: Record<string, string> = {}): Node => node(name, { [HOST]: name, ...more });
const zoned = (name: string, zone: string): Node => host(name, { zone });

/** `count` pods labelled `labels` on `nodeName` (named after it). */
function on(nodeName: string, count: number, labels: Record<string, string> = { foo: '' }, namespace?: string): Pod[] {
  return Array.from({ length: count }, (_, i) =>
    makePod(`p-${nodeName}-${i}-${Object.keys(labels).join('')}${namespace ?? ''}`, { nodeName, labels, namespace }),
  );
}

type When = 'DoNotSchedule' | 'ScheduleAnyway';
const exists = (key: string) => ({ matchExpressions: [{ key, operator: 'Exists' as const }] });
const spread = (maxSkew: number, topologyKey: string, when: When, key = 'foo') => ({
  maxSkew,
  topologyKey,
  whenUnsatisfiable: when,
  labelSelector: exists(key),
});
const incoming = (constraints: ReturnType<typeof spread>[], labels: Record<string, string> = { foo: '' }): Pod =>
  makePod('p', { labels, spec: { topologySpreadConstraints: constraints } });

function plugin(snap: Snapshot, args: PodTopologySpreadArgs = {}): PodTopologySpread {
  const handle = {
    snapshot: () => snap,
    lister: () => ({ list: () => [], get: () => undefined }),
  } as unknown as FrameworkHandle;
  return new PodTopologySpread(handle, args);
}

/** Normalized scores of the candidate nodes; `failed` nodes are in the snapshot but did not pass the filters. */
function scores(pod: Pod, candidates: Node[], failed: Node[], existing: Pod[]): Record<string, number> {
  const snap = Snapshot.of([...candidates, ...failed], existing);
  const p = plugin(snap);
  const state = new CycleState();
  const filtered = candidates.map((n) => snap.get(n.metadata!.name!)!);
  expect(p.preScore(state, pod, filtered)).toBeUndefined();
  const list: NodeScore[] = filtered.map((n) => ({ name: n.name, score: p.score(state, pod, n) }));
  p.normalizeScore(state, pod, list);
  return Object.fromEntries(list.map((s) => [s.name, s.score]));
}

describe('PodTopologySpread score (1.21 scoring_test.go)', () => {
  const soft = (maxSkew = 1) => incoming([spread(maxSkew, HOST, 'ScheduleAnyway')]);
  const four = () => ['node-a', 'node-b', 'node-c', 'node-d'].map((n) => host(n));

  it.each([
    ['matching pods spread as 2/1/0/3', 1, [2, 1, 0, 3], { 'node-a': 40, 'node-b': 80, 'node-c': 100, 'node-d': 0 }],
    ['2/1/0/3 with maxSkew=2', 2, [2, 1, 0, 3], { 'node-a': 50, 'node-b': 83, 'node-c': 100, 'node-d': 16 }],
    ['4/3/2/1 with maxSkew=3', 3, [4, 3, 2, 1], { 'node-a': 33, 'node-b': 55, 'node-c': 77, 'node-d': 100 }],
  ])('one constraint on node, all 4 nodes are candidates: %s', (_n, maxSkew, counts, want) => {
    const existing = four().flatMap((n, i) => on(n.metadata!.name!, counts[i] as number));
    expect(scores(soft(maxSkew), four(), [], existing)).toEqual(want);
  });

  it('one constraint on node, 3 out of 4 nodes are candidates', () => {
    const existing = [...on('node-a', 4), ...on('node-b', 2), ...on('node-x', 1), ...on('node-y', 3)];
    const got = scores(soft(), [host('node-a'), host('node-b'), host('node-x')], [host('node-y')], existing);
    expect(got).toEqual({ 'node-a': 16, 'node-b': 66, 'node-x': 100 });
  });

  it("one node doesn't match the topology key: it scores 0 and is left out of the range", () => {
    const existing = [...on('node-a', 4), ...on('node-b', 2), ...on('node-x', 1), ...on('node-y', 3)];
    const got = scores(
      soft(),
      [host('node-a'), node('node-b', { n: 'node-b' }), host('node-x')],
      [host('node-y')],
      existing,
    );
    expect(got).toEqual({ 'node-a': 20, 'node-b': 0, 'node-x': 100 });
  });

  it('one constraint on zone, 3 out of 4 nodes are candidates', () => {
    const existing = [...on('node-a', 4), ...on('node-b', 2), ...on('node-x', 1), ...on('node-y', 3)];
    const got = scores(
      incoming([spread(1, 'zone', 'ScheduleAnyway')]),
      [zoned('node-a', 'zone1'), zoned('node-b', 'zone1'), zoned('node-x', 'zone2')],
      [zoned('node-y', 'zone2')],
      existing,
    );
    expect(got).toEqual({ 'node-a': 62, 'node-b': 62, 'node-x': 100 });
  });

  it('two constraints on zone and node, 2 out of 4 nodes are candidates', () => {
    const existing = [...on('node-a', 2), ...on('node-b', 1), ...on('node-x', 2), ...on('node-y', 4)];
    const got = scores(
      incoming([spread(1, 'zone', 'ScheduleAnyway'), spread(1, HOST, 'ScheduleAnyway')]),
      [zoned('node-a', 'zone1'), zoned('node-x', 'zone2')],
      [zoned('node-b', 'zone1'), zoned('node-y', 'zone2')],
      existing,
    );
    expect(got).toEqual({ 'node-a': 100, 'node-x': 54 });
  });

  it('two constraints with different label selectors', () => {
    const existing = [
      ...on('node-a', 1, { foo: '' }),
      ...on('node-b', 1, { foo: '', bar: '' }),
      ...on('node-y', 1, { foo: '' }),
      ...on('node-y', 1, { bar: '' }),
    ];
    const pod = incoming([spread(1, 'zone', 'ScheduleAnyway', 'foo'), spread(1, HOST, 'ScheduleAnyway', 'bar')], {
      foo: '',
      bar: '',
    });
    const nodes = [
      zoned('node-a', 'zone1'),
      zoned('node-b', 'zone1'),
      zoned('node-x', 'zone2'),
      zoned('node-y', 'zone2'),
    ];
    expect(scores(pod, nodes, [], existing)).toEqual({ 'node-a': 75, 'node-b': 25, 'node-x': 100, 'node-y': 50 });
  });

  it('pods of another namespace do not count, nor do terminating pods', () => {
    const existing = [...on('node-a', 1, { foo: '' }, 'ns1'), ...on('node-a', 1), ...on('node-b', 2)];
    expect(scores(soft(), [host('node-a'), host('node-b')], [], existing)).toEqual({ 'node-a': 100, 'node-b': 50 });
    const terminating = on('node-a', 1);
    terminating[0]!.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
    const got = scores(soft(), [host('node-a'), host('node-b')], [], [...terminating, ...on('node-b', 1)]);
    expect(got).toEqual({ 'node-a': 100, 'node-b': 0 });
  });
});

describe('PodTopologySpread filter', () => {
  function filter(pod: Pod, nodes: Node[], existing: Pod[]): Record<string, string> {
    const snap = Snapshot.of(nodes, existing);
    const p = plugin(snap);
    const state = new CycleState();
    p.preFilter(state, pod);
    const out: Record<string, string> = {};
    for (const n of snap.list()) out[n.name] = p.filter(state, pod, n)?.reasons.join('; ') ?? '';
    return out;
  }

  it('rejects the domains where the pod would make the skew exceed maxSkew, and nodes without the key', () => {
    // Zone 1 holds 3 matching pods, zone 2 holds 1: with maxSkew 1 only zone 2 is allowed (1 + 1 − 1 = 1).
    const nodes = [zoned('a', 'z1'), zoned('b', 'z1'), zoned('x', 'z2'), host('lonely')];
    const existing = [...on('a', 2), ...on('b', 1), ...on('x', 1)];
    expect(filter(incoming([spread(1, 'zone', 'DoNotSchedule')]), nodes, existing)).toEqual({
      a: ERR_REASON_CONSTRAINTS_NOT_MATCH,
      b: ERR_REASON_CONSTRAINTS_NOT_MATCH,
      x: '',
      lonely: ERR_REASON_NODE_LABEL_NOT_MATCH,
    });
    // maxSkew 3 lets zone 1 in: 3 + 1 − 1 = 3.
    expect(filter(incoming([spread(3, 'zone', 'DoNotSchedule')]), nodes, existing).a).toBe('');
  });

  it('does not count the pod itself when it does not match its own selector', () => {
    const nodes = [zoned('a', 'z1'), zoned('x', 'z2')];
    const pod = incoming([spread(1, 'zone', 'DoNotSchedule')], { other: '' });
    expect(filter(pod, nodes, on('a', 1))).toEqual({ a: '', x: '' });
  });

  it('skips the filter when the pod has only ScheduleAnyway constraints', () => {
    const snap = Snapshot.of([zoned('a', 'z1')], on('a', 5));
    const state = new CycleState();
    plugin(snap).preFilter(state, incoming([spread(1, 'zone', 'ScheduleAnyway')]));
    expect(state.skipFilter.has('PodTopologySpread')).toBe(true);
  });
});
