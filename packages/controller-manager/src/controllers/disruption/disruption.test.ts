import {
  type ApiObject,
  EventKind,
  NamespaceKind,
  type OwnerReference,
  type Pod,
  type PodDisruptionBudget,
  PodDisruptionBudgetKind,
  PodKind,
  ReplicaSetKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { disruptionController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
const NS = 'pdb';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  h.start(disruptionController);
});

afterAll(async () => {
  await h?.stop();
});

const pods = () => h.client.resource(PodKind, NS);
const budgets = () => h.client.resource(PodDisruptionBudgetKind, NS);

async function readyPod(name: string, app: string, owner?: OwnerReference, ready = true): Promise<Pod> {
  const p = await pods().create({
    metadata: { name, labels: { app }, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  } as Pod);
  return setReady(p, ready);
}

async function setReady(p: Pod, ready: boolean): Promise<Pod> {
  const fresh = await pods().get(p.metadata?.name ?? '');
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return pods().updateStatus({
    ...fresh,
    status: {
      ...fresh.status,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }],
    },
  } as Pod);
}

async function statusOf(name: string): Promise<NonNullable<PodDisruptionBudget['status']>> {
  return (await budgets().get(name)).status ?? ({} as NonNullable<PodDisruptionBudget['status']>);
}

function allowedCondition(s: NonNullable<PodDisruptionBudget['status']>) {
  return s.conditions?.find((c) => c.type === 'DisruptionAllowed');
}

test('minAvailable: healthy pods beyond the minimum may be disrupted; a pod that is not ready counts against it', async () => {
  await budgets().create({
    metadata: { name: 'web' },
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
  } as PodDisruptionBudget);
  await Promise.all(['w1', 'w2', 'w3'].map((n) => readyPod(n, 'web')));
  await waitFor('the status of 3 healthy pods', async () => (await statusOf('web')).currentHealthy === 3);
  const s = await statusOf('web');
  const pdb = await budgets().get('web');
  expect(s).toMatchObject({
    expectedPods: 3,
    currentHealthy: 3,
    desiredHealthy: 2,
    disruptionsAllowed: 1,
    observedGeneration: pdb.metadata?.generation,
  });
  expect(allowedCondition(s)).toMatchObject({ status: 'True', reason: 'SufficientPods' });

  await setReady(await pods().get('w1'), false);
  await waitFor('no disruption allowed', async () => (await statusOf('web')).disruptionsAllowed === 0);
  expect(await statusOf('web')).toMatchObject({ currentHealthy: 2, desiredHealthy: 2 });
  expect(allowedCondition(await statusOf('web'))).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
});

test('maxUnavailable counts against the scale of the pods’ controller, not the pods found', async () => {
  const rs = await h.client.resource(ReplicaSetKind, NS).create({
    metadata: { name: 'api' },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'api' } },
      template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  });
  const ref: OwnerReference = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    name: 'api',
    uid: rs.metadata?.uid ?? '',
    controller: true,
  };
  await Promise.all(['a1', 'a2', 'a3'].map((n) => readyPod(n, 'api', ref)));
  await budgets().create({
    metadata: { name: 'api' },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } },
  } as PodDisruptionBudget);
  await waitFor('the api budget status', async () => (await statusOf('api')).expectedPods === 4);
  expect(await statusOf('api')).toMatchObject({
    expectedPods: 4,
    currentHealthy: 3,
    desiredHealthy: 3,
    disruptionsAllowed: 0,
  });
  await readyPod('a4', 'api', ref);
  await waitFor('one disruption allowed', async () => (await statusOf('api')).disruptionsAllowed === 1);

  // An eviction through the API server uses it up; the evicted pod is gone and the status follows.
  await pods().createSubresource('a1', 'eviction', {
    apiVersion: 'policy/v1beta1',
    kind: 'Eviction',
    metadata: { name: 'a1', namespace: NS },
  } as ApiObject);
  await waitFor('the status after the eviction', async () => {
    const s = await statusOf('api');
    return s.currentHealthy === 3 && s.disruptionsAllowed === 0 && Object.keys(s.disruptedPods ?? {}).length === 0;
  });
});

test('a percentage with a pod that has no controller allows nothing, and says why', async () => {
  await readyPod('lone', 'lone');
  await budgets().create({
    metadata: { name: 'lone' },
    spec: { minAvailable: '50%', selector: { matchLabels: { app: 'lone' } } },
  } as PodDisruptionBudget);
  await waitFor(
    'the SyncFailed condition',
    async () => allowedCondition(await statusOf('lone'))?.reason === 'SyncFailed',
  );
  const s = await statusOf('lone');
  expect(s.disruptionsAllowed).toBe(0);
  expect(allowedCondition(s)?.message).toBe('found no controller ref for pod "lone"');
  await waitFor('the CalculateExpectedPodCountFailed event', async () => {
    const events = (await h.client.resource(EventKind, NS).list()).items;
    return events.some(
      (e) =>
        e.reason === 'CalculateExpectedPodCountFailed' &&
        e.message === 'Failed to calculate the number of expected pods: found no controller ref for pod "lone"',
    );
  });
});

test('disrupted pods: expired and deleted entries are dropped; a recent one is not counted healthy', async () => {
  await budgets().create({
    metadata: { name: 'db' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } },
  } as PodDisruptionBudget);
  await Promise.all(['d1', 'd2', 'd3'].map((n) => readyPod(n, 'db')));
  await waitFor('the db status', async () => (await statusOf('db')).currentHealthy === 3);
  const pdb = await budgets().get('db');
  const recent = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const old = new Date(Date.now() - 3 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await budgets().updateStatus({
    ...pdb,
    status: { ...pdb.status!, disruptedPods: { d1: recent, d2: old, gone: recent } },
  } as PodDisruptionBudget);
  await waitFor('the disrupted pods to be reconciled', async () => {
    const s = await statusOf('db');
    return JSON.stringify(s.disruptedPods) === JSON.stringify({ d1: recent }) && s.currentHealthy === 2;
  });
  expect((await statusOf('db')).disruptionsAllowed).toBe(1);
  expect(h.errors).toEqual([]);
});
