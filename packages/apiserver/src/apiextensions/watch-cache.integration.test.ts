/**
 * The watch cache of custom resources, against a real API server on SQLite: custom objects are listed, read at
 * resourceVersion=0 and watched from their CRD's cache (whose frozen objects nothing on the read path changes), with
 * the schema's defaults (also a default a CRD update added, for objects stored before it), converted between versions
 * (None and Webhook); a CRD change or deletion stops its cache (its store watch and the watches it fed), and a CRD
 * created again under the same name serves fresh data.
 */
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';

import { type ApiObject } from '@platform/api';
import { generateSelfSignedCertKey } from '@platform/common';

import { type RequestInfo } from '../endpoints/request-info';
import { type Getter, type Lister, type RequestContext } from '../registry/rest/rest';
import { type Cacher } from '../storage/cacher/cacher';
import { startTestServer, type TestServer } from '../testing/test-server';

const GROUP = 'cache.example.com';
const CRDS = '/apis/apiextensions.platform/v1/customresourcedefinitions';

let server: TestServer;
let hook: Server;
let hookUrl: string;
let hookCa: string;

type Json = Record<string, unknown>;

/** Two versions: v1 (storage) has spec.color defaulted to red; v2 has spec.colour, defaulted to blue. */
function crd(plural: string, conversion: unknown, v1Spec: Json = {}): Json {
  const schema = (props: Json): Json => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
  });
  return {
    apiVersion: 'apiextensions.platform/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, kind: plural[0]!.toUpperCase() + plural.slice(1, -1) },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: schema({ color: { type: 'string', default: 'red' }, size: { type: 'integer' }, ...v1Spec }),
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          schema: schema({ colour: { type: 'string', default: 'blue' }, size: { type: 'integer' } }),
        },
      ],
      conversion,
    },
  };
}

/** The webhook of conversion.integration.test.ts: v2's spec.colour is v1's spec.color. */
function convert(o: Json, to: string): Json {
  const spec = { ...((o.spec as Json | undefined) ?? {}) };
  const [from, into] = to.endsWith('/v2') ? ['color', 'colour'] : ['colour', 'color'];
  if (from in spec) {
    spec[into] = spec[from];
    delete spec[from];
  }
  return { ...o, apiVersion: to, spec };
}

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const internals = (): { caches: Cacher[]; storeOf: Map<string, unknown>; installer: unknown } =>
  server.server as unknown as { caches: Cacher[]; storeOf: Map<string, unknown>; installer: unknown };

/** The watch caches of a resource's keys (one while its CRD is served). */
function cachesOf(plural: string): Cacher[] {
  const prefix = `/registry/${GROUP}/${plural}/`;
  return internals().caches.filter((c) => (c as unknown as { prefix: string }).prefix === prefix);
}

/** The store watches open under a resource's keys (the SQLite store's subscribers). */
function storeWatchesOf(plural: string): number {
  const prefix = `/registry/${GROUP}/${plural}/`;
  let n = 0;
  for (const store of new Set(internals().storeOf.values())) {
    const subs = (store as { subscribers?: Set<{ prefix: string }> }).subscribers ?? new Set();
    for (const s of subs) if (s.prefix.startsWith(prefix)) n++;
  }
  return n;
}

/** The storage a version of a resource is served by (what the handlers call). */
function served(plural: string, version: string): Getter & Lister {
  const installer = internals().installer as { scopeFor(i: RequestInfo): { storage: unknown } | undefined };
  const info = { apiGroup: GROUP, apiVersion: version, resource: plural, subresource: '' } as RequestInfo;
  return installer.scopeFor(info)!.storage as Getter & Lister;
}

const ctx = (): RequestContext => ({ namespace: 'default', now: Date.now });

/** Creates a CRD and waits until it is served, its cache ready. */
async function createServed(body: Json, plural: string): Promise<void> {
  const r = await server.request('POST', CRDS, { body });
  expect(r.status).toBe(201);
  await until(`${plural} served from a ready cache`, async () => {
    const l = await server.request('GET', `/apis/${GROUP}/v1/namespaces/default/${plural}`);
    return l.status === 200 && cachesOf(plural).length === 1 && cachesOf(plural)[0]!.isReady ? true : undefined;
  });
}

async function createObjects(plural: string, kind: string, n: number, spec: (i: number) => Json): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await server.request('POST', `/apis/${GROUP}/v1/namespaces/default/${plural}`, {
      body: { apiVersion: `${GROUP}/v1`, kind, metadata: { name: `o${String(i).padStart(3, '0')}` }, spec: spec(i) },
    });
    expect(r.status).toBe(201);
  }
}

