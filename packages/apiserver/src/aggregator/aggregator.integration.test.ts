/**
 * The aggregation layer end to end: an in-process API server with aggregator routing and a proxy client
 * certificate, and a small extension API server on 127.0.0.1 (TLS with its own CA, client certificates required)
 * reached through a Service whose Endpoints point at it. Autoregistration, the availability controller, proxying
 * (plain, watch, WebSocket), merged discovery and OpenAPI, kubectl through the aggregator, an aggregated
 * `metrics.platform` answering as `metrics.k8s.io` (what `kubectl top` asks for), and an outage.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, constants } from 'node:http2';
import https from 'node:https';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type TLSSocket } from 'node:tls';

import { generateCertificateAuthority, issueCertificate, type PemPair } from '@platform/common';
import { WebSocket, WebSocketServer } from 'ws';

import { startTestServer, type TestServer } from '../testing/test-server';

const TOKEN = 'alice-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const GV = '/apis/wardle.example/v1alpha1';
const METRICS = '/apis/metrics.platform/v1beta1';
const KUBECTL = resolve(__dirname, '../../../../.cache/kubectl/root/usr/bin/kubectl');

/** What the extension server saw of one request. */
interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  clientCN: string | undefined;
}

/** The test extension server: one group version with one resource, `flunders`. */
class Extension {
  readonly seen: Seen[] = [];
  /** The `/openapi/v2` requests, kept apart (tests clear `seen`; the aggregator fetches the document at any time). */
  readonly openApiFetches: Seen[] = [];
  /** Watches of flunders whose request closed (the client, or the proxy for it, went away). */
  closedWatches = 0;
  /** While false, discovery answers 500 (the server is "down" for the availability controller). */
  healthy = true;
  server!: https.Server;
  port = 0;

  constructor(
    private readonly serving: PemPair,
    private readonly clientCA: string,
  ) {}

