import { request as httpsRequest } from 'node:https';

import { PROTOBUF_MAGIC } from '@platform/api';

import { startTestServer, type TestServer } from '../testing/test-server';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
}, 60_000);

afterAll(async () => {
  await t.stop();
  expect(t.errors).toEqual([]);
});

const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, data: Record<string, string> = { a: '1' }, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

describe('discovery', () => {
  it('serves /api, /api/v1, /apis', async () => {
    const api = await t.request('GET', '/api');
    expect(api.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const v1 = await t.request('GET', '/api/v1');
    const names = (v1.json.resources as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(
      expect.arrayContaining(['configmaps', 'namespaces', 'namespaces/status', 'pods', 'pods/status']),
    );
    const cmResource = (v1.json.resources as { name: string }[]).find((r) => r.name === 'configmaps');
    expect(cmResource).toEqual({
      name: 'configmaps',
      singularName: 'configmap',
      namespaced: true,
      kind: 'ConfigMap',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['cm'],
    });
    const apis = await t.request('GET', '/apis');
    expect(apis.json.kind).toBe('APIGroupList');
  });

  it('answers 404 with a Status for unknown paths and resources', async () => {
    for (const path of ['/api/v2', '/apis/nope', '/api/v1/nopes', '/apis/apps/v9/deployments']) {
      const r = await t.request('GET', path);
      expect([r.status, r.json?.kind, r.json?.reason]).toEqual([404, 'Status', 'NotFound']);
    }
    const other = await t.request('GET', '/elsewhere');
    expect([other.status, other.json?.kind]).toEqual([404, 'Status']);
  });

  it('serves the OpenAPI definitions', async () => {
    const r = await t.request('GET', '/openapi/v2');
    expect(r.json.swagger).toBe('2.0');
    expect(r.json.definitions['io.platform.api.core.v1.ConfigMap']['x-kubernetes-group-version-kind']).toEqual([
      { group: '', version: 'v1', kind: 'ConfigMap' },
    ]);
  });
});

describe('bootstrap and health', () => {
  it('creates the system namespaces', async () => {
    for (const ns of ['default', 'system', 'public', 'node-lease']) {
      expect((await t.request('GET', `/api/v1/namespaces/${ns}`)).status).toBe(200);
    }
  });

  it('lists its checks on /readyz?verbose', async () => {
    const r = await t.request('GET', '/readyz?verbose');
    expect(r.status).toBe(200);
    for (const line of [
      '[+]ping ok',
      '[+]store ok',
      '[+]poststarthook/bootstrap-controller ok',
      '[+]poststarthook/generic-apiserver-start-informers ok',
      '[+]shutdown ok',
      'readyz check passed',
    ]) {
      expect(r.text).toContain(line);
    }
  });
});

describe('verbs', () => {
  it('creates, reads, replaces, patches and deletes', async () => {
    const created = await t.request('POST', CM, { body: cm('crud') });
    expect(created.status).toBe(201);
    expect(created.json.metadata).toMatchObject({
      name: 'crud',
      namespace: 'default',
      resourceVersion: expect.any(String),
      uid: expect.any(String),
    });

    const got = await t.request('GET', `${CM}/crud`);
    expect(got.json).toEqual(created.json);

    const replaced = await t.request('PUT', `${CM}/crud`, { body: { ...got.json, data: { a: '2' } } });
    expect([replaced.status, replaced.json.data]).toEqual([200, { a: '2' }]);

    const stale = await t.request('PUT', `${CM}/crud`, { body: { ...got.json, data: { a: '3' } } });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);

    const merged = await t.request('PATCH', `${CM}/crud`, {
      body: { data: { b: '2' }, metadata: { labels: { x: 'y' } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect([merged.status, merged.json.data, merged.json.metadata.labels]).toEqual([
      200,
      { a: '2', b: '2' },
      { x: 'y' },
    ]);

    const jsonPatched = await t.request('PATCH', `${CM}/crud`, {
      body: [
        { op: 'remove', path: '/data/a' },
        { op: 'add', path: '/data/c', value: '3' },
      ],
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(jsonPatched.json.data).toEqual({ b: '2', c: '3' });

    const deleted = await t.request('DELETE', `${CM}/crud`);
    expect([deleted.status, deleted.json.metadata.name]).toEqual([200, 'crud']);
    const gone = await t.request('GET', `${CM}/crud`);
    expect(gone.json).toMatchObject({
      kind: 'Status',
      code: 404,
      reason: 'NotFound',
      message: 'configmaps "crud" not found',
    });
  });

  it('merges lists by key in strategic merge patches', async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'smp' },
      spec: {
        selector: { matchLabels: { app: 'smp' } },
        template: {
          metadata: { labels: { app: 'smp' } },
          spec: {
            containers: [
              { name: 'a', image: 'a:1' },
              { name: 'b', image: 'b:1', env: [{ name: 'X', value: '1' }] },
            ],
          },
        },
      },
    };
    expect((await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment })).status).toBe(
      201,
    );
    const r = await t.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/smp', {
      body: { spec: { template: { spec: { containers: [{ name: 'b', env: [{ name: 'Y', value: '2' }] }] } } } },
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
    });
    expect(r.status).toBe(200);
    const containers = r.json.spec.template.spec.containers as {
      name: string;
      image: string;
      env?: { name: string }[];
    }[];
    expect(containers.map((c) => c.name)).toEqual(['a', 'b']);
    expect(containers[1]?.image).toBe('b:1');
    expect(containers[1]?.env?.map((e) => e.name)).toEqual(['X', 'Y']);
  });

  it('keeps status out of main-resource writes and spec out of status writes', async () => {
    const ns = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'status-test' },
      status: { phase: 'Terminating' },
    };
    const created = await t.request('POST', '/api/v1/namespaces', { body: ns });
    expect(created.json.status?.phase).not.toBe('Terminating');
    const withStatus = await t.request('PUT', '/api/v1/namespaces/status-test/status', {
      body: {
        ...created.json,
        metadata: { ...created.json.metadata, labels: { ignored: 'yes' } },
        status: { phase: 'Active' },
      },
    });
    expect(withStatus.status).toBe(200);
    expect(withStatus.json.status).toEqual({ phase: 'Active' });
    expect(withStatus.json.metadata.labels?.ignored).toBeUndefined();
  });

  it('does everything but store on dryRun=All, and rejects other values with 422', async () => {
    const r = await t.request('POST', `${CM}?dryRun=All`, { body: cm('dry') });
    expect(r.status).toBe(201);
    expect((await t.request('GET', `${CM}/dry`)).status).toBe(404);
    const bad = await t.request('POST', `${CM}?dryRun=Yes`, { body: cm('dry') });
    expect(bad.status).toBe(422);
    expect(bad.json.message).toContain('dryRun: Unsupported value: "Yes": supported values: "All"');
  });

  it('deletes collections by label', async () => {
    for (const n of ['dc1', 'dc2', 'dc3'])
      await t.request('POST', CM, { body: cm(n, {}, { batch: n === 'dc3' ? 'other' : 'one' }) });
    const r = await t.request('DELETE', `${CM}?labelSelector=batch%3Done`);
    expect(r.status).toBe(200);
    expect((r.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort()).toEqual([
      'dc1',
      'dc2',
    ]);
    expect((await t.request('GET', `${CM}/dc3`)).status).toBe(200);
  });
});

