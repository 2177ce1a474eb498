/**
 * The node agent's benchmark through CRI (`npm run bench -- cri`), with real containers on a throwaway containerd:
 * 1. containerd alone, through CriRuntime: host-network sandbox + container create + start, one pod at a time
 *    (BENCH_CRI_PODS, 20) and then 10 at a time; p50/p99 per pod.
 * 2. the agent with `--container-runtime=remote`: BENCH_PODS (100) host-network pods of the local busybox image
 *    created 10 at a time and bound to its node, latency from the create request to Running seen through a watch,
 *    p50/p99, at the default `--api-qps 5 --api-burst 10` and at `--api-qps 50 --api-burst 100`; the agent's RSS idle
 *    and with the pods, 2 s and 20 s after the last one ran (containerd and its shims not counted: shims are about
 *    13 MiB each).
 *    Where the time went, per pod, from the creates until every pod ran: the CPU of the agent, containerd, its
 *    shims, what they ran and reaped (runc), this process (the API server and the benchmark's client) and the rest
 *    of the machine; and the agent's CRI calls (count and wall time from the agent's side, from its `CRI call`
 *    lines at `--vmodule=cri-runtime=10`).
 * The API server runs in this process (embedded store). Figures are printed, never asserted. Needs root and
 * containerd (see testing/containerd.ts); BENCH_SKIP_AGENT=1 or BENCH_SKIP_CRI=1 skips a part; BENCH_API_QPS
 * (`5,50`) picks the agent's `--api-qps` cases (burst twice the QPS); BENCH_AGENT_SIGNAL (e.g. SIGUSR2) is sent to the
 * agent once its pods' RSS is read (with `NODE_OPTIONS=--heapsnapshot-signal=SIGUSR2`, a heap snapshot of it).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

import { type Pod, PodKind } from '@platform/api';

import {
  containerdUnavailable,
  PAUSE_IMAGE,
  startContainerd,
  TEST_IMAGE,
  type TestContainerd,
} from '../../testing/containerd';
import { type AgentProcess, startAgent, startCluster, type TestCluster, waitFor } from '../../testing/support';
import type { PodSandboxConfig } from '../runtime';
import { CriRuntime } from './cri-runtime';

const PODS = Number(process.env.BENCH_PODS ?? 100);
const CRI_PODS = Number(process.env.BENCH_CRI_PODS ?? 20);

function rssMb(pid: number | undefined): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** CPU ms of a process: its own (user + system) and its reaped children's. 0 for a process that is gone. */
function cpuMs(pid: number | undefined): { own: number; children: number } {
  try {
    // Fields after the command's closing parenthesis: utime, stime, cutime, cstime are the 12th to 15th.
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const tick = 10; // ms per clock tick (USER_HZ 100)
    return { own: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick };
  } catch {
    return { own: 0, children: 0 };
  }
}

/** Busy CPU ms of the whole machine (every CPU, idle and iowait left out). */
function machineBusyMs(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!) * 10;
}

/** A reading of the CPU used so far by each party of the benchmark. */
interface CpuReading {
  agent: number;
  containerd: number;
  containerdChildren: number;
  shims: number;
  shimChildren: number;
  bench: number;
  machine: number;
}

function readCpu(agentPid: number | undefined, ctrd: TestContainerd): CpuReading {
  const c = cpuMs(ctrd.pid);
  const shims = ctrd.shimPids().map(cpuMs);
  const u = process.cpuUsage();
  return {
    agent: cpuMs(agentPid).own,
    containerd: c.own,
    containerdChildren: c.children,
    shims: shims.reduce((a, s) => a + s.own, 0),
    shimChildren: shims.reduce((a, s) => a + s.children, 0),
    bench: (u.user + u.system) / 1000,
    machine: machineBusyMs(),
  };
}

/** CPU ms per pod of each party between two readings; `other` is the rest of the machine's busy time. */
function cpuPerPod(a: CpuReading, b: CpuReading, pods: number): Record<string, number> {
  const d = (k: keyof CpuReading): number => Math.round((b[k] - a[k]) / pods);
  const out = {
    agent: d('agent'),
    containerd: d('containerd'),
    'containerd children (shim start)': d('containerdChildren'),
    shims: d('shims'),
    'shim children (runc)': d('shimChildren'),
    'API server + bench client': d('bench'),
  };
  const known = Object.values(out).reduce((x, y) => x + y, 0);
  return { ...out, 'rest of the machine': d('machine') - known, 'machine busy': d('machine') };
}

