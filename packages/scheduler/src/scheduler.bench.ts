/**
 * `npm run bench -- scheduler`: the scheduler's throughput as Kubernetes' scheduler_perf measures it. The API
 * server runs as its own process (SQLite, or etcd with BENCH_ETCD=<url>); nodes and Pending pods are created first;
 * then `platform-scheduler` is started as a process, and pods per second run from its start to the last binding
 * seen by a watch (also after the scheduler's caches synced, so module loading and the initial lists are apart).
 * Cases: 100 nodes / 1,000 pods at the default `--api-qps 50` and at `--api-qps 5000 --api-burst 10000`; the
 * large ones (1,000 nodes / 5,000 pods at both, and 5,000 pods with required anti-affinity on 5,000 nodes) run
 * only with BENCH_LARGE=1 or when named. BENCH_CASES=a,b picks cases by name; BENCH_SCALE=0.2 shrinks them;
 * BENCH_CPU_PROFILE=<dir> writes the scheduler's CPU profile there (`--cpu-prof`). The CPU seconds of the scheduler
 * (whole life) and of the API server (from the scheduler's start to the last binding) are printed beside, and of
 * the store with BENCH_STORE_PID=<etcd's pid>.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..', '..', '..');
const SCALE = Number(process.env.BENCH_SCALE ?? 1);

interface Case {
  name: string;
  nodes: number;
  pods: number;
  qps: number;
  burst: number;
  /** Each pod has required anti-affinity to the others on `kubernetes.io/hostname` (scheduler_perf's). */
  antiAffinity?: boolean;
  /** Minutes of setup and scheduling: run only when BENCH_LARGE=1 or named in BENCH_CASES. */
  large?: boolean;
}

const CASES: Case[] = [
  { name: '100n-1000p-qps50', nodes: 100, pods: 1000, qps: 50, burst: 100 },
  { name: '100n-1000p-qps5000', nodes: 100, pods: 1000, qps: 5000, burst: 10000 },
  { name: '1000n-5000p-qps5000', nodes: 1000, pods: 5000, qps: 5000, burst: 10000, large: true },
  { name: '1000n-5000p-qps50', nodes: 1000, pods: 5000, qps: 50, burst: 100, large: true },
  {
    name: '5000n-5000p-antiaffinity-qps5000',
    nodes: 5000,
    pods: 5000,
    qps: 5000,
    burst: 10000,
    antiAffinity: true,
    large: true,
  },
];

const ANTI_AFFINITY = {
  podAntiAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: [
      { labelSelector: { matchLabels: { app: 'bench' } }, topologyKey: 'kubernetes.io/hostname' },
    ],
  },
};

function log(s: string): void {
  process.stderr.write(`[scheduler bench] ${s}\n`);
}

function freePortOf(): Promise<number> {
  return new Promise((res) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => res(p));
    });
  });
}

class Client {
  readonly agent: Agent;
  constructor(
    readonly url: string,
    ca: string,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 32, ca });
  }
  /** One request, sent again when a kept-alive connection was reset under it (the server closed it meanwhile). */
  async req(method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(method, path, body);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (attempt >= 3 || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw err;
      }
    }
  }

  private once(method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
    return new Promise((res, rej) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const r = request(
        `${this.url}${path}`,
        {
          method,
          agent: this.agent,
          headers: payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {},
        },
        (resp) => {
          let b = '';
          resp.on('data', (c: Buffer) => (b += c.toString()));
          resp.on('end', () => res({ status: resp.statusCode ?? 0, body: b }));
        },
      );
      r.on('error', rej);
      r.end(payload);
    });
  }
}

