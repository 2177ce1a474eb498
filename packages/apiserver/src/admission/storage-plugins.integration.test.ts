/**
 * The storage admission plugins that waited for the volume controllers, on a real server:
 * StorageObjectInUseProtection puts the protection finalizers on new volumes and claims (the controller manager's
 * pv-protection and pvc-protection controllers take them off), and PersistentVolumeClaimResize lets a claim grow only
 * when it is bound and its class allows expansion.
 */
import { startTestServer, type TestServer } from '../testing/test-server';
import { DEFAULT_ADMISSION_SETTINGS } from './server-admission';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer((c) => {
    c.admission = {
      plugins: ['StorageObjectInUseProtection', 'PersistentVolumeClaimResize'],
      settings: DEFAULT_ADMISSION_SETTINGS,
    };
  });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  expect(s?.errors ?? []).toEqual([]);
});

const SC = '/apis/storage.platform/v1/storageclasses';
const PV = '/api/v1/persistentvolumes';
const PVC = '/api/v1/namespaces/default/persistentvolumeclaims';

const claim = (name: string, storageClassName: string, storage = '1Gi'): object => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, storageClassName },
});

describe('StorageObjectInUseProtection', () => {
  it('puts the protection finalizer on a new volume and a new claim, once, beside their own', async () => {
    const pv = await s.request('POST', PV, {
      body: {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv1', finalizers: ['example.com/keep'] },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv1' } },
      },
    });
    expect([pv.status, pv.json.metadata.finalizers]).toEqual([
      201,
      ['example.com/keep', 'kubernetes.io/pv-protection'],
    ]);
    const pvc = await s.request('POST', PVC, { body: claim('protected', '') });
    expect([pvc.status, pvc.json.metadata.finalizers]).toEqual([201, ['kubernetes.io/pvc-protection']]);
    const again = { ...claim('again', ''), metadata: { name: 'again', finalizers: ['kubernetes.io/pvc-protection'] } };
    expect((await s.request('POST', PVC, { body: again })).json.metadata.finalizers).toEqual([
      'kubernetes.io/pvc-protection',
    ]);
    // Deleting a protected claim only marks it: the pvc-protection controller lets it go when no pod uses it.
    const del = await s.request('DELETE', `${PVC}/protected`);
    expect(del.status).toBe(200);
    expect((await s.request('GET', `${PVC}/protected`)).json.metadata.deletionTimestamp).toBeDefined();
  });
});

describe('PersistentVolumeClaimResize', () => {
  const bind = async (name: string): Promise<void> => {
    const cur = (await s.request('GET', `${PVC}/${name}`)).json;
    const r = await s.request('PUT', `${PVC}/${name}/status`, { body: { ...cur, status: { phase: 'Bound' } } });
    expect(r.status).toBe(200);
  };
  const grow = async (name: string, storage: string) => {
    const cur = (await s.request('GET', `${PVC}/${name}`)).json;
    cur.spec.resources.requests.storage = storage;
    return s.request('PUT', `${PVC}/${name}`, { body: cur });
  };

  it('lets a bound claim of an expandable class grow, and refuses the others with 1.21 messages', async () => {
    for (const [name, allowVolumeExpansion] of [
      ['expandable', true],
      ['fixed', false],
    ] as const)
      expect(
        (
          await s.request('POST', SC, {
            body: {
              apiVersion: 'storage.platform/v1',
              kind: 'StorageClass',
              metadata: { name },
              provisioner: 'csi.example.com',
              allowVolumeExpansion,
            },
          })
        ).status,
      ).toBe(201);
    for (const [name, cls] of [
      ['grows', 'expandable'],
      ['unbound', 'expandable'],
      ['stuck', 'fixed'],
      ['classless', ''],
    ])
      expect((await s.request('POST', PVC, { body: claim(name!, cls!) })).status).toBe(201);
    for (const name of ['grows', 'stuck', 'classless']) await bind(name);

    const ok = await grow('grows', '2Gi');
    expect([ok.status, ok.json.spec?.resources?.requests?.storage]).toEqual([200, '2Gi']);
    const unbound = await grow('unbound', '2Gi');
    expect([unbound.status, unbound.json.message]).toEqual([
      403,
      'persistentvolumeclaims "unbound" is forbidden: Only bound persistent volume claims can be expanded',
    ]);
    const refusal =
      'is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
    for (const name of ['stuck', 'classless']) {
      const r = await grow(name, '2Gi');
      expect([r.status, r.json.message]).toEqual([403, `persistentvolumeclaims "${name}" ${refusal}`]);
    }
  });
});
