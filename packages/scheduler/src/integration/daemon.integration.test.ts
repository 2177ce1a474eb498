/**
 * `platform-scheduler` as a process (needs `lib/` built) against the real API server: the configuration file is
 * validated by field, `--write-config-to` writes the effective configuration, the secure port answers health
 * checks without credentials and refuses `/metrics` without them, and two replicas elect a leader: after the
 * leader is killed the other takes over and every pod is bound exactly once.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  type ApiObject,
  type Event,
  EventKind,
  type Lease,
  LeaseKind,
  NodeKind,
  type Pod,
  PodKind,
} from '@platform/api';
import { freePort, startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, type ResourceClient, RestClient } from '@platform/client';

import { makeNode, makePod } from '../testing/objects';

const BIN = join(__dirname, '../../bin/platform-scheduler');
let ts: TestServer;
let clientset: Clientset;
let dir: string;
let kubeconfig: string;
const procs: ChildProcess[] = [];

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function runSync(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

function startScheduler(args: string[]): { proc: ChildProcess; log: () => string } {
  let log = '';
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  procs.push(proc);
  return { proc, log: () => log };
}

function get(port: number, path: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  ts = await startTestServer();
  clientset = new Clientset(new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't', qps: 0 }));
  dir = mkdtempSync(join(tmpdir(), 'scheduler-daemon-'));
  kubeconfig = join(dir, 'scheduler.conf');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: c\n  cluster:\n    server: ${ts.url}\n    certificate-authority-data: ${Buffer.from(ts.ca).toString('base64')}`,
      'users:',
      '- name: u\n  user:\n    token: scheduler-token',
      'contexts:',
      '- name: x\n  context:\n    cluster: c\n    user: u',
      'current-context: x',
      '',
    ].join('\n'),
  );
}, 60_000);

afterAll(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  clientset.rest.close();
  await ts.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('validates the configuration file by field and writes the effective configuration', () => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(
    bad,
    [
      'apiVersion: kubescheduler.config.platform/v1beta1',
      'kind: KubeSchedulerConfiguration',
      'percentageOfNodesToScore: 150',
      'profiles:',
      '- schedulerName: a',
      '- schedulerName: a',
      '  plugins:',
      '    score:',
      '      enabled:',
      '      - name: NoSuchPlugin',
      '',
    ].join('\n'),
  );
  const r = runSync(['--config', bad]);
  expect(r.code).toBe(1);
  expect(r.out).toContain('percentageOfNodesToScore: Invalid value: 150: not in valid range [0-100]');
  expect(r.out).toContain('profiles[1].schedulerName: Duplicate value: "a"');
  expect(r.out).toContain('profiles[1].plugins.score.enabled[0].name: Not found: "NoSuchPlugin"');
  const out = join(dir, 'effective.yaml');
  const w = runSync([
    '--clientconfig',
    kubeconfig,
    '--scheduler-name',
    'mine',
    '--api-qps',
    '75',
    '--write-config-to',
    out,
  ]);
  expect(w.code).toBe(0);
  const text = readFileSync(out, 'utf8');
  expect(text).toContain('schedulerName: mine');
  expect(text).toContain('qps: 75');
  expect(text).toContain('resourceName: scheduler');
  expect(text).toContain('resourceNamespace: system');
  expect(runSync(['--clientconfig', kubeconfig, '--hard-pod-affinity-symmetric-weight', '101']).out).toContain(
    'not in valid range [0-100]',
  );
  const policy = join(dir, 'policy.json');
  writeFileSync(policy, JSON.stringify({ kind: 'Policy', predicates: [{ name: 'PodFitsResources' }] }));
  const withPlugins = join(dir, 'plugins.yaml');
  writeFileSync(
    withPlugins,
    [
      'apiVersion: kubescheduler.config.platform/v1beta1',
      'kind: KubeSchedulerConfiguration',
      'profiles:',
      '- plugins:',
      '    score:',
      '      disabled:',
      '      - name: ImageLocality',
      '',
    ].join('\n'),
  );
  const combined = runSync(['--config', withPlugins, '--policy-config-file', policy]);
  expect(combined.code).toBe(1);
  expect(combined.out).toContain("profiles can't have plugins or pluginConfig");
}, 60_000);

it('serves health without credentials, elects one leader, and fails over without binding a pod twice', async () => {
  const nodes = clientset.resource(NodeKind);
  for (const n of ['n1', 'n2']) await nodes.create(makeNode(n, { cpu: '100', pods: '500' }) as ApiObject);
  const port = await freePort();
  const common = [
    '--clientconfig',
    kubeconfig,
    '--port',
    '0',
    '--leader-elect-lease-duration',
    '8s',
    '--leader-elect-renew-deadline',
    '6s',
    '--leader-elect-retry-period',
    '500ms',
  ];
  const a = startScheduler([...common, '--secure-port', String(port), '--bind-address', '127.0.0.1']);
  const leases = clientset.resource(LeaseKind, 'system') as unknown as ResourceClient<Lease & ApiObject>;
  await waitFor('a leads', async () => a.log().includes('Started leading'));
  const b = startScheduler([...common, '--secure-port', '0']);
  const health = await get(port, '/healthz').catch((err: Error) => ({ code: 0, body: `${err.message}\n${a.log()}` }));
  expect(health.body).toBe('ok');
  expect((await get(port, '/metrics')).code).toBe(401);
  const pods = clientset.resource(PodKind, 'default') as unknown as ResourceClient;
  for (let i = 0; i < 10; i++) await pods.create(makePod(`p${i}`, { cpu: '100m' }) as ApiObject);
  const allBound = async (n: number): Promise<boolean> =>
    ((await pods.list()).items as Pod[]).filter((p) => p.spec?.nodeName).length === n;
  await waitFor('10 bound', () => allBound(10));
  // Kill whichever leads now (on a loaded machine the first may already have lost the lease to the second).
  const holder = (await leases.get('scheduler')).spec?.holderIdentity ?? '';
  expect(holder).toBeTruthy();
  const [leader, second] = a.log().includes(holder) ? [a, b] : [b, a];
  expect(leader.log()).toContain(holder);
  leader.proc.kill('SIGKILL');
  // A replica that lost its lease exits (as kube-scheduler does); then a fresh one takes its place.
  const other = second.proc.exitCode === null ? second : startScheduler([...common, '--secure-port', '0']);
  for (let i = 10; i < 20; i++) await pods.create(makePod(`p${i}`, { cpu: '100m' }) as ApiObject);
  await waitFor('a new leader', async () => {
    const h = (await leases.get('scheduler')).spec?.holderIdentity;
    return !!h && h !== holder && other.log().includes(h);
  });
  await waitFor('20 bound', () => allBound(20));
  // Every pod is bound once (a second binding would be refused with 409 and show as a second Scheduled event).
  const scheduled = new Map<string, number>();
  for (const e of (await clientset.resource(EventKind, 'default').list()).items as Event[])
    if (e.reason === 'Scheduled') {
      const name = e.involvedObject?.name ?? '';
      scheduled.set(name, (scheduled.get(name) ?? 0) + (e.count ?? 1));
    }
  if (scheduled.size === 0)
    throw new Error(
      `no Scheduled events:\n${other
        .log()
        .split('\n')
        .filter((l) => /vent|rror|arn/.test(l))
        .slice(0, 20)
        .join('\n')}`,
    );
  expect(scheduled.size).toBeGreaterThan(0);
  for (const n of scheduled.values()) expect(n).toBe(1);
  other.proc.kill('SIGTERM');
  await waitFor('the new leader exits', async () => other.proc.exitCode !== null);
  expect(other.proc.exitCode).toBe(0);
}, 150_000);
