/**
 * Controller benchmark (`npm run bench -- controllers`). The controller manager binary (no leader election, only the
 * controllers a case needs, no scheduler or node agent) against the API server binary on SQLite
 * (BENCH_STORES=sqlite,etcd: also on a one-member etcd). BENCH_CASES picks the cases (comma-separated; default
 * `deployment`; `endpoints` and `nodelifecycle` run only when named, as they take minutes: at load 20 on 2 CPUs the
 * endpoints case took 20 minutes, 10 of them creating its 21,000 objects, and nodelifecycle 8):
 *
 * - `deployment`: a Deployment of BENCH_REPLICAS (1,000) replicas until that many ReplicaSet-owned pods exist (pods
 *   stay Pending), with the replicaset, deployment and serviceaccount controllers, at the default `--api-qps 20
 *   --api-burst 30` and at `--api-qps 5000 --api-burst 10000`. Prints pods/s (Deployment created → last pod seen
 *   through a watch), the API requests the controller manager made per pod (its `rest_client_requests_total`), and
 *   the CPU seconds each process used. BENCH_SKIP_DEFAULT=1 skips the (50 s) run at the defaults.
 * - `endpoints`: BENCH_SERVICES (1,000) Services (selector app=svc-<i>, two named ports, one with a named target
 *   port) with BENCH_PODS_PER_SERVICE (10) pods each, created first (as scheduler_perf does): each pod has a node
 *   name and gets, through `pods/status` as a node agent would, a pod IP of 10.244.0.0/16 (only written into
 *   objects, never contacted) and Ready. Then the controller manager with the `endpoint` and `endpointslice`
 *   controllers, at `--api-qps 5000 --api-burst 10000` (BENCH_ENDPOINTS_AT_DEFAULTS=1: also at the defaults, about 4
 *   minutes more: 4,000 writes at 20/s). Prints the time from its start until every Endpoints holds exactly its
 *   pods' ready addresses and every Service's EndpointSlices hold its endpoints (followed through watches, then
 *   checked once more by a list), and the writes it made by verb and per Service. Then half of every Service's pods
 *   turn not ready (`pods/status`), and the same figures until the Endpoints and slices show it.
 * - `nodelifecycle`: BENCH_NODES (1,000) Nodes and their Leases in `node-lease`, heartbeated by this process as a
 *   1.21 node agent does: every Lease renewed every 10 s (renewals spread over the interval; a node whose last
 *   renewal is still in flight skips one, as an agent waits for its own), each Node's status (Ready and the pressure
 *   conditions) posted every 5 minutes, spread too. 100 renewals a second need an API server that keeps up: on a
 *   machine too loaded for it the nodes rightly go Unknown, and the case stops after 5 minutes saying so (at load 18
 *   on 2 CPUs the renewals of 1,000 nodes fell minutes behind; BENCH_NODES=250 kept up). The controller manager runs the
 *   `nodelifecycle` controller only, with `--node-monitor-grace-period` BENCH_NODE_GRACE (20s) and
 *   `--node-eviction-rate` BENCH_NODE_EVICTION_RATE (10; at the default 0.1 the NoExecute taints of 100 nodes would
 *   take 1,000 s). Prints the time until it removed the not-ready taint every new Node gets, then the CPU seconds
 *   per minute of the controller manager, the API server and this process over BENCH_NODE_STEADY_MS (2 minutes) of
 *   steady state and whether any node was tainted or not Ready in it; then BENCH_NODES_DOWN (100) nodes stop
 *   heartbeating, and it prints the time until they are Unknown, tainted `unreachable:NoSchedule` and
 *   `unreachable:NoExecute` (and whether any healthy node was touched).
 *
 * Figures are printed, never asserted. BENCH_CPU_PROFILE=<dir> writes the API server's CPU profile there
 * (`--cpu-prof`).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  DeploymentKind,
  type Endpoints,
  EndpointsKind,
  type EndpointSlice,
  EndpointSliceKind,
  formatMicroTime,
  isAlreadyExists,
  isConflict,
  type Lease,
  LeaseKind,
  NamespaceKind,
  type Node,
  NodeKind,
  type Pod,
  PodKind,
  type Service,
  ServiceAccountKind,
  ServiceKind,
} from '@platform/api';
import { type EtcdCluster, freePort, startEtcd } from '@platform/apiserver';
import { type Clientset, InformerFactory, LABEL_INDEX } from '@platform/client';

import { type ApiServer, type DaemonProcess, startApiServer, startControllerManager } from './integration/support';
import { waitFor } from './testing/harness';

const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 1000);
const KNOWN_CASES = ['deployment', 'endpoints', 'nodelifecycle'];
const CASES = (process.env.BENCH_CASES ?? 'deployment').split(',');
const HIGH_QPS = ['--api-qps=5000', '--api-burst=10000'];

function cpuSeconds(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds of this process (the benchmark's own clients and heartbeats). */
function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
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

