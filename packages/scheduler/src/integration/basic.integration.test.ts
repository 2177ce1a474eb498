/**
 * The whole scheduler against the real API server (in-process, SQLite) with fake Node objects: pods are bound,
 * resources are accounted, and a pod that fits nowhere gets the 1.21 FailedScheduling message.
 */
import { type ApiObject, type Event, EventKind, NodeKind, type Pod, PodKind } from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, RestClient } from '@platform/client';

import { resolveProfile } from '../config/profile';
import { Scheduler } from '../scheduler';
import { makeNode, makePod } from '../testing/objects';

let ts: TestServer;
let clientset: Clientset;
let stop: AbortController;
let run: Promise<void>;

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  ts = await startTestServer();
  clientset = new Clientset(new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't', qps: 0 }));
  const nodes = clientset.resource(NodeKind);
  await nodes.create(makeNode('n1', { cpu: '1' }) as ApiObject);
  await nodes.create(
    makeNode('n2', { cpu: '8', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }) as ApiObject,
  );
  await nodes.create(
    makeNode('n3', { cpu: '8', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }) as ApiObject,
  );
  const scheduler = new Scheduler({
    clientset,
    profiles: [resolveProfile({})],
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

it('binds pods to the nodes that fit, and explains the ones that fit none', async () => {
  const pods = clientset.resource(PodKind, 'default');
  await pods.create(makePod('small', { cpu: '500m' }) as ApiObject);
  await pods.create(
    makePod('tolerant', {
      cpu: '4',
      spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] },
    }) as ApiObject,
  );
  await pods.create(makePod('big', { cpu: '2' }) as ApiObject);
  const small = await waitFor('small bound', async () => ((await pods.get('small')) as Pod).spec?.nodeName);
  expect(small).toBe('n1');
  const tolerant = await waitFor('tolerant bound', async () => ((await pods.get('tolerant')) as Pod).spec?.nodeName);
  expect(['n2', 'n3']).toContain(tolerant);
  const msg =
    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had taint {dedicated: gpu}, that the pod didn't tolerate.";
  const cond = await waitFor('big unschedulable', async () =>
    ((await pods.get('big')) as Pod).status?.conditions?.find((c) => c.type === 'PodScheduled'),
  );
  expect(cond).toMatchObject({ status: 'False', reason: 'Unschedulable', message: msg });
  const ev = await waitFor('FailedScheduling event', async () =>
    ((await clientset.resource(EventKind, 'default').list()).items as Event[]).find(
      (e) => e.reason === 'FailedScheduling' && e.involvedObject?.name === 'big',
    ),
  );
  expect(ev.message).toBe(msg);
  expect(ev.type).toBe('Warning');
  const scheduled = await waitFor('Scheduled event', async () =>
    ((await clientset.resource(EventKind, 'default').list()).items as Event[]).find(
      (e) => e.reason === 'Scheduled' && e.involvedObject?.name === 'small',
    ),
  );
  expect(scheduled.message).toBe('Successfully assigned default/small to n1');
}, 60_000);

it('leaves pods of other schedulers alone and schedules a pod once a node for it appears', async () => {
  const pods = clientset.resource(PodKind, 'default');
  await pods.create(makePod('other', { spec: { schedulerName: 'someone-else' } }) as ApiObject);
  await pods.create(makePod('waits', { spec: { nodeSelector: { disk: 'ssd' } } }) as ApiObject);
  await waitFor('waits unschedulable', async () =>
    ((await pods.get('waits')) as Pod).status?.conditions?.find((c) => c.reason === 'Unschedulable'),
  );
  await clientset.resource(NodeKind).create(makeNode('n4', { labels: { disk: 'ssd' } }) as ApiObject);
  expect(await waitFor('waits bound', async () => ((await pods.get('waits')) as Pod).spec?.nodeName)).toBe('n4');
  expect(((await pods.get('other')) as Pod).spec?.nodeName).toBeUndefined();
}, 60_000);
