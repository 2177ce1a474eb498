import {
  EventKind,
  isNotFound,
  NamespaceKind,
  type PersistentVolume,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
} from '@platform/api';
import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { findMatchingVolume } from './match';
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
    expect(parse(['--enable-hostpath-provisioner'])).toEqual([
      '--enable-hostpath-provisioner: not supported yet (there is no hostPath provisioner)',
    ]);
    expect(parse(['--pv-recycler-minimum-timeout-nfs=10'])[0]).toMatch(
      /--pv-recycler-minimum-timeout-nfs: not supported yet/,
    );
  });
});

describe('against an API server', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    h.start(persistentVolumeBinderController, (o) => (o.syncPeriodMs = 500));
  });
  afterAll(async () => {
    await h?.stop();
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
    await volumes().create(pv('g-delete', '1Gi', { persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'g' }));
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
});
