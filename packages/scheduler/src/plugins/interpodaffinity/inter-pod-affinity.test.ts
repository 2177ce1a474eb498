/**
 * InterPodAffinity on small node/pod sets: which nodes pass the filter (with 1.21's reasons) and the normalized
 * scores, as 1.21's `interpodaffinity` plugin gives them for the same inputs (`filtering.go`, `scoring.go`: counts
 * per topology domain, weights summed per domain, then scaled min–max to 0–100).
 */
import { type Pod } from '@platform/api';

import { Snapshot } from '../../cache/cache';
import { CycleState, type FrameworkHandle, type NodeScore } from '../../framework/types';
import { makeNode, makePod } from '../../testing/objects';
import {
  ERR_REASON_AFFINITY_NOT_MATCH,
  ERR_REASON_AFFINITY_RULES as AFFINITY_RULES,
  ERR_REASON_ANTI_AFFINITY_RULES as ANTI_AFFINITY_RULES,
  ERR_REASON_EXISTING_ANTI_AFFINITY as EXISTING_ANTI_AFFINITY,
  InterPodAffinity,
} from './inter-pod-affinity';

/** 1.21 gives the general reason first, then the rule that failed. */
const ERR_REASON_AFFINITY_RULES = `${ERR_REASON_AFFINITY_NOT_MATCH}; ${AFFINITY_RULES}`;
const ERR_REASON_ANTI_AFFINITY_RULES = `${ERR_REASON_AFFINITY_NOT_MATCH}; ${ANTI_AFFINITY_RULES}`;
const ERR_REASON_EXISTING_ANTI_AFFINITY = `${ERR_REASON_AFFINITY_NOT_MATCH}; ${EXISTING_ANTI_AFFINITY}`;

type Term = { labelSelector: { matchLabels: Record<string, string> }; topologyKey: string; namespaces?: string[] };
const term = (labels: Record<string, string>, topologyKey: string, namespaces?: string[]): Term => ({
  labelSelector: { matchLabels: labels },
  topologyKey,
  ...(namespaces ? { namespaces } : {}),
});
const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

/** Nodes a and b in zone z1, c in z2, d without a zone label. */
const NODES = [
  makeNode('a', { labels: { [ZONE]: 'z1' } }),
  makeNode('b', { labels: { [ZONE]: 'z1' } }),
  makeNode('c', { labels: { [ZONE]: 'z2' } }),
  makeNode('d'),
];

function plugin(snap: Snapshot, hardPodAffinitySymmetricWeight = 1): InterPodAffinity {
  const handle = {
    snapshot: () => snap,
    lister: () => ({ list: () => [], get: () => undefined }),
    hardPodAffinitySymmetricWeight,
  } as unknown as FrameworkHandle;
  return new InterPodAffinity(handle);
}

/** Each node's filter result: '' when it passes, else its reasons joined. */
function filter(pod: Pod, existing: Pod[]): Record<string, string> {
  const snap = Snapshot.of(NODES, existing);
  const p = plugin(snap);
  const state = new CycleState();
  expect(p.preFilter(state, pod)).toBeUndefined();
  const out: Record<string, string> = {};
  for (const n of snap.list()) out[n.name] = p.filter(state, pod, n)?.reasons.join('; ') ?? '';
  return out;
}

function scores(pod: Pod, existing: Pod[], hardWeight = 1): Record<string, number> {
  const snap = Snapshot.of(NODES, existing);
  const p = plugin(snap, hardWeight);
  const state = new CycleState();
  p.preScore(state, pod);
  const list: NodeScore[] = snap.list().map((n) => ({ name: n.name, score: p.score(state, pod, n) }));
  p.normalizeScore(state, pod, list);
  return Object.fromEntries(list.map((s) => [s.name, s.score]));
}

const withAffinity = (name: string, affinity: object, o: Parameters<typeof makePod>[1] = {}): Pod =>
  makePod(name, { ...o, spec: { ...o.spec, affinity } });

