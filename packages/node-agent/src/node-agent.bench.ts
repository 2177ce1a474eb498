/**
 * Node agent benchmark (`npm run bench -- node-agent`): pod startup latency — from the create request to Running seen
 * through a watch — and the agent's memory.
 * 1. builtin runtime, one node: BENCH_PODS (100) pods created 10 at a time and bound to the node, with the agent at
 *    the default `--api-qps 5 --api-burst 10` and at `--api-qps 50 --api-burst 100`; p50/p99; the agent's RSS idle
 *    and with the pods running (containers are separate processes, not counted).
 * 2. simulated: BENCH_SIM_NODES (1000) nodes in one agent process, BENCH_SIM_PODS (10000) pods spread over them,
 *    then BENCH_SIM_HOLD_MS (5 min) watching that every node's Lease stays fresher than its 40 s duration.
 * The API server runs in this process (embedded store). Figures are printed, never asserted. BENCH_SKIP_SIM=1 or
 * BENCH_SKIP_BUILTIN=1 skips a part.
 */
import { readFileSync } from 'node:fs';

import { isAlreadyExists, type Lease, LeaseKind, NodeKind, type Pod, PodKind } from '@platform/api';

import { type AgentProcess, startAgent, startCluster, type TestCluster, waitFor } from './testing/support';

const PODS = Number(process.env.BENCH_PODS ?? 100);
const SIM_NODES = Number(process.env.BENCH_SIM_NODES ?? 1000);
const SIM_PODS = Number(process.env.BENCH_SIM_PODS ?? 10000);
/** How long the simulated nodes are watched after the pods run (their Leases must stay fresh). */
const HOLD_MS = Number(process.env.BENCH_SIM_HOLD_MS ?? 300_000);

function rssMb(pid: number | undefined): number {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
}

/** A create that a dropped keep-alive connection failed is sent again (409 means the first one landed). */
async function retry(f: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await f();
      return;
    } catch (err) {
      if (isAlreadyExists(err)) return;
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Creates `n` pods (10 at a time) with nodes from `nodeOf`, and measures create → Running through a watch. */
async function startupLatency(
  c: TestCluster,
  prefix: string,
  n: number,
  nodeOf: (i: number) => string,
  command: string[] | undefined,
  batch = 10,
): Promise<{ p50: number; p99: number; total: number }> {
  const pods = c.clientset.resource(PodKind, 'default');
  const created = new Map<string, number>();
  const running = new Map<string, number>();
  // A busy server's watch cache may lag behind the list: retried, as a reflector does.
  let w: Awaited<ReturnType<typeof pods.watch>> | undefined;
  for (let attempt = 0; !w; attempt++) {
    try {
      // From "0" (any recent state): the pods' watch cache may stand behind a list's revision when no pod changed.
      w = await pods.watch({ resourceVersion: '0' });
    } catch (err) {
      if (attempt > 30) throw err;
      await new Promise((res) => setTimeout(res, 1000));
    }
  }
  const watching = (async () => {
    for await (const ev of w) {
      const p = ev.object as Pod;
      const name = p.metadata?.name ?? '';
      if (p.status?.phase === 'Running' && !running.has(name) && name.startsWith(prefix)) running.set(name, Date.now());
      if (running.size >= n) break;
    }
  })();
  const t0 = Date.now();
  for (let i = 0; i < n; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, async (_, j) => {
        const name = `${prefix}${i + j}`;
        created.set(name, Date.now());
        await retry(() =>
          pods.create({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name },
            spec: {
              nodeName: nodeOf(i + j),
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'c', image: 'busybox', ...(command ? { command } : {}) }],
            },
          } as never),
        );
      }),
    );
  }
  await waitFor(`${n} pods Running`, () => running.size >= n, 30 * 60_000);
  w.stop?.();
  await Promise.race([watching, new Promise((r) => setTimeout(r, 1000))]);
  const lat = [...running].map(([name, t]) => t - (created.get(name) ?? t)).sort((a, b) => a - b);
  return { p50: pct(lat, 50), p99: pct(lat, 99), total: Date.now() - t0 };
}

