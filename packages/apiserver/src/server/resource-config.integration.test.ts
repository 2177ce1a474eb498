/** `--runtime-config` as a client sees it: switched-off group versions and resources are neither discovered nor served. */
import { startTestServer, type TestServer } from '../testing/test-server';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer((c) => {
    c.runtimeConfig = new Map([
      ['batch/v1beta1', 'false'],
      ['apps/v1/replicasets', 'false'],
      ['policy/v1beta1', 'false'],
    ]);
  });
}, 60_000);

afterAll(async () => {
  await t.stop();
  expect(t.errors).toEqual([]);
});

it('leaves switched-off versions out of discovery and 404s their paths', async () => {
  const apis = await t.request('GET', '/apis');
  const batch = apis.json.groups.find((g: { name: string }) => g.name === 'batch');
  expect(batch.versions.map((v: { version: string }) => v.version)).toEqual(['v1']);
  expect((await t.request('GET', '/apis/batch/v1beta1')).status).toBe(404);
  expect((await t.request('GET', '/apis/batch/v1beta1/namespaces/default/cronjobs')).status).toBe(404);
  expect((await t.request('GET', '/apis/batch/v1/namespaces/default/jobs')).status).toBe(200);
});

it('lists a group without its switched-off version', async () => {
  const apis = await t.request('GET', '/apis');
  const policy = apis.json.groups.find((g: { name: string }) => g.name === 'policy');
  expect(policy?.versions.map((v: { version: string }) => v.version) ?? []).not.toContain('v1beta1');
});

it('switches off single resources', async () => {
  const apps = await t.request('GET', '/apis/apps/v1');
  const names = apps.json.resources.map((r: { name: string }) => r.name);
  expect(names).toContain('deployments');
  expect(names).not.toContain('replicasets');
  expect(names).not.toContain('replicasets/status');
  expect((await t.request('GET', '/apis/apps/v1/namespaces/default/replicasets')).status).toBe(404);
  expect((await t.request('GET', '/apis/apps/v1/namespaces/default/deployments')).status).toBe(200);
});
