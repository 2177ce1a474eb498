/**
 * Late volume binding across daemons: the API server, the controller manager (persistentvolume-binder with
 * `--enable-hostpath-provisioner`) and the scheduler, each its own process (their `lib/` must be built). A claim of
 * a `WaitForFirstConsumer` class stays Pending until a pod using it is scheduled: the scheduler's VolumeBinding
 * plugin selects the node, the binder provisions a host-path volume there (1.21's `/tmp/hostpath_pv/<uuid>`), and
 * the pod is bound once its claim is. A pre-made volume with node affinity is bound by the scheduler's choice.
 */
import { existsSync, rmSync } from 'node:fs';

import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  EventKind,
  NamespaceKind,
  type Node,
  NodeKind,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  type Pod,
  PodKind,
  ServiceAccountKind,
  type StorageClass,
  StorageClassKind,
} from '@platform/api';

import { waitFor } from '../testing/harness';
import { type ApiServer, type DaemonProcess, startApiServer, startControllerManager, startScheduler } from './support';

jest.setTimeout(180_000);

const NS = 'wffc';
let api: ApiServer;
const started: DaemonProcess[] = [];
/** Directories the provisioner made, removed in the end whatever happened. */
const dirs = new Set<string>();

function node(name: string): Node {
  const allocatable = { cpu: '4', memory: '8Gi', pods: '110' };
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    status: { capacity: allocatable, allocatable, conditions: [{ type: 'Ready', status: 'True' }] },
  } as Node;
}

function claim(name: string, storageClassName: string): PersistentVolumeClaim {
  return {
    metadata: { name },
    spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  } as PersistentVolumeClaim;
}

function pod(name: string, claimName: string): Pod {
  return {
    metadata: { name },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'c', image: 'busybox' }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  } as Pod;
}

beforeAll(async () => {
  api = await startApiServer();
  await api.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  await api.client.resource(ServiceAccountKind, NS).create({ metadata: { name: 'default' } });
  for (const n of ['node-a', 'node-b']) {
    await api.client.resource(NodeKind).create(node(n));
    // The TaintNodesByCondition plugin taints new nodes not-ready; no node lifecycle controller runs to lift it.
    await api.client.resource(NodeKind).patch(n, 'merge', { spec: { taints: null } });
  }
  started.push(
    startControllerManager(api, [
      '--controllers=persistentvolume-binder,pvc-protection,pv-protection',
      '--enable-hostpath-provisioner',
      '--leader-elect=false',
      '--pvclaimbinder-sync-period=2s',
    ]),
    startScheduler(api),
  );
}, 180_000);

afterAll(async () => {
  await Promise.all(started.map((p) => p.kill('SIGKILL')));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await api?.stop();
});

const claims = () => api.client.resource(PersistentVolumeClaimKind, NS);
const pods = () => api.client.resource(PodKind, NS);
const volumes = () => api.client.resource(PersistentVolumeKind);
const classes = () => api.client.resource(StorageClassKind);
const event = async (name: string, reason: string): Promise<string | undefined> =>
  (await api.client.resource(EventKind, NS).list()).items.find(
    (e) => e.involvedObject?.name === name && e.reason === reason,
  )?.message as string | undefined;
/** Whichever daemon's output explains a failed wait. */
const logs = (): string => started.map((p) => p.output().slice(-4000)).join('\n----\n');
const waitOrExplain = (what: string, check: () => Promise<boolean>): Promise<void> =>
  waitFor(what, check, 90_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${logs()}`);
  });

test('a WaitForFirstConsumer claim is provisioned on the node its pod is scheduled to, and the pod is bound after it', async () => {
  await classes().create({
    metadata: { name: 'local-hp', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'kubernetes.io/host-path',
    volumeBindingMode: 'WaitForFirstConsumer',
  } as StorageClass);
  // No class named: the DefaultStorageClass admission plugin gives the claim the default one.
  const { storageClassName: _none, ...spec } = claim('data', '').spec!;
  const created = await claims().create({ metadata: { name: 'data' }, spec } as PersistentVolumeClaim);
  expect(created.spec?.storageClassName).toBe('local-hp');
  await waitOrExplain(
    'the WaitForFirstConsumer Event',
    async () =>
      (await event('data', 'WaitForFirstConsumer')) === 'waiting for first consumer to be created before binding',
  );
  let c = await claims().get('data');
  expect(c.status?.phase).toBe('Pending');
  expect(c.spec?.volumeName).toBeUndefined();
  expect(c.metadata?.annotations?.[ANN_SELECTED_NODE]).toBeUndefined();

  await pods().create(pod('app', 'data'));
  let nodeName = '';
  await waitOrExplain('app bound', async () => {
    nodeName = (await pods().get('app')).spec?.nodeName ?? '';
    return nodeName !== '';
  });
  // The scheduler binds the pod only once the claim is bound (the binder finished: bind-completed).
  c = await claims().get('data');
  expect(c.spec?.volumeName).toBeTruthy();
  expect(c.metadata?.annotations?.[ANN_BIND_COMPLETED]).toBe('yes');
  expect(c.metadata?.annotations?.[ANN_SELECTED_NODE]).toBe(nodeName);
  const pv = await volumes().get(c.spec?.volumeName ?? '');
  const dir = pv.spec?.hostPath?.path ?? '';
  dirs.add(dir);
  expect(dir).toMatch(/^\/tmp\/hostpath_pv\/[0-9a-f-]{36}$/);
  expect(existsSync(dir)).toBe(true);
  expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
    { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [nodeName] }] },
  ]);
  await waitOrExplain('ProvisioningSucceeded', async () =>
    /^Successfully provisioned volume pvc-.* using kubernetes\.io\/host-path$/.test(
      (await event('data', 'ProvisioningSucceeded')) ?? '',
    ),
  );
  await waitOrExplain('the Scheduled Event', async () => (await event('app', 'Scheduled')) !== undefined);

  // Reclaim policy Delete (the class's default): the claim's deletion removes the volume and its directory.
  await pods().delete('app', { gracePeriodSeconds: 0 });
  await claims().delete('data');
  await waitOrExplain('the volume deleted', async () => {
    try {
      await volumes().get(pv.metadata?.name ?? '');
      return false;
    } catch {
      return !existsSync(dir);
    }
  });
});

test('a pre-made volume with node affinity is bound through the node the scheduler chose', async () => {
  await classes().create({
    metadata: { name: 'local' },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'WaitForFirstConsumer',
  } as StorageClass);
  await volumes().create({
    metadata: { name: 'local-a' },
    spec: {
      capacity: { storage: '5Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: 'local',
      local: { path: '/mnt/disks/a' },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a'] }] },
          ],
        },
      },
    },
  } as PersistentVolume);
  await waitOrExplain('local-a Available', async () => (await volumes().get('local-a')).status?.phase === 'Available');
  await claims().create(claim('static', 'local'));
  await pods().create(pod('app2', 'static'));
  await waitOrExplain('app2 bound', async () => !!(await pods().get('app2')).spec?.nodeName);
  expect((await pods().get('app2')).spec?.nodeName).toBe('node-a');
  const c = await claims().get('static');
  expect(c.spec?.volumeName).toBe('local-a');
  expect(c.metadata?.annotations?.[ANN_SELECTED_NODE]).toBeUndefined();
  await waitOrExplain('static Bound', async () => (await claims().get('static')).status?.phase === 'Bound');
});
