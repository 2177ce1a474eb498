import { EventKind, type Pod, PodKind, ReplicaSetKind, ReplicationControllerKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { replicationControllerController } from '../replicationcontroller';
import { replicaSetController } from '.';

const NS = 'default';
const template = (labels: Record<string, string>) => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});

let h: ControllerHarness;
beforeAll(async () => {
  h = await startControllerHarness();
  h.start(replicaSetController);
  h.start(replicationControllerController);
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

const podsOf = async (uid: string): Promise<Pod[]> =>
  (await h.client.resource(PodKind, NS).list()).items.filter(
    (p) => p.metadata?.ownerReferences?.some((r) => r.uid === uid && r.controller) && !p.metadata?.deletionTimestamp,
  );

test('creates the pods, reports status, deletes the surplus and records Events', async () => {
  const rsClient = h.client.resource(ReplicaSetKind, NS);
  const rs = await rsClient.create({
    metadata: { name: 'web' },
    spec: { replicas: 5, selector: { matchLabels: { app: 'web' } }, template: template({ app: 'web' }) },
  });
  const uid = rs.metadata!.uid!;
  await waitFor('5 pods', async () => (await podsOf(uid)).length === 5, 20_000);
  await waitFor('status', async () => {
    const s = (await rsClient.get('web')).status;
    return s?.replicas === 5 && s.fullyLabeledReplicas === 5 && s.observedGeneration === 1;
  });
  // Expectations: never more than asked for.
  expect((await podsOf(uid)).length).toBe(5);
  const events = (await h.client.resource(EventKind, NS).list()).items.filter((e) => e.involvedObject?.uid === uid);
  await waitFor('events', async () =>
    (await h.client.resource(EventKind, NS).list()).items.some(
      (e) =>
        e.involvedObject?.uid === uid && e.reason === 'SuccessfulCreate' && /^Created pod: web-/.test(e.message ?? ''),
    ),
  );
  void events;

  // Ready pods are kept; pending ones go first.
  const pods = await podsOf(uid);
  const keep = pods[0]!;
  await h.client.resource(PodKind, NS).updateStatus({
    ...keep,
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z/, 'Z') },
      ],
    },
  });
  await waitFor('ready counted', async () => (await rsClient.get('web')).status?.readyReplicas === 1, 20_000);
  const cur = await rsClient.get('web');
  await rsClient.update({ ...cur, spec: { ...cur.spec!, replicas: 1 } });
  await waitFor('scaled down to 1', async () => (await podsOf(uid)).length === 1, 20_000);
  expect((await podsOf(uid))[0]!.metadata!.name).toBe(keep.metadata!.name);
  await waitFor('status 1', async () => (await rsClient.get('web')).status?.replicas === 1, 20_000);
}, 90_000);

test('adopts matching orphans and releases pods whose labels no longer match', async () => {
  const podClient = h.client.resource(PodKind, NS);
  await podClient.create({
    metadata: { name: 'orphan', labels: { app: 'api' } },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
  const rs = await h.client.resource(ReplicaSetKind, NS).create({
    metadata: { name: 'api' },
    spec: { replicas: 2, selector: { matchLabels: { app: 'api' } }, template: template({ app: 'api' }) },
  });
  const uid = rs.metadata!.uid!;
  await waitFor(
    'orphan adopted',
    async () => (await podClient.get('orphan')).metadata?.ownerReferences?.some((r) => r.uid === uid) ?? false,
  );
  await waitFor('2 pods', async () => (await podsOf(uid)).length === 2, 20_000);
  const orphan = await podClient.get('orphan');
  await podClient.update({ ...orphan, metadata: { ...orphan.metadata, labels: { app: 'other' } } });
  await waitFor('released', async () => !(await podClient.get('orphan')).metadata?.ownerReferences?.length, 20_000);
  await waitFor('replaced', async () => (await podsOf(uid)).length === 2, 20_000);
}, 90_000);

test('ReplicationControllers get their pods too', async () => {
  const rc = await h.client.resource(ReplicationControllerKind, NS).create({
    metadata: { name: 'legacy' },
    spec: { replicas: 3, selector: { app: 'legacy' }, template: template({ app: 'legacy' }) },
  });
  await waitFor('3 pods', async () => (await podsOf(rc.metadata!.uid!)).length === 3, 20_000);
  await waitFor(
    'status',
    async () => (await h.client.resource(ReplicationControllerKind, NS).get('legacy')).status?.replicas === 3,
    20_000,
  );
  expect(h.errors).toEqual([]);
}, 90_000);
