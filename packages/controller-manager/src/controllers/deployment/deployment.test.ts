import {
  type Deployment,
  DeploymentKind,
  EventKind,
  type Pod,
  PodKind,
  type ReplicaSet,
  ReplicaSetKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { replicaSetController } from '../replicaset';
import { deploymentController, REVISION_ANNOTATION } from '.';

const NS = 'default';
let h: ControllerHarness;
let stopKubelet = false;

// Stands in for the node agent: every pod becomes Running and Ready.
async function kubelet(): Promise<void> {
  const pods = h.client.resource(PodKind, NS);
  while (!stopKubelet) {
    try {
      for (const p of (await pods.list()).items) {
        if (p.metadata?.deletionTimestamp || p.status?.conditions?.some((c) => c.type === 'Ready')) continue;
        if (!p.metadata?.labels?.ready) continue;
        const t = new Date().toISOString().replace(/\.\d+Z/, 'Z');
        await pods
          .updateStatus({
            ...p,
            status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] },
          })
          .catch(() => {});
      }
    } catch {
      // the server is stopping
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  h = await startControllerHarness();
  h.start(replicaSetController);
  h.start(deploymentController);
  void kubelet();
}, 60_000);
afterAll(async () => {
  stopKubelet = true;
  await h?.stop();
});

const deploy = (
  name: string,
  replicas: number,
  image: string,
  extra: Partial<NonNullable<Deployment['spec']>> = {},
): Deployment => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name, ready: 'yes' } }, spec: { containers: [{ name: 'c', image }] } },
    ...extra,
  },
});

const setsOf = async (d: Deployment): Promise<ReplicaSet[]> =>
  (await h.client.resource(ReplicaSetKind, NS).list()).items.filter((rs) =>
    rs.metadata?.ownerReferences?.some((r) => r.uid === d.metadata?.uid),
  );
const livePods = async (app: string): Promise<Pod[]> =>
  (await h.client.resource(PodKind, NS).list({ labelSelector: `app=${app}` })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
const image = (rs: ReplicaSet): string | undefined => rs.spec?.template?.spec?.containers[0]?.image;

async function setImage(name: string, img: string): Promise<void> {
  await h.client.resource(DeploymentKind, NS).patch(name, 'merge', {
    spec: { template: { spec: { containers: [{ name: 'c', image: img }] } } },
  });
}

async function complete(name: string, replicas: number, img: string): Promise<void> {
  const client = h.client.resource(DeploymentKind, NS);
  await waitFor(`${name} rolled out to ${img}`, async () => {
    const d = await client.get(name);
    const s = d.status;
    const progressing = s?.conditions?.find((c) => c.type === 'Progressing');
    const sets = await setsOf(d);
    return (
      s?.observedGeneration === d.metadata?.generation &&
      s?.updatedReplicas === replicas &&
      s?.availableReplicas === replicas &&
      s?.replicas === replicas &&
      progressing?.reason === 'NewReplicaSetAvailable' &&
      sets.filter((rs) => (rs.spec?.replicas ?? 0) > 0).every((rs) => image(rs) === img)
    );
  });
}

test('a Deployment of 3 gets a ReplicaSet and 3 pods, rolls out a new image, rolls back', async () => {
  const client = h.client.resource(DeploymentKind, NS);
  const d = await client.create(deploy('web', 3, 'nginx:1'));
  await complete('web', 3, 'nginx:1');
  let sets = await setsOf(d);
  expect(sets).toHaveLength(1);
  const first = sets[0]!;
  expect(first.metadata?.name).toBe(`web-${first.metadata?.labels?.['pod-template-hash']}`);
  expect(first.metadata?.annotations?.[REVISION_ANNOTATION]).toBe('1');
  expect((await livePods('web')).length).toBe(3);
  const events = (await h.client.resource(EventKind, NS).list()).items.filter(
    (e) => e.involvedObject?.uid === d.metadata?.uid,
  );
  expect(events.map((e) => e.message)).toContain(`Scaled up replica set ${first.metadata?.name} to 3`);
  expect((await client.get('web')).metadata?.annotations?.[REVISION_ANNOTATION]).toBe('1');

  await setImage('web', 'nginx:2');
  await complete('web', 3, 'nginx:2');
  sets = await setsOf(d);
  expect(sets).toHaveLength(2);
  const second = sets.find((rs) => image(rs) === 'nginx:2')!;
  expect(second.metadata?.annotations?.[REVISION_ANNOTATION]).toBe('2');
  await waitFor('3 pods of nginx:2', async () => {
    const pods = await livePods('web');
    return pods.length === 3 && pods.every((p) => p.spec?.containers[0]?.image === 'nginx:2');
  });

  // kubectl rollout undo: the template of revision 1 goes back on the Deployment.
  const tpl = structuredClone(first.spec!.template!);
  delete tpl.metadata!.labels!['pod-template-hash'];
  const cur = await client.get('web');
  await client.update({ ...cur, spec: { ...cur.spec!, template: tpl } });
  await complete('web', 3, 'nginx:1');
  sets = await setsOf(d);
  expect(sets).toHaveLength(2);
  expect(
    sets.find((rs) => rs.metadata?.uid === first.metadata?.uid)?.metadata?.annotations?.[REVISION_ANNOTATION],
  ).toBe('3');
  expect((await client.get('web')).metadata?.annotations?.[REVISION_ANNOTATION]).toBe('3');
}, 120_000);

test('proportional scaling, pause and resume, revision history limit', async () => {
  const client = h.client.resource(DeploymentKind, NS);
  const d = await client.create(deploy('api', 4, 'a:1', { revisionHistoryLimit: 1 }));
  await complete('api', 4, 'a:1');
  await client.patch('api', 'merge', { spec: { paused: true } });
  await waitFor(
    'paused condition',
    async () =>
      (await client.get('api')).status?.conditions?.some(
        (c) => c.type === 'Progressing' && c.reason === 'DeploymentPaused',
      ) ?? false,
  );
  await setImage('api', 'a:2');
  await client.patch('api', 'merge', { spec: { replicas: 6 } });
  await waitFor('scaled while paused', async () => {
    const sets = await setsOf(d);
    return sets.length === 1 && sets[0]!.spec?.replicas === 6;
  });
  await client.patch('api', 'merge', { spec: { paused: false } });
  await complete('api', 6, 'a:2');
  await setImage('api', 'a:3');
  await complete('api', 6, 'a:3');
  await waitFor('history limited to one old set', async () => (await setsOf(d)).length === 2);
}, 120_000);

test('Recreate scales the old pods to zero before creating new ones', async () => {
  const client = h.client.resource(DeploymentKind, NS);
  await client.create(deploy('batch', 2, 'b:1', { strategy: { type: 'Recreate' } }));
  await complete('batch', 2, 'b:1');
  await setImage('batch', 'b:2');
  await complete('batch', 2, 'b:2');
  expect(h.errors).toEqual([]);
}, 120_000);
