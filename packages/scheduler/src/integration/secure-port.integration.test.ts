/**
 * `platform-scheduler`'s secure port (needs `lib/` built) with delegated authentication by client certificates:
 * a certificate signed by `--client-ca-file` is its CommonName's user; a front proxy's certificate signed by
 * `--requestheader-client-ca-file` (with an allowed name) passes the user of `X-Remote-User`; the API server's
 * SubjectAccessReview decides (here: everyone but mallory may read /metrics). Real certificates (openssl), a real
 * API server, the scheduler as a process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort, startTestServer, type TestServer } from '@platform/apiserver';

import { type CertFiles, makeCA, signClient } from '../testing/pki';
import { waitFor } from '../testing/wait-for';

const BIN = join(__dirname, '../../bin/platform-scheduler');
let ts: TestServer;
let dir: string;
let proc: ChildProcess;
let log = '';
let port: number;
let alice: CertFiles;
let mallory: CertFiles;
let stranger: CertFiles;
let proxy: CertFiles;
let otherProxy: CertFiles;

function get(
  path: string,
  o: { cert?: CertFiles; headers?: Record<string, string> } = {},
): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        rejectUnauthorized: false,
        headers: o.headers,
        ...(o.cert ? { cert: o.cert.cert, key: o.cert.key } : {}),
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
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
        authorize: async (a) => ({ decision: a.user.name === 'mallory' ? 'deny' : 'allow', reason: '' }),
      },
    };
  });
  dir = mkdtempSync(join(tmpdir(), 'scheduler-secure-port-'));
  const ca = makeCA(dir, 'client-ca');
  const proxyCA = makeCA(dir, 'proxy-ca');
  const otherCA = makeCA(dir, 'other-ca');
  alice = signClient(dir, ca, 'alice', 'alice', ['readers']);
  mallory = signClient(dir, ca, 'mallory', 'mallory');
  stranger = signClient(dir, otherCA, 'stranger', 'alice');
  proxy = signClient(dir, proxyCA, 'proxy', 'front-proxy');
  otherProxy = signClient(dir, proxyCA, 'other-proxy', 'other-proxy');
  const kubeconfig = join(dir, 'scheduler.conf');
  writeFileSync(
    kubeconfig,
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
      '  user: { token: t }',
      'contexts:',
      '- name: x',
      '  context: { cluster: c, user: u }',
      'current-context: x',
      '',
    ].join('\n'),
  );
  port = await freePort();
  proc = spawn(
    process.execPath,
    [
      BIN,
      '--clientconfig',
      kubeconfig,
      '--leader-elect=false',
      '--port',
      '0',
      '--bind-address',
      '127.0.0.1',
      '--secure-port',
      String(port),
      '--client-ca-file',
      ca.certFile,
      '--requestheader-client-ca-file',
      proxyCA.certFile,
      '--requestheader-allowed-names',
      'front-proxy',
      '--requestheader-username-headers',
      'X-Remote-User',
      '--requestheader-group-headers',
      'X-Remote-Group',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  proc.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  // A process start on a loaded 2-CPU machine can take a minute (module loading, TLS keys, the first lists).
  await waitFor(
    'the secure port',
    async () => {
      if (proc.exitCode !== null) throw new Error(`the scheduler exited: ${log}`);
      return (await get('/healthz').catch(() => ({ body: '' }))).body === 'ok';
    },
    150_000,
  );
}, 240_000);

afterAll(async () => {
  if (proc && proc.exitCode === null) {
    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
  }
  await ts?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('serves /metrics to a client certificate of the client CA whose user is allowed', async () => {
  const r = await get('/metrics', { cert: alice });
  expect(r.code).toBe(200);
  expect(r.body).toContain('scheduler_');
}, 60_000);

it('forbids the user the API server does not allow, and refuses unknown or missing credentials', async () => {
  expect((await get('/metrics', { cert: mallory })).code).toBe(403);
  expect((await get('/metrics', { cert: stranger })).code).toBe(401);
  expect((await get('/metrics')).code).toBe(401);
  // A client certificate's user is its own: the front-proxy headers count only with the proxy's certificate.
  expect((await get('/metrics', { cert: mallory, headers: { 'X-Remote-User': 'alice' } })).code).toBe(403);
}, 60_000);

it("takes the user from the front proxy's headers, for an allowed proxy name only", async () => {
  expect((await get('/metrics', { cert: proxy, headers: { 'X-Remote-User': 'alice' } })).code).toBe(200);
  expect((await get('/metrics', { cert: proxy, headers: { 'X-Remote-User': 'mallory' } })).code).toBe(403);
  expect((await get('/metrics', { cert: otherProxy, headers: { 'X-Remote-User': 'alice' } })).code).toBe(401);
  // Without a user header the proxy's certificate is no credential of its own.
  expect((await get('/metrics', { cert: proxy })).code).toBe(401);
}, 60_000);