async function startApiServer(dir: string): Promise<{ child: ChildProcess; url: string; ca: string }> {
  const port = await freePortOf();
  const certDir = join(dir, 'pki');
  const store = process.env.BENCH_ETCD ?? `sqlite://${join(dir, 'state.db')}`;
  const child = spawn(
    process.execPath,
    [
      join(root, 'packages/apiserver/bin/platform-apiserver'),
      `--store-servers=${store}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${certDir}`,
      '--endpoint-reconciler-type=none',
      '--enable-priority-and-fairness=false',
      '--max-requests-inflight=10000',
      '--max-mutating-requests-inflight=10000',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr?.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-3000)));
  const url = `https://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`apiserver exited: ${err}`);
    if (Date.now() > deadline) throw new Error(`apiserver not ready: ${err}`);
    const crt = join(certDir, 'apiserver.crt');
    if (existsSync(crt)) {
      const ca = readFileSync(crt, 'utf8');
      const c = new Client(url, ca);
      const ok = await c.req('GET', '/readyz').then(
        (r) => r.status === 200,
        () => false,
      );
      c.agent.destroy();
      if (ok) return { child, url, ca };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function parallel(n: number, f: (i: number) => Promise<void>, concurrency = 32): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await f(next++);
    }),
  );
}

/** Resolves when `want` pods carry a nodeName, watching from `rv`; returns the time (ms) of the last. */
function watchBindings(c: Client, rv: string, want: number): { done: Promise<number>; stop: () => void } {
  const bound = new Set<string>();
  let stopFn = (): void => {};
  const done = new Promise<number>((res, rej) => {
    const r = request(
      `${c.url}/api/v1/namespaces/bench/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false`,
      { agent: new Agent({ ca: (c.agent.options as { ca?: string }).ca }) },
      (resp) => {
        let buf = '';
        resp.on('data', (chunk: Buffer) => {
          buf += chunk.toString();
          let i: number;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (!line.trim()) continue;
            const ev = JSON.parse(line) as { object?: { metadata?: { name?: string }; spec?: { nodeName?: string } } };
            if (ev.object?.spec?.nodeName) bound.add(ev.object.metadata?.name ?? '');
            if (bound.size >= want) {
              res(performance.now());
              r.destroy();
              return;
            }
          }
        });
        resp.on('error', () => undefined);
      },
    );
    r.on('error', (e) => (bound.size >= want ? undefined : rej(e)));
    r.end();
    stopFn = () => {
      rej(new Error(`stopped with ${bound.size} of ${want} bound`));
      r.destroy();
    };
  });
  return { done, stop: () => stopFn() };
}

/** User and system CPU seconds a process has used so far (/proc/<pid>/stat). */
function cpuSecondsOf(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

async function runCase(k: Case): Promise<{
  podsPerSecond: number;
  seconds: number;
  schedulerCpuS: number;
  apiCpuS: number;
  storeCpuS: number;
  startS: number;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'scheduler-bench-'));
  const nodes = Math.max(1, Math.round(k.nodes * SCALE));
  const pods = Math.max(1, Math.round(k.pods * SCALE));
  const api = await startApiServer(dir);
  const c = new Client(api.url, api.ca);
  let sched: ChildProcess | undefined;
  try {
    await c.req('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
    await c.req('POST', '/api/v1/namespaces/bench/serviceaccounts', { metadata: { name: 'default' } });
    log(`${k.name}: creating ${nodes} nodes and ${pods} pods`);
    await parallel(nodes, async (i) => {
      const alloc = { cpu: '32', memory: '128Gi', pods: '110' };
      const r = await c.req('POST', '/api/v1/nodes', {
        metadata: {
          name: `node-${i}`,
          labels: { 'kubernetes.io/hostname': `node-${i}`, 'topology.kubernetes.io/zone': `z${i % 3}` },
        },
        status: { capacity: alloc, allocatable: alloc, conditions: [{ type: 'Ready', status: 'True' }] },
      });
      if (r.status !== 201 && r.status !== 409) throw new Error(`node: ${r.status} ${r.body}`);
    });
    await parallel(pods, async (i) => {
      const r = await c.req('POST', '/api/v1/namespaces/bench/pods', {
        metadata: { name: `pod-${i}`, labels: { app: 'bench' } },
        spec: {
          // TaintNodesByCondition taints a new Node not-ready until a node agent reports it Ready.
          tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }],
          automountServiceAccountToken: false,
          ...(k.antiAffinity ? { affinity: ANTI_AFFINITY } : {}),
          containers: [{ name: 'c', image: 'pause', resources: { requests: { cpu: '100m', memory: '100Mi' } } }],
        },
      });
      if (r.status !== 201 && r.status !== 409) throw new Error(`pod: ${r.status} ${r.body}`);
    });
    const list = JSON.parse((await c.req('GET', '/api/v1/namespaces/bench/pods?limit=1')).body) as {
      metadata: { resourceVersion: string };
    };
    const w = watchBindings(c, list.metadata.resourceVersion, pods);
    const kubeconfig = join(dir, 'scheduler.conf');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${api.url}\n    certificate-authority-data: ${Buffer.from(api.ca).toString('base64')}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n`,
    );
    log(`${k.name}: starting the scheduler`);
    const apiCpu0 = cpuSecondsOf(api.child.pid);
    const storePid = process.env.BENCH_STORE_PID ? Number(process.env.BENCH_STORE_PID) : undefined;
    const storeCpu0 = storePid ? cpuSecondsOf(storePid) : NaN;
    const t0 = performance.now();
    const profile = process.env.BENCH_CPU_PROFILE;
    sched = spawn(
      process.execPath,
      [
        ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
        join(root, 'packages/scheduler/bin/platform-scheduler'),
        `--clientconfig=${kubeconfig}`,
        `--api-qps=${k.qps}`,
        `--api-burst=${k.burst}`,
        '--leader-elect=false',
        '--secure-port=0',
        '--port=0',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let serr = '';
    let synced = 0;
    sched.stderr?.on('data', (d: Buffer) => {
      const text = d.toString();
      if (!synced && text.includes('Scheduler caches synced')) synced = performance.now();
      serr = (serr + text).slice(-2000);
    });
    const timeout = setTimeout(() => w.stop(), Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000);
    const t1 = await w.done.catch(async (e: Error) => {
      const one = await c.req('GET', '/api/v1/namespaces/bench/pods/pod-0');
      throw new Error(`${e.message}: ${serr}\npod-0: ${one.body.slice(-700)}`);
    });
    clearTimeout(timeout);
    const apiCpuS = cpuSecondsOf(api.child.pid) - apiCpu0;
    const storeCpuS = storePid ? cpuSecondsOf(storePid) - storeCpu0 : NaN;
    const seconds = (t1 - t0) / 1000;
    const startS = synced ? (synced - t0) / 1000 : NaN;
    return {
      podsPerSecond: pods / seconds,
      seconds,
      schedulerCpuS: cpuSecondsOf(sched.pid),
      apiCpuS,
      storeCpuS,
      startS,
    };
  } finally {
    if (sched && process.env.BENCH_CPU_PROFILE) {
      // The profile is written when the process exits on its own: SIGTERM, and wait for it.
      const exited = new Promise((r) => sched?.once('exit', r));
      sched.kill('SIGTERM');
      await exited;
    }
    sched?.kill('SIGKILL');
    c.agent.destroy();
    api.child.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const pick = (process.env.BENCH_CASES ?? '').split(',').filter(Boolean);
  const large = process.env.BENCH_LARGE === '1';
  const cases = CASES.filter((k) => (pick.length ? pick.includes(k.name) : !k.large || large));
  const rows: string[] = [];
  for (const k of cases) {
    const r = await runCase(k);
    const row = `| ${k.name} | ${Math.round(k.nodes * SCALE)} | ${Math.round(k.pods * SCALE)} | ${k.qps}/${k.burst} | ${r.seconds.toFixed(1)} | ${r.podsPerSecond.toFixed(1)} | ${r.startS.toFixed(1)} | ${(Math.round(k.pods * SCALE) / (r.seconds - r.startS)).toFixed(1)} | ${r.schedulerCpuS.toFixed(1)} | ${r.apiCpuS.toFixed(1)} | ${Number.isNaN(r.storeCpuS) ? '–' : r.storeCpuS.toFixed(1)} | ${loadavg()[0]?.toFixed(1)} |`;
    log(row);
    rows.push(row);
  }
  process.stdout.write(
    [
      `scheduler throughput (${process.env.BENCH_ETCD ? 'etcd' : 'SQLite'}; from the scheduler's start to the last binding seen by a watch)`,
      '| case | nodes | pods | qps/burst | seconds | pods/s | start s | pods/s after start | scheduler CPU s | API server CPU s | etcd CPU s | load avg |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
