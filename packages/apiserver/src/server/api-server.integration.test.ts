import { request as httpsRequest } from 'node:https';

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
      // Every config map: this one, and those the server keeps itself (the authentication information).
      const count = (await own.request('GET', '/api/v1/configmaps')).json.items.length as number;
      const counted = new RegExp(`apiserver_storage_objects\\{resource="configmaps"\\} ${count}\\b`);
      let metrics = '';
      for (let i = 0; i < 50 && !counted.test(metrics); i++) {
        await new Promise((r) => setTimeout(r, 100));
        metrics = (await own.request('GET', '/metrics')).text;
      }
      expect(metrics).toMatch(counted);
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
