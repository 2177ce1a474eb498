/**
 * The admission plugins that waited for storage.platform, networking.platform and node.platform, on a real server:
 * DefaultStorageClass and DefaultIngressClass give new claims and Ingresses the default class (and refuse when two
 * classes claim it), RuntimeClass adds its class's overhead and scheduling to pods and refuses unknown classes.
 */
import { startTestServer, type TestServer } from '../testing/test-server';
import { DEFAULT_ADMISSION_SETTINGS } from './server-admission';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer((c) => {
    c.admission = {
      plugins: ['DefaultStorageClass', 'RuntimeClass', 'DefaultIngressClass'],
      settings: DEFAULT_ADMISSION_SETTINGS,
    };
  });
}, 60_000);

afterAll(async () => {
  await s?.stop();
  expect(s?.errors ?? []).toEqual([]);
});

const SC = '/apis/storage.platform/v1/storageclasses';
const PVC = '/api/v1/namespaces/default/persistentvolumeclaims';
const IC = '/apis/networking.platform/v1/ingressclasses';
const ING = '/apis/networking.platform/v1/namespaces/default/ingresses';

const storageClass = (name: string, isDefault: boolean): object => ({
  apiVersion: 'storage.platform/v1',
  kind: 'StorageClass',
  metadata: { name, annotations: { 'storageclass.kubernetes.io/is-default-class': String(isDefault) } },
  provisioner: 'csi.example.com',
});
const claim = (name: string, storageClassName?: string): object => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '1Gi' } },
    ...(storageClassName === undefined ? {} : { storageClassName }),
  },
});
const ingressClass = (name: string): object => ({
  apiVersion: 'networking.platform/v1',
  kind: 'IngressClass',
  metadata: { name, annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
  spec: { controller: 'example.com/ingress' },
});
const ingress = (name: string): object => ({
  apiVersion: 'networking.platform/v1',
  kind: 'Ingress',
  metadata: { name },
  spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
});

describe('DefaultStorageClass', () => {
  it('leaves claims alone without a default, then gives them the default, and refuses when two are default', async () => {
    expect((await s.request('POST', PVC, { body: claim('none') })).json.spec.storageClassName).toBeUndefined();
    expect((await s.request('POST', SC, { body: storageClass('slow', false) })).status).toBe(201);
    expect((await s.request('POST', SC, { body: storageClass('fast', true) })).status).toBe(201);
    expect((await s.request('POST', PVC, { body: claim('a') })).json.spec.storageClassName).toBe('fast');
    expect((await s.request('POST', PVC, { body: claim('b', '') })).json.spec.storageClassName).toBe('');
    expect((await s.request('POST', PVC, { body: claim('c', 'slow') })).json.spec.storageClassName).toBe('slow');
    expect((await s.request('POST', SC, { body: storageClass('other', true) })).status).toBe(201);
    const r = await s.request('POST', PVC, { body: claim('d') });
    expect([r.status, r.json.message]).toEqual([
      403,
      'persistentvolumeclaims "d" is forbidden: 2 default StorageClasses were found',
    ]);
  });
});

describe('DefaultIngressClass', () => {
  it('gives a new Ingress the default class, and refuses when two are default', async () => {
    expect((await s.request('POST', ING, { body: ingress('before') })).json.spec.ingressClassName).toBeUndefined();
    expect((await s.request('POST', IC, { body: ingressClass('one') })).status).toBe(201);
    expect((await s.request('POST', ING, { body: ingress('after') })).json.spec.ingressClassName).toBe('one');
    expect((await s.request('POST', IC, { body: ingressClass('two') })).status).toBe(201);
    const r = await s.request('POST', ING, { body: ingress('two') });
    expect([r.status, r.json.message]).toEqual([
      403,
      'ingresses.networking.platform "two" is forbidden: 2 default IngressClasses were found, only 1 allowed',
    ]);
  });
});

describe('RuntimeClass', () => {
  const pod = (name: string, runtimeClassName: string): object => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { runtimeClassName, nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image: 'busybox' }] },
  });

  it('adds the overhead and scheduling of the class, and refuses an unknown class', async () => {
    const rc = await s.request('POST', '/apis/node.platform/v1/runtimeclasses', {
      body: {
        apiVersion: 'node.platform/v1',
        kind: 'RuntimeClass',
        metadata: { name: 'gvisor' },
        handler: 'runsc',
        overhead: { podFixed: { cpu: '250m' } },
        scheduling: {
          nodeSelector: { sandbox: 'gvisor' },
          tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
    });
    expect(rc.status).toBe(201);
    const p = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('p', 'gvisor') });
    expect(p.status).toBe(201);
    expect(p.json.spec.overhead).toEqual({ cpu: '250m' });
    expect(p.json.spec.nodeSelector).toEqual({ disk: 'ssd', sandbox: 'gvisor' });
    expect(p.json.spec.tolerations).toContainEqual({ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' });
    const bad = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('q', 'kata') });
    expect([bad.status, bad.json.message]).toEqual([
      403,
      'pods "q" is forbidden: pod rejected: RuntimeClass "kata" not found',
    ]);
  });
});
