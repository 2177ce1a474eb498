/**
 * The HA mode of `platform up`: `--store etcd --servers 3` runs 3 etcd members, 3 API servers, and 3 controller
 * managers and 3 schedulers of which one each leads (as `platform status` shows). The admin's client configuration and
 * the node agents reach the API servers through the launcher's balancer. Scenarios, each printing its timings:
 * - the first API server is killed (and kept down) while an informer and `kubectl get -w` watch: the informer resumes
 *   on another server without a new list and misses no change; kubectl's watch is resumed from the last
 *   resourceVersion it printed and misses none either;
 * - with it down, a Deployment still reconciles and the node agents keep running its pods;
 * - an etcd member is killed (and kept down): writes go on through the other two;
 * - the leading controller manager is killed in the middle of a rollout: another process takes its Lease and
 *   finishes the rollout.
 *
 * About two minutes on 2 CPUs (three of everything); PLATFORM_E2E_QUICK=1 skips it.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ApiObject, type ConfigMap, ConfigMapKind } from '@platform/api';
import { freePort } from '@platform/apiserver';
import { Clientset, InformerFactory, loadClientConfig, type ResourceClient, RestClient } from '@platform/client';

import { ensureKubectl, kubectl, type KubectlResult } from './support/kubectl';
import { ROOT, waitFor } from './support/process';

const PLATFORM = join(ROOT, 'packages', 'cluster', 'bin', 'platform');
const describeFull = process.env.PLATFORM_E2E_QUICK === '1' ? describe.skip : describe;

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

type CM = ConfigMap & ApiObject;

const name = (o: ApiObject): string => o.metadata?.name ?? '';

/** Creates a ConfigMap, again when a lost connection failed the request (409: the first attempt landed). */
async function create(cms: ResourceClient<CM>, n: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await cms.create({ metadata: { name: n } });
      return;
    } catch (err) {
      if ((err as { code?: number }).code === 409) return;
      if (attempt >= 60) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** kubectl's watch of the namespace's ConfigMaps: one line per object, its name and resourceVersion. */
const KUBECTL_WATCH = [
  '-n',
  'watched',
  'get',
  'configmaps',
  '-w',
  '-o',
  'jsonpath={.metadata.name} {.metadata.resourceVersion}{"\\n"}',
];

/**
 * What a watching kubectl printed: names with their resourceVersions (`get -w -o jsonpath` lines, or the JSON watch
 * events of `get --raw ...?watch=1`).
 */
function collect(child: ChildProcessWithoutNullStreams): {
  child: ChildProcessWithoutNullStreams;
  has(n: string): boolean;
  lastRv(): string;
  readonly exited: boolean;
} {
  const names = new Set<string>();
  let rv = '';
  let exited = false;
  let buf = '';
  child.stdout.on('data', (c: Buffer) => {
    buf += c.toString('utf8');
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      if (line.startsWith('{')) {
        const e = JSON.parse(line) as { object?: ApiObject };
        names.add(name(e.object ?? {}));
        rv = e.object?.metadata?.resourceVersion ?? rv;
      } else {
        const [n, v] = line.split(' ');
        names.add(n!);
        rv = v ?? rv;
      }
    }
  });
  child.stderr.resume();
  child.on('exit', () => (exited = true));
  return {
    child,
    has: (n) => names.has(n),
    lastRv: () => rv,
    get exited() {
      return exited;
    },
  };
}

const ROLLOUT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: roll }
spec:
  replicas: 4
  minReadySeconds: 3
  strategy: { type: RollingUpdate, rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }
  selector: { matchLabels: { app: roll } }
  template:
    metadata: { labels: { app: roll } }
    spec:
      containers:
        - name: main
          image: busybox
          command: [sleep, '3600']
          env: [{ name: V, value: '1' }]
