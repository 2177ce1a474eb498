import { isNotFound, NamespaceKind, NodeKind, type Pod, PodKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { podGCController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
const NS = 'pgc';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  await h.client.resource(NodeKind).create({ metadata: { name: 'alive' } });
  h.start(podGCController, (o) => {
    o.terminatedPodGCThreshold = 2;
    o.gcCheckPeriodMs = 100;
    o.quarantineMs = 300;
  });
});

afterAll(async () => {
  await h?.stop();
});

const pods = () => h.client.resource(PodKind, NS);

function pod(name: string, nodeName?: string): Pod {
  return {
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...(nodeName ? { nodeName } : {}) },
  } as Pod;
}

async function gone(name: string): Promise<boolean> {
  try {
    await pods().get(name);
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

test('finished pods beyond the threshold are deleted, the oldest first', async () => {
  for (const name of ['t1', 't2', 't3']) {
    const p = await pods().create(pod(name));
    await pods().updateStatus({ ...p, status: { phase: name === 't2' ? 'Succeeded' : 'Failed' } });
    // Distinct creation times (second resolution) make "oldest" well defined.
    if (name !== 't3') await new Promise((r) => setTimeout(r, 1100));
  }
  await pods().create(pod('running'));
  await waitFor('the oldest finished pod to go', () => gone('t1'));
  // Two finished pods are within the threshold; the running one is never collected.
  await new Promise((r) => setTimeout(r, 500));
  const names = (await pods().list()).items.map((p) => p.metadata?.name).sort();
  expect(names).toEqual(['running', 't2', 't3']);
});

test('pods of a node that does not exist are deleted; pods of a live node stay', async () => {
  await pods().create(pod('on-alive', 'alive'));
  await pods().create(pod('on-gone', 'gone-node'));
  await waitFor('the pod of the missing node to go', () => gone('on-gone'));
  expect((await pods().get('on-alive')).metadata?.deletionTimestamp).toBeUndefined();

  // A node deleted while its pod runs: the pod goes after the quarantine.
  await h.client.resource(NodeKind).create({ metadata: { name: 'doomed-node' } });
  await pods().create(pod('on-doomed', 'doomed-node'));
  await new Promise((r) => setTimeout(r, 500));
  expect(await gone('on-doomed')).toBe(false);
  await h.client.resource(NodeKind).delete('doomed-node');
  await waitFor('the pod of the deleted node to go', () => gone('on-doomed'));
  expect(h.errors).toEqual([]);
});
