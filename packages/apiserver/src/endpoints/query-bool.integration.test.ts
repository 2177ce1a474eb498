/**
 * Boolean query parameters read as Kubernetes reads them (Go's strconv.ParseBool), over real HTTP: the Python
 * client's `watch=True` opens a watch, and a value that is not a boolean is a 400 Status naming the parameter.
 */
import { startTestServer, type TestServer } from '../testing/test-server';

let server: TestServer;
const cms = '/api/v1/namespaces/default/configmaps';

beforeAll(async () => {
  server = await startTestServer();
  const r = await server.request('POST', cms, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'v' } },
  });
  expect(r.status).toBe(201);
}, 90_000);

afterAll(async () => {
  await server?.stop();
});

/** The event types of a watch stream that ended (timeoutSeconds). */
function eventTypes(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { type: string }).type);
}

it.each(['True', 'true', '1', 't', 'T', 'TRUE'])('watch=%s opens a watch', async (v) => {
  const r = await server.request('GET', `${cms}?watch=${v}&timeoutSeconds=1`);
  expect(r.status).toBe(200);
  expect(eventTypes(r.text)).toEqual(['ADDED']);
});

it.each(['False', 'false', '0', 'f', 'F', 'FALSE'])('watch=%s lists', async (v) => {
  const r = await server.request('GET', `${cms}?watch=${v}`);
  expect([r.status, r.json.kind]).toEqual([200, 'ConfigMapList']);
});

it.each([
  ['watch', 'yes'],
  ['watch', 'TrUe'],
  ['allowWatchBookmarks', 'on'],
])('%s=%s is a 400 Status naming the parameter', async (name, v) => {
  const r = await server.request('GET', `${cms}?${name}=${v}`);
  expect([r.status, r.json.kind, r.json.reason]).toEqual([400, 'Status', 'BadRequest']);
  expect(r.json.message).toContain(name);
});

it('reads pretty, force and noHeaders the same way', async () => {
  const pretty = await server.request('GET', `${cms}/cm?pretty=True`);
  expect(pretty.text).toContain('\n  "kind": "ConfigMap"');
  const forced = await server.request('PATCH', `${cms}/cm?fieldManager=m&force=True`, {
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: w}\n',
    headers: { 'content-type': 'application/apply-patch+yaml' },
  });
  expect([forced.status, forced.json.data]).toEqual([200, { k: 'w' }]);
  const badForce = await server.request('PATCH', `${cms}/cm?fieldManager=m&force=maybe`, {
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n',
    headers: { 'content-type': 'application/apply-patch+yaml' },
  });
  expect([badForce.status, badForce.json.reason]).toEqual([400, 'BadRequest']);
  const table = 'application/json;as=Table;g=meta.platform;v=v1';
  const noHeaders = await server.request('GET', `${cms}?noHeaders=T`, { headers: { accept: table } });
  expect([noHeaders.json.kind, noHeaders.json.columnDefinitions]).toEqual(['Table', []]);
  const badHeaders = await server.request('GET', `${cms}?noHeaders=x`, { headers: { accept: table } });
  expect(badHeaders.status).toBe(400);
});