async function deleteAll(c: TestCluster): Promise<void> {
  await c.clientset.resource(PodKind, 'default').deleteCollection({ gracePeriodSeconds: 0 } as never);
}

async function main(): Promise<void> {
  const rows: Array<Record<string, string | number>> = [];
  if (!process.env.BENCH_SKIP_BUILTIN) {
    for (const [qps, burst] of [
      [5, 10],
      [50, 100],
    ] as const) {
      const c = await startCluster();
      let agent: AgentProcess | undefined;
      try {
        agent = await startAgent(c, 'bench-node', [`--api-qps=${qps}`, `--api-burst=${burst}`, '--max-pods=1000']);
        await waitFor(
          'node registered',
          async () => (await fetch(`http://127.0.0.1:${agent!.ports.healthz}/healthz`)).ok,
          60_000,
        );
        await new Promise((r) => setTimeout(r, 3000));
        const idle = rssMb(agent.child.pid);
        const r = await startupLatency(c, 'b', PODS, () => 'bench-node', ['sleep', '3600']);
        await new Promise((res) => setTimeout(res, 2000));
        const busy = rssMb(agent.child.pid);
        rows.push({
          case: `builtin, 1 node, ${PODS} pods, api-qps ${qps}/burst ${burst}`,
          'p50 ms': r.p50,
          'p99 ms': r.p99,
          'all Running after ms': r.total,
          'agent RSS idle MB': idle,
          [`agent RSS ${PODS} pods MB`]: busy,
        });
        await deleteAll(c);
      } finally {
        await agent?.stop();
        await c.stop();
      }
    }
  }
  if (!process.env.BENCH_SKIP_SIM) {
    const c = await startCluster();
    let agent: AgentProcess | undefined;
    try {
      agent = await startAgent(c, 'unused', [`--simulate-nodes=${SIM_NODES}`, '--simulate-node-prefix=sim']);
      const nodes = c.clientset.resource(NodeKind);
      const t0 = Date.now();
      await waitFor(
        `${SIM_NODES} nodes registered`,
        async () => ((await nodes.list({ limit: 1 })).metadata?.remainingItemCount ?? 0) + 1 >= SIM_NODES,
        10 * 60_000,
      );
      const registered = Date.now() - t0;
      const r =
        SIM_PODS > 0
          ? await startupLatency(c, 's', SIM_PODS, (i) => `sim-${i % SIM_NODES}`, undefined, 50)
          : { p50: NaN, p99: NaN, total: 0 };
      // Hold: every 15 s, the age of every node's Lease; a node whose Lease is older than its duration (40 s) would
      // be marked NotReady by the node lifecycle controller.
      let maxAge = 0;
      let stale = 0;
      const holdUntil = Date.now() + HOLD_MS;
      while (Date.now() < holdUntil) {
        await new Promise((res) => setTimeout(res, 15_000));
        const leases = (await c.clientset.resource(LeaseKind, 'node-lease').list()).items as Lease[];
        const now = Date.now();
        for (const l of leases) {
          const age = now - Date.parse(String(l.spec?.renewTime ?? 0));
          maxAge = Math.max(maxAge, age);
          if (age > 40_000) stale++;
        }
      }
      rows.push({
        case: `simulated, ${SIM_NODES} nodes, ${SIM_PODS} pods (created 50 at a time)`,
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        'all Running after ms': r.total,
        'nodes registered after ms': registered,
        'agent RSS MB': rssMb(agent.child.pid),
        [`max Lease age over ${HOLD_MS / 1000}s (ms)`]: maxAge,
        'Lease samples older than 40s': stale,
      });
    } finally {
      await agent?.stop();
      await c.stop();
    }
  }
  console.table(rows);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