/** The controller manager's `rest_client_requests_total`, by method (and `conflicts`: the 409 answers). */
async function requestsByMethod(port: number): Promise<Record<string, number>> {
  const text = await get(`https://127.0.0.1:${port}/metrics`);
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('rest_client_requests_total')) continue;
    const method = /method="([A-Z]+)"/.exec(line)?.[1] ?? '?';
    const n = Number(line.split(' ').pop());
    out[method] = (out[method] ?? 0) + n;
    // Writes refused for a stale resourceVersion: each one is written again.
    if (line.includes('code="409"')) out.conflicts = (out.conflicts ?? 0) + n;
  }
  return out;
}

async function requestsMade(port: number): Promise<number> {
  const { conflicts: _counted, ...byMethod } = await requestsByMethod(port);
  return Object.values(byMethod).reduce((a, b) => a + b, 0);
}

const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** The writes between two readings of {@link requestsByMethod}: in all, and as `POST 1000, PUT 3`. */
function writesBetween(a: Record<string, number>, b: Record<string, number>): { total: number; text: string } {
  let total = 0;
  const parts: string[] = [];
  for (const m of WRITE_METHODS) {
    const d = (b[m] ?? 0) - (a[m] ?? 0);
    total += d;
    if (d > 0) parts.push(`${m} ${d}`);
  }
  const conflicts = (b.conflicts ?? 0) - (a.conflicts ?? 0);
  if (conflicts > 0) parts.push(`of which ${conflicts} refused with 409 Conflict`);
  return { total, text: parts.join(', ') || 'none' };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A write that a dropped keep-alive connection failed is sent again (409 AlreadyExists: the first one landed). */
async function retry(f: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await f();
      return;
    } catch (err) {
      if (isAlreadyExists(err)) return;
      if (attempt >= 5) throw err;
      await sleep(500);
    }
  }
}

/** Runs `f(0)` … `f(n - 1)`, `width` at a time, each retried by {@link retry}. */
async function inParallel(n: number, width: number, f: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        await retry(() => f(i));
      }
    }),
  );
}

/** BENCH_STORES=sqlite,etcd: the stores to run on (default sqlite); etcd is one member started here. */
const STORES = (process.env.BENCH_STORES ?? 'sqlite').split(',');
let etcd: EtcdCluster | undefined;

/** The API server binary on `store`, with `args` more. */
async function startApi(store: string, args: string[] = []): Promise<ApiServer> {
  const prof = process.env.BENCH_CPU_PROFILE;
  const storeArgs =
    store === 'etcd'
      ? [`--store-servers=${(etcd ??= await startEtcd()).endpoints.join(',')}`, `--store-prefix=/bench-${Date.now()}`]
      : [];
  return startApiServer(prof ? `--cpu-prof --cpu-prof-dir=${prof}` : undefined, [...storeArgs, ...args]);
}

