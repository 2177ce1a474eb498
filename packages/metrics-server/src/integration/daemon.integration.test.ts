/**
 * `platform-metrics-server` on its own (needs `lib/` of this package and of the node agent built): a real API
 * server (in process), a real node agent as a process with the builtin runtime, secured as `platform up` secures
 * it (client certificates of a CA, Webhook authorization), and the metrics server as a process scraping it every 2
 * seconds. Node and pod metrics appear after two scrapes; requests are authenticated by client certificate or by a
 * front proxy's certificate and headers, and authorized by the API server (everyone but mallory); refusals and
 * errors are Status objects.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Pod, PodKind } from '@platform/api';
import { freePort, startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, loadClientConfig, RestClient } from '@platform/client';
import { generateCertificateAuthority, issueCertificate, type PemPair } from '@platform/common';

jest.setTimeout(240_000);

const BIN = join(__dirname, '..', '..', 'bin', 'platform-metrics-server');
const AGENT_BIN = join(__dirname, '..', '..', '..', 'node-agent', 'bin', 'platform-node-agent');
const NODE = 'ms-node';

let ts: TestServer;
let dir: string;
let clientset: Clientset;
const procs: { name: string; child: ChildProcess; out: string }[] = [];
let port: number;
let alice: PemPair;
let mallory: PemPair;
let proxy: PemPair;
let otherProxy: PemPair;

/** Starts a process whose output is kept (and printed when a wait fails). */
function start(name: string, bin: string, args: string[]): { child: ChildProcess; out: string } {
  const p = { name, child: spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }), out: '' };
  p.child.stdout?.on('data', (d: Buffer) => (p.out += d.toString()));
  p.child.stderr?.on('data', (d: Buffer) => (p.out += d.toString()));
  procs.push(p);
  return p;
}

function logs(): string {
  return procs.map((p) => `--- ${p.name}\n${p.out.slice(-4000)}`).join('\n');
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited: ${logs()}`);
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${String(last)}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Answer {
  code: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded test responses are read freely
  json: any;
}

function get(path: string, o: { cert?: PemPair; headers?: Record<string, string | string[]> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        rejectUnauthorized: false,
        agent: false,
        timeout: 10_000,
        headers: o.headers,
        ...(o.cert ? { cert: o.cert.certPem, key: o.cert.keyPem } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ code: res.statusCode ?? 0, text, json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  ts = await startTestServer((c) => {
    c.security = {
      authorizer: {
        // Everyone but mallory; carol only as a member of `readers`.
        authorize: async (a) => ({
          decision:
            a.user.name === 'mallory' || (a.user.name === 'carol' && !a.user.groups.includes('readers'))
              ? 'deny'
              : 'allow',
          reason: '',
        }),
      },
    };
  });
  dir = mkdtempSync(join(tmpdir(), 'metrics-server-it-'));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  const ca = await generateCertificateAuthority('test-ca');
  const proxyCa = await generateCertificateAuthority('test-front-proxy-ca');
  const agentServing = await issueCertificate(ca, { commonName: NODE, usage: 'server', ips: ['127.0.0.1'] });
  const msClient = await issueCertificate(ca, { commonName: 'system:metrics-server', usage: 'client' });
  alice = await issueCertificate(ca, { commonName: 'alice', organizations: ['readers'], usage: 'client' });
  mallory = await issueCertificate(ca, { commonName: 'mallory', usage: 'client' });
  proxy = await issueCertificate(proxyCa, { commonName: 'front-proxy-client', usage: 'client' });
  otherProxy = await issueCertificate(proxyCa, { commonName: 'someone-else', usage: 'client' });
  const caFile = file('ca.crt', ca.certPem);
  const kubeconfig = file(
    'client.conf',
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: c',
      '  cluster:',
      `    server: ${ts.url}`,
      `    certificate-authority-data: ${Buffer.from(ts.ca).toString('base64')}`,
      'users:',
      '- name: u',
      '  user: { token: test-token }',
      'contexts:',
      '- name: x',
      '  context: { cluster: c, user: u, namespace: default }',
      'current-context: x',
      '',
    ].join('\n'),
  );
  clientset = new Clientset(new RestClient({ ...loadClientConfig({ clientConfig: kubeconfig }), qps: 0 }));
  const agentPort = await freePort();
  start('node-agent', AGENT_BIN, [
    `--clientconfig=${kubeconfig}`,
    `--hostname-override=${NODE}`,
    '--node-ip=127.0.0.1',
    `--root-dir=${join(dir, 'agent')}`,
    `--cert-dir=${join(dir, 'agent', 'pki')}`,
    '--address=127.0.0.1',
    `--port=${agentPort}`,
    '--read-only-port=0',
    `--healthz-port=${await freePort()}`,
    '--fail-swap-on=false',
    '--container-runtime=builtin',
    '--anonymous-auth=false',
    `--client-ca-file=${caFile}`,
    '--authorization-mode=Webhook',
    `--tls-cert-file=${file('agent.crt', agentServing.certPem)}`,
    `--tls-private-key-file=${file('agent.key', agentServing.keyPem)}`,
  ]);
  port = await freePort();
  start('metrics-server', BIN, [
    `--clientconfig=${kubeconfig}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    `--cert-dir=${join(dir, 'ms-pki')}`,
    `--agent-certificate-authority=${caFile}`,
    `--agent-client-certificate=${file('ms.crt', msClient.certPem)}`,
    `--agent-client-key=${file('ms.key', msClient.keyPem)}`,
    '--agent-use-node-status-port',
    '--agent-preferred-address-types=InternalIP',
    '--metric-resolution=2s',
    `--client-ca-file=${caFile}`,
    `--requestheader-client-ca-file=${file('proxy-ca.crt', proxyCa.certPem)}`,
    '--requestheader-allowed-names=front-proxy-client',
  ]);
  await waitFor('the metrics server to be healthy', async () => (await get('/healthz')).text === 'ok');
}, 240_000);