describe('InterPodAffinity filter', () => {
  it('keeps a pod with required anti-affinity out of the domains of the pods it matches', () => {
    const pod = withAffinity('p', {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' }, ZONE)] },
    });
    const db = makePod('db', { labels: { app: 'db' }, nodeName: 'a' });
    expect(filter(pod, [db])).toEqual({
      a: ERR_REASON_ANTI_AFFINITY_RULES,
      b: ERR_REASON_ANTI_AFFINITY_RULES,
      c: '',
      d: '',
    });
  });

  it('keeps a pod out of the domain of an existing pod whose required anti-affinity matches it (the symmetric rule)', () => {
    const pod = makePod('p', { labels: { app: 'web' } });
    const guard = withAffinity(
      'guard',
      { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' }, HOST)] } },
      { nodeName: 'c' },
    );
    expect(filter(pod, [guard])).toEqual({ a: '', b: '', c: ERR_REASON_EXISTING_ANTI_AFFINITY, d: '' });
  });

  it('ignores pods of other namespaces unless the term names them', () => {
    const other = makePod('db', { labels: { app: 'db' }, nodeName: 'a', namespace: 'other' });
    const anti = (namespaces?: string[]) =>
      withAffinity('p', {
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' }, HOST, namespaces)] },
      });
    expect(filter(anti(), [other]).a).toBe('');
    expect(filter(anti(['other']), [other]).a).toBe(ERR_REASON_ANTI_AFFINITY_RULES);
  });

  it('requires a matching pod in the domain for required affinity, except for the first pod of a self-matching group', () => {
    const follower = withAffinity('f', {
      podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'cache' }, ZONE)] },
    });
    const cache = makePod('cache', { labels: { app: 'cache' }, nodeName: 'c' });
    expect(filter(follower, [cache])).toEqual({
      a: ERR_REASON_AFFINITY_RULES,
      b: ERR_REASON_AFFINITY_RULES,
      c: '',
      // No zone label: the term's topology key is missing, which no pod can change (unresolvable).
      d: ERR_REASON_AFFINITY_RULES,
    });
    // No pod matches yet, but the pod matches its own term: it may go to any node with the topology key.
    const first = withAffinity(
      'first',
      { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'cache' }, ZONE)] } },
      { labels: { app: 'cache' } },
    );
    expect(filter(first, [])).toEqual({ a: '', b: '', c: '', d: ERR_REASON_AFFINITY_RULES });
    // A pod that does not match its own term has nowhere to go.
    expect(Object.values(filter(follower, [])).every((r) => r === ERR_REASON_AFFINITY_RULES)).toBe(true);
  });

  it('counts a pod added on a node (preemption and nominated pods) and forgets a removed one', () => {
    const pod = withAffinity('p', {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'db' }, HOST)] },
    });
    const snap = Snapshot.of(NODES, []);
    const p = plugin(snap);
    const state = new CycleState();
    p.preFilter(state, pod);
    const b = snap.get('b')!;
    const db = makePod('db', { labels: { app: 'db' }, nodeName: 'b' });
    expect(p.filter(state, pod, b)).toBeUndefined();
    p.addPod(state, pod, db, b);
    expect(p.filter(state, pod, b)?.reasons.join('; ')).toBe(ERR_REASON_ANTI_AFFINITY_RULES);
    p.removePod(state, pod, db, b);
    expect(p.filter(state, pod, b)).toBeUndefined();
  });
});

describe('InterPodAffinity score', () => {
  it('sums preferred weights per domain and scales them from the lowest (0) to the highest (100)', () => {
    const pod = withAffinity('p', {
      podAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 10, podAffinityTerm: term({ app: 'cache' }, ZONE) },
        ],
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, podAffinityTerm: term({ app: 'noisy' }, HOST) }],
      },
    });
    const existing = [
      makePod('cache', { labels: { app: 'cache' }, nodeName: 'a' }),
      makePod('noisy', { labels: { app: 'noisy' }, nodeName: 'b' }),
    ];
    // Domain sums: a = +10 (zone z1), b = +10 − 5 = 5, c = 0, d = 0; min 0, max 10.
    expect(scores(pod, existing)).toEqual({ a: 100, b: 50, c: 0, d: 0 });
  });

  it("counts existing pods' required affinity to the pod with the symmetric weight, and nothing when it is 0", () => {
    const pod = makePod('p', { labels: { app: 'web' } });
    const follower = withAffinity(
      'f',
      { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' }, ZONE)] } },
      { nodeName: 'c' },
    );
    expect(scores(pod, [follower])).toEqual({ a: 0, b: 0, c: 100, d: 0 });
    expect(scores(pod, [follower], 0)).toEqual({ a: 0, b: 0, c: 0, d: 0 });
  });

  it('gives every node 0 when only required anti-affinity is in play', () => {
    const guard = withAffinity(
      'guard',
      { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: 'web' }, HOST)] } },
      { nodeName: 'a' },
    );
    expect(scores(makePod('p', { labels: { app: 'web' } }), [guard])).toEqual({ a: 0, b: 0, c: 0, d: 0 });
  });
});
