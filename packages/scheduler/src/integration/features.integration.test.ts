/**
 * The scheduler's plugins end to end, against the real API server (in-process, SQLite) with fake Node objects
 * in two zones: pod anti-affinity and affinity, topology spread, two profiles, and preemption of a lower-priority
 * pod (its victim deleted, the preemptor nominated and then bound).
 */
import { type ApiObject, NodeKind, type Pod, PodKind } from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, type ResourceClient, RestClient } from '@platform/client';

import { resolveProfile } from '../config/profile';
import { Scheduler } from '../scheduler';
import { makeNode, makePod } from '../testing/objects';

let ts: TestServer;
let clientset: Clientset;
let stop: AbortController;
let run: Promise<void>;
const ZONE = 'topology.kubernetes.io/zone';

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const pods = (): ResourceClient => clientset.resource(PodKind, 'default') as unknown as ResourceClient;
const nodeOf = async (name: string): Promise<string | undefined> => ((await pods().get(name)) as Pod).spec?.nodeName;
const bound = (name: string): Promise<string> => waitFor(`${name} bound`, () => nodeOf(name));
const unschedulableMessage = (name: string): Promise<string> =>
  waitFor(`${name} unschedulable`, async () => {
    const c = ((await pods().get(name)) as Pod).status?.conditions?.find((x) => x.type === 'PodScheduled');
    return c?.reason === 'Unschedulable' ? c.message : undefined;
  });

beforeAll(async () => {
  ts = await startTestServer();
  clientset = new Clientset(new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't', qps: 0 }));
  for (const [name, zone] of [
    ['z1-a', 'z1'],
    ['z1-b', 'z1'],
    ['z2-a', 'z2'],
  ] as const)
    await clientset.resource(NodeKind).create(makeNode(name, { cpu: '4', labels: { [ZONE]: zone } }) as ApiObject);
  const scheduler = new Scheduler({
    clientset,
    profiles: [
      resolveProfile({}),
      resolveProfile({
        schedulerName: 'bin-packing',
        plugins: {
          score: {
            disabled: [{ name: 'NodeResourcesLeastAllocated' }],
            enabled: [{ name: 'NodeResourcesMostAllocated' }],
          },
        },
      }),
    ],
    podInitialBackoffMs: 100,
    podMaxBackoffMs: 200,
  });
  stop = new AbortController();
  run = scheduler.run(stop.signal);
}, 60_000);

afterAll(async () => {
  stop.abort();
  await run;
  clientset.rest.close();
  await ts.stop();
});

it('spreads pods with required anti-affinity one per node, and explains the one too many', async () => {
  const anti = {
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { app: 'anti' } }, topologyKey: 'kubernetes.io/hostname' },
        ],
      },
    },
  };
  for (let i = 0; i < 4; i++)
    await pods().create(makePod(`anti-${i}`, { labels: { app: 'anti' }, spec: anti }) as ApiObject);
  const nodes = new Set<string>();
  const pending: string[] = [];
  await waitFor('three bound', async () => {
    nodes.clear();
    pending.length = 0;
    for (let i = 0; i < 4; i++) {
      const n = await nodeOf(`anti-${i}`);
      if (n) nodes.add(n);
      else pending.push(`anti-${i}`);
    }
    return nodes.size === 3;
  });
  expect(pending).toHaveLength(1);
  expect(await unschedulableMessage(pending[0] as string)).toBe(
    "0/3 nodes are available: 3 node(s) didn't match pod affinity/anti-affinity, 3 node(s) didn't satisfy existing pods anti-affinity rules.",
  );
  await pods().delete(pending[0] as string);
}, 60_000);

it('places a pod with required affinity in the zone of the pods it follows', async () => {
  await pods().create(
    makePod('db', { labels: { app: 'db' }, spec: { nodeSelector: { 'kubernetes.io/hostname': 'z2-a' } } }) as ApiObject,
  );
  expect(await bound('db')).toBe('z2-a');
  const follow = {
    affinity: {
      podAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { app: 'db' } }, topologyKey: ZONE },
        ],
      },
    },
  };
  for (let i = 0; i < 3; i++) await pods().create(makePod(`follower-${i}`, { spec: follow }) as ApiObject);
  for (let i = 0; i < 3; i++) expect(await bound(`follower-${i}`)).toBe('z2-a');
}, 60_000);

it('spreads pods evenly over zones with a DoNotSchedule constraint', async () => {
  const spread = {
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: ZONE,
        whenUnsatisfiable: 'DoNotSchedule' as const,
        labelSelector: { matchLabels: { app: 'spread' } },
      },
    ],
  };
  for (let i = 0; i < 6; i++)
    await pods().create(makePod(`spread-${i}`, { labels: { app: 'spread' }, spec: spread }) as ApiObject);
  const zones = { z1: 0, z2: 0 };
  for (let i = 0; i < 6; i++) {
    const n = await bound(`spread-${i}`);
    zones[n.startsWith('z1') ? 'z1' : 'z2']++;
  }
  expect(zones).toEqual({ z1: 3, z2: 3 });
}, 60_000);

it('schedules the pods of a second profile', async () => {
  await pods().create(makePod('packed', { cpu: '100m', spec: { schedulerName: 'bin-packing' } }) as ApiObject);
  expect(['z1-a', 'z1-b', 'z2-a']).toContain(await bound('packed'));
}, 60_000);

it('preempts a lower-priority pod for a higher-priority one, and never with preemptionPolicy Never', async () => {
  // The in-process server runs no admission: the pods carry the priority the Priority plugin would set.
  for (const n of ['z1-a', 'z1-b', 'z2-a'])
    await pods().create(
      makePod(`filler-${n}`, {
        cpu: '3',
        priority: 10,
        spec: { nodeSelector: { 'kubernetes.io/hostname': n }, terminationGracePeriodSeconds: 0 },
      }) as ApiObject,
    );
  for (const n of ['z1-a', 'z1-b', 'z2-a']) await bound(`filler-${n}`);
  await pods().create(
    makePod('polite', { cpu: '2', priority: 1000, spec: { preemptionPolicy: 'Never' } }) as ApiObject,
  );
  expect(await unschedulableMessage('polite')).toBe('0/3 nodes are available: 3 Insufficient cpu.');
  await pods().delete('polite');
  await pods().create(makePod('urgent', { cpu: '2', priority: 1000 }) as ApiObject);
  const node = await bound('urgent');
  const remaining = ((await pods().list()).items as Pod[]).filter((p) => p.metadata?.name?.startsWith('filler-'));
  expect(remaining.map((p) => p.spec?.nodeName).sort()).toEqual(['z1-a', 'z1-b', 'z2-a'].filter((n) => n !== node));
  expect(((await pods().get('urgent')) as Pod).status?.nominatedNodeName).toBe(node);
}, 60_000);