afterAll(async () => {
  await Promise.all(
    procs.map(async (p) => {
      if (p.child.exitCode !== null || p.child.signalCode !== null) return;
      const exited = new Promise((r) => p.child.once('exit', r));
      p.child.kill('SIGTERM');
      const t = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }),
  );
  await ts?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

const NODES = '/apis/metrics.platform/v1beta1/nodes';

it('serves the node metrics after two scrapes, with usage over a window', async () => {
  let items: { metadata: { name: string }; usage: { cpu: string; memory: string }; window: string }[] = [];
  await waitFor('metrics of the node', async () => {
    const r = await get(NODES, { cert: alice });
    items = r.json?.items ?? [];
    return r.code === 200 && items.some((i) => i.metadata.name === NODE);
  });
  const n = items.find((i) => i.metadata.name === NODE)!;
  expect(n.usage.cpu).toMatch(/^\d+(n|u|m)?$/);
  expect(n.usage.memory).toMatch(/^\d+(Ki|Mi|Gi)?$/);
  expect(n.usage.memory).not.toBe('0');
  expect(n.window).toMatch(/s$/);
  // A round that fails (a busy agent answering late) drops the node until the next two: wait, never assume.
  await waitFor('the node alone', async () => {
    const one = await get(`${NODES}/${NODE}`, { cert: alice });
    return one.json?.kind === 'NodeMetrics' && one.json.apiVersion === 'metrics.platform/v1beta1';
  });
  await waitFor('/readyz', async () => (await get('/readyz')).code === 200);
});

it('serves the metrics of a running pod and each of its containers', async () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'sleeper', namespace: 'default', labels: { app: 'sleeper' } },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'busybox', command: ['sleep', '3600'] }],
    },
  } as unknown as Pod;
  await clientset.resource(PodKind, 'default').create(pod);
  let last: Answer | undefined;
  await waitFor('metrics of the pod', async () => {
    last = await get('/apis/metrics.platform/v1beta1/namespaces/default/pods?labelSelector=app%3Dsleeper', {
      cert: alice,
    });
    return last.code === 200 && last.json.items.length === 1;
  }).catch((err: Error) => {
    throw new Error(`${err.message}\nlast answer: ${last?.text ?? ''}`);
  });
  const item = last!.json.items[0];
  expect(item.metadata).toMatchObject({ name: 'sleeper', namespace: 'default', labels: { app: 'sleeper' } });
  expect(item.containers).toEqual([{ name: 'main', usage: { cpu: expect.any(String), memory: expect.any(String) } }]);
  await waitFor('the pod in every namespace', async () => {
    const all = await get('/apis/metrics.platform/v1beta1/pods', { cert: alice });
    return all.json.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'sleeper');
  });
  const none = await get('/apis/metrics.platform/v1beta1/namespaces/default/pods?labelSelector=app%3Dother', {
    cert: alice,
  });
  expect(none.json.items).toEqual([]);
});

it('authenticates client certificates and front proxies, and the API server authorizes', async () => {
  const anonymous = await get(NODES);
  expect(anonymous.code).toBe(401);
  expect(anonymous.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  const denied = await get(`${NODES}/${NODE}`, { cert: mallory });
  expect(denied.code).toBe(403);
  expect(denied.json).toMatchObject({
    kind: 'Status',
    reason: 'Forbidden',
    message: `nodes.metrics.platform "${NODE}" is forbidden: User "mallory" cannot get resource "nodes" in API group "metrics.platform" at the cluster scope`,
  });
  expect((await get(NODES, { cert: proxy, headers: { 'X-Remote-User': 'alice' } })).code).toBe(200);
  expect((await get(NODES, { cert: proxy, headers: { 'X-Remote-User': 'mallory' } })).code).toBe(403);
  expect((await get(NODES, { cert: otherProxy, headers: { 'X-Remote-User': 'alice' } })).code).toBe(401);
  // A header per group, as the aggregator sends them: each group counts on its own.
  const carol = (groups: string[]) =>
    get(NODES, { cert: proxy, headers: { 'X-Remote-User': 'carol', 'X-Remote-Group': groups } });
  expect((await carol(['others', 'readers'])).code).toBe(200);
  expect((await carol(['others'])).code).toBe(403);
  const discovery = await get('/apis/metrics.platform/v1beta1', {
    cert: proxy,
    headers: { 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': 'system:masters' },
  });
  expect(discovery.json).toMatchObject({ kind: 'APIResourceList', groupVersion: 'metrics.platform/v1beta1' });
});

it('serves a Table and its own metrics', async () => {
  let table: Answer | undefined;
  await waitFor('a Table row of the node', async () => {
    table = await get(NODES, {
      cert: alice,
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    return table.json?.rows?.[0]?.cells?.[0] === NODE;
  });
  expect(table?.json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
  const metrics = await get('/metrics', { cert: alice });
  expect(metrics.code).toBe(200);
  expect(metrics.text).toContain('metrics_server_kubelet_request_total{success="true"}');
  expect(metrics.text).toMatch(/^metrics_server_storage_points\{type="node"\} \d+$/m);
});