describe('bad input', () => {
  it.each([
    ['malformed JSON', { body: '{"kind":', headers: {} }, 400],
    ['a wrong type', { body: { ...cm('x'), data: 'nope' } }, 400],
    ['another kind', { body: { ...cm('x'), kind: 'Secret' } }, 400],
    ['an unsupported content type', { body: cm('x'), headers: { 'content-type': 'text/plain' } }, 415],
    ['an invalid name', { body: cm('Not_Valid') }, 422],
  ])('answers %s with a Status', async (_what, o, code) => {
    const r = await t.request('POST', CM, o as { body: unknown; headers?: Record<string, string> });
    expect([r.status, r.json?.kind, r.json?.code]).toEqual([code, 'Status', code]);
  });

  it('answers 413 for an oversize body and 406 for an unsupported Accept', async () => {
    const big = await t.request('POST', CM, { body: cm('big', { x: 'y'.repeat(4 * 1024 * 1024) }) });
    expect([big.status, big.json?.reason]).toEqual([413, 'RequestEntityTooLarge']);
    const r = await t.request('GET', CM, { headers: { accept: 'text/html' } });
    expect([r.status, r.json?.reason]).toEqual([406, 'NotAcceptable']);
  });
});

describe('resource versions and paging', () => {
  beforeAll(async () => {
    for (let i = 0; i < 5; i++)
      await t.request('POST', '/api/v1/namespaces/public/configmaps', { body: cm(`page-${i}`) });
  });

  it('pages one snapshot with continue tokens', async () => {
    const first = await t.request('GET', '/api/v1/namespaces/public/configmaps?limit=2');
    expect(first.json.items).toHaveLength(2);
    const rv = first.json.metadata.resourceVersion;
    await t.request('POST', '/api/v1/namespaces/public/configmaps', { body: cm('page-late') });
    const names: string[] = (first.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name);
    let token = first.json.metadata.continue as string;
    while (token) {
      const page = await t.request(
        'GET',
        `/api/v1/namespaces/public/configmaps?limit=2&continue=${encodeURIComponent(token)}`,
      );
      expect(page.json.metadata.resourceVersion).toBe(rv);
      names.push(...(page.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name));
      token = page.json.metadata.continue;
    }
    expect(names).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
  });

  it.each([
    ['limit=1&continue=abc&resourceVersion=5', 'specifying resource version is not allowed when using continue'],
    ['resourceVersionMatch=Exact', 'resourceVersionMatch is forbidden unless resourceVersion is provided'],
    [
      'resourceVersion=0&resourceVersionMatch=Exact',
      'resourceVersionMatch "Exact" is forbidden for resourceVersion "0"',
    ],
    ['resourceVersion=1&resourceVersionMatch=Sometime', 'resourceVersionMatch: Unsupported value'],
    ['resourceVersion=abc', 'invalid resource version'],
    ['limit=x', 'invalid value for limit'],
  ])('answers 400 for the Invalid combination %s', async (query, message) => {
    const r = await t.request('GET', `/api/v1/namespaces/public/configmaps?${query}`);
    expect([r.status, r.json?.reason]).toEqual([400, 'BadRequest']);
    expect(r.json.message).toContain(message);
  });
});

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED after a resourceVersion', async () => {
    const list = await t.request('GET', '/api/v1/namespaces/system/configmaps');
    const rv = list.json.metadata.resourceVersion as string;
    const events: { type: string; object: { metadata: { name: string } } }[] = [];
    const url = new URL(`${t.url}/api/v1/namespaces/system/configmaps?watch=1&resourceVersion=${rv}`);
    const done = new Promise<void>((resolve, reject) => {
      const req = httpsRequest(url, { ca: t.ca }, (res) => {
        expect(res.headers['content-type']).toBe('application/json');
        let buf = '';
        res.on('data', (c: Buffer) => {
          buf += c.toString('utf8');
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            events.push(JSON.parse(buf.slice(0, nl)));
            buf = buf.slice(nl + 1);
            if (events.length === 3) {
              req.destroy();
              resolve();
            }
          }
        });
      });
      req.on('error', (e) => (events.length === 3 ? resolve() : reject(e)));
      req.end();
    });
    const c = await t.request('POST', '/api/v1/namespaces/system/configmaps', { body: cm('w') });
    await t.request('PUT', '/api/v1/namespaces/system/configmaps/w', { body: { ...c.json, data: { a: 'changed' } } });
    await t.request('DELETE', '/api/v1/namespaces/system/configmaps/w');
    await done;
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED w', 'MODIFIED w', 'DELETED w']);
  });
});

