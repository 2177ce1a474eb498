/**
 * Node-pressure eviction decisions on this machine's real signals (thresholds set around what is observed, so they
 * are met or not whatever the machine's load), with a clock the test moves: a hard threshold sets its pressure
 * condition and evicts one pod per round at once, in 1.21's order, never a static or critical pod; a soft one waits
 * out its grace period; pressure stays for the transition period; minimum reclaim keeps a met threshold raised.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Pod } from '@platform/api';
import { testLogger } from '@platform/apiserver';

import { type AgentValues, defaultAgentValues } from '../cmd/options';
import { EvictionManager, observeSignals, type Observations, rankForEviction } from './eviction-manager';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'eviction-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function pod(name: string, o: { priority?: number; memoryRequest?: string; source?: string } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: name,
      ...(o.source ? { annotations: { 'kubernetes.io/config.source': o.source } } : {}),
    },
    spec: {
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      terminationGracePeriodSeconds: 30,
      containers: [
        { name: 'c', image: 'busybox', resources: o.memoryRequest ? { requests: { memory: o.memoryRequest } } : {} },
      ],
    },
  } as Pod;
}

interface Harness {
  manager: EvictionManager;
  values: AgentValues;
  evicted: { name: string; message: string; grace: number }[];
  clock: { t: number };
}

function harness(values: Partial<AgentValues>, pods: Pod[], observe?: () => Observations): Harness {
  const evicted: Harness['evicted'] = [];
  const clock = { t: 1_000_000 };
  const v = { ...defaultAgentValues(), rootDir: dir, ...values };
  const manager = new EvictionManager({
    values: v,
    log: testLogger(),
    pods: () => pods.filter((p) => !evicted.some((e) => e.name === p.metadata?.name)),
    evict: (p, message, grace) => evicted.push({ name: p.metadata!.name!, message, grace }),
    now: () => clock.t,
    ...(observe ? { observe } : {}),
  });
  return { manager, values: v, evicted, clock };
}

test("this machine's signals are observed", () => {
  const obs = observeSignals(dir);
  for (const s of ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'pid.available']) {
    const o = obs.get(s);
    expect(o).toBeDefined();
    expect(o!.capacity).toBeGreaterThan(0);
    expect(o!.available).toBeGreaterThan(0);
    expect(o!.available).toBeLessThanOrEqual(o!.capacity);
  }
});

test('a hard threshold met sets the pressure and evicts one pod a round, lowest priority first, with grace 0', () => {
  const pods = [
    pod('static', { source: 'file', priority: -10 }),
    pod('critical', { priority: 2_000_001_000 }),
    pod('high', { priority: 1000 }),
    pod('low', { priority: 1 }),
  ];
  // Available memory is always below 100% of the total: met on any machine.
  const h = harness({ evictionHard: new Map([['memory.available', '100%']]) }, pods);
  expect(h.manager.pressure()).toEqual({ memory: false, disk: false, pid: false });
  expect(h.manager.synchronize()).toEqual(['memory.available']);
  expect(h.manager.pressure()).toEqual({ memory: true, disk: false, pid: false });
  expect(h.evicted).toEqual([
    {
      name: 'low',
      message: 'The node was low on resource: memory. Threshold quantity: memory.available.',
      grace: 0,
    },
  ]);
  h.manager.synchronize();
  h.manager.synchronize();
  expect(h.evicted.map((e) => e.name)).toEqual(['low', 'high']);
});

test('a disk threshold is DiskPressure; a threshold not met evicts nothing', () => {
  const h = harness({ evictionHard: new Map([['nodefs.available', '100%']]) }, [pod('a')]);
  expect(h.manager.synchronize()).toEqual(['nodefs.available']);
  expect(h.manager.pressure()).toEqual({ memory: false, disk: true, pid: false });
  expect(h.evicted[0]?.message).toContain('ephemeral-storage');

  const quiet = harness(
    {
      evictionHard: new Map([
        ['memory.available', '1'],
        ['nodefs.available', '0%'],
      ]),
    },
    [pod('a')],
  );
  expect(quiet.manager.synchronize()).toEqual([]);
  expect(quiet.evicted).toEqual([]);
  expect(quiet.manager.pressure()).toEqual({ memory: false, disk: false, pid: false });
});

test('a soft threshold evicts only after its grace period, with at most --eviction-max-pod-grace-period', () => {
  const h = harness(
    {
      evictionHard: new Map(),
      evictionSoft: new Map([['memory.available', '100%']]),
      evictionSoftGracePeriod: new Map([['memory.available', '1m30s']]),
      evictionMaxPodGracePeriod: 10,
    },
    [pod('a')],
  );
  expect(h.manager.synchronize()).toEqual([]);
  h.clock.t += 60_000;
  expect(h.manager.synchronize()).toEqual([]);
  h.clock.t += 30_000;
  expect(h.manager.synchronize()).toEqual(['memory.available']);
  expect(h.evicted).toEqual([expect.objectContaining({ name: 'a', grace: 10 })]);
});

test('pressure stays for the transition period after the threshold clears', () => {
  const h = harness(
    { evictionPressureTransitionPeriod: 300_000, evictionHard: new Map([['memory.available', '100%']]) },
    [],
  );
  h.manager.synchronize();
  expect(h.manager.pressure().memory).toBe(true);
  h.values.evictionHard = new Map([['memory.available', '1']]);
  h.clock.t += 200_000;
  expect(h.manager.synchronize()).toEqual([]);
  expect(h.manager.pressure().memory).toBe(true);
  h.clock.t += 100_001;
  expect(h.manager.pressure().memory).toBe(false);
});

test('--eviction-minimum-reclaim keeps a met threshold raised until that much more is free', () => {
  const gi = 2 ** 30;
  let available = 0.9 * gi;
  const observe = (): Observations => new Map([['memory.available', { available, capacity: 8 * gi }]]);
  const h = harness(
    {
      evictionHard: new Map([['memory.available', '1Gi']]),
      evictionMinimumReclaim: new Map([['memory.available', '500Mi']]),
    },
    [pod('a'), pod('b'), pod('c')],
    observe,
  );
  expect(h.manager.synchronize()).toEqual(['memory.available']);
  available = 1.2 * gi; // over the threshold, not over threshold + reclaim
  expect(h.manager.synchronize()).toEqual(['memory.available']);
  available = 1.6 * gi;
  expect(h.manager.synchronize()).toEqual([]);
  available = 1.2 * gi; // no longer reclaiming: the plain threshold applies
  expect(h.manager.synchronize()).toEqual([]);
  expect(h.evicted.map((e) => e.name)).toHaveLength(2);
});

test('pods using more than they request go first, then by priority, then by usage above requests', () => {
  const mi = 2 ** 20;
  const usage: Record<string, number> = { within: 50 * mi, over: 300 * mi, bigger: 900 * mi, important: 900 * mi };
  const pods = [
    pod('within', { memoryRequest: '100Mi' }),
    pod('over', { memoryRequest: '100Mi' }),
    pod('bigger', { memoryRequest: '100Mi' }),
    pod('important', { memoryRequest: '100Mi', priority: 100 }),
  ];
  const order = rankForEviction(pods, 'memory', (p) => usage[p.metadata!.name!]!).map((p) => p.metadata?.name);
  expect(order).toEqual(['bigger', 'over', 'important', 'within']);
});
