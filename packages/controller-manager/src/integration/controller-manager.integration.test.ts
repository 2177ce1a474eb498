import { DeploymentKind, LeaseKind, type Pod, PodKind, ReplicaSetKind } from '@platform/api';

import { waitFor } from '../testing/harness';
import {
  type ApiServer,
  type DaemonProcess,
  runControllerManager,
  startApiServer,
  startControllerManager,
} from './support';

const NS = 'default';
let api: ApiServer;
const started: DaemonProcess[] = [];
const cm = (args: string[] = []): DaemonProcess => {
  const p = startControllerManager(api, args);
  started.push(p);
  return p;
};

beforeAll(async () => {
  api = await startApiServer();
}, 90_000);
afterAll(async () => {
  await Promise.all(started.map((p) => p.kill('SIGKILL')));
  await api?.stop();
});

const deployment = (name: string, replicas: number) => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});
const podsOf = async (app: string): Promise<Pod[]> =>
  (await api.client.resource(PodKind, NS).list({ labelSelector: `app=${app}` })).items;

test('bad command lines are clear errors naming the option', async () => {
  const unknown = await runControllerManager(['--master=https://127.0.0.1:1', '--controllers=*,nope']);
  expect(unknown.code).toBe(1);
  expect(unknown.output).toContain('--controllers: "nope" is not in the list of known controllers');
  const lock = await runControllerManager(['--master=https://127.0.0.1:1', '--leader-elect-resource-lock=sideways']);
  expect(lock.code).toBe(1);
  expect(lock.output).toContain('--leader-elect-resource-lock');
  const file = await runControllerManager(['--clientconfig=/nonexistent/cm.conf']);
  expect(file.code).toBe(1);
  expect(file.output).toContain('/nonexistent/cm.conf');
  expect(file.output).not.toMatch(/\n\s+at /);
}, 60_000);

test('a Deployment reaches 3 ReplicaSet-owned pods; SIGKILL mid-rollout and a restart leave exactly the desired pods', async () => {
  const fast = cm(['--leader-elect=false']);
  await api.client.resource(DeploymentKind, NS).create(deployment('web', 3));
  await waitFor('3 pods owned by a ReplicaSet', async () => {
    const pods = await podsOf('web');
    return pods.length === 3 && pods.every((p) => p.metadata?.ownerReferences?.[0]?.kind === 'ReplicaSet');
  });
  await fast.kill('SIGTERM');

  // A slow client (2 requests/s) so the kill lands mid-rollout.
  const slow = cm(['--leader-elect=false', '--api-qps=2', '--api-burst=2']);
  await api.client.resource(DeploymentKind, NS).create(deployment('big', 40));
  await waitFor('some pods of big', async () => (await podsOf('big')).length >= 3);
  await slow.kill('SIGKILL');
  expect((await podsOf('big')).length).toBeLessThan(40);
  cm(['--leader-elect=false', '--api-qps=200', '--api-burst=200']);
  await waitFor('the ReplicaSet reports 40', async () => {
    const sets = (await api.client.resource(ReplicaSetKind, NS).list()).items.filter((rs) =>
      rs.metadata?.name?.startsWith('big-'),
    );
    return sets.length === 1 && sets[0]?.status?.replicas === 40;
  });
  expect((await podsOf('big')).length).toBe(40);
}, 120_000);

test('leader election: one active, the other takes over when it is killed', async () => {
  for (const p of started) await p.kill('SIGTERM');
  const args = [
    // Generous: a renewal slower than the deadline (a busy CI machine) would end leadership, as it should.
    '--leader-elect-lease-duration=8s',
    '--leader-elect-renew-deadline=6s',
    '--leader-elect-retry-period=1s',
    '--controllers=replicaset,deployment,serviceaccount',
  ];
  const a = cm(args);
  const b = cm(args);
  const leases = api.client.resource(LeaseKind, 'system');
  let holder = '';
  await waitFor('a leader', async () => {
    holder = (await leases.get('controller-manager')).spec?.holderIdentity ?? '';
    return holder !== '';
  });
  await waitFor('one of them started the controllers', () =>
    [a, b].some((p) => p.output().includes('Started controllers')),
  );
  const leader = a.output().includes('Started controllers') ? a : b;
  const standby = leader === a ? b : a;
  expect(standby.output()).not.toContain('Started controllers');
  await api.client.resource(DeploymentKind, NS).create(deployment('led', 2));
  await waitFor('2 pods of led', async () => (await podsOf('led')).length === 2).catch((err: Error) => {
    throw new Error(`${err.message}\n${leader.output().slice(-3000)}`);
  });
  await leader.kill('SIGKILL');
  await waitFor('the standby takes over', () => standby.output().includes('Started controllers'), 30_000);
  const next = (await leases.get('controller-manager')).spec?.holderIdentity;
  expect(next).not.toBe(holder);
  await api.client.resource(DeploymentKind, NS).create(deployment('after', 2));
  await waitFor('2 pods of after', async () => (await podsOf('after')).length === 2);
  expect((await podsOf('led')).length).toBe(2);
}, 120_000);
