/**
 * The VolumeBinding plugin in the whole scheduler against the real API server (in-process, SQLite), with the test
 * playing the persistent volume binder: an immediate claim that is not bound keeps its pod out; a claim of a
 * `WaitForFirstConsumer` class gets the node chosen for its pod (`volume.kubernetes.io/selected-node`), and the pod
 * waits for the claim to be bound (here past a short `bindTimeoutSeconds`, then after the bind); a bound volume's
 * node affinity decides where its pods go.
 */
import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  type ApiObject,
  type Event,
  EventKind,
  NodeKind,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  type Pod,
  PodKind,
  type StorageClass,
  StorageClassKind,
} from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, RestClient } from '@platform/client';

import { API_VERSION, applyDefaults, KIND, validateConfiguration } from '../config/config';
import { resolveProfile } from '../config/profile';
import { Scheduler } from '../scheduler';
import { makeNode, makePod } from '../testing/objects';

const NS = 'default';
let ts: TestServer;
let clientset: Clientset;
let stop: AbortController;
let run: Promise<void>;

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 45_000): Promise<T> {
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
  for (const n of ['n1', 'n2']) await clientset.resource(NodeKind).create(makeNode(n) as ApiObject);
  const scheduler = new Scheduler({
    clientset,
    profiles: [resolveProfile({ pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: 2 } }] })],
    podInitialBackoffMs: 100,
    podMaxBackoffMs: 500,
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

const claims = () => clientset.resource(PersistentVolumeClaimKind, NS);
const pods = () => clientset.resource(PodKind, NS);
const claim = (name: string, storageClassName: string): PersistentVolumeClaim =>
  ({
    metadata: { name },
    spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  }) as PersistentVolumeClaim;
const podWith = (name: string, claimName: string): ApiObject =>
  makePod(name, {
    spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] },
  }) as ApiObject;
const events = async (name: string, reason: string): Promise<string[]> =>
  ((await clientset.resource(EventKind, NS).list()).items as Event[])
    .filter((e) => e.involvedObject?.name === name && e.reason === reason)
    .map((e) => e.message ?? '');

it('keeps a pod out while its immediate claim is unbound', async () => {
  await claims().create(claim('imm', ''));
  await pods().create(podWith('p-imm', 'imm'));
  const cond = await waitFor('p-imm unschedulable', async () =>
    ((await pods().get('p-imm')) as Pod).status?.conditions?.find((c) => c.type === 'PodScheduled'),
  );
  expect(cond.message).toBe('0/2 nodes are available: 2 pod has unbound immediate PersistentVolumeClaims.');
}, 60_000);

it('selects a node for a WaitForFirstConsumer claim and binds the pod only once the claim is bound', async () => {
  await clientset.resource(StorageClassKind).create({
    metadata: { name: 'late' },
    provisioner: 'example.com/local',
    volumeBindingMode: 'WaitForFirstConsumer',
  } as StorageClass);
  await claims().create(claim('late-claim', 'late'));
  await pods().create(podWith('p-late', 'late-claim'));
  const node = await waitFor(
    'the selected node',
    async () => (await claims().get('late-claim')).metadata?.annotations?.[ANN_SELECTED_NODE],
  );
  expect(['n1', 'n2']).toContain(node);
  // Nothing binds the claim: PreBind gives up after bindTimeoutSeconds, and the pod is tried again.
  await waitFor('the time-out', async () =>
    (await events('p-late', 'FailedScheduling')).some((m) =>
      m.includes('binding volumes: timed out waiting for the condition'),
    ),
  );
  expect(((await pods().get('p-late')) as Pod).spec?.nodeName).toBeUndefined();

  // The binder's part: a volume on the selected node, bound to the claim.
  const c = await claims().get('late-claim');
  await clientset.resource(PersistentVolumeKind).create({
    metadata: { name: 'late-pv' },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'late',
      hostPath: { path: '/tmp/late-pv' },
      claimRef: { namespace: NS, name: 'late-claim', uid: c.metadata?.uid },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
    },
  } as PersistentVolume);
  await claims().patch('late-claim', 'merge', {
    metadata: { annotations: { [ANN_BIND_COMPLETED]: 'yes' } },
    spec: { volumeName: 'late-pv' },
  });
  const bound = await waitFor('p-late bound', async () => ((await pods().get('p-late')) as Pod).spec?.nodeName);
  expect(bound).toBe(node);
}, 90_000);

it('places a pod with a bound claim on the node its volume is reachable from', async () => {
  await clientset.resource(PersistentVolumeKind).create({
    metadata: { name: 'on-n2' },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      local: { path: '/mnt/disk' },
      claimRef: { namespace: NS, name: 'pinned' },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] },
          ],
        },
      },
    },
  } as PersistentVolume);
  await claims().create({
    ...claim('pinned', ''),
    metadata: { name: 'pinned', annotations: { [ANN_BIND_COMPLETED]: 'yes' } },
    spec: { ...claim('pinned', '').spec, volumeName: 'on-n2' },
  } as PersistentVolumeClaim);
  await pods().create(podWith('p-pinned', 'pinned'));
  expect(await waitFor('p-pinned bound', async () => ((await pods().get('p-pinned')) as Pod).spec?.nodeName)).toBe(
    'n2',
  );
}, 60_000);

it('checks VolumeBindingArgs as 1.21 does', () => {
  const errs = validateConfiguration(
    applyDefaults({
      apiVersion: API_VERSION,
      kind: KIND,
      profiles: [{ pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: -1, shape: [] } }] }],
    }),
  );
  expect(errs.map((e) => [e.field, e.detail])).toEqual([
    [
      'profiles[0].pluginConfig[0].args.bindTimeoutSeconds',
      'invalid BindTimeoutSeconds, should not be a negative value',
    ],
    ['profiles[0].pluginConfig[0].args.shape', 'unsupported when VolumeCapacityPriority feature is disabled'],
  ]);
  const ok = applyDefaults({
    apiVersion: API_VERSION,
    kind: KIND,
    profiles: [{ pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: 30 } }] }],
  });
  expect(validateConfiguration(ok)).toEqual([]);
});
