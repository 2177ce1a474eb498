/**
 * Controller benchmark (`npm run bench -- controllers`): a Deployment of BENCH_REPLICAS (1,000) replicas until
 * that many ReplicaSet-owned pods exist (no scheduler or node agent: pods stay Pending), with the controller manager
 * binary (replicaset, deployment and serviceaccount controllers, no leader election) against the API server binary
 * on SQLite (BENCH_STORES=sqlite,etcd: also on a one-member etcd); at the default `--api-qps 20 --api-burst 30` and at `--api-qps 5000 --api-burst 10000`. Prints pods/s
 * (Deployment created → last pod seen through a watch), the API requests the controller manager made per pod (its
 * `rest_client_requests_total`), and the CPU seconds each process used. Figures are printed, never asserted.
 * BENCH_SKIP_DEFAULT=1 skips the (50 s) run at the defaults; BENCH_CPU_PROFILE=<dir> writes the API server's CPU
 * profile there (`--cpu-prof`).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { DeploymentKind, type Pod, PodKind } from '@platform/api';
import { type EtcdCluster, freePort, startEtcd } from '@platform/apiserver';

import { startApiServer, startControllerManager } from './integration/support';
import { waitFor } from './testing/harness';

const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 1000);

function cpuSeconds(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

function get(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

async function requestsMade(port: number): Promise<number> {
  const text = await get(`https://127.0.0.1:${port}/metrics`);
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('rest_client_requests_total')) n += Number(line.split(' ').pop());
  return n;
}

/** BENCH_STORES=sqlite,etcd: the stores to run on (default sqlite); etcd is one member started here. */
const STORES = (process.env.BENCH_STORES ?? 'sqlite').split(',');
let etcd: EtcdCluster | undefined;

async function run(label: string, qpsArgs: string[], store: string): Promise<void> {
  const prof = process.env.BENCH_CPU_PROFILE;
  const storeArgs =
    store === 'etcd'
      ? [`--store-servers=${(etcd ??= await startEtcd()).endpoints.join(',')}`, `--store-prefix=/bench-${Date.now()}`]
      : [];
  const api = await startApiServer(prof ? `--cpu-prof --cpu-prof-dir=${prof}` : undefined, storeArgs);
  const port = await freePort();
  const cm = startControllerManager(api, [
    '--leader-elect=false',
    '--controllers=replicaset,deployment,serviceaccount',
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    `--cert-dir=${mkdtempSync(join(tmpdir(), 'cm-bench-'))}`,
    '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
    ...qpsArgs,
  ]);
  try {
    await waitFor('the controller manager', async () => (await requestsMade(port)) > 0, 60_000);
    await waitFor('the default ServiceAccount', async () => {
      await api.client.resource(PodKind, 'default').list({ limit: 1 });
      return (await get(`https://127.0.0.1:${port}/healthz`)).includes('ok');
    });
    await new Promise((r) => setTimeout(r, 2000)); // the serviceaccount controller's first writes
    const pods = api.client.resource(PodKind, 'default');
    const list = await pods.list({ limit: 1 });
    const seen = new Set<string>();
    let t0 = Date.now();
    let last = 0;
    // The watch's response starts with its first event: open it without waiting.
    const watching = (async () => {
      // A loaded server's watch cache may lag the list's resourceVersion (504 "too large"): try again.
      let w;
      for (;;) {
        try {
          w = await pods.watch({ resourceVersion: list.metadata?.resourceVersion ?? '0' });
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      for await (const ev of w) {
        if (ev.type !== 'ADDED') continue;
        const p = ev.object as Pod;
        if (p.metadata?.ownerReferences?.[0]?.kind !== 'ReplicaSet') continue;
        seen.add(p.metadata.name ?? '');
        last = Date.now();
        if (process.env.BENCH_TRACE && (seen.size & (seen.size - 1)) === 0) console.log(seen.size, last - t0);
        if (seen.size >= REPLICAS) break;
      }
    })();
    const req0 = await requestsMade(port);
    const cpuApi0 = cpuSeconds(api.process.child.pid);
    const cpuCm0 = cpuSeconds(cm.child.pid);
    t0 = Date.now();
    await api.client.resource(DeploymentKind, 'default').create({
      metadata: { name: 'bench' },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app: 'bench' } },
        template: { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    await Promise.race([
      watching,
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 10 minutes')), 600_000)),
    ]);
    const seconds = (last - t0) / 1000;
    // Let the status writes that follow the last pod finish before counting requests.
    await new Promise((r) => setTimeout(r, 3000));
    const requests = (await requestsMade(port)) - req0;
    const cpuApi = cpuSeconds(api.process.child.pid) - cpuApi0;
    const cpuCm = cpuSeconds(cm.child.pid) - cpuCm0;
    console.log(
      `${store.padEnd(7)}${label.padEnd(34)} ${String(REPLICAS).padStart(5)} pods in ${seconds.toFixed(2).padStart(6)} s = ${(REPLICAS / seconds).toFixed(1).padStart(7)} pods/s; ${(requests / REPLICAS).toFixed(2)} requests/pod (${requests} in all, incl. ~3 s after); CPU s: apiserver ${cpuApi.toFixed(1)}, controller-manager ${cpuCm.toFixed(1)}`,
    );
  } finally {
    await cm.kill('SIGKILL');
    await api.stop();
  }
}

async function main(): Promise<void> {
  console.log(`controllers: a Deployment of ${REPLICAS} replicas to ${REPLICAS} ReplicaSet-owned pods (no scheduler)`);
  try {
    for (const store of STORES) {
      if (process.env.BENCH_SKIP_DEFAULT !== '1') await run('--api-qps 20 --api-burst 30 (defaults)', [], store);
      await run('--api-qps 5000 --api-burst 10000', ['--api-qps=5000', '--api-burst=10000'], store);
    }
  } finally {
    await etcd?.stop();
  }
  console.log(`Machine: load average ${loadavg()[0]!.toFixed(1)} at the end (1 min).`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
