import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  EventKind,
  findMatchingVolume,
  isNotFound,
  NamespaceKind,
  NodeKind,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  PodKind,
  type StorageClass,
  StorageClassKind,
} from '@platform/api';
import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  persistentVolumeBinderController,
  PersistentVolumeBinderOptions,
} from './index';

jest.setTimeout(120_000);

const NS = 'pvb';

function pv(
  name: string,
  size: string,
  extra: Partial<NonNullable<PersistentVolume['spec']>> = {},
  labels?: Record<string, string>,
): PersistentVolume {
  return {
    metadata: { name, labels },
    spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` }, ...extra },
  } as PersistentVolume;
}

function pvc(
  name: string,
  size: string,
  extra: Partial<NonNullable<PersistentVolumeClaim['spec']>> = {},
): PersistentVolumeClaim {
  return {
    metadata: { name, namespace: NS, uid: `uid-${name}` },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      storageClassName: '',
      ...extra,
    },
  } as PersistentVolumeClaim;
}

describe('findMatchingVolume', () => {
  const vols = [
    pv('big', '10Gi'),
    pv('small', '2Gi'),
    pv('tiny', '500Mi'),
    pv('rwx', '1Gi', { accessModes: ['ReadWriteMany'] }),
    pv('fast', '1Gi', { storageClassName: 'fast' }),
    pv('block', '1Gi', { volumeMode: 'Block' }),
    pv('labelled', '3Gi', {}, { tier: 'gold' }),
    pv('taken', '1Gi', { claimRef: { namespace: NS, name: 'other', uid: 'uid-other' } }),
  ];
  const name = (c: PersistentVolumeClaim): string | undefined => findMatchingVolume(c, vols)?.metadata?.name;
  test('the smallest volume that is big enough, with the modes, class and labels asked for', () => {
    expect(name(pvc('c', '1Gi'))).toBe('small');
    expect(name(pvc('c', '1Gi', { accessModes: ['ReadWriteMany'] }))).toBe('rwx');
    expect(name(pvc('c', '1Gi', { storageClassName: 'fast' }))).toBe('fast');
    expect(name(pvc('c', '1Gi', { volumeMode: 'Block' }))).toBe('block');
    expect(name(pvc('c', '1Gi', { selector: { matchLabels: { tier: 'gold' } } }))).toBe('labelled');
    expect(name(pvc('c', '20Gi'))).toBeUndefined();
  });
  test('a volume pre-bound to the claim wins; one bound to another claim is skipped', () => {
    expect(name(pvc('other', '1Gi'))).toBe('taken');
    expect(name({ ...pvc('other', '1Gi'), metadata: { name: 'other', namespace: NS, uid: 'v' } })).toBe('small');
  });
  test('late binding: the binder takes only pre-bound volumes; the scheduler also checks the node and the phase', () => {
    const onNode = (host: string): Partial<NonNullable<PersistentVolume['spec']>> => ({
      storageClassName: 'local',
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [host] }] },
          ],
        },
      },
    });
    const avail = (v: PersistentVolume): PersistentVolume => ({ ...v, status: { phase: 'Available' } });
    const local = [
      avail(pv('on-a', '1Gi', onNode('a'))),
      avail(pv('on-b', '2Gi', onNode('b'))),
      pv('on-b-new', '1Gi', onNode('b')),
    ];
    const c = pvc('c', '1Gi', { storageClassName: 'local' });
    const node = (host: string) => ({ metadata: { name: host, labels: { 'kubernetes.io/hostname': host } } });
    expect(findMatchingVolume(c, local, { delayBinding: true })).toBeUndefined();
    expect(findMatchingVolume(c, local, { delayBinding: true, node: node('a') })?.metadata?.name).toBe('on-a');
    // on-b-new has no phase yet: the scheduler waits for the binder to make it Available.
    expect(findMatchingVolume(c, local, { delayBinding: true, node: node('b') })?.metadata?.name).toBe('on-b');
    expect(
      findMatchingVolume(c, local, { node: node('b'), excluded: new Set(['on-b']) })?.metadata?.name,
    ).toBeUndefined();
    const preBound = pv('pre', '1Gi', { ...onNode('a'), claimRef: { namespace: NS, name: 'c' } });
    expect(findMatchingVolume(c, [preBound], { delayBinding: true })?.metadata?.name).toBe('pre');
    expect(findMatchingVolume(c, [preBound], { delayBinding: true, node: node('b') })).toBeUndefined();
  });
});

describe('PersistentVolumeBinderOptions', () => {
  const parse = (args: string[]): string[] => {
    const o = new PersistentVolumeBinderOptions();
    const cmd = new Command('test');
    o.addFlags(cmd);
    return parseOrExit(cmd, [o as never], args, undefined, { stdout: () => {}, stderr: () => {} }).errors.map(
      (e) => e.message,
    );
  };
  test('defaults, a sync period, and what is not supported yet', () => {
    expect(parse(['--pvclaimbinder-sync-period=30s', '--enable-dynamic-provisioning=false'])).toEqual([]);
    expect(parse(['--enable-hostpath-provisioner'])).toEqual([]);
    expect(parse(['--pv-recycler-minimum-timeout-nfs=10'])[0]).toMatch(
      /--pv-recycler-minimum-timeout-nfs: not supported yet/,
    );
  });
});

describe('against an API server', () => {
  let h: ControllerHarness;
  let root: string;
  let stopBinder: () => Promise<void>;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'pvb-hostpath-'));
    h = await startControllerHarness();
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    stopBinder = h.start(persistentVolumeBinderController, (o) => {
      o.syncPeriodMs = 500;
      o.enableHostPathProvisioner = true;
      o.hostPathRoot = root;
    });
  });
  afterAll(async () => {
    await h?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });
  const claims = () => h.client.resource(PersistentVolumeClaimKind, NS);
  const volumes = () => h.client.resource(PersistentVolumeKind);
  const create = async (c: PersistentVolumeClaim): Promise<PersistentVolumeClaim> => {
    const { uid: _uid, ...metadata } = c.metadata!;
    return claims().create({ ...c, metadata });
  };
  const phase = async (name: string): Promise<string | undefined> => (await volumes().get(name)).status?.phase;
  const claimPhase = async (name: string): Promise<string | undefined> => (await claims().get(name)).status?.phase;
  const event = async (name: string, reason: string): Promise<string | undefined> =>
    (await h.client.resource(EventKind).list()).items.find(
      (e) => e.involvedObject?.name === name && e.reason === reason,
    )?.message as string | undefined;

  test('a claim binds to the smallest matching volume, both sides Bound', async () => {
    await volumes().create(pv('a-big', '5Gi'));
    await volumes().create(pv('a-small', '2Gi'));
    await create(pvc('a', '1Gi'));
    await waitFor('claim a Bound', async () => (await claimPhase('a')) === 'Bound');
    const c = await claims().get('a');
    expect(c.spec?.volumeName).toBe('a-small');
    expect(c.metadata?.annotations).toMatchObject({ [ANN_BIND_COMPLETED]: 'yes', [ANN_BOUND_BY_CONTROLLER]: 'yes' });
    expect(c.status?.capacity?.storage).toBe('2Gi');
    await waitFor('volume Bound', async () => (await phase('a-small')) === 'Bound');
    const v = await volumes().get('a-small');
    expect(v.spec?.claimRef).toMatchObject({ namespace: NS, name: 'a', uid: c.metadata?.uid });
    await waitFor('the other volume Available', async () => (await phase('a-big')) === 'Available');
  });

  test('pre-binding by volumeName and by claimRef', async () => {
    await volumes().create(pv('b-named', '8Gi'));
    await create(pvc('b', '1Gi', { volumeName: 'b-named' }));
    await volumes().create(pv('c-ref', '8Gi', { claimRef: { namespace: NS, name: 'c' } }));
    await create(pvc('c', '1Gi'));
    await waitFor(
      'claims b and c Bound',
      async () => (await claimPhase('b')) === 'Bound' && (await claimPhase('c')) === 'Bound',
    );
    expect((await claims().get('b')).spec?.volumeName).toBe('b-named');
    expect((await claims().get('c')).spec?.volumeName).toBe('c-ref');
    expect((await claims().get('b')).metadata?.annotations?.[ANN_BOUND_BY_CONTROLLER]).toBeUndefined();
  });

  test('a claim nothing matches stays Pending with the Event 1.21 records', async () => {
    await create(pvc('d', '100Gi'));
    await create(pvc('e', '1Gi', { storageClassName: 'fast' }));
    await waitFor(
      'FailedBinding on d',
      async () =>
        (await event('d', 'FailedBinding')) ===
        'no persistent volumes available for this claim and no storage class is set',
    );
    await waitFor(
      'ProvisioningFailed on e',
      async () => (await event('e', 'ProvisioningFailed')) === 'storageclass.storage.platform "fast" not found',
    );
    expect(await claimPhase('d')).toBe('Pending');
    expect(await claimPhase('e')).toBe('Pending');
  });

  test('released volumes: Retain stays Released, Delete without a plugin fails with an Event', async () => {
    await volumes().create(pv('f-retain', '1Gi', { persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'f' }));
    // Not a hostPath volume: no plugin here deletes it.
    await volumes().create({
      ...pv('g-delete', '1Gi', { persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'g' }),
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'g',
        nfs: { server: '127.0.0.1', path: '/g' },
      },
    } as PersistentVolume);
    await create(pvc('f', '1Gi', { storageClassName: 'f' }));
    await create(pvc('g', '1Gi', { storageClassName: 'g' }));
    await waitFor(
      'f and g Bound',
      async () => (await claimPhase('f')) === 'Bound' && (await claimPhase('g')) === 'Bound',
    );
    await claims().delete('f');
    await claims().delete('g');
    await waitFor('f-retain Released', async () => (await phase('f-retain')) === 'Released');
    await waitFor('g-delete Failed', async () => (await phase('g-delete')) === 'Failed');
    await waitFor('the VolumeFailedDelete Event', async () =>
      /no deletable volume plugin matched/.test((await event('g-delete', 'VolumeFailedDelete')) ?? ''),
    );
  });

  test('a bound claim whose volume is deleted is Lost', async () => {
    await volumes().create(pv('h-vol', '1Gi', { storageClassName: 'h' }));
    await create(pvc('h', '1Gi', { storageClassName: 'h' }));
    await waitFor('h Bound', async () => (await claimPhase('h')) === 'Bound');
    await volumes().delete('h-vol');
    await waitFor('h-vol gone', async () => {
      try {
        await volumes().get('h-vol');
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    });
    await waitFor('h Lost', async () => (await claimPhase('h')) === 'Lost');
    await waitFor('the ClaimLost Event', async () => /lost reference/.test((await event('h', 'ClaimLost')) ?? ''));
    expect(h.errors).toEqual([]);
  });

  const classes = () => h.client.resource(StorageClassKind);
  const sc = (name: string, provisioner: string, extra: Partial<StorageClass> = {}): StorageClass =>
    ({ metadata: { name }, provisioner, ...extra }) as StorageClass;
  const gone = async (name: string): Promise<boolean> => {
    try {
      await volumes().get(name);
      return false;
    } catch (err) {
      return isNotFound(err);
    }
  };

  test('a claim of a host-path class is provisioned and bound; Delete removes volume and directory', async () => {
    await classes().create(sc('hp', 'kubernetes.io/host-path'));
    const created = await claims().create({
      metadata: { name: 'p' },
      spec: { storageClassName: 'hp', accessModes: ['ReadWriteMany'], resources: { requests: { storage: '3Gi' } } },
    } as PersistentVolumeClaim);
    const name = `pvc-${created.metadata?.uid}`;
    await waitFor('p Bound', async () => (await claimPhase('p')) === 'Bound');
    const c = await claims().get('p');
    expect(c.spec?.volumeName).toBe(name);
    expect(c.metadata?.annotations?.[ANN_STORAGE_PROVISIONER]).toBe('kubernetes.io/host-path');
    expect(c.status?.capacity?.storage).toBe('3Gi');
    const v = await volumes().get(name);
    expect(v.metadata?.annotations?.[ANN_PROVISIONED_BY]).toBe('kubernetes.io/host-path');
    expect(v.spec).toMatchObject({
      capacity: { storage: '3Gi' },
      accessModes: ['ReadWriteMany'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'hp',
      claimRef: { namespace: NS, name: 'p', uid: created.metadata?.uid },
    });
    expect(v.spec?.nodeAffinity).toBeUndefined();
    const dir = v.spec?.hostPath?.path ?? '';
    expect(dir.startsWith(`${root}/`)).toBe(true);
    expect(existsSync(dir)).toBe(true);
    await waitFor('the volume Bound', async () => (await phase(name)) === 'Bound');
    await waitFor(
      'ProvisioningSucceeded',
      async () =>
        (await event('p', 'ProvisioningSucceeded')) ===
        `Successfully provisioned volume ${name} using kubernetes.io/host-path`,
    );
    await claims().delete('p');
    await waitFor('the volume deleted', () => gone(name));
    expect(existsSync(dir)).toBe(false);
    await classes().delete('hp');
  });

  test('Retain keeps a provisioned volume and its directory', async () => {
    await classes().create(sc('hp-retain', 'kubernetes.io/host-path', { reclaimPolicy: 'Retain' }));
    await create(pvc('r', '1Gi', { storageClassName: 'hp-retain' }));
    await waitFor('r Bound', async () => (await claimPhase('r')) === 'Bound');
    const name = (await claims().get('r')).spec?.volumeName ?? '';
    await claims().delete('r');
    await waitFor('the volume Released', async () => (await phase(name)) === 'Released');
    expect(existsSync((await volumes().get(name)).spec?.hostPath?.path ?? '')).toBe(true);
  });

  test('mount options, a missing in-tree plugin, and an external provisioner', async () => {
    await classes().create(sc('hp-mount', 'kubernetes.io/host-path', { mountOptions: ['ro', 'noatime'] }));
    await classes().create(sc('cloud', 'kubernetes.io/aws-ebs'));
    await classes().create(sc('ext', 'example.com/nfs'));
    await create(pvc('m', '1Gi', { storageClassName: 'hp-mount' }));
    await create(pvc('x', '1Gi', { storageClassName: 'cloud' }));
    await create(pvc('ex', '1Gi', { storageClassName: 'ext' }));
    await waitFor(
      'ProvisioningFailed on m',
      async () =>
        (await event('m', 'ProvisioningFailed')) ===
        'Mount options are not supported by the provisioner but StorageClass "hp-mount" has mount options [ro noatime]',
    );
    await waitFor(
      'ProvisioningFailed on x',
      async () => (await event('x', 'ProvisioningFailed')) === 'no volume plugin matched name: kubernetes.io/aws-ebs',
    );
    await waitFor(
      'ExternalProvisioning on ex',
      async () =>
        (await event('ex', 'ExternalProvisioning')) ===
        'waiting for a volume to be created, either by external provisioner "example.com/nfs" or manually created by system administrator',
    );
    expect((await claims().get('ex')).metadata?.annotations?.[ANN_STORAGE_PROVISIONER]).toBe('example.com/nfs');
    expect(await claimPhase('ex')).toBe('Pending');
    expect(await claimPhase('m')).toBe('Pending');
  });

  test('a WaitForFirstConsumer claim waits for its pod, then is provisioned on the node selected for it', async () => {
    await classes().create(sc('late', 'kubernetes.io/host-path', { volumeBindingMode: 'WaitForFirstConsumer' }));
    await create(pvc('w', '1Gi', { storageClassName: 'late' }));
    await waitFor(
      'WaitForFirstConsumer',
      async () =>
        (await event('w', 'WaitForFirstConsumer')) === 'waiting for first consumer to be created before binding',
    );
    await h.client.resource(PodKind, NS).create({
      metadata: { name: 'user' },
      spec: {
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'w' } }],
      },
    });
    await waitFor(
      'WaitForPodScheduled',
      async () => (await event('w', 'WaitForPodScheduled')) === 'waiting for pod user to be scheduled',
    );
    expect(await claimPhase('w')).toBe('Pending');
    expect((await volumes().list()).items.some((v) => v.spec?.claimRef?.name === 'w')).toBe(false);
    await h.client.resource(NodeKind).create({
      metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'host-a' } },
    });
    // What the scheduler's VolumeBinding plugin writes in PreBind.
    await claims().patch('w', 'merge', { metadata: { annotations: { [ANN_SELECTED_NODE]: 'node-a' } } });
    await waitFor('w Bound', async () => (await claimPhase('w')) === 'Bound');
    const v = await volumes().get((await claims().get('w')).spec?.volumeName ?? '');
    expect(v.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['host-a'] }] },
    ]);
  });

  test('--enable-dynamic-provisioning=false provisions nothing; a host-path class needs --enable-hostpath-provisioner', async () => {
    await stopBinder();
    stopBinder = h.start(persistentVolumeBinderController, (o) => {
      o.syncPeriodMs = 500;
      o.enableDynamicProvisioning = false;
    });
    await classes().create(sc('hp2', 'kubernetes.io/host-path'));
    await create(pvc('off', '1Gi', { storageClassName: 'hp2' }));
    // The binder has one worker and syncs claims in key order on start and in creation order later: once the
    // later claim was synced, so was `off`.
    await create(pvc('zz-marker', '100Gi'));
    await waitFor('zz-marker synced', async () => (await event('zz-marker', 'FailedBinding')) !== undefined);
    expect((await claims().get('off')).metadata?.annotations?.[ANN_STORAGE_PROVISIONER]).toBeUndefined();
    expect(await event('off', 'ProvisioningFailed')).toBeUndefined();
    await stopBinder();
    stopBinder = h.start(persistentVolumeBinderController, (o) => (o.syncPeriodMs = 500));
    await waitFor(
      'host-path provisioning disabled',
      async () =>
        (await event('off', 'ProvisioningFailed')) ===
        'Failed to create provisioner: Provisioning in volume plugin "kubernetes.io/host-path" is disabled',
    );
    expect(h.errors).toEqual([]);
  });
});
