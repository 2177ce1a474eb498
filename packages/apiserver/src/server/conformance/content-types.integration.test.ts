/**
 * Document 1, "Content negotiation", "Protobuf envelope" and "Table representation": JSON, YAML and Protobuf in and
 * out (Content-Type and Accept differing), Tables with their per-kind columns and includeObject, fallback lists,
 * and 406/415 for what is not served. Runs on both stores.
 */
import { builtinScheme, PROTOBUF_MAGIC, ProtobufCodec } from '@platform/api';

import { configMap, freshNamespace, mustCreate, openWatch, STORES, useServer } from './harness';

const PROTOBUF = 'application/vnd.platform.protobuf';
const TABLE = 'application/json;as=Table;g=meta.platform;v=v1beta1';
const KUBECTL_1_20_ACCEPT =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

const codec = new ProtobufCodec(builtinScheme());

describe.each(STORES)('content types on %s', (store) => {
  const server = useServer(store);
  let ns: string;
  let cms: string;
  beforeAll(async () => {
    ns = await freshNamespace(server(), 'ct');
    cms = `/api/v1/namespaces/${ns}/configmaps`;
    await mustCreate(server(), cms, configMap('existing', { k: 'v' }));
  });

  describe('JSON', () => {
    it('is the default, in and out', async () => {
      const r = await server().request('GET', `${cms}/existing`);
      expect([r.status, r.headers['content-type'], r.json.kind, r.json.data]).toEqual([
        200,
        'application/json',
        'ConfigMap',
        { k: 'v' },
      ]);
      const all = await server().request('GET', `${cms}/existing`, { headers: { accept: '*/*' } });
      expect(all.headers['content-type']).toBe('application/json');
    });

    it('is indented with pretty=true', async () => {
      const r = await server().request('GET', `${cms}/existing?pretty=true`);
      expect(r.text).toContain('\n  "kind": "ConfigMap"');
    });
  });

  describe('YAML', () => {
    it('is served for Accept: application/yaml and read for Content-Type: application/yaml', async () => {
      const t = server();
      const y = await t.request('GET', `${cms}/existing`, { headers: { accept: 'application/yaml' } });
      expect([y.status, y.headers['content-type']]).toEqual([200, 'application/yaml']);
      expect(y.text).toContain('kind: ConfigMap');
      expect(y.text).toContain('  k: v');
      const created = await t.request('POST', cms, {
        body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  x: "1"\n',
        headers: { 'content-type': 'application/yaml' },
      });
      expect([created.status, created.headers['content-type'], created.json.data]).toEqual([
        201,
        'application/json',
        { x: '1' },
      ]);
    });

    it('refuses a YAML body whose aliases expand it far beyond its size (400), and stays up', async () => {
      const t = server();
      const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 9; i++) {
        const name = String.fromCharCode(97 + i);
        levels.push(
          `${name}: &${name} [${Array(10)
            .fill(`*${String.fromCharCode(96 + i)}`)
            .join(', ')}]`,
        );
      }
      const bomb = await t.request('POST', cms, {
        body: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n${levels.join('\n')}\n`,
        headers: { 'content-type': 'application/yaml' },
      });
      expect([bomb.status, bomb.json.message]).toEqual([
        400,
        'the body of the request is not valid YAML: the document expands to too many values (excessive aliasing)',
      ]);
      expect((await t.request('GET', `${cms}/existing`)).status).toBe(200);
    });
  });

  describe('Protobuf', () => {
    it('answers with the k8s envelope, objects and lists', async () => {
      const t = server();
      const r = await t.request('GET', `${cms}/existing`, { headers: { accept: PROTOBUF } });
      expect([r.status, r.headers['content-type']]).toEqual([200, PROTOBUF]);
      expect(r.body.subarray(0, 4)).toEqual(PROTOBUF_MAGIC);
      expect(codec.decode(r.body)).toMatchObject({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'existing', namespace: ns },
        data: { k: 'v' },
      });
      const list = await t.request('GET', cms, { headers: { accept: PROTOBUF } });
      const decoded = codec.decode(list.body) as unknown as { kind: string; items: { metadata: { name: string } }[] };
      expect(decoded.kind).toBe('ConfigMapList');
      expect(decoded.items.map((i) => i.metadata.name)).toContain('existing');
    });

    it('reads Protobuf bodies and answers JSON (Content-Type and Accept differ), and the other way round', async () => {
      const t = server();
      const body = codec.encode(configMap('from-protobuf', { p: 'b' }));
      const created = await t.request('POST', cms, {
        body,
        headers: { 'content-type': PROTOBUF, accept: 'application/json' },
      });
      expect([created.status, created.headers['content-type'], created.json.data]).toEqual([
        201,
        'application/json',
        { p: 'b' },
      ]);
      const updated = await t.request('PUT', `${cms}/from-protobuf`, {
        body: { ...created.json, data: { p: 'c' } },
        headers: { 'content-type': 'application/json', accept: PROTOBUF },
      });
      expect([updated.status, updated.headers['content-type']]).toEqual([200, PROTOBUF]);
      expect(codec.decode(updated.body)).toMatchObject({ data: { p: 'c' } });
      const replaced = await t.request('PUT', `${cms}/from-protobuf`, {
        body: codec.encode({ ...codec.decode(updated.body), data: { p: 'd' } } as never),
        headers: { 'content-type': PROTOBUF, accept: PROTOBUF },
      });
      expect(replaced.status).toBe(200);
      expect(codec.decode(replaced.body)).toMatchObject({ data: { p: 'd' } });
    });

    it('picks Protobuf from a fallback list, and writes errors as a Protobuf Status', async () => {
      const t = server();
      const r = await t.request('GET', `${cms}/existing`, { headers: { accept: `${PROTOBUF}, application/json` } });
      expect(r.headers['content-type']).toBe(PROTOBUF);
      const missing = await t.request('GET', `${cms}/missing`, { headers: { accept: PROTOBUF } });
      expect([missing.status, missing.headers['content-type']]).toEqual([404, PROTOBUF]);
      expect(codec.decode(missing.body)).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    });

    it('rejects a body without the envelope prefix with 400', async () => {
      const raw = codec.encode(configMap('no-magic')).subarray(4);
      const r = await server().request('POST', cms, { body: raw, headers: { 'content-type': PROTOBUF } });
      expect([r.status, r.json?.kind, r.json?.reason]).toEqual([400, 'Status', 'BadRequest']);
    });
  });

  describe('Table', () => {
    const columns = async (path: string) => {
      const r = await server().request('GET', path, { headers: { accept: TABLE } });
      expect([r.status, r.json?.kind, r.json?.apiVersion]).toEqual([200, 'Table', 'meta.platform/v1beta1']);
      return (r.json.columnDefinitions as { name: string; type: string; priority?: number }[])
        .filter((c) => !c.priority)
        .map((c) => c.name);
    };

    it('has the columns Kubernetes prints per kind', async () => {
      expect(await columns(`/api/v1/namespaces/${ns}/pods`)).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age']);
      expect(await columns('/api/v1/nodes')).toEqual(['Name', 'Status', 'Roles', 'Age', 'Version']);
      expect(await columns('/api/v1/namespaces')).toEqual(['Name', 'Status', 'Age']);
      expect(await columns(cms)).toEqual(['Name', 'Data', 'Age']);
      expect(await columns(`/apis/apps/v1/namespaces/${ns}/deployments`)).toEqual([
        'Name',
        'Ready',
        'Up-to-date',
        'Available',
        'Age',
      ]);
    });

    it('has Name and Created At for a kind without columns of its own', async () => {
      const r = await server().request('GET', '/apis/rbac.authorization.platform/v1/clusterroles?limit=1', {
        headers: { accept: TABLE },
      });
      expect(r.json.columnDefinitions.map((c: { name: string; type: string }) => [c.name, c.type])).toEqual([
        ['Name', 'string'],
        ['Created At', 'date'],
      ]);
      expect(r.json.rows[0].cells).toEqual([expect.any(String), expect.stringMatching(/^\d{4}-\d\d-\d\dT/)]);
      expect(r.json.metadata.continue).toEqual(expect.any(String));
    });

    it('carries partial metadata by default, the object with includeObject=Object, nothing with None', async () => {
      const t = server();
      const rows = async (q: string) =>
        (await t.request('GET', `${cms}/existing${q}`, { headers: { accept: TABLE } })).json.rows as {
          cells: unknown[];
          object?: { kind: string; data?: unknown; metadata: { name: string } };
        }[];
      const byDefault = await rows('');
      expect(byDefault).toHaveLength(1);
      expect(byDefault[0]?.cells[0]).toBe('existing');
      expect(byDefault[0]?.object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'existing' } });
      expect(byDefault[0]?.object?.data).toBeUndefined();
      const full = await rows('?includeObject=Object');
      expect(full[0]?.object).toMatchObject({ kind: 'ConfigMap', data: { k: 'v' } });
      const none = await rows('?includeObject=None');
      expect(none[0]?.object).toBeUndefined();
      const bad = await t.request('GET', `${cms}/existing?includeObject=All`, { headers: { accept: TABLE } });
      expect([bad.status, bad.json?.kind]).toEqual([400, 'Status']);
    });

    it('streams one-row Tables from a watch (kubectl get -w), and checks includeObject first', async () => {
      const t = server();
      const w = await openWatch(t, `${cms}?watch=1&fieldSelector=metadata.name%3Dexisting&includeObject=Object`, {
        accept: TABLE,
      });
      try {
        const [e] = await w.waitFor(1);
        expect(e?.type).toBe('ADDED');
        expect(e?.object).toMatchObject({ kind: 'Table', apiVersion: 'meta.platform/v1beta1' });
        expect(e?.object.rows).toHaveLength(1);
        expect(e?.object.rows[0].object).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'existing' } });
      } finally {
        w.close();
      }
      const bad = await t.request('GET', `${cms}?watch=1&includeObject=Everything`, { headers: { accept: TABLE } });
      expect([bad.status, bad.json?.reason]).toEqual([400, 'BadRequest']);
    });

    it("answers kubectl 1.20's meta.k8s.io Table request in that spelling", async () => {
      const t = server();
      const r = await t.request('GET', cms, { headers: { accept: KUBECTL_1_20_ACCEPT } });
      expect([r.status, r.headers['content-type'], r.json.kind, r.json.apiVersion]).toEqual([
        200,
        'application/json',
        'Table',
        'meta.k8s.io/v1',
      ]);
      expect(r.json.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      const beta = await t.request('GET', `${cms}/existing`, {
        headers: { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' },
      });
      expect([beta.json.kind, beta.json.apiVersion]).toEqual(['Table', 'meta.k8s.io/v1beta1']);
      const partial = await t.request('GET', cms, {
        headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
      });
      expect([partial.json.kind, partial.json.apiVersion]).toEqual(['PartialObjectMetadataList', 'meta.k8s.io/v1']);
      const fallback = await t.request('GET', cms, { headers: { accept: `${TABLE}, application/json` } });
      expect([fallback.json.kind, fallback.json.apiVersion]).toEqual(['Table', 'meta.platform/v1beta1']);
    });

    it("answers client-go's Accept (Kubernetes' Protobuf name, then */*) in Protobuf, by that name", async () => {
      const r = await server().request('GET', cms, {
        headers: { accept: 'application/vnd.kubernetes.protobuf, */*' },
      });
      expect([r.status, r.headers['content-type']]).toEqual([200, 'application/vnd.kubernetes.protobuf']);
      expect(r.body.subarray(0, 4).toString('latin1')).toBe('k8s\0');
      expect(r.body.includes(Buffer.from('ConfigMapList'))).toBe(true);
      const json = await server().request('GET', cms, { headers: { accept: '*/*' } });
      expect([json.headers['content-type'], json.json.kind]).toEqual(['application/json', 'ConfigMapList']);
    });

    it('is 406 when nothing else is acceptable, and for writes', async () => {
      const t = server();
      const onlyK8s = await t.request('GET', cms, {
        headers: { accept: 'application/json;as=Table;v=v9;g=meta.k8s.io' },
      });
      expect([onlyK8s.status, onlyK8s.json?.reason]).toEqual([406, 'NotAcceptable']);
      const write = await t.request('POST', cms, { body: configMap('as-table'), headers: { accept: TABLE } });
      expect([write.status, write.json?.reason]).toEqual([406, 'NotAcceptable']);
      expect((await t.request('GET', `${cms}/as-table`)).status).toBe(404);
    });
  });

  describe('PartialObjectMetadata', () => {
    it('serves metadata only, for objects and lists', async () => {
      const t = server();
      const one = await t.request('GET', `${cms}/existing`, {
        headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.platform;v=v1' },
      });
      expect(one.json).toEqual({
        apiVersion: 'meta.platform/v1',
        kind: 'PartialObjectMetadata',
        metadata: expect.objectContaining({ name: 'existing', namespace: ns }),
      });
      const list = await t.request('GET', cms, {
        headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.platform;v=v1' },
      });
      expect([list.json.kind, list.json.metadata.resourceVersion]).toEqual([
        'PartialObjectMetadataList',
        expect.any(String),
      ]);
      expect(list.json.items[0]).toEqual({
        apiVersion: 'meta.platform/v1',
        kind: 'PartialObjectMetadata',
        metadata: expect.objectContaining({ name: 'existing' }),
      });
    });
  });

  describe('unsupported types', () => {
    it('answers 406 for an Accept the server has no serializer for', async () => {
      const r = await server().request('GET', cms, { headers: { accept: 'application/cbor' } });
      expect([r.status, r.json?.kind, r.json?.reason]).toEqual([406, 'Status', 'NotAcceptable']);
    });

    it('answers 415 for a Content-Type it cannot read, Protobuf patches included', async () => {
      const t = server();
      const r = await t.request('POST', cms, { body: configMap('x'), headers: { 'content-type': 'text/csv' } });
      expect([r.status, r.json?.reason]).toEqual([415, 'UnsupportedMediaType']);
      const patch = await t.request('PATCH', `${cms}/existing`, {
        body: codec.encode(configMap('existing')),
        headers: { 'content-type': PROTOBUF },
      });
      expect([patch.status, patch.json?.reason]).toEqual([415, 'UnsupportedMediaType']);
    });
  });
});
