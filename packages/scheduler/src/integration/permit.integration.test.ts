/**
 * Permit plugins that answer Wait, against the real API server (in-process, SQLite): the pod stays assumed and
 * unbound until the plugin allows it through the framework handle's waiting pods; a rejection or a time-out
 * unreserves it and leaves it Unschedulable with 1.21's message, and it is retried.
 */
import { type ApiObject, NodeKind, type Pod, PodKind } from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, type ResourceClient, RestClient } from '@platform/client';

import { resolveProfile } from '../config/profile';
import { Registry } from '../framework/registry';
import {
  type CycleState,
  type FrameworkHandle,
  type PermitPlugin,
  type ReservePlugin,
  Status,
} from '../framework/types';
import { Scheduler } from '../scheduler';
import { makeNode, makePod } from '../testing/objects';
import { waitFor } from '../testing/wait-for';

let ts: TestServer;
let clientset: Clientset;
let stop: AbortController;
let run: Promise<void>;

/** Waits (pods labelled `gate`) for the time-out in the label `timeout-ms`, or 60 s; records its calls. */
class Gate implements PermitPlugin, ReservePlugin {
  static instance?: Gate;
  readonly name = 'Gate';
  readonly permits = new Map<string, number>();
  readonly unreserved = new Set<string>();
  constructor(readonly handle: FrameworkHandle) {
    Gate.instance = this;
  }
  reserve(): Status | undefined {
    return undefined;
  }
  unreserve(_s: CycleState, pod: Pod): void {
    this.unreserved.add(pod.metadata?.name ?? '');
  }
  permit(_s: CycleState, pod: Pod): { status?: Status; timeoutMs?: number } {
    const name = pod.metadata?.name ?? '';
    this.permits.set(name, (this.permits.get(name) ?? 0) + 1);
    if (pod.metadata?.labels?.gate === undefined) return {};
    return { status: new Status('Wait'), timeoutMs: Number(pod.metadata.labels['timeout-ms'] ?? 60_000) };
  }
}

const gate = (): Gate => Gate.instance as Gate;

const pods = (): ResourceClient => clientset.resource(PodKind, 'default') as unknown as ResourceClient;
const get = async (name: string): Promise<Pod> => (await pods().get(name)) as Pod;
const waiting = (name: string): Promise<string[]> =>
  waitFor(`${name} waiting at Permit`, async () => {
    let found: string[] | undefined;
    gate().handle.iterateOverWaitingPods((wp) => {
      if (wp.getPod().metadata?.name === name) found = wp.getPendingPlugins();
    });
    return found;
  });
const unschedulableMessage = (name: string): Promise<string> =>
  waitFor(`${name} unschedulable`, async () => {
    const c = (await get(name)).status?.conditions?.find((x) => x.type === 'PodScheduled');
    return c?.reason === 'Unschedulable' ? c.message : undefined;
  });

beforeAll(async () => {
  ts = await startTestServer();
  clientset = new Clientset(new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't', qps: 0 }));
  await clientset.resource(NodeKind).create(makeNode('n1') as ApiObject);
  const registry = new Registry({ Gate: (_args, handle) => new Gate(handle) });
  const scheduler = new Scheduler({
    clientset,
    registry,
    profiles: [
      resolveProfile({
        plugins: { reserve: { enabled: [{ name: 'Gate' }] }, permit: { enabled: [{ name: 'Gate' }] } },
      }),
    ],
    podInitialBackoffMs: 100,
    podMaxBackoffMs: 200,
  });
  stop = new AbortController();
  run = scheduler.run(stop.signal);
}, 120_000);

afterAll(async () => {
  stop.abort();
  await run;
  clientset.rest.close();
  await ts.stop();
});

it('binds a pod no plugin holds without waiting', async () => {
  await pods().create(makePod('free') as ApiObject);
  expect(await waitFor('free bound', async () => (await get('free')).spec?.nodeName)).toBe('n1');
}, 60_000);

it('holds a pod at Permit, unbound, until the plugin allows it', async () => {
  await pods().create(makePod('allowed', { labels: { gate: '' } }) as ApiObject);
  expect(await waiting('allowed')).toEqual(['Gate']);
  const uid = (await get('allowed')).metadata?.uid ?? '';
  expect(gate().handle.getWaitingPod(uid)?.getPod().spec?.nodeName).toBe('n1');
  expect((await get('allowed')).spec?.nodeName).toBeUndefined();
  gate().handle.getWaitingPod(uid)?.allow('Gate');
  expect(await waitFor('allowed bound', async () => (await get('allowed')).spec?.nodeName)).toBe('n1');
  expect(gate().handle.getWaitingPod(uid)).toBeUndefined();
  expect(gate().unreserved.has('allowed')).toBe(false);
}, 60_000);

it('unreserves a rejected pod, marks it Unschedulable and tries it again', async () => {
  await pods().create(makePod('rejected', { labels: { gate: '' } }) as ApiObject);
  await waiting('rejected');
  gate().handle.iterateOverWaitingPods((wp) => {
    if (wp.getPod().metadata?.name === 'rejected') wp.reject('Gate', 'not now');
  });
  expect(await unschedulableMessage('rejected')).toBe('pod "rejected" rejected while waiting on permit: not now');
  expect(gate().unreserved.has('rejected')).toBe(true);
  // Back in the queue: it reaches Permit again, and is held again.
  await waitFor('a second attempt', async () => (gate().permits.get('rejected') ?? 0) >= 2);
  await waiting('rejected');
  expect((await get('rejected')).spec?.nodeName).toBeUndefined();
  await pods().delete('rejected');
  // The deleted pod's wait ends (the scheduler rejects it) instead of lasting its 60 s.
  await waitFor('the deleted pod no longer waiting', async () => {
    let still = false;
    gate().handle.iterateOverWaitingPods((wp) => (still ||= wp.getPod().metadata?.name === 'rejected'));
    return !still;
  });
}, 60_000);

it('rejects a pod whose wait times out', async () => {
  await pods().create(makePod('slow', { labels: { gate: '', 'timeout-ms': '300' } }) as ApiObject);
  expect(await unschedulableMessage('slow')).toBe(
    'pod "slow" rejected while waiting on permit: rejected due to timeout after waiting 300ms at plugin Gate',
  );
  expect(gate().unreserved.has('slow')).toBe(true);
  expect((await get('slow')).spec?.nodeName).toBeUndefined();
  await pods().delete('slow');
}, 60_000);
