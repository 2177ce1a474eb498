/**
 * The HA mode of `platform up`: `--store etcd --servers 3` runs 3 etcd members, 3 API servers, and 3 controller
 * managers and 3 schedulers of which one each leads (as `platform status` shows). The first API server is killed and
 * kept down: the Deployment still reconciles through the others, and the node agents (which reach the API servers
 * through the launcher's balancer) keep running its pods. The leading controller manager is killed: another
 * process takes its Lease (one of the others, or the killed one restarted) and a scale-up still happens. Each scenario prints its timings.
 *
 * Slow (three of everything on a shared machine: several minutes), so it runs only with PLATFORM_E2E_FULL=1.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '@platform/apiserver';

import { ensureKubectl, kubectl, type KubectlResult } from './support/kubectl';
import { ROOT, waitFor } from './support/process';

const PLATFORM = join(ROOT, 'packages', 'cluster', 'bin', 'platform');
const describeFull = process.env.PLATFORM_E2E_FULL === '1' ? describe : describe.skip;

let dir: string;
let stateDir: string;
let kubeconfig: string;

function platform(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [PLATFORM, ...args], { encoding: 'utf8', timeout: 600_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function pidOf(daemon: string): number {
  const s = JSON.parse(readFileSync(join(stateDir, 'cluster.json'), 'utf8')) as {
    daemons: { name: string; pid?: number }[];
  };
  const pid = s.daemons.find((d) => d.name === daemon)?.pid;
  if (pid === undefined) throw new Error(`no process of ${daemon} in cluster.json`);
  return pid;
}

const k = (args: string[]): KubectlResult => kubectl(kubeconfig, args);

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

/** The leader of `kind` (`controller-manager`, `scheduler`) in `platform status`, once exactly one leads. */
async function leaderOf(kind: string, status: () => string): Promise<string> {
  let leader = '';
  let last = '';
  await waitFor(
    `one ${kind} leading`,
    async () => {
      last = status();
      const leaders = [...last.matchAll(new RegExp(`^(${kind}-\\d)\\s+pid \\d+\\s+healthy\\s.*\\sleader\\s`, 'gm'))];
      leader = leaders[0]?.[1] ?? '';
      return leaders.length === 1;
    },
    180_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; platform status said:\n${last}`);
  });
  return leader;
}

const statusText = (): string => platform(['status', `--dir=${stateDir}`]).stdout;

/** Waits until `n` pods of the selector that are not being deleted run and are ready. */
async function running(selector: string, n: number): Promise<void> {
  await waitFor(
    `${n} running pods of ${selector}`,
    async () => {
      const r = k(['get', 'pods', '-l', selector, '-o', 'json']);
      if (r.status !== 0) return false;
      const items = (
        JSON.parse(r.stdout) as {
          items: {
            metadata: { deletionTimestamp?: string };
            status: { phase?: string; conditions?: { type: string; status: string }[] };
          }[];
        }
      ).items.filter((p) => !p.metadata.deletionTimestamp);
      return (
        items.length === n &&
        items.every(
          (p) =>
            p.status.phase === 'Running' &&
            (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
        )
      );
    },
    240_000,
  );
}

const secs = (t0: number): string => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

describeFull('platform up --store etcd --servers 3', () => {
  beforeAll(async () => {
    ensureKubectl();
    dir = mkdtempSync(join(tmpdir(), 'cluster-ha-e2e-'));
    stateDir = join(dir, '.platform');
    const port = await freePort();
    const t0 = Date.now();
    const r = platform([
      'up',
      '--detach',
      '--store=etcd',
      '--servers=3',
      `--dir=${stateDir}`,
      `--port=${port}`,
      '--node-name=e2e-ha',
      '--container-runtime=builtin',
      '--simulate-nodes=1',
      '--random-ports',
      '--keep-down=apiserver-1',
    ]);
    if (r.status !== 0) throw new Error(`platform up --detach failed (${String(r.status)}):\n${r.stdout}\n${r.stderr}`);
    process.stdout.write(`platform up --store etcd --servers 3: ready in ${secs(t0)}\n`);
    // The admin's client configuration names the first API server, which a test kills: this one names the third.
    kubeconfig = join(dir, 'admin-3.conf');
    const admin = readFileSync(join(stateDir, 'admin.conf'), 'utf8');
    if (!admin.includes(`127.0.0.1:${port}`)) throw new Error(`admin.conf does not name 127.0.0.1:${port}`);
    writeFileSync(kubeconfig, admin.replace(`127.0.0.1:${port}`, `127.0.0.1:${port + 2}`), { mode: 0o600 });
  }, 600_000);

  afterAll(() => {
    if (stateDir) platform(['down', `--dir=${stateDir}`]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('runs 3 etcd members and 3 API servers, and one leading controller manager and scheduler', async () => {
    const out = statusText();
    process.stdout.write(`${out}\n`);
    for (const d of ['etcd-1', 'etcd-2', 'etcd-3', 'apiserver-1', 'apiserver-2', 'apiserver-3'])
      expect(out).toMatch(new RegExp(`^${d}\\s+pid \\d+\\s+healthy`, 'm'));
    await leaderOf('controller-manager', statusText);
    await leaderOf('scheduler', statusText);
  }, 600_000);

  it('keeps reconciling, and its nodes running pods, with the first API server killed', async () => {
    ok(k(['create', 'deployment', 'web', '--image=busybox', '--replicas=2', '--', 'sleep', '3600']));
    await running('app=web', 2);
    const t0 = Date.now();
    process.kill(pidOf('apiserver-1'), 'SIGKILL');
    ok(k(['scale', 'deployment', 'web', '--replicas=3']));
    await running('app=web', 3);
    expect(statusText()).toMatch(/^apiserver-1\s+pid \d+\s+not running/m);
    process.stdout.write(`apiserver-1 killed: scaled to 3 running pods after ${secs(t0)}\n`);
  }, 600_000);

  it('fails over to another controller manager when the leader is killed', async () => {
    const leader = await leaderOf('controller-manager', statusText);
    const killed = pidOf(leader);
    const t0 = Date.now();
    process.kill(killed, 'SIGKILL');
    // Another process leads: another controller manager, or the killed one started again by the launcher.
    let next = '';
    await waitFor(
      'a controller manager other than the killed process leading',
      async () => {
        next = await leaderOf('controller-manager', statusText);
        return pidOf(next) !== killed;
      },
      180_000,
    );
    const tookOver = secs(t0);
    ok(k(['scale', 'deployment', 'web', '--replicas=5']));
    await running('app=web', 5);
    process.stdout.write(
      `leader failover: ${next} leads ${tookOver} after ${leader} was killed; scaled to 5 running pods after ${secs(t0)}\n`,
    );
  }, 600_000);
});