  async start(): Promise<void> {
    this.server = https.createServer(
      {
        cert: this.serving.certPem,
        key: this.serving.keyPem,
        ca: this.clientCA,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => this.handle(req, res),
    );
    const wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req: IncomingMessage, socket, head) => {
      this.note(req);
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.send(JSON.stringify({ type: 'ADDED', object: flunder('over-websocket') }));
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private note(req: IncomingMessage): void {
    const cert = (req.socket as TLSSocket).getPeerCertificate();
    const seen = { path: req.url ?? '', headers: req.headers, clientCN: cert?.subject?.CN as string | undefined };
    this.seen.push(seen);
    if (seen.path === '/openapi/v2') this.openApiFetches.push(seen);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.note(req);
    const url = new URL(req.url ?? '/', 'https://x');
    const json = (code: number, body: unknown): void => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === GV) {
      if (!this.healthy) return json(500, { kind: 'Status', status: 'Failure', code: 500 });
      return json(200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: 'wardle.example/v1alpha1',
        resources: [
          {
            name: 'flunders',
            singularName: 'flunder',
            namespaced: true,
            kind: 'Flunder',
            verbs: ['get', 'list', 'watch'],
          },
        ],
      });
    }
    if (url.pathname === METRICS) {
      return json(200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: 'metrics.platform/v1beta1',
        resources: [
          { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
          { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
        ],
      });
    }
    if (url.pathname === `${METRICS}/nodes`) {
      return json(200, {
        kind: 'NodeMetricsList',
        apiVersion: 'metrics.platform/v1beta1',
        metadata: {},
        items: [
          {
            metadata: { name: 'n1', creationTimestamp: new Date().toISOString() },
            timestamp: new Date().toISOString(),
            window: '30s',
            usage: { cpu: '250m', memory: '512Mi' },
          },
        ],
      });
    }
    if (url.pathname === `${METRICS}/nodes/absent`) {
      return json(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 404,
        reason: 'NotFound',
        details: { name: 'absent', group: 'metrics.platform', kind: 'nodes' },
      });
    }
    if (url.pathname === '/openapi/v2') {
      return json(200, {
        swagger: '2.0',
        info: { title: 'wardle', version: 'v0' },
        paths: {},
        definitions: {
          'example.wardle.v1alpha1.Flunder': { type: 'object', description: 'A flunder.', properties: {} },
        },
      });
    }
    if (url.pathname === `${GV}/namespaces/default/flunders`) {
      if (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: flunder('watched') })}\n`);
        res.on('close', () => this.closedWatches++);
        return; // stays open until the client leaves
      }
      if ((req.headers.accept ?? '').includes('as=Table')) {
        return json(200, {
          kind: 'Table',
          apiVersion: 'meta.k8s.io/v1',
          metadata: {},
          columnDefinitions: [{ name: 'Name', type: 'string', format: 'name', description: 'Name' }],
          rows: [
            {
              cells: ['flunder-1'],
              object: {
                kind: 'PartialObjectMetadata',
                apiVersion: 'meta.k8s.io/v1',
                metadata: { name: 'flunder-1', namespace: 'default' },
              },
            },
          ],
        });
      }
      return json(200, {
        kind: 'FlunderList',
        apiVersion: 'wardle.example/v1alpha1',
        metadata: {},
        items: [flunder('flunder-1')],
      });
    }
    json(404, { kind: 'Status', status: 'Failure', code: 404, reason: 'NotFound' });
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

function flunder(name: string): Record<string, unknown> {
  return { kind: 'Flunder', apiVersion: 'wardle.example/v1alpha1', metadata: { name, namespace: 'default' } };
}

/** Polls `probe` until it returns a value, for up to 60 s. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  let last: unknown;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

jest.setTimeout(150_000);

describe('the aggregation layer', () => {
  let t: TestServer;
  let ext: Extension;
  let servingCA: PemPair;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'aggregator-test-'));
    const proxyCA = await generateCertificateAuthority('front-proxy-ca');
    const proxyClient = await issueCertificate(proxyCA, { commonName: 'front-proxy-client', usage: 'client' });
    servingCA = await generateCertificateAuthority('wardle-ca');
    const serving = await issueCertificate(servingCA, {
      commonName: 'wardle.default.svc',
      usage: 'server',
      dns: ['wardle.default.svc'],
      ips: ['127.0.0.1'],
    });
    ext = new Extension(serving, proxyCA.certPem);
    await ext.start();
    t = await startTestServer({
      readyzHeaders: AUTH,
      configure: (c) => {
        c.security = {
          authenticator: {
            authenticate: (req) =>
              Promise.resolve(
                req.headers.authorization === `Bearer ${TOKEN}`
                  ? {
                      user: {
                        name: 'alice',
                        groups: ['wardle-admins', 'system:authenticated'],
                        extra: { 'scopes.example/x': ['read', 'write'] },
                      },
                    }
                  : undefined,
              ),
          },
        };
        c.aggregator = {
          enableAggregatorRouting: true,
          proxyClientCert: { cert: proxyClient.certPem, key: proxyClient.keyPem },
          availabilityResyncMs: 1000,
          // A busy machine can be slow to answer; the outage below is a 500, not a timeout.
          probeTimeoutMs: 20_000,
        };
      },
    });
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
    await ext?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    t.request('GET', path, { headers: { ...AUTH, ...headers } });
  /** Runs kubectl as alice against the test server (without blocking this process, where the server runs). */
  const kubectlRun = (args: string[], cache = 'cache') => {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(join(dir, 'ca.crt'), t.ca);
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: t.url, 'certificate-authority': join(dir, 'ca.crt') } }],
        users: [{ name: 'u', user: { token: TOKEN } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
        'current-context': 'x',
      }),
    );
    return new Promise<{ code: number; stdout: string; stderr: string }>((ok) =>
      execFile(
        KUBECTL,
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, cache), ...args],
        { timeout: 60_000 },
        (err, stdout, stderr) => ok({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  };
  const condition = async (name: string) => {
    const r = await get(`/apis/apiregistration.platform/v1/apiservices/${name}`);
    return (r.json?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Available') as
      { status: string; reason: string; message: string } | undefined;
  };

  /** An APIService of the extension server (service `default/wardle`) for a group version. */
  const registerAPIService = (group: string, version: string, groupPriorityMinimum: number, versionPriority: number) =>
    t.request('POST', '/apis/apiregistration.platform/v1/apiservices', {
      headers: AUTH,
      body: {
        apiVersion: 'apiregistration.platform/v1',
        kind: 'APIService',
        metadata: { name: `${version}.${group}` },
        spec: {
          service: { namespace: 'default', name: 'wardle' },
          group,
          version,
          caBundle: Buffer.from(servingCA.certPem).toString('base64'),
          groupPriorityMinimum,
          versionPriority,
        },
      },
    });

  const waitAvailable = () =>
    eventually('the APIService to be available', async () =>
      (await condition('v1alpha1.wardle.example'))?.status === 'True' ? true : undefined,
    );

  it('keeps a local APIService for every built-in group version, with its readiness checks', async () => {
    const ready = await get('/readyz?verbose');
    for (const check of [
      'autoregister-completion',
      'poststarthook/start-aggregator-informers',
      'poststarthook/apiservice-registration-controller',
      'poststarthook/apiservice-status-available-controller',
      'poststarthook/apiserver-autoregistration',
      'poststarthook/apiservice-openapi-controller',
    ])
      expect(ready.text).toContain(`[+]${check} ok`);
    expect((await get('/livez?verbose')).text).toContain('[+]autoregister-completion ok');
    const apps = await get('/apis/apiregistration.platform/v1/apiservices/v1.apps');
    expect(apps.json).toMatchObject({
      metadata: { labels: { 'kube-aggregator.platform/automanaged': 'onstart' } },
      spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 },
    });
    expect(await condition('v1.apps')).toMatchObject({ status: 'True', reason: 'Local' });
    expect((await get('/apis/apiregistration.platform/v1/apiservices/v1.')).json.spec).toMatchObject({ version: 'v1' });
    // Left alone once registered: the core group's empty `group` once made every pass rewrite `v1.` (300 writes/s).
    const core = (await get('/apis/apiregistration.platform/v1/apiservices/v1.')).json.metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 3000));
    expect((await get('/apis/apiregistration.platform/v1/apiservices/v1.')).json.metadata.resourceVersion).toBe(core);
    // Deleted, it comes back.
    expect(
      (await t.request('DELETE', '/apis/apiregistration.platform/v1/apiservices/v1.apps', { headers: AUTH })).status,
    ).toBe(200);
    await eventually('v1.apps to be registered again', async () =>
      (await get('/apis/apiregistration.platform/v1/apiservices/v1.apps')).status === 200 ? true : undefined,
    );
  });

  it('registers the group versions of custom resources as local APIServices', async () => {
    if ((await get('/apis/apiextensions.platform/v1')).status !== 200) return; // custom resources not served
    const crd = await t.request('POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', {
      headers: AUTH,
      body: {
        apiVersion: 'apiextensions.platform/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.stable.example' },
        spec: {
          group: 'stable.example',
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      },
    });
    expect(crd.status).toBe(201);
    const registered = await eventually('the APIService of the custom resources', async () => {
      const r = await get('/apis/apiregistration.platform/v1/apiservices/v1.stable.example');
      return r.status === 200 ? r.json : undefined;
    });
    expect(registered).toMatchObject({
      metadata: { labels: { 'kube-aggregator.platform/automanaged': 'true' } },
      spec: { group: 'stable.example', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 },
      status: { conditions: [{ type: 'Available', status: 'True', reason: 'Local' }] },
    });
  });

  it('validates APIServices with 1.21 messages and prints them as kubectl does', async () => {
    const bad = await t.request('POST', '/apis/apiregistration.platform/v1/apiservices', {
      headers: AUTH,
      body: {
        apiVersion: 'apiregistration.platform/v1',
        kind: 'APIService',
        metadata: { name: 'v1.wrong' },
        spec: {
          group: 'wardle.example',
          version: 'v1',
          insecureSkipTLSVerify: true,
          groupPriorityMinimum: 30000,
          versionPriority: 0,
        },
      },
    });
    expect(bad.status).toBe(422);
    const messages = (bad.json.details.causes as { field: string; message: string }[]).map(
      (c) => `${c.field}: ${c.message}`,
    );
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining(
          'metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: "v1.wardle.example"',
        ),
        expect.stringContaining(
          'spec.groupPriorityMinimum: Invalid value: 30000: must be positive and less than 20000',
        ),
        expect.stringContaining('spec.versionPriority: Invalid value: 0: must be positive and less than 1000'),
        expect.stringContaining(
          'spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify',
        ),
      ]),
    );
    const table = await get('/apis/apiregistration.platform/v1/apiservices/v1.apps', {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.json.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Service',
      'Available',
      'Age',
    ]);
    expect(table.json.rows[0].cells.slice(0, 3)).toEqual(['v1.apps', 'Local', 'True']);
  });

  it('proxies a remote APIService as the requesting user, and merges its discovery and OpenAPI', async () => {
    const svc = await t.request('POST', '/api/v1/namespaces/default/services', {
      headers: AUTH,
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'wardle' },
        spec: { ports: [{ name: 'https', port: 443, targetPort: ext.port }] },
      },
    });
    expect(svc.status).toBe(201);
    const eps = await t.request('POST', '/api/v1/namespaces/default/endpoints', {
      headers: AUTH,
      body: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'wardle' },
        subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: ext.port }] }],
      },
    });
    expect(eps.status).toBe(201);
    const created = await registerAPIService('wardle.example', 'v1alpha1', 1000, 15);
    expect(created.status).toBe(201);
    expect(created.json.spec.service.port).toBe(443);
    await eventually('the APIService to be available', async () =>
      (await condition('v1alpha1.wardle.example'))?.reason === 'Passed' ? true : undefined,
    );
    expect(await condition('v1alpha1.wardle.example')).toMatchObject({ status: 'True', message: 'all checks passed' });

    const groups = (await get('/apis')).json.groups as { name: string }[];
    const names = groups.map((g) => g.name);
    expect(names).toContain('wardle.example');
    // Group priority order: apiregistration (18000) first, apps (17800) next, the extension (1000) after the built-ins.
    expect(names.slice(0, 2)).toEqual(['apiregistration.platform', 'apps']);
    expect(names.indexOf('wardle.example')).toBeGreaterThan(names.indexOf('discovery.platform'));
    expect((await get('/apis/wardle.example')).json).toMatchObject({
      kind: 'APIGroup',
      preferredVersion: { groupVersion: 'wardle.example/v1alpha1' },
    });
    expect((await get(GV)).json).toMatchObject({ kind: 'APIResourceList', groupVersion: 'wardle.example/v1alpha1' });

    ext.seen.length = 0;
    const list = await get(`${GV}/namespaces/default/flunders`);
    expect(list.status).toBe(200);
    expect(list.json.items[0].metadata.name).toBe('flunder-1');
    const seen = ext.seen.find((s) => s.path.startsWith(`${GV}/namespaces/default/flunders`));
    expect(seen?.clientCN).toBe('front-proxy-client');
    expect(seen?.headers['x-remote-user']).toBe('alice');
    expect(seen?.headers['x-remote-group']).toBe('wardle-admins, system:authenticated');
    expect(seen?.headers[`x-remote-extra-${encodeURIComponent('scopes.example/x')}`.toLowerCase()]).toBe('read, write');
    expect(seen?.headers.authorization).toBeUndefined();

    const doc = await eventually('the merged OpenAPI document', async () => {
      const r = await get('/openapi/v2');
      return r.json?.definitions?.['example.wardle.v1alpha1.Flunder'] ? r.json : undefined;
    });
    expect(doc.definitions['io.platform.api.core.v1.Pod'] ?? Object.keys(doc.definitions).length > 100).toBeTruthy();
    // The document was fetched as 1.21's aggregator does: front-proxy certificate, user `system:aggregator`.
    const fetched = ext.openApiFetches[0];
    expect(fetched?.clientCN).toBe('front-proxy-client');
    expect(fetched?.headers['x-remote-user']).toBe('system:aggregator');
    const pb = await get('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
    expect(pb.status).toBe(200);
    expect(pb.body.includes(Buffer.from('example.wardle.v1alpha1.Flunder'))).toBe(true);
  });

  it('proxies watches and WebSocket upgrades', async () => {
    await waitAvailable();
    const first = await new Promise<string>((resolveLine, reject) => {
      const req = https.get(`${t.url}${GV}/namespaces/default/flunders?watch=1`, { ca: t.ca, headers: AUTH }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`the watch answered ${res.statusCode ?? 0}`));
        let buf = '';
        res.on('data', (c: Buffer) => {
          buf += c.toString('utf8');
          const nl = buf.indexOf('\n');
          if (nl >= 0) {
            resolveLine(buf.slice(0, nl));
            req.destroy();
          }
        });
      });
      req.on('error', reject);
    });
    expect(JSON.parse(first)).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'watched' } } });

    const ws = new WebSocket(`${t.url.replace('https', 'wss')}${GV}/namespaces/default/flunders?watch=1`, {
      ca: t.ca,
      headers: AUTH,
    });
    const message = await new Promise<string>((ok, fail) => {
      ws.on('message', (d: Buffer) => ok(d.toString('utf8')));
      ws.on('error', fail);
    });
    ws.close();
    expect(JSON.parse(message)).toMatchObject({ object: { metadata: { name: 'over-websocket' } } });
    const upgraded = ext.seen.filter((s) => s.headers.upgrade === 'websocket').pop();
    expect(upgraded?.headers['x-remote-user']).toBe('alice');
  });

  it('ends the upstream watch when an HTTP/2 client resets its stream', async () => {
    await waitAvailable();
    const closedBefore = ext.closedWatches;
    const session = connect(t.url, { ca: t.ca });
    try {
      const stream = session.request({ ':path': `${GV}/namespaces/default/flunders?watch=1`, ...AUTH });
      const first = await new Promise<string>((ok, fail) => {
        stream.on('data', (c: Buffer) => ok(c.toString('utf8')));
        stream.on('error', fail);
      });
      expect(first).toContain('watched');
      stream.close(constants.NGHTTP2_CANCEL);
      await eventually('the upstream watch to close', async () =>
        ext.closedWatches > closedBefore ? true : undefined,
      );
    } finally {
      session.close();
    }
  });

  it('works for kubectl get through the aggregator', async () => {
    await waitAvailable();
    if (!existsSync(KUBECTL)) {
      console.warn(`kubectl not found at ${KUBECTL}: the kubectl check is skipped`);
      return;
    }
    const run = kubectlRun;
    const r = await run(['get', 'flunders']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/NAME\s*\nflunder-1/);
    const apiservices = await run(['get', 'apiservices', 'v1alpha1.wardle.example']);
    expect(apiservices.stdout).toMatch(
      /NAME\s+SERVICE\s+AVAILABLE\s+AGE\nv1alpha1\.wardle\.example\s+default\/wardle\s+True\s+/,
    );
  });

  it('answers an aggregated metrics.platform as metrics.k8s.io (kubectl top), in the .platform spelling upstream', async () => {
    await waitAvailable();
    expect((await registerAPIService('metrics.platform', 'v1beta1', 100, 100)).status).toBe(201);
    await eventually('the metrics APIService to be available', async () =>
      (await condition('v1beta1.metrics.platform'))?.status === 'True' ? true : undefined,
    );

    // Discovery: the Kubernetes name directly before the .platform group, and its own documents.
    const names = ((await get('/apis')).json.groups as { name: string }[]).map((g) => g.name);
    expect(names).toContain('metrics.platform');
    expect(names.filter((n) => n.endsWith('.k8s.io'))).toEqual(['certificates.k8s.io', 'metrics.k8s.io']);
    expect(names.indexOf('metrics.platform') - names.indexOf('metrics.k8s.io')).toBe(1);
    // The same in Protobuf (client-go's discovery asks for it).
    const pb = await get('/apis', { accept: 'application/vnd.kubernetes.protobuf' });
    expect(pb.status).toBe(200);
    expect(pb.body.indexOf('metrics.k8s.io/v1beta1')).toBeGreaterThan(0);
    expect(pb.body.indexOf('metrics.k8s.io')).toBeLessThan(pb.body.indexOf('metrics.platform'));
    expect((await get('/apis/metrics.k8s.io')).json).toEqual({
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'metrics.k8s.io',
      versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }],
      preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' },
    });
    ext.seen.length = 0;
    const resources = await get('/apis/metrics.k8s.io/v1beta1');
    expect(resources.json).toMatchObject({ kind: 'APIResourceList', groupVersion: 'metrics.k8s.io/v1beta1' });
    expect(ext.seen.map((x) => x.path)).toContain(METRICS);

    // Resources: upstream in the .platform spelling, answered in the request's.
    ext.seen.length = 0;
    const list = await get('/apis/metrics.k8s.io/v1beta1/nodes', { 'accept-encoding': 'gzip' });
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1' });
    expect(list.json.items[0].usage).toEqual({ cpu: '250m', memory: '512Mi' });
    expect(ext.seen.map((x) => x.path)).toEqual([`${METRICS}/nodes`]);
    expect(ext.seen[0]?.headers['x-remote-user']).toBe('alice');
    const missing = await get('/apis/metrics.k8s.io/v1beta1/nodes/absent');
    expect([missing.status, missing.json.details.group]).toEqual([404, 'metrics.k8s.io']);
    // The .platform spelling is answered as the extension server wrote it.
    expect((await get(`${METRICS}/nodes`)).json.apiVersion).toBe('metrics.platform/v1beta1');

    if (!existsSync(KUBECTL)) return;
    const node = await t.request('POST', '/api/v1/nodes', {
      headers: AUTH,
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } },
    });
    expect(node.status).toBe(201);
    // A cache of its own: the one of the test above predates the metrics group.
    const top = await kubectlRun(['top', 'node'], 'cache-top');
    expect(top.stderr).toBe('');
    expect(top.stdout).toMatch(/^NAME\s+CPU\(cores\)\s+CPU%\s+MEMORY\(bytes\)\s+MEMORY%\s*\nn1\s+250m\s+/);
  });

  it('answers 503 while the extension server is unavailable, and recovers', async () => {
    await waitAvailable();
    ext.healthy = false;
    const failed = await eventually('the failed discovery check', async () => {
      const c = await condition('v1alpha1.wardle.example');
      return c?.reason === 'FailedDiscoveryCheck' ? c : undefined;
    });
    expect(failed.status).toBe('False');
    expect(failed.message).toMatch(new RegExp(`^bad status from https://127\\.0\\.0\\.1:${ext.port}${GV}: 500$`));
    const unavailable = await get(`${GV}/namespaces/default/flunders`);
    expect(unavailable.status).toBe(503);
    expect(unavailable.json).toMatchObject({
      kind: 'Status',
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'service unavailable',
    });

    // The endpoints go: MissingEndpoints; the service goes: ServiceNotFound.
    ext.healthy = true;
    const eps = (await get('/api/v1/namespaces/default/endpoints/wardle')).json;
    const emptied = await t.request('PUT', '/api/v1/namespaces/default/endpoints/wardle', {
      headers: AUTH,
      body: { ...eps, subsets: [] },
    });
    expect(emptied.status).toBe(200);
    const missing = await eventually('MissingEndpoints', async () => {
      const c = await condition('v1alpha1.wardle.example');
      return c?.reason === 'MissingEndpoints' ? c : undefined;
    });
    expect(missing.message).toBe('endpoints for service/wardle in "default" have no addresses with port name "https"');

    const restored = await t.request('PUT', '/api/v1/namespaces/default/endpoints/wardle', {
      headers: AUTH,
      body: { ...eps, metadata: { ...eps.metadata, resourceVersion: emptied.json.metadata.resourceVersion } },
    });
    expect(restored.status).toBe(200);
    await eventually('the APIService to be available again', async () =>
      (await condition('v1alpha1.wardle.example'))?.status === 'True' ? true : undefined,
    );
    expect((await get(`${GV}/namespaces/default/flunders`)).status).toBe(200);
  });
});
