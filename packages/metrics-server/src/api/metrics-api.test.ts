/**
 * The metrics API on a real HTTP server (plain HTTP: authentication is the front handler's, tested with the
 * daemon), over a real storage fed two scrape rounds.
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

import { type Node, type Pod } from '@platform/api';

import { MetricsStorage } from '../storage/storage';
import { accessAttributes, metricsApiHandler, parseMetricsPath } from './metrics-api';

const NOW = Date.parse('2026-01-02T03:04:05Z');

const node = (name: string, labels: Record<string, string>): Node => ({ metadata: { name, labels } }) as Node;
const pod = (namespace: string, name: string, labels: Record<string, string>): Pod =>
  ({ metadata: { namespace, name, labels } }) as Pod;

const nodes = [node('n1', { zone: 'a' }), node('n2', { zone: 'b' }), node('n3', { zone: 'a' })];
const pods = [pod('default', 'web', { app: 'web' }), pod('default', 'db', { app: 'db' }), pod('other', 'job', {})];

let server: Server;
let base: string;

beforeAll(async () => {
  const storage = new MetricsStorage();
  for (const [t, cpu] of [
    [NOW - 15_000, 10],
    [NOW, 13],
  ] as const) {
    const batch = {
      node: { timestamp: t, cpuSeconds: cpu, memoryBytes: 2 * 2 ** 30 },
      pods: new Map([
        [
          'default/web',
          {
            namespace: 'default',
            name: 'web',
            containers: new Map([
              ['main', { timestamp: t, cpuSeconds: cpu / 10, memoryBytes: 3 * 2 ** 20 }],
              ['side', { timestamp: t, cpuSeconds: cpu / 100, memoryBytes: 2 ** 20 }],
            ]),
          },
        ],
        [
          'other/job',
          {
            namespace: 'other',
            name: 'job',
            containers: new Map([['c', { timestamp: t, cpuSeconds: cpu, memoryBytes: 1000 }]]),
          },
        ],
      ]),
    };
    // n3 has no metrics: its agent never answered.
    storage.store(
      new Map([
        ['n1', batch],
        ['n2', { ...batch, pods: new Map() }],
      ]),
    );
  }
  const handler = metricsApiHandler({
    storage,
    nodes: () => nodes,
    node: (name) => nodes.find((n) => n.metadata?.name === name),
    pods: (ns) => pods.filter((p) => !ns || p.metadata?.namespace === ns),
    pod: (ns, name) => pods.find((p) => p.metadata?.namespace === ns && p.metadata?.name === name),
    now: () => NOW + 500,
  });
  server = createServer((req, res) =>
    handler(req, res, () => {
      res.writeHead(418).end('next');
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

/** A decoded answer, read freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded test responses are read freely
type Json = any;

function get(path: string, o: { accept?: string; method?: string } = {}) {
  return new Promise<{ code: number; text: string; json: Json }>((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method: o.method ?? 'GET', headers: o.accept ? { accept: o.accept } : {}, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let json: Json = {};
          try {
            json = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ code: res.statusCode ?? 0, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('discovery', () => {
  it('serves the group list, the group and the resource list', async () => {
    expect((await get('/apis')).json).toEqual({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        {
          name: 'metrics.platform',
          versions: [{ groupVersion: 'metrics.platform/v1beta1', version: 'v1beta1' }],
          preferredVersion: { groupVersion: 'metrics.platform/v1beta1', version: 'v1beta1' },
        },
      ],
    });
    expect((await get('/apis/metrics.platform')).json).toMatchObject({ kind: 'APIGroup', name: 'metrics.platform' });
    expect((await get('/apis/metrics.platform/v1beta1')).json).toEqual({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'metrics.platform/v1beta1',
      resources: [
        { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
        { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
      ],
    });
  });

  it('answers the metrics.k8s.io spelling in that spelling, and passes other paths on', async () => {
    expect((await get('/apis/metrics.k8s.io/v1beta1')).json).toMatchObject({ groupVersion: 'metrics.k8s.io/v1beta1' });
    expect((await get('/apis/metrics.k8s.io/v1beta1/nodes/n1')).json).toMatchObject({
      kind: 'NodeMetrics',
      apiVersion: 'metrics.k8s.io/v1beta1',
    });
    expect((await get('/healthz')).code).toBe(418);
    expect((await get('/apis/other.example/v1')).code).toBe(418);
  });
});

describe('NodeMetrics', () => {
  it('lists the nodes that have metrics, with usage, window and the node labels', async () => {
    const r = await get('/apis/metrics.platform/v1beta1/nodes');
    expect(r.code).toBe(200);
    expect(r.json).toEqual({
      kind: 'NodeMetricsList',
      apiVersion: 'metrics.platform/v1beta1',
      metadata: {},
      items: [
        {
          metadata: { name: 'n1', creationTimestamp: '2026-01-02T03:04:05Z', labels: { zone: 'a' } },
          timestamp: '2026-01-02T03:04:05Z',
          window: '15s',
          usage: { cpu: '200m', memory: '2Gi' },
        },
        {
          metadata: { name: 'n2', creationTimestamp: '2026-01-02T03:04:05Z', labels: { zone: 'b' } },
          timestamp: '2026-01-02T03:04:05Z',
          window: '15s',
          usage: { cpu: '200m', memory: '2Gi' },
        },
      ],
    });
  });

  it('selects by labels and by name', async () => {
    const names = async (q: string) =>
      ((await get(`/apis/metrics.platform/v1beta1/nodes?${q}`)).json.items as { metadata: { name: string } }[]).map(
        (i) => i.metadata.name,
      );
    expect(await names('labelSelector=zone%3Da')).toEqual(['n1']);
    expect(await names('labelSelector=zone%20notin%20(a)')).toEqual(['n2']);
    expect(await names('fieldSelector=metadata.name%3Dn2')).toEqual(['n2']);
  });

  it('gets one node, and a node without metrics or unknown is NotFound', async () => {
    expect((await get('/apis/metrics.platform/v1beta1/nodes/n2')).json).toMatchObject({
      kind: 'NodeMetrics',
      apiVersion: 'metrics.platform/v1beta1',
      metadata: { name: 'n2' },
    });
    for (const name of ['n3', 'nope']) {
      const r = await get(`/apis/metrics.platform/v1beta1/nodes/${name}`);
      expect(r.code).toBe(404);
      expect(r.json).toMatchObject({
        kind: 'Status',
        reason: 'NotFound',
        message: `nodemetrics.metrics.platform "${name}" not found`,
      });
    }
  });

  it('serves a Table in the group and version asked for', async () => {
    const r = await get('/apis/metrics.platform/v1beta1/nodes', {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    expect(r.json).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      columnDefinitions: [{ name: 'Name' }, { name: 'CPU' }, { name: 'Memory' }, { name: 'Window' }],
      rows: [{ cells: ['n1', '200m', '2Gi', '15s'] }, { cells: ['n2', '200m', '2Gi', '15s'] }],
    });
  });
});

describe('PodMetrics', () => {
  it('lists the pods of a namespace that have metrics, with each container', async () => {
    const r = await get('/apis/metrics.platform/v1beta1/namespaces/default/pods');
    expect(r.json).toEqual({
      kind: 'PodMetricsList',
      apiVersion: 'metrics.platform/v1beta1',
      metadata: {},
      items: [
        {
          metadata: {
            name: 'web',
            namespace: 'default',
            creationTimestamp: '2026-01-02T03:04:05Z',
            labels: { app: 'web' },
          },
          timestamp: '2026-01-02T03:04:05Z',
          window: '15s',
          containers: [
            { name: 'main', usage: { cpu: '20m', memory: '3Mi' } },
            { name: 'side', usage: { cpu: '2m', memory: '1Mi' } },
          ],
        },
      ],
    });
  });

  it('lists every namespace, selects by labels, gets one, and says NotFound as metrics-server', async () => {
    const all = (await get('/apis/metrics.platform/v1beta1/pods')).json.items as { metadata: { name: string } }[];
    expect(all.map((i) => i.metadata.name)).toEqual(['web', 'job']);
    const sel = await get('/apis/metrics.platform/v1beta1/pods?labelSelector=app%3Ddb');
    expect(sel.json.items).toEqual([]);
    expect((await get('/apis/metrics.platform/v1beta1/namespaces/other/pods/job')).json).toMatchObject({
      kind: 'PodMetrics',
      containers: [{ name: 'c', usage: { cpu: '200m' } }],
    });
    const missing = await get('/apis/metrics.platform/v1beta1/namespaces/default/pods/db');
    expect(missing.code).toBe(404);
    expect(missing.json.message).toBe('podmetrics.metrics.platform "default/db" not found');
  });

  it('sums the containers in the Table', async () => {
    const r = await get('/apis/metrics.platform/v1beta1/namespaces/default/pods', {
      accept: 'application/json;as=Table;v=v1beta1;g=meta.platform',
    });
    expect(r.json).toMatchObject({
      apiVersion: 'meta.platform/v1beta1',
      rows: [{ cells: ['web', '22m', '4Mi', '15s'] }],
    });
  });
});

describe('errors', () => {
  it.each([
    ['a bad label selector', '/apis/metrics.platform/v1beta1/nodes?labelSelector=%3D%3D', 400, 'BadRequest'],
    ['an unsupported field', '/apis/metrics.platform/v1beta1/nodes?fieldSelector=spec.x%3D1', 400, 'BadRequest'],
    ['a watch', '/apis/metrics.platform/v1beta1/nodes?watch=true', 405, 'MethodNotAllowed'],
  ])('answers %s with a Status', async (_what, path, code, reason) => {
    const r = await get(path);
    expect(r.code).toBe(code);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', code, reason });
  });

  it('refuses writes and media types it does not serve', async () => {
    const del = await get('/apis/metrics.platform/v1beta1/nodes/n1', { method: 'DELETE' });
    expect(del.json).toMatchObject({ code: 405, reason: 'MethodNotAllowed' });
    const proto = await get('/apis/metrics.platform/v1beta1/nodes', { accept: 'application/vnd.platform.protobuf' });
    expect(proto.json).toMatchObject({ code: 406, reason: 'NotAcceptable' });
  });
});

describe('request attributes', () => {
  const req = (method: string, url: string) => ({ method, url }) as IncomingMessage;
  it.each([
    ['/apis/metrics.platform/v1beta1/nodes', 'GET', { verb: 'list', resource: 'nodes' }],
    ['/apis/metrics.platform/v1beta1/nodes/n1', 'GET', { verb: 'get', resource: 'nodes', name: 'n1' }],
    ['/apis/metrics.platform/v1beta1/pods', 'GET', { verb: 'list', resource: 'pods' }],
    [
      '/apis/metrics.platform/v1beta1/namespaces/ns/pods/p',
      'GET',
      { verb: 'get', resource: 'pods', namespace: 'ns', name: 'p' },
    ],
    ['/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods', 'GET', { verb: 'list', resource: 'pods', namespace: 'ns' }],
    ['/apis/metrics.platform/v1beta1/nodes/n1', 'DELETE', { verb: 'delete', resource: 'nodes', name: 'n1' }],
  ])('%s (%s) is a resource request', (path, method, attrs) => {
    expect(accessAttributes(req(method, path), path)).toEqual({
      resourceAttributes: { group: 'metrics.platform', version: 'v1beta1', ...attrs },
    });
  });
  it('names other paths as non-resource requests', () => {
    expect(accessAttributes(req('GET', '/apis/metrics.platform/v1beta1'), '/apis/metrics.platform/v1beta1')).toEqual({
      nonResourceAttributes: { path: '/apis/metrics.platform/v1beta1', verb: 'get' },
    });
    expect(parseMetricsPath('/apis/metrics.platform/v1beta1/namespaces/ns/pods/p/extra')).toBeUndefined();
    expect(parseMetricsPath('/apis/metrics.platform/v1/nodes')).toBeUndefined();
  });
});
