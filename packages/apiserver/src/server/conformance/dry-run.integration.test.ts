/**
 * Document 1, "Dry-run": with `dryRun=All`, create, update, patch (every patch type), delete and deletecollection
 * answer as if done (same status code, the object that would have been stored) and persist nothing: no change is
 * readable, no watch event is sent, no cluster IP or node port is kept. Any other value is 422 naming it. Runs on
 * both stores.
 *
 * "Nothing happened" is checked without waiting: a watch opened before the dry runs must see, as its first event,
 * a real change made after them.
 */
import { type TestServer } from '../../testing/test-server';
import { configMap, freshNamespace, mustCreate, openWatch, STORES, useServer, type WatchReader } from './harness';

describe.each(STORES)('dry-run on %s', (store) => {
  const server = useServer(store);
  let cms: string;
  let watch: WatchReader;
  beforeAll(async () => {
    const t = server();
    const ns = await freshNamespace(t, 'dry');
    cms = `/api/v1/namespaces/${ns}/configmaps`;
    await mustCreate(t, cms, configMap('existing', { a: '1' }, { keep: 'yes' }));
    await mustCreate(t, cms, configMap('other', { a: '1' }, { keep: 'yes' }));
    const rv = (await t.request('GET', cms)).json.metadata.resourceVersion as string;
    watch = await openWatch(t, `${cms}?watch=1&resourceVersion=${rv}`);
  });
  afterAll(() => watch.close());

  /** The current state of `existing`. */
  const existing = async (t: TestServer) => (await t.request('GET', `${cms}/existing`)).json;

  it('create: 201 with the object that would be stored; nothing stored', async () => {
    const t = server();
    const r = await t.request('POST', `${cms}?dryRun=All`, { body: configMap('dry-created', { d: '1' }) });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'dry-created', uid: expect.any(String), creationTimestamp: expect.any(String) },
      data: { d: '1' },
    });
    expect((await t.request('GET', `${cms}/dry-created`)).status).toBe(404);
    const generated = await t.request('POST', `${cms}?dryRun=All`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } },
    });
    expect([generated.status, generated.json.metadata.name]).toEqual([201, expect.stringMatching(/^gen-[a-z0-9]{5}$/)]);
    expect((await t.request('GET', `${cms}/${generated.json.metadata.name as string}`)).status).toBe(404);
  });

  it('create: still validates, and still conflicts with an existing name', async () => {
    const t = server();
    const invalid = await t.request('POST', `${cms}?dryRun=All`, { body: configMap('Not_Valid') });
    expect([invalid.status, invalid.json.reason]).toEqual([422, 'Invalid']);
    const exists = await t.request('POST', `${cms}?dryRun=All`, { body: configMap('existing') });
    expect([exists.status, exists.json.reason]).toEqual([409, 'AlreadyExists']);
  });

  it('update: 200 with the updated object; the stored one unchanged', async () => {
    const t = server();
    const before = await existing(t);
    const r = await t.request('PUT', `${cms}/existing?dryRun=All`, { body: { ...before, data: { a: 'dry' } } });
    expect([r.status, r.json.data]).toEqual([200, { a: 'dry' }]);
    expect(await existing(t)).toEqual(before);
  });

  it.each([
    ['application/json-patch+json', [{ op: 'replace', path: '/data/a', value: 'dry' }]],
    ['application/merge-patch+json', { data: { a: 'dry' } }],
    ['application/strategic-merge-patch+json', { data: { a: 'dry' } }],
    ['application/apply-patch+yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: existing\ndata:\n  a: dry\n'],
  ])('patch (%s): 200 with the patched object; the stored one unchanged', async (contentType, body) => {
    const t = server();
    const before = await existing(t);
    // force is for apply patches only (elsewhere it is 422).
    const force = contentType === 'application/apply-patch+yaml' ? '&force=true' : '';
    const r = await t.request('PATCH', `${cms}/existing?dryRun=All&fieldManager=dry-test${force}`, {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': contentType },
    });
    expect([r.status, r.json.data?.a]).toEqual([200, 'dry']);
    expect(await existing(t)).toEqual(before);
  });

  it('delete: 200 with the object; still there', async () => {
    const t = server();
    const before = await existing(t);
    const r = await t.request('DELETE', `${cms}/existing?dryRun=All`);
    expect([r.status, r.json.metadata?.name]).toEqual([200, 'existing']);
    expect(await existing(t)).toEqual(before);
    const viaBody = await t.request('DELETE', `${cms}/existing`, {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['All'] },
    });
    expect(viaBody.status).toBe(200);
    expect(await existing(t)).toEqual(before);
  });

  it('delete of an object with finalizers: the answer shows it terminating; nothing changes', async () => {
    const t = server();
    const created = await mustCreate(t, cms, {
      ...configMap('with-finalizer'),
      metadata: { name: 'with-finalizer', finalizers: ['example.com/hold'] },
    });
    const r = await t.request('DELETE', `${cms}/with-finalizer?dryRun=All`);
    expect(r.status).toBe(200);
    expect(r.json.metadata.deletionTimestamp).toEqual(expect.any(String));
    const after = (await t.request('GET', `${cms}/with-finalizer`)).json;
    expect(after).toEqual(created);
    await t.request('PATCH', `${cms}/with-finalizer`, {
      body: { metadata: { finalizers: null } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    await t.request('DELETE', `${cms}/with-finalizer`);
  });

  it('deletecollection: 200 with the objects; all still there', async () => {
    const t = server();
    const r = await t.request('DELETE', `${cms}?dryRun=All&labelSelector=keep%3Dyes`);
    expect(r.status).toBe(200);
    expect((r.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort()).toEqual([
      'existing',
      'other',
    ]);
    expect((await t.request('GET', `${cms}/existing`)).status).toBe(200);
    expect((await t.request('GET', `${cms}/other`)).status).toBe(200);
  });

  it('sent no watch event for any of it', async () => {
    const t = server();
    // The first events after the dry runs are the real create and delete of with-finalizer, then this marker.
    await mustCreate(t, cms, configMap('marker'));
    await watch.waitUntil((e) => e.object?.metadata?.name === 'marker');
    const names = watch.events.map((e) => `${e.type} ${e.object.metadata.name as string}`);
    expect(names.filter((n) => !n.endsWith(' with-finalizer'))).toEqual(['ADDED marker']);
  });

  it('keeps no node port or cluster IP, and releases none', async () => {
    const t = server();
    const ns = await freshNamespace(t, 'dry-svc');
    const svcs = `/api/v1/namespaces/${ns}/services`;
    const svc = (name: string, nodePort: number) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { type: 'NodePort', selector: { app: name }, ports: [{ port: 80, nodePort }] },
    });
    const dry = await t.request('POST', `${svcs}?dryRun=All`, { body: svc('dry', 30555) });
    // (The cluster IP of a dry run may be anything, Document 1 says: it is not checked.)
    expect([dry.status, dry.json.spec.ports[0].nodePort]).toEqual([201, 30555]);
    // The port was not taken: a real service gets it.
    await mustCreate(t, svcs, svc('real', 30555));
    // A dry-run delete does not free it.
    expect((await t.request('DELETE', `${svcs}/real?dryRun=All`)).status).toBe(200);
    const clash = await t.request('POST', svcs, { body: svc('clash', 30555) });
    expect([clash.status, clash.json.reason]).toEqual([422, 'Invalid']);
    expect(clash.json.message).toContain('30555');
  });

  describe('values other than All', () => {
    it.each([
      ['POST', '', configMap('x')],
      ['PUT', '/existing', undefined],
      ['PATCH', '/existing', { data: { a: 'x' } }],
      ['DELETE', '/existing', undefined],
      ['DELETE', '', undefined],
    ])('%s%s: 422 naming the value', async (method, suffix, body) => {
      const t = server();
      const payload = method === 'PUT' ? await existing(t) : body;
      const r = await t.request(method, `${cms}${suffix}?dryRun=Foo`, {
        ...(payload === undefined ? {} : { body: payload }),
        headers: method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {},
      });
      expect([r.status, r.json?.kind, r.json?.reason]).toEqual([422, 'Status', 'Invalid']);
      expect(r.json.message).toContain('Unsupported value: "Foo": supported values: "All"');
      expect(r.json.details.causes).toEqual([expect.objectContaining({ field: 'dryRun' })]);
    });

    it('in DeleteOptions: 422 naming the value', async () => {
      const r = await server().request('DELETE', `${cms}/existing`, {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['Foo'] },
      });
      expect([r.status, r.json?.reason]).toEqual([422, 'Invalid']);
      expect(r.json.message).toContain('"Foo"');
      expect((await server().request('GET', `${cms}/existing`)).status).toBe(200);
    });
  });
});
