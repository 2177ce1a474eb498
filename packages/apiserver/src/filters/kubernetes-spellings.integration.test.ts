/**
 * `--kubernetes-client-compatibility`: on (the default) the server answers Kubernetes' spellings of groups and media
 * types as its own; off, only the platform's: `.k8s.io` paths are 404, Kubernetes' Protobuf is 406/415, the
 * `meta.k8s.io` views are not matched, and discovery lists no `.k8s.io` group.
 */
import { startTestServer, type TestServer } from '../testing/test-server';

let on: TestServer;
let off: TestServer;

beforeAll(async () => {
  [on, off] = await Promise.all([
    startTestServer(),
    startTestServer((c) => {
      c.kubernetesClientCompatibility = false;
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([on?.stop(), off?.stop()]);
});

const K8S_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
const PLATFORM_PATH = '/apis/rbac.authorization.platform/v1/clusterroles';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json';

it('on: Kubernetes spellings are the same resources, and discovery names certificates.k8s.io', async () => {
  expect((await on.request('GET', K8S_PATH)).json.apiVersion).toBe('rbac.authorization.k8s.io/v1');
  expect((await on.request('GET', PLATFORM_PATH, { headers: { accept: TABLE } })).json.kind).toBe('Table');
  const groups = (await on.request('GET', '/apis')).json.groups.map((g: { name: string }) => g.name);
  expect(groups).toContain('certificates.k8s.io');
});

it('off: .k8s.io paths are 404 and discovery lists only .platform groups', async () => {
  const r = await off.request('GET', K8S_PATH);
  expect([r.status, r.json.message]).toEqual([404, 'the server could not find the requested resource']);
  expect((await off.request('GET', '/apis/certificates.k8s.io/v1')).status).toBe(404);
  const groups = (await off.request('GET', '/apis')).json.groups.map((g: { name: string }) => g.name);
  expect(groups.filter((g: string) => g.endsWith('.k8s.io'))).toEqual([]);
  expect(groups).toContain('certificates.platform');
  expect((await off.request('GET', PLATFORM_PATH)).json.apiVersion).toBe('rbac.authorization.platform/v1');
});

it("off: Kubernetes' media types and views are not matched", async () => {
  const table = await off.request('GET', PLATFORM_PATH, { headers: { accept: TABLE } });
  expect([table.status, table.json.kind]).toEqual([200, 'ClusterRoleList']);
  const pb = await off.request('GET', PLATFORM_PATH, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
  expect([pb.status, pb.json.reason]).toEqual([406, 'NotAcceptable']);
  const body = await off.request('POST', '/api/v1/namespaces/default/configmaps', {
    headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
    body: Buffer.from('k8s\0'),
  });
  expect([body.status, body.json.reason]).toEqual([415, 'UnsupportedMediaType']);
  // The platform's own Protobuf is still served.
  const own = await off.request('GET', PLATFORM_PATH, { headers: { accept: 'application/vnd.platform.protobuf' } });
  expect(own.status).toBe(200);
});
