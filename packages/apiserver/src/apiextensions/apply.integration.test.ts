/**
 * Server-side apply of custom objects against a real API server, read through the CRD's structural schema as
 * 1.21's structured-merge-diff reads it: `x-kubernetes-list-type` `map` lists (keyed by `x-kubernetes-list-map-keys`)
 * and `set` lists shared between managers element by element, `atomic` lists (and lists that do not say) replaced
 * whole with the conflict on the list, `x-kubernetes-map-type` `atomic` objects and maps owned whole, granular maps
 * key by key, `x-kubernetes-preserve-unknown-fields` subtrees untyped, undeclared fields refused.
 */
import { startTestServer, type TestResponse, type TestServer } from '../testing/test-server';

let t: TestServer;

const GROUP = 'apply.example.com';
const RACKS = `/apis/${GROUP}/v1/namespaces/default/racks`;
const APPLY = 'application/apply-patch+yaml';

const strings = { type: 'array', items: { type: 'string' } };

const CRD = {
  apiVersion: 'apiextensions.platform/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `racks.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'racks', kind: 'Rack' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  ports: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    items: {
                      type: 'object',
                      required: ['name'],
                      properties: { name: { type: 'string' }, port: { type: 'integer' } },
                    },
                  },
                  tags: { ...strings, 'x-kubernetes-list-type': 'set' },
                  command: strings,
                  args: { ...strings, 'x-kubernetes-list-type': 'atomic' },
                  selector: {
                    type: 'object',
                    'x-kubernetes-map-type': 'atomic',
                    properties: { app: { type: 'string' }, tier: { type: 'string' } },
                  },
                  labels: { type: 'object', additionalProperties: { type: 'string' } },
                  env: {
                    type: 'object',
                    'x-kubernetes-map-type': 'atomic',
                    additionalProperties: { type: 'string' },
                  },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
        },
      },
    ],
  },
};

interface Entry {
  manager: string;
  operation: string;
  fieldsV1: Record<string, unknown>;
}