`;

interface RolloutStatus {
  replicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
}

/** The Deployment `roll`'s status, once its controller has seen its latest spec (else nothing counted yet). */
function rollout(): RolloutStatus {
  const d = JSON.parse(ok(k(['get', 'deployment', 'roll', '-o', 'json']))) as {
    metadata: { generation: number };
    status: RolloutStatus & { observedGeneration?: number };
  };
  return (d.status.observedGeneration ?? 0) >= d.metadata.generation ? d.status : {};
}

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
      '--keep-down=etcd-1',
    ]);
    if (r.status !== 0) throw new Error(`platform up --detach failed (${String(r.status)}):\n${r.stdout}\n${r.stderr}`);
    process.stdout.write(`platform up --store etcd --servers 3: ready in ${secs(t0)}\n`);
    // The admin's client configuration names the launcher's balancer, not one of the API servers.
    kubeconfig = join(stateDir, 'admin.conf');
    const admin = readFileSync(kubeconfig, 'utf8');
    for (const p of [port, port + 1, port + 2])
      if (admin.includes(`127.0.0.1:${p}\n`)) throw new Error(`admin.conf names API server 127.0.0.1:${p}`);
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

  it('resumes an informer and kubectl get -w on another API server when the one they watch is killed', async () => {
    ok(k(['create', 'namespace', 'watched']));
    const rest = new RestClient({ ...loadClientConfig({ clientConfig: kubeconfig }), qps: 0 });
    const clientset = new Clientset(rest);
    const cms = clientset.resource(ConfigMapKind, 'watched');
    const factory = new InformerFactory(clientset, { namespace: 'watched' });
    const inf = factory.informerFor(ConfigMapKind);
    const heard = new Map<string, number>(); // name → when the informer first heard of it
    inf.addEventHandler({
      onAdd: (o: CM) => void (heard.has(name(o)) || heard.set(name(o), Date.now())),
      onUpdate: () => {},
      onDelete: () => {},
    });
    const stop = new AbortController();
    factory.start(stop.signal);
    const watch = collect(spawn(ensureKubectl(), ['--kubeconfig', kubeconfig, ...KUBECTL_WATCH], { stdio: 'pipe' }));
    let resumed: ReturnType<typeof collect> | undefined;
    try {
      expect(await factory.waitForCacheSync(stop.signal)).toBe(true);
      // Both watches are open once both have heard of a first object.
      await create(cms, 'cm-0000');
      await waitFor(
        'both watches to hear of cm-0000',
        async () => heard.has('cm-0000') && watch.has('cm-0000'),
        120_000,
      );
      const listsBefore = inf.stats.lists;

      // A writer that retries what a lost connection failed; the API server is killed after its tenth write.
      const acked: string[] = ['cm-0000'];
      let killedAt = 0;
      for (let i = 1; i <= 40; i++) {
        const n = `cm-${String(i).padStart(4, '0')}`;
        await create(cms, n);
        acked.push(n);
        if (i === 10) {
          killedAt = Date.now();
          process.kill(pidOf('apiserver-1'), 'SIGKILL');
        }
      }
      const writesTook = secs(killedAt);
      await waitFor(
        'the informer to hear of every acknowledged write',
        async () => acked.every((n) => heard.has(n)),
        120_000,
      );
      const firstAfter = Math.min(...acked.slice(11).map((n) => heard.get(n)!));
      expect(inf.stats.lists).toBe(listsBefore); // resumed from its resourceVersion: no new list

      // kubectl's watch ends with its connection; it is resumed from the last resourceVersion it printed.
      await waitFor(
        'kubectl get -w to end or hear of every write',
        async () => watch.exited || acked.every((n) => watch.has(n)),
        120_000,
      );
      if (!acked.every((n) => watch.has(n))) {
        const path = `/api/v1/namespaces/watched/configmaps?watch=1&resourceVersion=${watch.lastRv()}`;
        resumed = collect(
          spawn(ensureKubectl(), ['--kubeconfig', kubeconfig, 'get', '--raw', path], { stdio: 'pipe' }),
        );
        const r = resumed;
        await waitFor(
          'the resumed watch to hear of every write',
          async () => acked.every((n) => watch.has(n) || r.has(n)),
          120_000,
        );
      }
      expect(statusText()).toMatch(/^apiserver-1\s+pid \d+\s+not running/m);
      process.stdout.write(
        `apiserver-1 killed under watches: 30 writes acknowledged in ${writesTook}; the informer heard the first ` +
          `of them ${((firstAfter - killedAt) / 1000).toFixed(1)}s after the kill, without a new list; kubectl get -w ` +
          `${resumed ? `ended and was resumed from resourceVersion ${watch.lastRv()}` : 'kept going'}; no write missed\n`,
      );
    } finally {
      stop.abort();
      await factory.shutdown();
      watch.child.kill();
      resumed?.child.kill();
      rest.close();
    }
  }, 600_000);

  it('keeps reconciling, and its nodes running pods, with the first API server down', async () => {
    const t0 = Date.now();
    ok(k(['create', 'deployment', 'web', '--image=busybox', '--replicas=2', '--', 'sleep', '3600']));
    await running('app=web', 2);
    ok(k(['scale', 'deployment', 'web', '--replicas=3']));
    await running('app=web', 3);
    process.stdout.write(`apiserver-1 down: a Deployment ran 2 pods and scaled to 3 in ${secs(t0)}\n`);
  }, 600_000);

  it('keeps serving writes with an etcd member killed', async () => {
    const t0 = Date.now();
    process.kill(pidOf('etcd-1'), 'SIGKILL');
    let n = 0;
    await waitFor(
      'a write through the two etcd members left',
      async () => {
        const r = k(['create', 'configmap', `after-etcd-kill-${n++}`, '-n', 'watched']);
        return r.status === 0 || /AlreadyExists/.test(r.stderr);
      },
      120_000,
    );
    const firstWrite = secs(t0);
    ok(k(['scale', 'deployment', 'web', '--replicas=4']));
    await running('app=web', 4);
    expect(statusText()).toMatch(/^etcd-1\s+pid \d+\s+not running/m);
    process.stdout.write(
      `etcd-1 killed: first write after ${firstWrite}; scaled to 4 running pods after ${secs(t0)}\n`,
    );
  }, 600_000);

  it('finishes a rollout when the leading controller manager is killed in the middle of it', async () => {
    ok(kubectl(kubeconfig, ['apply', '-f', '-'], ROLLOUT));
    await running('app=roll', 4);
    ok(k(['set', 'env', 'deployment/roll', 'V=2']));
    let mid: RolloutStatus | undefined;
    await waitFor(
      'the rollout to start',
      async () => {
        const d = rollout();
        if ((d.updatedReplicas ?? 0) >= 1) mid = d;
        return mid !== undefined;
      },
      120_000,
    );
    const leader = await leaderOf('controller-manager', statusText);
    const killed = pidOf(leader);
    const t0 = Date.now();
    process.kill(killed, 'SIGKILL');
    expect(mid!.updatedReplicas).toBeLessThan(4); // killed in the middle of the rollout, not after it
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
    await waitFor(
      'the rollout to finish',
      async () => {
        const d = rollout();
        return d.updatedReplicas === 4 && d.availableReplicas === 4 && d.replicas === 4;
      },
      300_000,
    );
    await running('app=roll', 4);
    const envs = JSON.parse(ok(k(['get', 'pods', '-l', 'app=roll', '-o', 'json']))) as {
      items: { metadata: { deletionTimestamp?: string }; spec: { containers: { env?: { value?: string }[] }[] } }[];
    };
    const live = envs.items.filter((p) => !p.metadata.deletionTimestamp);
    expect(live.map((p) => p.spec.containers[0]!.env?.[0]?.value)).toEqual(['2', '2', '2', '2']);
    process.stdout.write(
      `leader failover mid-rollout (${mid!.updatedReplicas}/4 updated): ${next} leads ${tookOver} after ${leader} ` +
        `was killed; the rollout finished ${secs(t0)} after the kill\n`,
    );
  }, 600_000);
});
