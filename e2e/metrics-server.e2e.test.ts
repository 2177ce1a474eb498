/**
 * The metrics server on a whole local cluster: `platform up` starts it after the API server with its own identity,
 * registers it (Service, Endpoints, APIService `v1beta1.metrics.platform`) and shows it in `platform status`; the
 * aggregation layer proxies `metrics.platform` to it; Debian's kubectl 1.20 `top node` and `top pod` (which ask for
 * `metrics.k8s.io`) print figures, among them those of a pod that burns some CPU. The agents are scraped every 2 s.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '@platform/apiserver';

import { ensureKubectl, kubectl, type KubectlResult } from './support/kubectl';
import { type Daemon, ROOT, startDaemon, waitFor } from './support/process';

let dir: string;
let stateDir: string;
let kubeconfig: string;
let cluster: Daemon;

const PLATFORM = join(ROOT, 'packages', 'cluster', 'bin', 'platform');

beforeAll(async () => {
  ensureKubectl();
  dir = mkdtempSync(join(tmpdir(), 'metrics-e2e-'));
  stateDir = join(dir, '.platform');
  const port = await freePort();
  cluster = startDaemon('cluster', 'platform', [
    'up',
    `--dir=${stateDir}`,
    `--port=${port}`,
    '--node-name=metrics-node',
    '--container-runtime=builtin',
    '--random-ports',
    '--metrics-server-arg=--metric-resolution=2s',
  ]);
  kubeconfig = join(stateDir, 'admin.conf');
  await waitFor(
    'platform up to print that the cluster is running',
    async () => cluster.output().includes('platform is running.'),
    240_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${cluster.output()}`);
  });
}, 300_000);

afterAll(async () => {
  if (cluster) {
    const code = await cluster.stop('SIGINT');
    expect(code).toBe(0);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

const k = (args: string[]): KubectlResult => kubectl(kubeconfig, args);

/** Waits until `kubectl args` succeeds with output that `test` accepts; returns that output. */
async function kubectlUntil(what: string, args: string[], test: (out: string) => boolean): Promise<string> {
  let last: KubectlResult | undefined;
  await waitFor(
    what,
    async () => {
      last = k(args);
      return last.status === 0 && test(last.stdout);
    },
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; kubectl ${args.join(' ')} said: ${last?.stdout ?? ''}${last?.stderr ?? ''}`);
  });
  return last!.stdout;
}

it('runs the metrics server as a daemon of platform status, registered and Available', async () => {
  let last = '';
  await waitFor(
    'the metrics server healthy in platform status',
    async () => {
      const r = spawnSync(process.execPath, [PLATFORM, 'status', `--dir=${stateDir}`], { encoding: 'utf8' });
      last = r.stdout + r.stderr;
      return /^metrics-server\s+pid \d+\s+healthy\s+rss \d+ MiB/m.test(r.stdout);
    },
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; platform status said:\n${last}`);
  });
  await kubectlUntil(
    'the APIService Available',
    [
      'get',
      'apiservice',
      'v1beta1.metrics.platform',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Available")].status}',
    ],
    (out) => out.trim() === 'True',
  );
  const eps = k(['get', 'endpoints', 'metrics-server', '-n', 'system', '-o', 'jsonpath={.subsets[0].addresses[0].ip}']);
  expect(eps.stdout).toBe('127.0.0.1');
}, 180_000);

it('serves node metrics through the aggregation layer', async () => {
  const out = await kubectlUntil(
    'node metrics through the API server',
    ['get', '--raw', '/apis/metrics.platform/v1beta1/nodes'],
    (o) => o.includes('"metrics-node"'),
  );
  const list = JSON.parse(out) as { kind: string; items: { usage: { cpu: string; memory: string } }[] };
  expect(list.kind).toBe('NodeMetricsList');
  expect(list.items[0]?.usage.memory).toMatch(/^\d+(Ki|Mi|Gi)?$/);
}, 180_000);

it('prints the figures of kubectl top node and kubectl top pod, a busy pod using CPU', async () => {
  // A pod needs its namespace's default ServiceAccount, which the controller manager creates a moment after start.
  await waitFor(
    'the default ServiceAccount',
    async () => k(['get', 'serviceaccount', 'default']).status === 0,
    120_000,
  );
  const created = k([
    'run',
    'burner',
    '--image=busybox',
    '--restart=Never',
    '--',
    'sh',
    '-c',
    // Busy half of the time: enough CPU to show, not a whole core of a shared machine.
    'while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.2; done',
  ]);
  expect(created.stderr).toBe('');
  const nodes = await kubectlUntil('kubectl top node', ['top', 'node'], (o) =>
    /^metrics-node\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$/m.test(o),
  );
  expect(nodes).toMatch(/^NAME\s+CPU\(cores\)\s+CPU%\s+MEMORY\(bytes\)\s+MEMORY%/);
  const pods = await kubectlUntil('kubectl top pod with CPU used by the burner', ['top', 'pod', 'burner'], (o) => {
    const m = /^burner\s+(\d+)m\s+(\d+)Mi\s*$/m.exec(o);
    return !!m && Number(m[1]) > 0;
  });
  expect(pods).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
  const containers = await kubectlUntil('kubectl top pod --containers', ['top', 'pod', 'burner', '--containers'], (o) =>
    /^burner\s+burner\s+\d+m\s+\d+Mi\s*$/m.test(o),
  );
  expect(containers).toMatch(/^POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
  k(['delete', 'pod', 'burner', '--grace-period=1', '--wait=false']);
}, 240_000);