/** The controller manager binary with `controllers` only, serving its metrics on the returned port. */
async function startCm(
  api: ApiServer,
  controllers: string,
  args: string[],
): Promise<{ cm: DaemonProcess; port: number }> {
  const port = await freePort();
  const cm = startControllerManager(api, [
    '--leader-elect=false',
    `--controllers=${controllers}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    `--cert-dir=${mkdtempSync(join(tmpdir(), 'cm-bench-'))}`,
    '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
    ...args,
  ]);
  return { cm, port };
}

async function runDeployment(label: string, qpsArgs: string[], store: string): Promise<void> {
  const api = await startApi(store);
  const { cm, port } = await startCm(api, 'replicaset,deployment,serviceaccount', qpsArgs);
  try {
    await waitFor('the controller manager', async () => (await requestsMade(port)) > 0, 60_000);
    await waitFor('the default ServiceAccount', async () => {
      await api.client.resource(PodKind, 'default').list({ limit: 1 });
      return (await get(`https://127.0.0.1:${port}/healthz`)).includes('ok');
    });
    await sleep(2000); // the serviceaccount controller's first writes
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
          await sleep(500);
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
    await sleep(3000);
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

// --- endpoints -------------------------------------------------------------------------------------------------

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const PODS_PER_SERVICE = Number(process.env.BENCH_PODS_PER_SERVICE ?? 10);
const EP_NS = 'bench-endpoints';
/** Pods `0 … FLIPPED - 1` of every Service turn not ready in the second step. */
const FLIPPED = Math.floor(PODS_PER_SERVICE / 2);

/** The pod IP of pod `j` of Service `i` (10.244.0.0/16: never contacted, only written into objects). */
function podIP(i: number, j: number): string {
  const n = i * PODS_PER_SERVICE + j;
  return `10.244.${(n >> 8) & 255}.${n & 255}`;
}

/** Whether pod `j` of a Service should be ready (`flipped`: after half of them turned not ready). */
function wantReady(j: number, flipped: boolean): boolean {
  return !flipped || j >= FLIPPED;
}

/** Whether Endpoints `e` of Service `i` hold exactly its pods, each as ready or not as wanted, with both ports. */
function endpointsRight(e: Endpoints | undefined, i: number, flipped: boolean): boolean {
  const subsets = e?.subsets ?? [];
  if (subsets.length !== 1) return false;
  const s = subsets[0]!;
  if ((s.ports ?? []).length !== 2) return false;
  const ready = new Set((s.addresses ?? []).map((a) => a.ip));
  const notReady = new Set((s.notReadyAddresses ?? []).map((a) => a.ip));
  if (ready.size + notReady.size !== PODS_PER_SERVICE) return false;
  if ((s.addresses ?? []).length + (s.notReadyAddresses ?? []).length !== PODS_PER_SERVICE) return false;
  for (let j = 0; j < PODS_PER_SERVICE; j++)
    if (!(wantReady(j, flipped) ? ready : notReady).has(podIP(i, j))) return false;
  return true;
}

/** Whether the slices of Service `i` hold exactly its pods once each, ready or not as wanted, with both ports. */
function slicesRight(slices: EndpointSlice[], i: number, flipped: boolean): boolean {
  const seen = new Map<string, boolean>();
  for (const s of slices) {
    if ((s.endpoints ?? []).length > 0 && (s.ports ?? []).length !== 2) return false;
    for (const e of s.endpoints ?? []) {
      const ip = e.addresses?.[0];
      if (!ip || seen.has(ip)) return false;
      seen.set(ip, e.conditions?.ready === true);
    }
  }
  if (seen.size !== PODS_PER_SERVICE) return false;
  for (let j = 0; j < PODS_PER_SERVICE; j++) if (seen.get(podIP(i, j)) !== wantReady(j, flipped)) return false;
  return true;
}

function serviceIndex(name: string | undefined): number {
  const m = /^svc-(\d+)$/.exec(name ?? '');
  return m ? Number(m[1]) : -1;
}

/**
 * Follows the Endpoints and EndpointSlices of the bench namespace through informers (list, then watch) and notes
 * when every Service's objects are first all right for the current step.
 */
class EndpointsTracker {
  private readonly factory: InformerFactory;
  private readonly endpoints;
  private readonly slices;
  private readonly okEndpoints = new Set<number>();
  private readonly okSlices = new Set<number>();
  private flipped = false;
  /** When every Endpoints / every Service's slices were first right in this step (ms). */
  endpointsDone = 0;
  slicesDone = 0;

  constructor(client: Clientset) {
    this.factory = new InformerFactory(client, { namespace: EP_NS });
    this.endpoints = this.factory.informerFor(EndpointsKind);
    this.slices = this.factory.informerFor(EndpointSliceKind);
    this.endpoints.addEventHandler({
      onAdd: (e) => this.checkEndpoints(serviceIndex(e.metadata?.name)),
      onUpdate: (_o, e) => this.checkEndpoints(serviceIndex(e.metadata?.name)),
    });
    const onSlice = (s: EndpointSlice): void =>
      this.checkSlices(serviceIndex(s.metadata?.labels?.['kubernetes.io/service-name']));
    this.slices.addEventHandler({ onAdd: onSlice, onUpdate: (_o, s) => onSlice(s), onDelete: () => this.checkAll() });
  }

  async start(signal: AbortSignal): Promise<void> {
    this.factory.start(signal);
    await this.factory.waitForCacheSync(signal);
  }

  /** Starts a step: from now on the objects must show `flipped`. */
  expect(flipped: boolean): void {
    this.flipped = flipped;
    this.endpointsDone = this.slicesDone = 0;
    this.okEndpoints.clear();
    this.okSlices.clear();
    this.checkAll();
  }

  get done(): boolean {
    return this.endpointsDone > 0 && this.slicesDone > 0;
  }

  private checkAll(): void {
    for (let i = 0; i < SERVICES; i++) {
      this.checkEndpoints(i);
      this.checkSlices(i);
    }
  }

  private checkEndpoints(i: number): void {
    if (i < 0) return;
    const ok = endpointsRight(this.endpoints.indexer.get(`${EP_NS}/svc-${i}`), i, this.flipped);
    if (ok) this.okEndpoints.add(i);
    else this.okEndpoints.delete(i);
    if (!this.endpointsDone && this.okEndpoints.size === SERVICES) this.endpointsDone = Date.now();
  }

  private checkSlices(i: number): void {
    if (i < 0) return;
    const mine = this.slices.indexer.byIndex(LABEL_INDEX, `kubernetes.io/service-name=svc-${i}`);
    if (slicesRight(mine, i, this.flipped)) this.okSlices.add(i);
    else this.okSlices.delete(i);
    if (!this.slicesDone && this.okSlices.size === SERVICES) this.slicesDone = Date.now();
  }
}

/** Checks the step's state once more with a list of every Endpoints and EndpointSlice: the wrong Services' count. */
async function listCheck(client: Clientset, flipped: boolean): Promise<{ endpoints: number; slices: number }> {
  const eps = new Map<number, Endpoints>();
  const slices = new Map<number, EndpointSlice[]>();
  for (let cont: string | undefined; ;) {
    const l = await client.resource(EndpointsKind, EP_NS).list({ limit: 500, continue: cont });
    for (const e of l.items) eps.set(serviceIndex(e.metadata?.name), e);
    cont = l.metadata?.continue;
    if (!cont) break;
  }
  for (let cont: string | undefined; ;) {
    const l = await client.resource(EndpointSliceKind, EP_NS).list({ limit: 500, continue: cont });
    for (const s of l.items) {
      const i = serviceIndex(s.metadata?.labels?.['kubernetes.io/service-name']);
      slices.set(i, [...(slices.get(i) ?? []), s]);
    }
    cont = l.metadata?.continue;
    if (!cont) break;
  }
  let badEndpoints = 0;
  let badSlices = 0;
  for (let i = 0; i < SERVICES; i++) {
    if (!endpointsRight(eps.get(i), i, flipped)) badEndpoints++;
    if (!slicesRight(slices.get(i) ?? [], i, flipped)) badSlices++;
  }
  return { endpoints: badEndpoints, slices: badSlices };
}

/** Patches the status of pod `j` of Service `i` as a node agent does: Running, its IP, Ready or not. */
function postPodStatus(client: Clientset, i: number, j: number, ready: boolean): Promise<unknown> {
  const ip = podIP(i, j);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const status = ready ? 'True' : 'False';
  return client.resource(PodKind, EP_NS).patch(
    `svc-${i}-${j}`,
    'merge',
    {
      status: {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [
          { type: 'Initialized', status: 'True', lastTransitionTime: now },
          { type: 'Ready', status, lastTransitionTime: now },
          { type: 'ContainersReady', status, lastTransitionTime: now },
          { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        ],
      },
    },
    { subresource: 'status' },
  );
}

/** Creates the namespace, its default ServiceAccount, the Services and their ready pods. */
async function createServicesAndPods(client: Clientset): Promise<void> {
  await retry(() => client.resource(NamespaceKind).create({ metadata: { name: EP_NS } }));
  // No serviceaccount controller runs: the account the ServiceAccount admission plugin looks up is made here.
  await retry(() => client.resource(ServiceAccountKind, EP_NS).create({ metadata: { name: 'default' } }));
  const services = client.resource(ServiceKind, EP_NS);
  const pods = client.resource(PodKind, EP_NS);
  await inParallel(SERVICES, 32, (i) =>
    services.create({
      metadata: { name: `svc-${i}` },
      spec: {
        selector: { app: `svc-${i}` },
        ports: [
          { name: 'http', port: 80, targetPort: 'http' },
          { name: 'metrics', port: 9090, targetPort: 9090 },
        ],
      },
    } as Service),
  );
  const pod = (n: number): Pod => {
    const i = Math.floor(n / PODS_PER_SERVICE);
    return {
      metadata: { name: `svc-${i}-${n % PODS_PER_SERVICE}`, labels: { app: `svc-${i}` } },
      spec: {
        nodeName: `bench-node-${n % 100}`,
        automountServiceAccountToken: false,
        containers: [
          {
            name: 'c',
            image: 'nginx',
            ports: [
              { name: 'http', containerPort: 8080 },
              { name: 'metrics', containerPort: 9090 },
            ],
          },
        ],
      },
    } as Pod;
  };
  // The admission plugin reads the ServiceAccount from its cache: the first pod may come too early for it.
  await waitFor('the first pod to be admitted', async () => {
    await pods.create(pod(0)).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
    return true;
  });
  const total = SERVICES * PODS_PER_SERVICE;
  await inParallel(total - 1, 32, (n) => pods.create(pod(n + 1)));
  await inParallel(total, 32, (n) =>
    postPodStatus(client, Math.floor(n / PODS_PER_SERVICE), n % PODS_PER_SERVICE, true),
  );
}

async function runEndpoints(label: string, qpsArgs: string[], store: string): Promise<void> {
  const api = await startApi(store, ['--service-cluster-ip-range=10.96.0.0/16']);
  const abort = new AbortController();
  let cm: DaemonProcess | undefined;
  const tag = `${store.padEnd(7)}${label}`;
  try {
    const t = Date.now();
    await createServicesAndPods(api.client);
    const setup = (Date.now() - t) / 1000;
    const tracker = new EndpointsTracker(api.client);
    await tracker.start(abort.signal);
    tracker.expect(false);
    const cpuApi0 = cpuSeconds(api.process.child.pid);
    const t0 = Date.now();
    const started = await startCm(api, 'endpoint,endpointslice', qpsArgs);
    cm = started.cm;
    const port = started.port;
    await waitFor('every Endpoints and EndpointSlice', () => tracker.done, 900_000);
    const ep = (tracker.endpointsDone - t0) / 1000;
    const sl = (tracker.slicesDone - t0) / 1000;
    await sleep(3000); // writes that follow (a slice's own event syncs its Service once more)
    const m1 = await requestsByMethod(port);
    const w1 = writesBetween({}, m1);
    const bad1 = await listCheck(api.client, false);
    const cpuCm1 = cpuSeconds(cm.child.pid);
    const cpuApi1 = cpuSeconds(api.process.child.pid);
    console.log(
      `${tag}: ${SERVICES} Services × ${PODS_PER_SERVICE} ready pods (set up in ${setup.toFixed(0)} s), controller manager started → every Endpoints right in ${ep.toFixed(1)} s, every Service's EndpointSlices in ${sl.toFixed(1)} s; writes ${w1.total} (${w1.text}) = ${(w1.total / SERVICES).toFixed(2)}/Service; wrong in a final list: Endpoints ${bad1.endpoints}, slices ${bad1.slices}; CPU s: apiserver ${(cpuApi1 - cpuApi0).toFixed(1)}, controller-manager ${cpuCm1.toFixed(1)}`,
    );

    tracker.expect(true);
    const t1 = Date.now();
    await inParallel(SERVICES * FLIPPED, 32, (n) =>
      postPodStatus(api.client, Math.floor(n / FLIPPED), n % FLIPPED, false),
    );
    const patched = (Date.now() - t1) / 1000;
    await waitFor('the Endpoints and EndpointSlices to show the pods not ready', () => tracker.done, 900_000);
    const ep2 = (tracker.endpointsDone - t1) / 1000;
    const sl2 = (tracker.slicesDone - t1) / 1000;
    await sleep(3000);
    const w2 = writesBetween(m1, await requestsByMethod(port));
    const bad2 = await listCheck(api.client, true);
    console.log(
      `${tag}: ${FLIPPED} of every Service's pods turned not ready (${SERVICES * FLIPPED} status patches, sent in ${patched.toFixed(1)} s) → every Endpoints right in ${ep2.toFixed(1)} s, every Service's EndpointSlices in ${sl2.toFixed(1)} s; writes ${w2.total} (${w2.text}) = ${(w2.total / SERVICES).toFixed(2)}/Service; wrong in a final list: Endpoints ${bad2.endpoints}, slices ${bad2.slices}; CPU s: apiserver ${(cpuSeconds(api.process.child.pid) - cpuApi1).toFixed(1)}, controller-manager ${(cpuSeconds(cm.child.pid) - cpuCm1).toFixed(1)}`,
    );
  } finally {
    abort.abort();
    await cm?.kill('SIGKILL');
    await api.stop();
  }
}

// --- node lifecycle --------------------------------------------------------------------------------------------

const NODES = Number(process.env.BENCH_NODES ?? 1000);
const NODES_DOWN = Math.min(NODES, Number(process.env.BENCH_NODES_DOWN ?? 100));
const NODE_GRACE = process.env.BENCH_NODE_GRACE ?? '20s';
const NODE_EVICTION_RATE = process.env.BENCH_NODE_EVICTION_RATE ?? '10';
const STEADY_MS = Number(process.env.BENCH_NODE_STEADY_MS ?? 120_000);
/** The node agent's lease renewal interval (1.21: a quarter of the 40 s lease duration). */
const LEASE_RENEW_MS = 10_000;
/** The node agent's `nodeStatusReportFrequency` (1.21: 5 minutes when nothing changed). */
const STATUS_REPORT_MS = 300_000;

const nodeName = (i: number): string => `bench-node-${i}`;

/** The node agent's conditions of a healthy node, heartbeat now. */
function healthyConditions(since: string): NonNullable<Node['status']>['conditions'] {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const c = (type: string, status: 'True' | 'False', reason: string) => ({
    type,
    status,
    reason,
    lastHeartbeatTime: now,
    lastTransitionTime: since,
  });
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID'),
    c('Ready', 'True', 'KubeletReady'),
  ];
}

/**
 * The heartbeats of NODES node agents from this process: Lease `i` is renewed at `start + i·10 s/NODES + k·10 s`, and
 * Node `i`'s status posted at `start + i·5 min/NODES + k·5 min` (a 1.21 agent's status report when nothing
 * changed). Renewals go out as they fall due and are not awaited one by one.
 */
class Heartbeats {
  private readonly leases: (Lease | undefined)[] = [];
  private readonly since: string[] = [];
  /** Nodes no longer heartbeating. */
  readonly stopped = new Set<number>();
  /** When each node's Lease was last renewed (ms). */
  readonly lastRenew: number[] = [];
  /** The longest time between two renewals of one Lease (ms). */
  maxGap = 0;
  writes = 0;
  errors = 0;
  private timer?: NodeJS.Timeout;
  private start = 0;
  private leaseSeq = 0;
  private statusSeq = 0;

  constructor(private readonly client: Clientset) {}

  /** Creates the Nodes, posts their status and creates their Leases. */
  async create(): Promise<void> {
    const nodes = this.client.resource(NodeKind);
    await inParallel(NODES, 32, async (i) => {
      const n = await nodes.create({ metadata: { name: nodeName(i) } } as Node).catch(async (err: unknown) => {
        if (isAlreadyExists(err)) return nodes.get(nodeName(i));
        throw err;
      });
      this.since[i] = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      await this.postStatus(i);
      this.leases[i] = await this.client.resource(LeaseKind, 'node-lease').create({
        metadata: {
          name: nodeName(i),
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName(i), uid: n.metadata?.uid ?? '' }],
        },
        spec: { holderIdentity: nodeName(i), leaseDurationSeconds: 40, renewTime: formatMicroTime(new Date()) },
      } as Lease);
      this.lastRenew[i] = Date.now();
    });
  }

  run(): void {
    this.start = Date.now();
    this.timer = setInterval(() => this.tick(), 20);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const now = Date.now();
    for (; this.start + (this.leaseSeq * LEASE_RENEW_MS) / NODES <= now; this.leaseSeq++) {
      const i = this.leaseSeq % NODES;
      if (this.stopped.has(i)) continue;
      if (this.renewing.has(i)) {
        this.skipped++;
        continue;
      }
      this.renewing.add(i);
      this.count(this.renew(i).finally(() => this.renewing.delete(i)));
    }
    for (; this.start + (this.statusSeq * STATUS_REPORT_MS) / NODES <= now; this.statusSeq++) {
      const i = this.statusSeq % NODES;
      if (!this.stopped.has(i)) this.count(this.postStatus(i));
    }
  }

  /** Nodes with a renewal in flight: like an agent, a node sends its next one only after the last (skipped else). */
  private readonly renewing = new Set<number>();
  skipped = 0;

  /** How long ago the least recently renewed heartbeating Lease was renewed (ms). */
  oldestRenewal(): number {
    const now = Date.now();
    let oldest = 0;
    for (let i = 0; i < NODES; i++)
      if (!this.stopped.has(i)) oldest = Math.max(oldest, now - (this.lastRenew[i] ?? now));
    return oldest;
  }

  private count(p: Promise<unknown>): void {
    p.then(
      () => this.writes++,
      () => this.errors++,
    );
  }

  private postStatus(i: number): Promise<unknown> {
    return this.client
      .resource(NodeKind)
      .patch(
        nodeName(i),
        'merge',
        { status: { conditions: healthyConditions(this.since[i]!) } },
        { subresource: 'status' },
      );
  }

  /** Renews Lease `i` as the 1.21 agent does: an update of the Lease it holds; on a conflict, read it again. */
  private async renew(i: number): Promise<void> {
    const leases = this.client.resource(LeaseKind, 'node-lease');
    const next = (l: Lease): Lease => ({ ...l, spec: { ...l.spec, renewTime: formatMicroTime(new Date()) } });
    try {
      this.leases[i] = await leases.update(next(this.leases[i]!));
    } catch (err) {
      if (!isConflict(err)) throw err;
      this.leases[i] = await leases.update(next(await leases.get(nodeName(i))));
    }
    const now = Date.now();
    if (!this.stopped.has(i)) this.maxGap = Math.max(this.maxGap, now - (this.lastRenew[i] ?? now));
    this.lastRenew[i] = now;
  }
}

