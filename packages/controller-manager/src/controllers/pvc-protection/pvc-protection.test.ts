import {
  isNotFound,
  NamespaceKind,
  type PersistentVolumeClaim,
  PersistentVolumeClaimKind,
  type Pod,
  PodKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { claimKeysOf, podUsesPVC, PVC_PROTECTION_FINALIZER, pvcProtectionController } from './index';

jest.setTimeout(90_000);

const NS = 'pvcp';
const claim = (name: string, owner?: string): PersistentVolumeClaim =>
  ({
    metadata: {
      name,
      namespace: NS,
      ownerReferences: owner ? [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: owner, controller: true }] : undefined,
    },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  }) as PersistentVolumeClaim;
const pod = (name: string, volumes: NonNullable<Pod['spec']>['volumes'], nodeName?: string): Pod =>
  ({
    metadata: { name, namespace: NS, uid: `uid-${name}` },
    spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }], volumes },
  }) as Pod;

describe('podUsesPVC', () => {
  const direct = [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }];
  const eph = [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }] as unknown as typeof direct;
  it('counts scheduled pods that name the claim', () => {
    expect(podUsesPVC(pod('a', direct, 'n1'), claim('data'), true)).toBe(true);
    expect(podUsesPVC(pod('a', direct), claim('data'), true)).toBe(false);
    expect(podUsesPVC(pod('a', direct, 'n1'), claim('other'), true)).toBe(false);
  });
  it('counts the owner of an ephemeral claim while the gate is on and the pod runs', () => {
    const p = pod('p', eph, 'n1');
    expect(podUsesPVC(p, claim('p-scratch', 'uid-p'), true)).toBe(true);
    expect(podUsesPVC(p, claim('p-scratch', 'uid-p'), false)).toBe(false);
    expect(podUsesPVC(p, claim('p-scratch', 'someone-else'), true)).toBe(false);
    expect(podUsesPVC({ ...p, status: { phase: 'Succeeded' } }, claim('p-scratch', 'uid-p'), true)).toBe(false);
    expect(claimKeysOf(p)).toEqual([`${NS}/p-scratch`]);
  });
});

describe('against an API server', () => {
  let h: ControllerHarness;
  beforeAll(async () => {
    h = await startControllerHarness();
    await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
    h.start(pvcProtectionController);
  });
  afterAll(async () => {
    await h?.stop();
  });
  const claims = () => h.client.resource(PersistentVolumeClaimKind, NS);
  const pods = () => h.client.resource(PodKind, NS);
  const gone = async (name: string): Promise<boolean> => {
    try {
      await claims().get(name);
      return false;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  };

  test('a claim keeps its finalizer while a scheduled pod uses it, and goes once the pod does', async () => {
    await claims().create(claim('data'));
    await claims().create(claim('free'));
    await waitFor('finalizers added', async () =>
      (await claims().list()).items.every((c) => c.metadata?.finalizers?.includes(PVC_PROTECTION_FINALIZER)),
    );
    await pods().create(pod('user', [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }], 'n1'));
    // An unscheduled pod does not hold its claim.
    await pods().create(pod('pending', [{ name: 'v', persistentVolumeClaim: { claimName: 'free' } }]));
    await claims().delete('data');
    await claims().delete('free');
    await waitFor('the unused claim is deleted', () => gone('free'));
    const held = await claims().get('data');
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    expect(held.metadata?.finalizers).toContain(PVC_PROTECTION_FINALIZER);
    await pods().delete('user', { gracePeriodSeconds: 0 });
    await waitFor('the claim is deleted once its pod is gone', () => gone('data'));
    expect(h.errors).toEqual([]);
  });
});