function consistentReadsFromCache(metrics: string, resource: string): number {
  const line = metrics
    .split('\n')
    .find(
      (l) =>
        l.startsWith('apiserver_watch_cache_consistent_read_total{') &&
        l.includes(`resource="${resource}"`) &&
        l.includes('fallback="false"') &&
        l.includes('success="true"'),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

beforeAll(async () => {
  const serving = await generateSelfSignedCertKey({ host: '127.0.0.1', alternateIPs: ['127.0.0.1'] });
  hookCa = serving.certPem;
  hook = createServer({ cert: serving.certPem, key: serving.keyPem });
  hook.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const { uid, desiredAPIVersion, objects } = review.request;
      const convertedObjects = (objects as Json[]).map((o) => convert(o, desiredAPIVersion));
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: 'ConversionReview',
          response: { uid, result: { status: 'Success' }, convertedObjects },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  server = await startTestServer();
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await new Promise((r) => hook?.close(r));
});

afterEach(() => {
  expect(server.errors).toEqual([]);
});

it('serves lists, gets and watches from the cache, defaulted, without changing its frozen objects', async () => {
  await createServed(crd('widgets', { strategy: 'None' }), 'widgets');
  // Enough objects for the cache to share whole lists (and their encoding) between the lists that only read them.
  await createObjects('widgets', 'Widget', 70, (i) => (i % 2 ? { color: 'green', size: i } : { size: i }));
  const base = `/apis/${GROUP}/v1/namespaces/default/widgets`;
  const before = consistentReadsFromCache((await server.request('GET', '/metrics')).text, `widgets.${GROUP}`);
  const a = await server.request('GET', base);
  const b = await server.request('GET', base);
  // The cache answers a consistent list once it holds what the store says is current (at once, on an idle store).
  await until('a consistent list from the cache', async () => {
    await server.request('GET', base);
    const now = consistentReadsFromCache((await server.request('GET', '/metrics')).text, `widgets.${GROUP}`);
    return now > before ? true : undefined;
  });
  expect(a.status).toBe(200);
  expect(a.json.items).toHaveLength(70);
  expect(b.json.items).toEqual(a.json.items);
  expect(a.json.items[0]).toMatchObject({ apiVersion: `${GROUP}/v1`, kind: 'Widget', spec: { color: 'red' } });
  expect(a.json.items[1].spec).toEqual({ color: 'green', size: 1 });

  // What the handlers get: the cache's own frozen objects, and one array for every whole list that only reads.
  const storage = served('widgets', 'v1');
  const l1 = await storage.list(ctx(), { resourceVersion: '0', shared: true });
  const l2 = await storage.list(ctx(), { resourceVersion: '0', shared: true });
  expect(l2.items).toBe(l1.items);
  expect(Object.isFrozen(l1.items[0])).toBe(true);
  const got = await storage.get(ctx(), 'o000', { resourceVersion: '0', shared: true });
  expect(Object.isFrozen(got)).toBe(true);
  expect(got).toMatchObject({ spec: { color: 'red', size: 0 } });

  // Every view of the read path over the frozen objects: get at 0, Table, metadata-only, a watch's replay.
  const one = await server.request('GET', `${base}/o002?resourceVersion=0`);
  expect(one.json.spec).toEqual({ color: 'red', size: 2 });
  const table = await server.request('GET', `${base}?resourceVersion=0`, {
    headers: { Accept: 'application/json;as=Table;g=meta.platform;v=v1' },
  });
  expect(table.status).toBe(200);
  expect(table.json.rows).toHaveLength(70);
  const meta = await server.request('GET', `${base}?resourceVersion=0`, {
    headers: { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.platform;v=v1' },
  });
  expect(meta.status).toBe(200);
  expect(meta.json.items[0]).not.toHaveProperty('spec');
  const w = await server.request('GET', `${base}?watch=1&resourceVersion=0&timeoutSeconds=1`);
  const events = w.text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(events).toHaveLength(70);
  expect(events[0]).toMatchObject({ type: 'ADDED', object: { spec: { color: 'red', size: 0 } } });
  // Nothing changed the cache's objects: the next list is the first.
  expect((await server.request('GET', base)).json.items).toEqual(a.json.items);
}, 120_000);

it('a CRD update rebuilds the cache: new defaults apply to objects stored before, open watches end', async () => {
  const plural = 'gadgets';
  await createServed(crd(plural, { strategy: 'None' }), plural);
  await createObjects(plural, 'Gadget', 3, (i) => ({ size: i }));
  const base = `/apis/${GROUP}/v1/namespaces/default/${plural}`;
  const old = cachesOf(plural)[0]!;
  // A watch the old cache feeds: it ends when that cache stops (the client watches again).
  const watch = server.request('GET', `${base}?watch=1&resourceVersion=0`);
  await until('the watch to be fed by the cache', () => (old.watcherCount > 0 ? true : undefined));

  const cur = (await server.request('GET', `${CRDS}/${plural}.${GROUP}`)).json;
  cur.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.shape = { type: 'string', default: 'round' };
  expect((await server.request('PUT', `${CRDS}/${plural}.${GROUP}`, { body: cur })).status).toBe(200);
  const defaulted = await until('the new default on objects stored before', async () => {
    const r = await server.request('GET', base);
    return r.json.items?.every((o: ApiObject & { spec: Json }) => o.spec.shape === 'round') ? r : undefined;
  });
  expect(defaulted.json.items[2].spec).toEqual({ color: 'red', size: 2, shape: 'round' });
  expect((await server.request('GET', `${base}/o001?resourceVersion=0`)).json.spec).toEqual({
    color: 'red',
    size: 1,
    shape: 'round',
  });
  expect((await watch).status).toBe(200);
  await until('one cache and one store watch left', () =>
    cachesOf(plural).length === 1 && cachesOf(plural)[0] !== old && storeWatchesOf(plural) === 1 ? true : undefined,
  );
  expect(old.watcherCount).toBe(0);
}, 120_000);

it.each([
  ['None', 'plains', (): unknown => ({ strategy: 'None' })],
  [
    'Webhook',
    'hooks',
    (): unknown => ({
      strategy: 'Webhook',
      webhook: {
        clientConfig: { url: `${hookUrl}/convert`, caBundle: Buffer.from(hookCa).toString('base64') },
        conversionReviewVersions: ['v1'],
      },
    }),
  ],
])(
  'conversion %s: cached objects are served in both versions, defaulted per version',
  async (_s, plural, conv) => {
    await createServed(crd(plural, conv()), plural);
    const kind = plural[0]!.toUpperCase() + plural.slice(1, -1);
    await createObjects(plural, kind, 2, (i) => ({ size: i }));
    const v1 = await server.request('GET', `/apis/${GROUP}/v1/namespaces/default/${plural}`);
    const v2 = await server.request('GET', `/apis/${GROUP}/v2/namespaces/default/${plural}?resourceVersion=0`);
    expect(v1.json.items[0]).toMatchObject({ apiVersion: `${GROUP}/v1`, spec: { color: 'red', size: 0 } });
    expect(v2.json.items[0].apiVersion).toBe(`${GROUP}/v2`);
    // None keeps spec as stored, and v2's default is added; the webhook renames color, so nothing is defaulted.
    expect(v2.json.items[0].spec).toEqual(
      plural === 'plains' ? { color: 'red', colour: 'blue', size: 0 } : { colour: 'red', size: 0 },
    );
    const one = await server.request('GET', `/apis/${GROUP}/v2/namespaces/default/${plural}/o001`);
    expect(one.json).toMatchObject({ apiVersion: `${GROUP}/v2`, spec: { size: 1 } });
    const w = await server.request('GET', `/apis/${GROUP}/v2/namespaces/default/${plural}?watch=1&timeoutSeconds=1`);
    const first = JSON.parse(w.text.trim().split('\n')[0]!);
    expect(first.object.apiVersion).toBe(`${GROUP}/v2`);
    // The v1 objects are still the cache's own (conversion to v2 worked on copies).
    const again = await server.request('GET', `/apis/${GROUP}/v1/namespaces/default/${plural}`);
    expect(again.json.items).toEqual(v1.json.items);
    expect(
      Object.isFrozen((await served(plural, 'v1').list(ctx(), { resourceVersion: '0', shared: true })).items[0]),
    ).toBe(true);
  },
  120_000,
);

it('a deleted CRD stops its cache; one created again under the same name serves fresh data', async () => {
  const plural = 'gizmos';
  await createServed(crd(plural, { strategy: 'None' }), plural);
  await createObjects(plural, 'Gizmo', 2, () => ({ color: 'old' }));
  const first = cachesOf(plural)[0]!;
  expect((await server.request('DELETE', `${CRDS}/${plural}.${GROUP}`)).status).toBe(200);
  await until('the CRD gone, its cache and store watch with it', async () =>
    (await server.request('GET', `${CRDS}/${plural}.${GROUP}`)).status === 404 &&
    cachesOf(plural).length === 0 &&
    storeWatchesOf(plural) === 0
      ? true
      : undefined,
  );
  expect(first.watcherCount).toBe(0);
  // A watch that reaches the stopped cache still (a request that found the old routes) ends at once.
  const late = first.watch(`/registry/${GROUP}/${plural}/`, { recursive: true })[Symbol.asyncIterator]();
  expect((await late.next()).done).toBe(true);

  await createServed(crd(plural, { strategy: 'None' }), plural);
  expect(cachesOf(plural)[0]).not.toBe(first);
  const base = `/apis/${GROUP}/v1/namespaces/default/${plural}`;
  expect((await server.request('GET', `${base}?resourceVersion=0`)).json.items).toEqual([]);
  await createObjects(plural, 'Gizmo', 1, () => ({ color: 'new' }));
  const l = await server.request('GET', base);
  expect(l.json.items.map((o: { spec: Json }) => o.spec.color)).toEqual(['new']);
  expect(storeWatchesOf(plural)).toBe(1);
}, 120_000);
