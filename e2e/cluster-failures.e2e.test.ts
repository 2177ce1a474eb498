/**
 * A cluster started in the background (`platform up --detach`) with a simulated second node, through failures: the
 * node agent is killed (and kept down) and its Deployment's pods are evicted and replaced on the other node; the API
 * server is killed, the launcher starts it again, and the daemons resume and reconcile a scale-up; `platform down`
 * stops it all. Short node-failure periods come through `--controller-manager-arg`, `--node-agent-arg` and
 * `--apiserver-arg`. Each scenario prints its timings.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '@platform/apiserver';

import { ensureKubectl, kubectl, type KubectlResult } from './support/kubectl';
import { ROOT, waitFor } from './support/process';

const PLATFORM = join(ROOT, 'packages', 'cluster', 'bin', 'platform');
const NODE = 'e2e-node';

let dir: string;
let stateDir: string;
let kubeconfig: string;
/** In the pods' command line: their processes (the builtin runtime's, left by the killed node agent) are found by it. */
let marker: string;

function platform(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [PLATFORM, ...args], { encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface ClusterJson {
  pid: number;
  daemons: { name: string; pid?: number; health?: string }[];
}

function clusterJson(): ClusterJson {
  return JSON.parse(readFileSync(join(stateDir, 'cluster.json'), 'utf8')) as ClusterJson;
}

function pidOf(daemon: string): number {
  const pid = clusterJson().daemons.find((d) => d.name === daemon)?.pid;
  if (pid === undefined) throw new Error(`no process of ${daemon} in cluster.json`);
  return pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const k = (args: string[]): KubectlResult => kubectl(kubeconfig, args);

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

interface PodView {
  name: string;
  node: string;
  running: boolean;
  deleting: boolean;
}

function pods(selector: string): PodView[] {
  const r = k(['get', 'pods', '-l', selector, '-o', 'json']);
  if (r.status !== 0) return [];
  const list = JSON.parse(r.stdout) as {
    items: {
      metadata: { name: string; deletionTimestamp?: string };
      spec: { nodeName?: string };
      status: { phase?: string; conditions?: { type: string; status: string }[] };
    }[];
  };
  return list.items.map((p) => ({
    name: p.metadata.name,
    node: p.spec.nodeName ?? '',
    running:
      p.status.phase === 'Running' &&
      (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    deleting: !!p.metadata.deletionTimestamp,
  }));
}

/** Waits until `n` pods of the selector that are not being deleted run, ready, on `node`. */
async function runningOn(selector: string, node: string, n: number, timeoutMs = 180_000): Promise<void> {
  let last: PodView[] = [];
  await waitFor(
    `${n} running pods of ${selector} on ${node}`,
    async () => {
      last = pods(selector).filter((p) => !p.deleting);
      return last.length === n && last.every((p) => p.running && p.node === node);
    },
    timeoutMs,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
  });
}

function nodeCondition(node: string): string {
  const r = k(['get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
  return r.status === 0 ? r.stdout.trim() : '';
}

const secs = (t0: number): string => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

beforeAll(async () => {
  ensureKubectl();
  dir = mkdtempSync(join(tmpdir(), 'cluster-failures-e2e-'));
  stateDir = join(dir, '.platform');
  kubeconfig = join(stateDir, 'admin.conf');
  marker = `e2e-${process.pid}-${Date.now()}`;
  const port = await freePort();
  const t0 = Date.now();
  const r = platform([
    'up',
    '--detach',
    `--dir=${stateDir}`,
    `--port=${port}`,
    `--node-name=${NODE}`,
    '--container-runtime=builtin',
    '--simulate-nodes=1',
    // Other cluster tests may run at the same time: no daemon on its default port.
    '--random-ports',
    '--keep-down=node-agent',
    // A node is unhealthy after 30 s without a heartbeat (more than a restarted API server takes here); heartbeats every 2 s.
    '--controller-manager-arg=--node-monitor-grace-period=30s',
    '--controller-manager-arg=--node-monitor-period=1s',
    '--node-agent-arg=--node-lease-duration-seconds=8',
    '--node-agent-arg=--node-status-update-frequency=2s',
    // Pods tolerate an unreachable node for 5 s (DefaultTolerationSeconds admission).
    '--apiserver-arg=--default-unreachable-toleration-seconds=5',
    '--apiserver-arg=--default-not-ready-toleration-seconds=5',
  ]);
  if (r.status !== 0) throw new Error(`platform up --detach failed (${String(r.status)}):\n${r.stdout}\n${r.stderr}`);
  expect(r.stdout).toContain('platform is running.');
  process.stdout.write(`platform up --detach: ready in ${secs(t0)}\n`);
}, 300_000);

afterAll(() => {
  if (stateDir && existsState()) platform(['down', `--dir=${stateDir}`]);
  // The killed node agent's containers: each its own process group, found by the marker in its command line.
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) process.kill(-Number(entry), 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 180_000);

function existsState(): boolean {
  try {
    return alive(clusterJson().pid);
  } catch {
    return false;
  }
}

it('lists every daemon in platform status, healthy, with its memory and the leaders', async () => {
  let last = '';
  await waitFor(
    'every daemon healthy',
    async () => {
      const r = platform(['status', `--dir=${stateDir}`]);
      last = r.stdout + r.stderr;
      return r.status === 0;
    },
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; platform status said:\n${last}`);
  });
  const out = platform(['status', `--dir=${stateDir}`]).stdout;
  process.stdout.write(`${out}\n`);
  for (const d of ['apiserver', 'node-agent', 'simulated-nodes'])
    expect(out).toMatch(new RegExp(`^${d}\\s+pid \\d+\\s+healthy\\s+rss \\d+ MiB`, 'm'));
  // The simulated nodes' agent is judged by its own health check, not by its process running.
  expect(clusterJson().daemons.find((d) => d.name === 'simulated-nodes')?.health).toMatch(
    /^http:\/\/127\.0\.0\.1:\d+\/healthz$/,
  );
  await waitFor(
    'the controller manager and the scheduler to lead',
    async () => {
      const s = platform(['status', `--dir=${stateDir}`]).stdout;
      return /^controller-manager\s.*\sleader\s/m.test(s) && /^scheduler\s.*\sleader\s/m.test(s);
    },
    120_000,
  );
}, 300_000);

it('evicts the pods of a node whose agent died and runs them on the other node', async () => {
  let sim = '';
  await waitFor(
    'both nodes Ready',
    async () => {
      const names = ok(k(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']))
        .trim()
        .split(/\s+/);
      sim = names.find((n) => n !== NODE) ?? '';
      return nodeCondition(NODE) === 'True' && sim !== '' && nodeCondition(sim) === 'True';
    },
    120_000,
  );
  // Every pod on the real node first: the simulated one is cordoned until they run.
  ok(k(['cordon', sim]));
  ok(
    k([
      'create',
      'deployment',
      'web',
      '--image=busybox',
      '--replicas=3',
      '--',
      'sh',
      '-c',
      'sleep 600; : "$0"',
      marker,
    ]),
  );
  await runningOn('app=web', NODE, 3);
  ok(k(['uncordon', sim]));

  const t0 = Date.now();
  process.kill(pidOf('node-agent'), 'SIGKILL');
  await waitFor('node e2e-node not Ready', async () => nodeCondition(NODE) === 'Unknown', 120_000);
  const notReady = secs(t0);
  await waitFor(
    'the unreachable taint on e2e-node',
    async () =>
      ok(k(['get', 'node', NODE, '-o', 'jsonpath={.spec.taints[*].key}'])).includes('node.kubernetes.io/unreachable'),
    60_000,
  );
  const tainted = secs(t0);
  await runningOn('app=web', sim, 3);
  // The old pods are being deleted (their node cannot confirm it) or gone.
  expect(pods('app=web').filter((p) => p.node === NODE && !p.deleting)).toHaveLength(0);
  expect(alive(pidOf('node-agent'))).toBe(false);
  process.stdout.write(
    `node failure: NotReady (Unknown) after ${notReady}, tainted after ${tainted}, 3 pods running on ${sim} after ${secs(t0)}\n`,
  );
}, 420_000);

it('restarts a killed API server; the daemons resume and reconcile a scale-up', async () => {
  // The simulated node (the pods left on the dead one are still being deleted: their node cannot confirm it).
  const sim = ok(k(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}']))
    .trim()
    .split(/\s+/)
    .find((n) => n !== NODE)!;
  const before = pidOf('apiserver');
  const t0 = Date.now();
  process.kill(before, 'SIGKILL');
  await waitFor(
    'a new API server process, healthy',
    async () => {
      const now = clusterJson().daemons.find((d) => d.name === 'apiserver')?.pid;
      return (
        now !== undefined &&
        now !== before &&
        /^apiserver\s+pid \d+\s+healthy/m.test(platform(['status', `--dir=${stateDir}`]).stdout)
      );
    },
    180_000,
  );
  const back = secs(t0);
  ok(k(['scale', 'deployment', 'web', '--replicas=5']));
  await runningOn('app=web', sim, 5);
  process.stdout.write(`API server kill: serving again after ${back}, scaled to 5 running pods after ${secs(t0)}\n`);
}, 420_000);

it('stops every daemon with platform down', () => {
  const pids = clusterJson()
    .daemons.map((d) => d.pid)
    .filter((p): p is number => p !== undefined);
  const launcher = clusterJson().pid;
  const r = platform(['down', `--dir=${stateDir}`]);
  expect(r.status).toBe(0);
  expect(r.stdout).toContain('platform: stopped.');
  expect(alive(launcher)).toBe(false);
  expect(pids.filter(alive)).toEqual([]);
  const s = platform(['status', `--dir=${stateDir}`]);
  expect(s.status).toBe(1);
  expect(s.stderr).toContain('no cluster is running');
}, 180_000);