/** The agent's `CRI call` lines (verbosity 10) in `log`: per method, calls, calls a pod and wall-time figures. */
function criCalls(log: string, pods: number): Array<Record<string, string | number>> {
  const by = new Map<string, number[]>();
  for (const m of log.matchAll(/"CRI call".*? rpc="(\w+)" ms=([\d.]+)/g)) {
    const l = by.get(m[1]!) ?? [];
    l.push(Number(m[2]));
    by.set(m[1]!, l);
  }
  return [...by]
    .sort((x, y) => y[1].length - x[1].length)
    .map(([rpc, ms]) => {
      ms.sort((x, y) => x - y);
      return {
        rpc,
        calls: ms.length,
        'per pod': Math.round((ms.length / pods) * 100) / 100,
        'p50 ms': Math.round(pct(ms, 50)),
        'p99 ms': Math.round(pct(ms, 99)),
        'max ms': Math.round(ms[ms.length - 1]!),
        'sum s': Math.round(ms.reduce((x, y) => x + y, 0) / 100) / 10,
      };
    });
}

/** containerd alone: sandbox + container through CriRuntime, `parallel` pods at a time. */
async function criAlone(ctrd: TestContainerd, n: number, parallel: number): Promise<{ p50: number; p99: number }> {
  const rt = new CriRuntime({ endpoint: ctrd.endpoint, requestTimeoutMs: 60_000, nodeIp: '127.0.0.1' });
  const lat: number[] = [];
  const ids: string[] = [];
  try {
    const one = async (i: number): Promise<void> => {
      const uid = `bench-${parallel}-${i}`;
      const logDirectory = join(ctrd.logDir, uid);
      mkdirSync(logDirectory, { recursive: true });
      const sc: PodSandboxConfig = {
        metadata: { name: uid, namespace: 'bench', uid, attempt: 0 },
        logDirectory,
        labels: {},
        annotations: {},
        linux: {
          cgroupParent: `${ctrd.cgroupParent}/pod${uid}`,
          securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } },
        },
      };
      const t0 = performance.now();
      const sandboxId = await rt.runPodSandbox(sc);
      ids.push(sandboxId);
      const cid = await rt.createContainer(
        sandboxId,
        {
          metadata: { name: 'c', attempt: 0 },
          image: TEST_IMAGE,
          command: ['sleep', '3600'],
          args: [],
          envs: [],
          mounts: [],
          labels: {},
          annotations: {},
          logPath: 'c/0.log',
        },
        sc,
      );
      await rt.startContainer(cid);
      lat.push(performance.now() - t0);
    };
    for (let i = 0; i < n; i += parallel) {
      await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, (_, j) => one(i + j)));
    }
    for (const id of ids) await rt.removePodSandbox(id);
  } finally {
    await rt.close();
  }
  lat.sort((a, b) => a - b);
  return { p50: Math.round(pct(lat, 50)), p99: Math.round(pct(lat, 99)) };
}

/** Creates `n` host-network pods (10 at a time) bound to `node`; create → Running through a watch. */
async function startupLatency(
  c: TestCluster,
  ctrd: TestContainerd,
  prefix: string,
  n: number,
  node: string,
  onAllRunning: () => void = () => undefined,
): Promise<{ p50: number; p99: number; total: number }> {
  const pods = c.clientset.resource(PodKind, 'default');
  const created = new Map<string, number>();
  const running = new Map<string, number>();
  const list = await pods.list({ limit: 1 });
  const w = await pods.watch({ resourceVersion: list.metadata?.resourceVersion ?? '0' });
  const watching = (async () => {
    for await (const ev of w) {
      const p = ev.object as Pod;
      const name = p.metadata?.name ?? '';
      if (p.status?.phase === 'Running' && !running.has(name) && name.startsWith(prefix)) running.set(name, Date.now());
      if (running.size >= n) break;
    }
  })();
  const t0 = Date.now();
  for (let i = 0; i < n; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, n - i) }, async (_, j) => {
        const name = `${prefix}${i + j}`;
        created.set(name, Date.now());
        const p = (await pods.create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: {
            nodeName: node,
            hostNetwork: true,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image: TEST_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
          },
        } as never)) as Pod;
        ctrd.trackCgroups(`/platform/pod${p.metadata!.uid!}`);
      }),
    );
  }
  await waitFor(`${n} pods Running`, () => running.size >= n, 30 * 60_000);
  onAllRunning();
  w.stop?.();
  await Promise.race([watching, new Promise((r) => setTimeout(r, 1000))]);
  const lat = [...running].map(([name, t]) => t - (created.get(name) ?? t)).sort((a, b) => a - b);
  return { p50: pct(lat, 50), p99: pct(lat, 99), total: Date.now() - t0 };
}

