/**
 * Lists narrowed by `metadata.name` and `metadata.namespace` field selectors on every path shape (cluster-scoped, all
 * namespaces, one namespace), alone and with a label selector: always a list (holding the object, or empty), never
 * a 404.
 */
import { startTestServer, type TestServer } from '../testing/test-server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  for (const ns of ['fs-a', 'fs-b']) {
    const n = await server.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    expect(n.status).toBe(201);
    const cm = await server.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { app: ns } } },
    });
    expect(cm.status).toBe(201);
  }
}, 90_000);

afterAll(async () => {
  await server?.stop();
});

const fs = (s: string): string => `fieldSelector=${encodeURIComponent(s)}`;

it.each([
  [`/api/v1/configmaps?${fs('metadata.namespace=fs-a,metadata.name=x')}`, ['fs-a/x']],
  [`/api/v1/configmaps?${fs('metadata.name=x,metadata.namespace=fs-b')}`, ['fs-b/x']],
  [`/api/v1/configmaps?${fs('metadata.name=x')}&labelSelector=app%3Dfs-b`, ['fs-b/x']],
  [`/api/v1/configmaps?${fs('metadata.namespace=fs-a,metadata.name=nope')}`, []],
  [`/api/v1/namespaces/fs-a/configmaps?${fs('metadata.name=x')}`, ['fs-a/x']],
  [`/api/v1/namespaces/fs-a/configmaps?${fs('metadata.name=x,metadata.namespace=fs-a')}`, ['fs-a/x']],
  [`/api/v1/namespaces/fs-a/configmaps?${fs('metadata.name=x,metadata.namespace=fs-b')}`, []],
  [`/api/v1/namespaces/fs-a/configmaps?${fs('metadata.name=x')}&labelSelector=app%3Dfs-b`, []],
  // written as the issue wrote it, unencoded
  ['/api/v1/configmaps?fieldSelector=metadata.namespace=fs-b,metadata.name=x', ['fs-b/x']],
  ['/api/v1/configmaps?fieldSelector=metadata.name==x&resourceVersion=0', ['fs-a/x', 'fs-b/x']],
  [`/api/v1/namespaces?${fs('metadata.name=fs-a')}`, ['/fs-a']],
  [`/api/v1/namespaces?${fs('metadata.name=nope')}`, []],
])('GET %s is a list', async (path, want) => {
  const r = await server.request('GET', path);
  expect(r.status).toBe(200);
  const items = (r.json.items as { metadata: { namespace?: string; name: string } }[]).map(
    (i) => `${i.metadata.namespace ?? ''}/${i.metadata.name}`,
  );
  expect(items.filter((i) => !i.startsWith('/') || want.includes(i))).toEqual(want);
});
