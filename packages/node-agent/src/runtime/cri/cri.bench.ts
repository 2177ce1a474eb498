/**
 * The node agent's benchmark through CRI (`npm run bench -- cri`), with real containers on a throwaway containerd:
 * 1. containerd alone, through CriRuntime: host-network sandbox + container create + start, one pod at a time
 *    (BENCH_CRI_PODS, 20) and then 10 at a time; p50/p99 per pod.
 * 2. the agent with `--container-runtime=remote`: BENCH_PODS (100) host-network pods of the local busybox image
 *    created 10 at a time and bound to its node, latency from the create request to Running seen through a watch,
 *    p50/p99, at the default `--api-qps 5 --api-burst 10` and at `--api-qps 50 --api-burst 100`; the agent's RSS idle
 *    and with the pods (containerd and its shims not counted: shims are about 13 MiB each).
 * The API server runs in this process (embedded store). Figures are printed, never asserted. Needs root and
 * containerd (see testing/containerd.ts); BENCH_SKIP_AGENT=1 or BENCH_SKIP_CRI=1 skips a part.
 */
import { mkdirSync, readFileSync } from 'node:fs';
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
  if (!process.env.BENCH_SKIP_AGENT) {
    for (const [qps, burst] of [
      [5, 10],
      [50, 100],
    ] as const) {
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
        ]);
        await waitFor(
          'node registered',
          async () => (await fetch(`http://127.0.0.1:${agent!.ports.healthz}/healthz`)).ok,
          60_000,
        );
        await new Promise((r) => setTimeout(r, 3000));
        const idle = rssMb(agent.child.pid);
        const r = await startupLatency(c, ctrd, 'c', PODS, 'cri-bench-node');
        await new Promise((res) => setTimeout(res, 2000));
        const busy = rssMb(agent.child.pid);
        rows.push({
          case: `agent, remote (containerd), 1 node, ${PODS} pods, api-qps ${qps}/burst ${burst}`,
          'p50 ms': r.p50,
          'p99 ms': r.p99,
          'all Running after ms': r.total,
          'agent RSS idle MB': idle,
          [`agent RSS ${PODS} pods MB`]: busy,
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
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