function apply(name: string, spec: unknown, manager: string, force = false): Promise<TestResponse> {
  return t.request('PATCH', `${RACKS}/${name}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
    body: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Rack', metadata: { name }, spec }),
    headers: { 'content-type': APPLY },
  });
}

function applied(r: TestResponse, manager: string): Record<string, unknown> | undefined {
  const entries = (r.json.metadata.managedFields ?? []) as Entry[];
  return entries.find((e) => e.manager === manager && e.operation === 'Apply')?.fieldsV1;
}

beforeAll(async () => {
  t = await startTestServer();
  const c = await t.request('POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', { body: CRD });
  expect(c.status).toBe(201);
  const deadline = Date.now() + 30_000;
  while ((await t.request('GET', RACKS)).status !== 200) {
    if (Date.now() > deadline) throw new Error('racks were not served within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  await t?.stop();
  expect(t?.errors).toEqual([]);
});

it('map lists: two managers applying different entries both keep theirs, each owning its entry', async () => {
  expect((await apply('maps', { ports: [{ name: 'http', port: 80 }] }, 'web')).status).toBe(201);
  const r = await apply('maps', { ports: [{ name: 'metrics', port: 9090 }] }, 'monitor');
  expect(r.status).toBe(200);
  expect(r.json.spec.ports).toEqual([
    { name: 'http', port: 80 },
    { name: 'metrics', port: 9090 },
  ]);
  expect(applied(r, 'web')).toEqual({
    'f:spec': { 'f:ports': { 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} } } },
  });
  expect(applied(r, 'monitor')).toEqual({
    'f:spec': { 'f:ports': { 'k:{"name":"metrics"}': { '.': {}, 'f:name': {}, 'f:port': {} } } },
  });
  // Changing another manager's entry is a conflict on that entry's field only.
  const conflict = await apply('maps', { ports: [{ name: 'http', port: 8080 }] }, 'monitor');
  expect(conflict.status).toBe(409);
  expect(conflict.json.message).toBe(
    'Apply failed with 1 conflict: conflict with "web": .spec.ports[name="http"].port',
  );
  // A manager dropping its entry removes only that entry.
  const dropped = await apply('maps', { ports: [] }, 'monitor');
  expect(dropped.status).toBe(200);
  expect(dropped.json.spec.ports).toEqual([{ name: 'http', port: 80 }]);
});

it('set lists: the union of what each manager applies', async () => {
  expect((await apply('sets', { tags: ['a', 'b'] }, 'one')).status).toBe(201);
  const r = await apply('sets', { tags: ['b', 'c'] }, 'two');
  expect(r.status).toBe(200);
  expect(r.json.spec.tags).toEqual(['a', 'b', 'c']);
  expect(applied(r, 'two')).toEqual({ 'f:spec': { 'f:tags': { 'v:"b"': {}, 'v:"c"': {} } } });
});

it('atomic lists (declared or by default) are replaced whole, with the conflict reported on the list', async () => {
  expect((await apply('atomic', { command: ['run', 'fast'], args: ['-v'] }, 'one')).status).toBe(201);
  const r = await apply('atomic', { command: ['walk'], args: ['-q'] }, 'two');
  expect(r.status).toBe(409);
  expect(r.json.message).toBe('Apply failed with 2 conflicts: conflicts with "one":\n- .spec.args\n- .spec.command');
  expect(r.json.details.causes).toEqual([
    { type: 'FieldManagerConflict', message: 'conflict with "one"', field: '.spec.args' },
    { type: 'FieldManagerConflict', message: 'conflict with "one"', field: '.spec.command' },
  ]);
  const forced = await apply('atomic', { command: ['walk'] }, 'two', true);
  expect(forced.status).toBe(200);
  expect(forced.json.spec).toEqual({ command: ['walk'], args: ['-v'] });
  expect(applied(forced, 'two')).toEqual({ 'f:spec': { 'f:command': {} } });
  expect(applied(forced, 'one')).toEqual({ 'f:spec': { 'f:args': {} } });
});

it('x-kubernetes-map-type: atomic objects and maps are owned whole; granular maps key by key', async () => {
  const first = { selector: { app: 'db' }, env: { A: '1' }, labels: { team: 'a' } };
  expect((await apply('objects', first, 'one')).status).toBe(201);
  const r = await apply('objects', { selector: { tier: 'back' }, env: { B: '2' }, labels: { owner: 'b' } }, 'two');
  expect(r.status).toBe(409);
  expect(r.json.message).toBe('Apply failed with 2 conflicts: conflicts with "one":\n- .spec.env\n- .spec.selector');
  const ok = await apply('objects', { labels: { owner: 'b' } }, 'two');
  expect(ok.status).toBe(200);
  expect(ok.json.spec.labels).toEqual({ team: 'a', owner: 'b' });
  expect(applied(ok, 'one')).toEqual({
    'f:spec': { 'f:env': {}, 'f:labels': { 'f:team': {} }, 'f:selector': {} },
  });
  const forced = await apply('objects', { selector: { tier: 'back' } }, 'two', true);
  expect(forced.status).toBe(200);
  expect(forced.json.spec.selector).toEqual({ tier: 'back' });
});

it('preserve-unknown-fields subtrees are read untyped; fields the schema does not declare are refused', async () => {
  const r = await apply('open', { extra: { any: { deep: [1, 2] } } }, 'one');
  expect(r.status).toBe(201);
  expect(r.json.spec.extra).toEqual({ any: { deep: [1, 2] } });
  expect(applied(r, 'one')).toEqual({ 'f:spec': { 'f:extra': { 'f:any': { 'f:deep': {} } } } });
  const bad = await apply('open', { unknown: 1 }, 'one');
  expect(bad.status).toBe(400);
  expect(bad.json.message).toContain('.spec.unknown: field not declared in schema');
});

it('updates are tracked through the schema too (a merge patch owns the map entry it changed)', async () => {
  expect((await apply('updates', { ports: [{ name: 'a', port: 1 }] }, 'one')).status).toBe(201);
  const r = await t.request('PATCH', `${RACKS}/updates?fieldManager=editor`, {
    body: {
      spec: {
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 2 },
        ],
      },
    },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  expect(r.status).toBe(200);
  const entries = r.json.metadata.managedFields as Entry[];
  expect(entries.find((e) => e.manager === 'editor')?.fieldsV1).toEqual({
    'f:spec': { 'f:ports': { 'k:{"name":"b"}': { '.': {}, 'f:name': {}, 'f:port': {} } } },
  });
  // The applier still owns its entry, so re-applying it alone keeps the editor's.
  const again = await apply('updates', { ports: [{ name: 'a', port: 1 }] }, 'one');
  expect(again.json.spec.ports).toEqual([
    { name: 'a', port: 1 },
    { name: 'b', port: 2 },
  ]);
});
