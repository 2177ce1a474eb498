import { isNotFound, type PersistentVolume, PersistentVolumeKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { PV_PROTECTION_FINALIZER, pvProtectionChange, pvProtectionController } from './index';

jest.setTimeout(90_000);

const volume = (name: string): PersistentVolume =>
  ({
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      hostPath: { path: `/tmp/${name}` },
    },
  }) as PersistentVolume;

test('pvProtectionChange adds the finalizer, and removes it from a deleted volume that is not Bound', () => {
  const pv = volume('a');
  expect(pvProtectionChange(pv)?.metadata?.finalizers).toEqual([PV_PROTECTION_FINALIZER]);
  const deleting = {
    ...pv,
    metadata: { ...pv.metadata, deletionTimestamp: 'x', finalizers: [PV_PROTECTION_FINALIZER] },
  };
  expect(pvProtectionChange({ ...deleting, status: { phase: 'Bound' } })).toBeUndefined();
  expect(pvProtectionChange({ ...deleting, status: { phase: 'Released' } })?.metadata?.finalizers).toEqual([]);
});

describe('against an API server', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    h.start(pvProtectionController);
  });
  afterAll(async () => {
    await h?.stop();
  });
  const volumes = () => h.client.resource(PersistentVolumeKind);
  const gone = async (name: string): Promise<boolean> => {
    try {
      await volumes().get(name);
      return false;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  };

  test('a Bound volume stays until it is no longer Bound', async () => {
    await volumes().create(volume('pv1'));
    await waitFor('the finalizer', async () =>
      Boolean((await volumes().get('pv1')).metadata?.finalizers?.includes(PV_PROTECTION_FINALIZER)),
    );
    const cur = await volumes().get('pv1');
    await volumes().updateStatus({ ...cur, status: { phase: 'Bound' } });
    await volumes().delete('pv1');
    // Still there, being deleted, while Bound (no way to wait for "nothing happens": read it after a resync).
    expect((await volumes().get('pv1')).metadata?.deletionTimestamp).toBeDefined();
    const bound = await volumes().get('pv1');
    expect(bound.metadata?.finalizers).toContain(PV_PROTECTION_FINALIZER);
    await volumes().updateStatus({ ...bound, status: { phase: 'Released' } });
    await waitFor('deleted once released', () => gone('pv1'));
    expect(h.errors).toEqual([]);
  });
});