const UNREACHABLE = 'node.kubernetes.io/unreachable';

function hasTaint(n: Node, key: string, effect: string): boolean {
  return (n.spec?.taints ?? []).some((t) => t.key === key && t.effect === effect);
}

function readyStatus(n: Node): string | undefined {
  return n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function runNodeLifecycle(store: string): Promise<void> {
  const api = await startApi(store);
  const abort = new AbortController();
  const beats = new Heartbeats(api.client);
  let cm: DaemonProcess | undefined;
  const tag = `${store.padEnd(7)}nodelifecycle`;
  try {
    const t = Date.now();
    await beats.create();
    const setup = (Date.now() - t) / 1000;
    beats.run();

    // The nodes as this process sees them through a watch: which are tainted or not Ready, and when each stopped
    // node became Unknown and got each taint.
    const factory = new InformerFactory(api.client);
    const nodes = factory.informerFor(NodeKind);
    /** Nodes heartbeating and yet tainted or not Ready while that counts (steady state, after the failure). */
    const touched = new Set<string>();
    let watchTouched = false;
    const unknownAt = new Map<number, number>();
    const noScheduleAt = new Map<number, number>();
    const noExecuteAt = new Map<number, number>();
    const look = (n: Node): void => {
      const i = Number(/^bench-node-(\d+)$/.exec(n.metadata?.name ?? '')?.[1] ?? -1);
      if (i < 0) return;
      const now = Date.now();
      if (beats.stopped.has(i)) {
        if (readyStatus(n) === 'Unknown' && !unknownAt.has(i)) unknownAt.set(i, now);
        if (hasTaint(n, UNREACHABLE, 'NoSchedule') && !noScheduleAt.has(i)) noScheduleAt.set(i, now);
        if (hasTaint(n, UNREACHABLE, 'NoExecute') && !noExecuteAt.has(i)) noExecuteAt.set(i, now);
      } else if (watchTouched && ((n.spec?.taints ?? []).length > 0 || readyStatus(n) !== 'True')) {
        touched.add(n.metadata?.name ?? '');
      }
    };
    nodes.addEventHandler({ onAdd: look, onUpdate: (_o, n) => look(n) });
    factory.start(abort.signal);
    await factory.waitForCacheSync(abort.signal);
    const tainted = (): number => nodes.indexer.list().filter((n) => (n.spec?.taints ?? []).length > 0).length;

    const t0 = Date.now();
    const started = await startCm(api, 'nodelifecycle', [
      `--node-monitor-grace-period=${NODE_GRACE}`,
      `--node-eviction-rate=${NODE_EVICTION_RATE}`,
    ]);
    cm = started.cm;
    const port = started.port;
    // A loaded API server may not keep up with the renewals: then nodes rightly go Unknown, and this says so.
    await waitFor('the controller manager to untaint every node', () => tainted() === 0, 300_000).catch((err) => {
      throw new Error(
        `${(err as Error).message}: ${tainted()} tainted; ${beats.writes} heartbeat writes in ${((Date.now() - t) / 1000).toFixed(0)} s, ${beats.skipped} renewals skipped (the last still in flight), oldest renewal ${(beats.oldestRenewal() / 1000).toFixed(0)} s ago`,
      );
    });
    const warm = (Date.now() - t0) / 1000;
    const mWarm = await requestsByMethod(port);
    console.log(
      `${tag}: ${NODES} Nodes and Leases (set up in ${setup.toFixed(0)} s); controller manager started → no node tainted after ${warm.toFixed(1)} s; its writes ${writesBetween({}, mWarm).text}`,
    );

    await sleep(10_000);
    watchTouched = true;
    const m0 = await requestsByMethod(port);
    const cpu0 = { cm: cpuSeconds(cm.child.pid), api: cpuSeconds(api.process.child.pid), own: ownCpuSeconds() };
    const beats0 = beats.writes;
    beats.maxGap = 0; // from here on: the gaps of the steady state alone
    const s0 = Date.now();
    await sleep(STEADY_MS);
    const minutes = (Date.now() - s0) / 60_000;
    const perMin = (a: number, b: number): string => ((b - a) / minutes).toFixed(2);
    const m1 = await requestsByMethod(port);
    console.log(
      `${tag}: steady state, ${(minutes * 60).toFixed(0)} s with ${((beats.writes - beats0) / minutes / 60).toFixed(0)} heartbeat writes/s (longest gap between two renewals of a Lease ${(beats.maxGap / 1000).toFixed(1)} s, ${beats.errors} failed, ${beats.skipped} skipped as the last was still in flight): CPU s per minute: controller-manager ${perMin(cpu0.cm, cpuSeconds(cm.child.pid))}, apiserver ${perMin(cpu0.api, cpuSeconds(api.process.child.pid))}, this process ${perMin(cpu0.own, ownCpuSeconds())}; controller-manager writes ${writesBetween(m0, m1).text}; nodes tainted or not Ready: ${touched.size}${touched.size ? ` (${[...touched].slice(0, 5).join(', ')}…)` : ''}`,
    );

    const stop = Date.now();
    beats.maxGap = 0;
    for (let i = 0; i < NODES_DOWN; i++) beats.stopped.add(i);
    for (const n of nodes.indexer.list()) look(n);
    await waitFor(
      `${NODES_DOWN} silent nodes to be tainted unreachable:NoExecute`,
      () => noExecuteAt.size === NODES_DOWN,
      900_000,
    );
    const since = (m: Map<number, number>): string => `${((Math.max(...m.values()) - stop) / 1000).toFixed(1)} s`;
    // From each node's last renewal: what the grace period and the monitor period add up to.
    const afterRenewal = [...unknownAt].map(([i, at]) => (at - beats.lastRenew[i]!) / 1000);
    const firstExecute = (Math.min(...noExecuteAt.values()) - stop) / 1000;
    await sleep(3000);
    console.log(
      `${tag}: ${NODES_DOWN} nodes stopped heartbeating (grace ${NODE_GRACE}, eviction rate ${NODE_EVICTION_RATE}/s) → all Unknown after ${since(unknownAt)} (from each one's last renewal: median ${median(afterRenewal).toFixed(1)} s, max ${Math.max(...afterRenewal).toFixed(1)} s), all unreachable:NoSchedule after ${since(noScheduleAt)}, unreachable:NoExecute from ${firstExecute.toFixed(1)} s to ${since(noExecuteAt)}; controller-manager writes ${writesBetween(m1, await requestsByMethod(port)).text}; healthy nodes tainted or not Ready: ${touched.size} (their longest gap between two renewals meanwhile ${(beats.maxGap / 1000).toFixed(1)} s)`,
    );
  } finally {
    beats.stop();
    abort.abort();
    await cm?.kill('SIGKILL');
    await api.stop();
  }
}

async function main(): Promise<void> {
  const unknown = CASES.filter((c) => !KNOWN_CASES.includes(c));
  if (unknown.length)
    throw new Error(`BENCH_CASES: unknown case ${unknown.join(', ')} (known: ${KNOWN_CASES.join(', ')})`);
  try {
    for (const store of STORES) {
      if (CASES.includes('deployment')) {
        console.log(
          `deployment: a Deployment of ${REPLICAS} replicas to ${REPLICAS} ReplicaSet-owned pods (no scheduler)`,
        );
        if (process.env.BENCH_SKIP_DEFAULT !== '1')
          await runDeployment('--api-qps 20 --api-burst 30 (defaults)', [], store);
        await runDeployment('--api-qps 5000 --api-burst 10000', HIGH_QPS, store);
      }
      if (CASES.includes('endpoints')) {
        await runEndpoints('--api-qps 5000 --api-burst 10000', HIGH_QPS, store);
        if (process.env.BENCH_ENDPOINTS_AT_DEFAULTS === '1')
          await runEndpoints('--api-qps 20 --api-burst 30 (defaults)', [], store);
      }
      if (CASES.includes('nodelifecycle')) await runNodeLifecycle(store);
    }
  } finally {
    await etcd?.stop();
  }
  const [l1, l5] = loadavg();
  console.log(
    `Machine: load average ${l1!.toFixed(1)} (1 min), ${l5!.toFixed(1)} (5 min) at the end, on ${cpus().length} CPUs shared with other work.`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