async function main(): Promise<void> {
  const reason = containerdUnavailable();
  if (reason) {
    console.log(`SKIPPED: containerd cannot run here: ${reason}`);
    return;
  }
  const rows: Array<Record<string, string | number>> = [];
  if (!process.env.BENCH_SKIP_CRI) {
    const ctrd = await startContainerd();
    try {
      for (const parallel of [1, 10]) {
        const r = await criAlone(ctrd, CRI_PODS, parallel);
        rows.push({
          case: `containerd alone: ${CRI_PODS} host-network pods (sandbox + container), ${parallel} at a time`,
          'p50 ms': r.p50,
          'p99 ms': r.p99,
        });
      }
    } finally {
      await ctrd.stop();
    }
  }
  const details: Array<[string, unknown[]]> = [];
  if (!process.env.BENCH_SKIP_AGENT) {
    const cases = (process.env.BENCH_API_QPS ?? '5,50').split(',').map(Number);
    for (const [qps, burst] of cases.map((q) => [q, 2 * q] as const)) {
      const ctrd = await startContainerd();
      const c = await startCluster();
      let agent: AgentProcess | undefined;
      try {
        agent = await startAgent(c, 'cri-bench-node', [
          '--container-runtime=remote',
          `--container-runtime-endpoint=${ctrd.endpoint}`,
          `--pod-infra-container-image=${PAUSE_IMAGE}`,
          `--api-qps=${qps}`,
          `--api-burst=${burst}`,
          '--max-pods=1000',
          '--vmodule=cri-runtime=10',
        ]);
        await waitFor(
          'node registered',
          async () => (await fetch(`http://127.0.0.1:${agent!.ports.healthz}/healthz`)).ok,
          60_000,
        );
        await new Promise((r) => setTimeout(r, 3000));
        const idle = rssMb(agent.child.pid);
        const load = loadavg()[0]!.toFixed(1);
        const logFrom = agent.output().length;
        const cpu0 = readCpu(agent.child.pid, ctrd);
        let cpu1 = cpu0;
        let logTo = logFrom;
        const r = await startupLatency(c, ctrd, 'c', PODS, 'cri-bench-node', () => {
          cpu1 = readCpu(agent!.child.pid, ctrd);
          logTo = agent!.output().length;
        });
        await new Promise((res) => setTimeout(res, 2000));
        const busy = rssMb(agent.child.pid);
        // And once the burst's garbage had time to go (V8's memory reducer starts 8 s after the allocations calm).
        await new Promise((res) => setTimeout(res, 18_000));
        const settled = rssMb(agent.child.pid);
        const name = `api-qps ${qps}/burst ${burst}, load ${load}`;
        details.push([`CPU ms per pod until all Running (${name})`, [cpuPerPod(cpu0, cpu1, PODS)]]);
        details.push([
          `the agent's CRI calls until all Running (${name})`,
          criCalls(agent.output().slice(logFrom, logTo), PODS),
        ]);
        const signal = process.env.BENCH_AGENT_SIGNAL;
        if (signal) {
          const from = agent.output().length;
          agent.child.kill(signal as NodeJS.Signals);
          await new Promise((res) => setTimeout(res, 5000));
          // What the agent printed meanwhile (a `--require`d probe's figures), its own CRI call lines left out.
          const said = agent.output().slice(from).split('\n');
          console.log(said.filter((l) => l && !l.includes('"CRI call"')).join('\n'));
        }
        rows.push({
          case: `agent, remote (containerd), 1 node, ${PODS} pods, api-qps ${qps}/burst ${burst}, load ${load}`,
          'p50 ms': r.p50,
          'p99 ms': r.p99,
          'all Running after ms': r.total,
          'agent RSS idle MB': idle,
          [`agent RSS ${PODS} pods MB`]: busy,
          'after 20 s': settled,
        });
        await c.clientset.resource(PodKind, 'default').deleteCollection({ gracePeriodSeconds: 0 } as never);
      } finally {
        await agent?.stop();
        // containerd's stop() removes whatever pods the agent left.
        await ctrd.stop();
        await c.stop();
      }
    }
  }
  console.table(rows);
  for (const [title, table] of details) {
    console.log(title);
    console.table(table);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