describe('content negotiation', () => {
  it('serves Protobuf with the k8s envelope, and YAML', async () => {
    const pb = await t.request('GET', '/api/v1/namespaces/default', {
      headers: { accept: 'application/vnd.platform.protobuf' },
    });
    expect(pb.headers['content-type']).toBe('application/vnd.platform.protobuf');
    expect(pb.body.subarray(0, 4)).toEqual(PROTOBUF_MAGIC);
    const y = await t.request('GET', '/api/v1/namespaces/default', { headers: { accept: 'application/yaml' } });
    expect(y.text).toContain('kind: Namespace');
  });

  it("serves Tables, and falls back to JSON for kubectl's meta.k8s.io Table request", async () => {
    const table = await t.request('GET', '/api/v1/namespaces', {
      headers: { accept: 'application/json;as=Table;g=meta.platform;v=v1beta1' },
    });
    expect(table.json.kind).toBe('Table');
    expect((table.json.columnDefinitions as { name: string }[]).map((c) => c.name)).toEqual(['Name', 'Status', 'Age']);
    const kubectl = await t.request('GET', '/api/v1/namespaces', {
      headers: {
        accept:
          'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      },
    });
    expect(kubectl.json.kind).toBe('NamespaceList');
  });
});

describe('shutdown', () => {
  it('ends open watches at once instead of waiting for them to time out', async () => {
    const own = await startTestServer();
    const ended = new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${own.url}/api/v1/namespaces/default/configmaps?watch=1`, { ca: own.ca }, (res) => {
        res.resume();
        res.on('end', () => resolve(Date.now()));
        res.on('close', () => resolve(Date.now()));
      });
      req.on('error', reject);
      req.end();
    });
    await new Promise((r) => setTimeout(r, 300));
    const start = Date.now();
    await own.stop();
    const stoppedAfter = Date.now() - start;
    expect(stoppedAfter).toBeLessThan(5000);
    expect((await ended) - start).toBeLessThan(5000);
  }, 30_000);
});

describe('storage wiring', () => {
  it('keeps overridden resources on their own store and reports storage metrics', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'overrides-'));
    const own = await startTestServer((c) => {
      c.storage.overrides = [`/configmaps#sqlite://${join(dir, 'configmaps.db')}`];
      c.storage.countMetricPollPeriodMs = 200;
      c.storage.dbMetricPollIntervalMs = 200;
    });
    try {
      expect((await own.request('POST', CM, { body: cm('elsewhere') })).status).toBe(201);
      expect((await own.request('GET', `${CM}/elsewhere`)).json.data).toEqual({ a: '1' });
      let metrics = '';
      for (let i = 0; i < 50 && !/apiserver_storage_objects\{resource="configmaps"\} 1\b/.test(metrics); i++) {
        await new Promise((r) => setTimeout(r, 100));
        metrics = (await own.request('GET', '/metrics')).text;
      }
      expect(metrics).toMatch(/apiserver_storage_objects\{resource="configmaps"\} 1\b/);
      expect(metrics).toMatch(/apiserver_storage_objects\{resource="namespaces"\} 4\b/);
      const endpoints = metrics.match(/apiserver_storage_db_total_size_in_bytes\{endpoint="[^"]+"\} \d+/g) ?? [];
      expect(endpoints).toHaveLength(2);
      expect(endpoints.some((e) => e.includes('configmaps.db'))).toBe(true);
    } finally {
      await own.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
