/**
 * API server benchmark (`npm run bench -- apiserver`): the table of issue 18, on each store (the embedded SQLite
 * store, and a fresh one-member etcd with its default durable settings on a temp dir), with kube-apiserver 1.20's
 * figures from the issue beside ours and the issue's targets beside them (printed, never asserted).
 *
 * The API server runs as a child process (the `platform-apiserver` command: the compiled one when this file runs
 * compiled, else its sources), so that its peak RSS and CPU are its own. The clients are HTTPS/1.1 + JSON (HTTP/2
 * with BENCH_HTTP=2) with a bearer token (`--token-auth-file`). The creates, gets and lists are sent by a compiled
 * load generator, wrk (`testing/bench-wrk.ts`; 32 connections for "32 clients"), whose CPU per request is a small
 * fraction of the server's (a Node client spends 25-55 ms of CPU on a list of 5,000, as much as the server); the
 * rest (the paginated list, watchers, custom objects, raw store puts)
 * by several Node worker processes (`testing/bench-load.ts`; 4 × 8 keep-alive connections for "32 clients"), which
 * also send everything with BENCH_LOADGEN=node (see {@link LOADGEN}). Every phase prints the CPU seconds of the
 * server, of etcd and of the clients, and which generator ran it.
 *
 * Phases (BENCH_PHASES, comma-separated; all by default):
 * - raw: raw `Store.create` calls/s through the same workers, 1 and 32 clients (the store alone, before the server);
 * - creates: 1 KiB ConfigMaps created by 1 client (SINGLE_CREATES, namespace `single`) and by 32 clients (CREATES,
 *   namespace `bench`; that namespace is filled without measuring when only later phases run);
 * - gets: GETS gets of those by 32 clients: p50/p99;
 * - lists: the list of the CREATES ConfigMaps of `bench` with `resourceVersion=0` and without (consistent), one
 *   client, median of LIST_RUNS (and the list paginated by 500, as an extra);
 * - fanout: WATCHERS watchers of one namespace × FANOUT_UPDATES updates, one at a time; latency from sending the
 *   update to each watcher reading its event; the slowest watcher's p99;
 * - custom: custom objects of a CRD, created by 32 clients and listed (extra);
 * - large: on a fresh store and server, LARGE_OBJECTS ConfigMaps of 10 KiB, then 10 clients list them all for
 *   LARGE_SECONDS, half with `resourceVersion=0` and half without: lists served, median of each kind, peak RSS, and
 *   the RSS after IDLE_SECONDS idle.
 * Before them, unmeasured, WARMUP ConfigMaps are created, read, updated and deleted by 32 clients (see `warmUp`).
 * The peak RSS of the table is the server's VmHWM after the fan-out (its whole run to then); with
 * BENCH_SERVER_PROCESSES, the sum over its processes.
 *
 * Settings: BENCH_STORES=sqlite,etcd; BENCH_SCALE=0.1 shrinks every count and duration for a quick run
 * (BENCH_CREATES, BENCH_SINGLE_CREATES, BENCH_GETS, BENCH_WARMUP, BENCH_LARGE_OBJECTS, BENCH_LARGE_SECONDS, BENCH_IDLE_SECONDS set
 * one); BENCH_CLIENT_PROCESSES (default 4) and BENCH_CLIENTS (default 32); BENCH_LOADGEN, BENCH_HTTP=2,
 * BENCH_SERVER_PROCESSES, BENCH_ENCRYPTION, BENCH_PRIORITY_AND_FAIRNESS as described where they are read.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort, startEtcd } from '../storage/testing/etcd';
import {
  LoadGenerator,
  type ListLoopResult,
  type LoadTarget,
  type RawJob,
  type RunResult,
} from '../testing/bench-load';
import {
  BENCH_HTTP2,
  BenchClient,
  childrenCpuSeconds,
  childrenNamed,
  cpuSeconds,
  type ServerMemory,
  type ServerProcess,
  startServerProcess,
  step,
  treeCpuSeconds,
} from '../testing/bench-server';
import { ensureWrk, type WrkTarget, wrkListLoop, wrkRequests, wrkSequential } from '../testing/bench-wrk';

/** A number from the environment, or `fallback`; anything else is an error naming the variable. */
function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${raw}: want a positive number`);
  return n;
}

/** A comma-separated choice from the environment, every item one of `known`. */
function envList(name: string, known: readonly string[]): string[] {
  const items = (process.env[name] ?? known.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = items.filter((i) => !known.includes(i));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return items;
}

const SCALE = envNumber('BENCH_SCALE', 1);
const scaled = (n: number, min: number): number => Math.max(min, Math.round(n * SCALE));

const CLIENTS = envNumber('BENCH_CLIENTS', 32);
const CLIENT_PROCESSES = envNumber('BENCH_CLIENT_PROCESSES', 4);
const CREATES = envNumber('BENCH_CREATES', scaled(5000, 50));
const SINGLE_CREATES = envNumber('BENCH_SINGLE_CREATES', Math.min(CREATES, scaled(1000, 20)));
const GETS = envNumber('BENCH_GETS', scaled(10000, 100));
const WARMUP = envNumber('BENCH_WARMUP', scaled(5000, 50));
const LIST_RUNS = scaled(10, 3);
const WATCHERS = scaled(50, 5);
const FANOUT_UPDATES = scaled(200, 20);
const LARGE_OBJECTS = envNumber('BENCH_LARGE_OBJECTS', scaled(5000, 50));
const LARGE_CLIENTS = 10;
const LARGE_SECONDS = envNumber('BENCH_LARGE_SECONDS', scaled(30, 3));
const IDLE_SECONDS = envNumber('BENCH_IDLE_SECONDS', scaled(30, 3));
const SMALL_BYTES = 1024;
const LARGE_BYTES = 10 * 1024;

const PHASES = envList('BENCH_PHASES', ['raw', 'creates', 'gets', 'lists', 'fanout', 'custom', 'large']);
const STORES = envList('BENCH_STORES', ['sqlite', 'etcd']) as StoreKind[];
type StoreKind = 'sqlite' | 'etcd';

/** The clients' user: a bearer token of `--token-auth-file` (not system:masters, so that priority and fairness
 * classifies it as an ordinary user); the server's default authorization (AlwaysAllow) lets it do everything. */
const TOKEN = 'bench-token';

/**
 * BENCH_ENCRYPTION=aescbc (or aesgcm, secretbox): the measured ConfigMaps are stored encrypted by that provider
 * (`--encryption-provider-config`), to compare with a run without it.
 */
const ENCRYPTION = process.env.BENCH_ENCRYPTION ?? '';

/**
 * BENCH_PRIORITY_AND_FAIRNESS=true: the server runs with API Priority and Fairness (its default; the bench user is
 * one flow of the global-default level), to compare with a run with the max-in-flight limits.
 */
const PRIORITY_AND_FAIRNESS = process.env.BENCH_PRIORITY_AND_FAIRNESS === 'true';

/**
 * BENCH_SERVER_PROCESSES=N: the server runs with `--server-processes=N` (unset: its default); the peak RSS and the
 * CPU are then the sums over the primary and its server processes.
 */
const SERVER_PROCESSES = process.env.BENCH_SERVER_PROCESSES ?? '';

/**
 * BENCH_LOADGEN=compiled|node: what sends the creates, gets and lists (of 5,000 and large). `compiled`: wrk
 * (installed with apt-get when missing and root, as etcd is; HTTPS/1.1 only); `node`: the worker processes. Unset:
 * compiled when wrk is there or installable and the clients speak HTTP/1.1, else node (saying why).
 */
const LOADGEN = envList('BENCH_LOADGEN', ['compiled', 'node'])[0] as 'compiled' | 'node';
const LOADGEN_SET = !!process.env.BENCH_LOADGEN;

/** The wrk binary when the compiled generator runs (set by {@link chooseGenerator}), and why not otherwise. */
let WRK: string | undefined;
let loadgenNote = '';

function chooseGenerator(): void {
  if (LOADGEN === 'node') {
    loadgenNote = LOADGEN_SET ? 'BENCH_LOADGEN=node' : '';
    return;
  }
  if (BENCH_HTTP2) {
    if (LOADGEN_SET) throw new Error('BENCH_LOADGEN=compiled: wrk speaks HTTP/1.1 only; with BENCH_HTTP=2 use node');
    loadgenNote = 'wrk speaks HTTP/1.1 only (BENCH_HTTP=2)';
    return;
  }
  const found = ensureWrk();
  if (found.path) WRK = found.path;
  else if (LOADGEN_SET) throw new Error(`BENCH_LOADGEN=compiled: ${found.why}`);
  else loadgenNote = found.why!;
}

/** Which generator a phase's requests come from. */
const generatorName = (compiled: boolean): string => (compiled && WRK ? 'wrk' : 'node');

/** A ConfigMap with `bytes` of data. */
function configMap(namespace: string, bytes: number): { metadata: Record<string, unknown> } & Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, labels: { app: 'bench', tier: 'backend' } },
    data: { 'config.yaml': `padding: ${'x'.repeat(bytes - 20)}\n`, mode: 'bench' },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const sortNumbers = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
const median = (xs: number[]): number => percentile(sortNumbers(xs), 50);
const nowNs = (): number => Number(process.hrtime.bigint());

/** The figures of one store: the table's (undefined when its phase did not run) and the extras. */
interface Figures {
  store: StoreKind;
  table: Partial<Record<FigureKey, number>>;
  extras: [string, string][];
}

type FigureKey =
  | 'create1'
  | 'create32'
  | 'getP99'
  | 'listConsistent'
  | 'listRv0'
  | 'fanoutP99'
  | 'peakRss'
  | 'largeServed'
  | 'largeMedianRv0'
  | 'largeMedianConsistent'
  | 'largePeakRss'
  | 'largeIdleRss'
  | 'raw1'
  | 'raw32';

/** The CPU a phase cost, in seconds, and what it did. */
interface PhaseCpu {
  store: StoreKind;
  phase: string;
  wallS: number;
  requests: number;
  serverS: number;
  etcdS: number;
  clientsS: number;
  generator: string;
}

const phaseCpu: PhaseCpu[] = [];
const loadSamples: number[] = [];

/** What runs the phases of one store: the load, the server (when started) and where the figures go. */
interface Run {
  store: StoreKind;
  load: LoadGenerator;
  figures: Figures;
  server?: ServerProcess;
}

function cpuNow(run: Run): { server: number; etcd: number; clients: number } {
  const own = process.cpuUsage();
  return {
    server: run.server ? treeCpuSeconds(run.server.child.pid!) : 0,
    etcd: childrenNamed('etcd').reduce((a, p) => a + cpuSeconds(p), 0),
    clients:
      run.load.pids.reduce((a, p) => a + cpuSeconds(p), 0) + (own.user + own.system) / 1e6 + childrenCpuSeconds(),
  };
}

/**
 * Runs one measured phase and records its CPU; `requests` counts what it did (for CPU per request); `compiled`: the
 * phase's requests come from wrk when it runs.
 */
async function measured<T>(
  run: Run,
  phase: string,
  requests: number,
  f: () => Promise<T>,
  compiled = false,
): Promise<T> {
  step(`${run.store}: ${phase}`);
  const before = cpuNow(run);
  const t = performance.now();
  const result = await f();
  const after = cpuNow(run);
  phaseCpu.push({
    store: run.store,
    phase,
    wallS: (performance.now() - t) / 1000,
    requests,
    serverS: after.server - before.server,
    etcdS: after.etcd - before.etcd,
    clientsS: after.clients - before.clients,
    generator: generatorName(compiled),
  });
  loadSamples.push(loadavg()[0]!);
  return result;
}

function target(server: ServerProcess, connections: number): LoadTarget {
  return { url: server.url, ca: server.ca, token: TOKEN, connections };
}

function wrkTarget(server: ServerProcess): WrkTarget {
  return { url: server.url, token: TOKEN };
}

/** The rate and the median and 99th percentile latency of a run of requests. */
interface RunSummary {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function summarize(r: { perSecond: number; latenciesMs: number[] }): RunSummary {
  const sorted = sortNumbers(r.latenciesMs);
  return { perSecond: r.perSecond, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
}

/** The backing store of a server: what the server is told, what the raw phase opens, and how it goes away. */
interface Backend {
  serverStore: string;
  raw: RawJob['store'];
  dir: string;
  stop(): Promise<void>;
}

async function startBackend(kind: StoreKind): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-bench-'));
  writeFileSync(join(dir, 'tokens.csv'), `${TOKEN},bench,1000,"bench"\n`);
  if (kind === 'sqlite') {
    return {
      serverStore: `sqlite://${join(dir, 'state.db')}`,
      raw: { kind: 'sqlite', path: join(dir, 'raw.db') },
      dir,
      stop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const cluster = await startEtcd({ timing: 'defaults', progressNotifyInterval: '' });
  return {
    serverStore: cluster.endpoints.join(','),
    raw: { kind: 'etcd', endpoints: cluster.endpoints },
    dir,
    stop: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startServer(backend: Backend): Promise<ServerProcess> {
  const port = await freePort();
  const certDir = join(backend.dir, 'pki');
  const args = [
    `--store-servers=${backend.serverStore}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--endpoint-reconciler-type=none',
    `--token-auth-file=${join(backend.dir, 'tokens.csv')}`,
    `--enable-priority-and-fairness=${PRIORITY_AND_FAIRNESS}`,
    ...encryptionArgs(backend.dir),
    ...(SERVER_PROCESSES ? [`--server-processes=${SERVER_PROCESSES}`] : []),
  ];
  return startServerProcess({ args, port, certDir, readyTimeoutMs: 90_000, readyToken: TOKEN });
}

function encryptionArgs(dir: string): string[] {
  if (!ENCRYPTION) return [];
  const file = join(dir, 'encryption.yaml');
  const secret = randomBytes(32).toString('base64');
  writeFileSync(
    file,
    [
      'apiVersion: apiserver.config.platform/v1',
      'kind: EncryptionConfiguration',
      'resources:',
      '  - resources: [configmaps]',
      `    providers: [{ ${ENCRYPTION}: { keys: [{ name: bench, secret: "${secret}" }] } }]`,
    ].join('\n'),
  );
  return [`--encryption-provider-config=${file}`];
}

async function createNamespaces(client: BenchClient, names: string[]): Promise<void> {
  for (const name of names) {
    await client.expect(201, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
}

/** Numbered requests, as {@link RequestsJob} and {@link WrkRequests} describe them. */
interface Numbered {
  method: string;
  path: string;
  body?: { metadata: Record<string, unknown> } & Record<string, unknown>;
  namePrefix: string;
  modulo?: number;
  expect: number;
}

/** `total` numbered requests by `clients` clients: by wrk when it runs, else over the workers. */
async function numberedRequests(run: Run, job: Numbered, total: number, clients: number): Promise<RunSummary> {
  if (WRK) {
    const body = job.body && { ...job.body, metadata: { ...job.body.metadata, name: '{name}' } };
    return summarize(await wrkRequests(WRK, wrkTarget(run.server!), { ...job, body, total, connections: clients }));
  }
  const perProcess = Math.ceil(clients / Math.min(clients, run.load.size));
  return summarize(
    await run.load.spread({ kind: 'requests', target: target(run.server!, perProcess), ...job }, total, clients),
  );
}

/** `total` ConfigMaps of `bytes` in `namespace` (`cm-000000`, ...) by `clients` clients: creates/s and latencies. */
function createConfigMaps(
  run: Run,
  namespace: string,
  total: number,
  clients: number,
  bytes: number,
): Promise<RunSummary> {
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  const job = { method: 'POST', path, body: configMap(namespace, bytes), namePrefix: 'cm-', expect: 201 };
  return numberedRequests(run, job, total, clients);
}

/** Raw `Store.create` calls/s with 1 and CLIENTS clients (SQLite: in one worker, the store having one owner). */
async function rawPhase(run: Run, backend: Backend): Promise<void> {
  const job = { kind: 'raw' as const, store: backend.raw, valueBytes: SMALL_BYTES + 200 };
  const workers = backend.raw.kind === 'sqlite' ? 1 : run.load.size;
  const one = await measured(run, 'raw store puts, 1 client', SINGLE_CREATES, () =>
    run.load.spread({ ...job, prefix: '/rawbench/one/' }, SINGLE_CREATES, 1),
  );
  const many = await measured(run, `raw store puts, ${CLIENTS} clients`, CREATES, () =>
    run.load.spread({ ...job, prefix: '/rawbench/many/' }, CREATES, CLIENTS, workers),
  );
  run.figures.table.raw1 = one.perSecond;
  run.figures.table.raw32 = many.perSecond;
}

/**
 * Unmeasured: WARMUP ConfigMaps of namespace `warmup` created, read, updated and deleted by CLIENTS clients. A fresh
 * Node process runs a request path unoptimized until V8 has compiled it: after the 200 creates that warmed the server
 * before 27 Nov, TurboFan still spent about 0.6 ms of CPU per create on background threads during the 1-client
 * creates, and the main thread ran code not yet optimized. The figures are of a server that has served some load, as
 * one in use has; the objects are deleted, so that the later phases see the same store as before.
 */
async function warmUp(run: Run): Promise<void> {
  const one = '/api/v1/namespaces/warmup/configmaps/{name}';
  const body = configMap('warmup', SMALL_BYTES);
  await createConfigMaps(run, 'warmup', WARMUP, CLIENTS, SMALL_BYTES);
  await numberedRequests(run, { method: 'GET', path: one, namePrefix: 'cm-', expect: 200 }, WARMUP, CLIENTS);
  await numberedRequests(run, { method: 'PUT', path: one, body, namePrefix: 'cm-', expect: 200 }, WARMUP, CLIENTS);
  await numberedRequests(run, { method: 'DELETE', path: one, namePrefix: 'cm-', expect: 200 }, WARMUP, CLIENTS);
}

async function createsPhase(run: Run, measure: boolean): Promise<void> {
  if (measure) {
    const one = await measured(
      run,
      'creates, 1 client',
      SINGLE_CREATES,
      () => createConfigMaps(run, 'single', SINGLE_CREATES, 1, SMALL_BYTES),
      true,
    );
    run.figures.table.create1 = one.perSecond;
    run.figures.extras.push([
      `creates, 1 client (${SINGLE_CREATES})`,
      `p50 ${f1(one.p50Ms)} ms, p99 ${f1(one.p99Ms)} ms`,
    ]);
  }
  const many = await measured(
    run,
    `creates, ${CLIENTS} clients`,
    CREATES,
    () => createConfigMaps(run, 'bench', CREATES, CLIENTS, SMALL_BYTES),
    true,
  );
  if (!measure) return;
  run.figures.table.create32 = many.perSecond;
  run.figures.extras.push([
    `creates, ${CLIENTS} clients (${CREATES})`,
    `p50 ${f1(many.p50Ms)} ms, p99 ${f1(many.p99Ms)} ms`,
  ]);
}

/** GETS gets of the CREATES ConfigMaps of `bench` (`cm-{i % CREATES}`) by CLIENTS clients. */
function gets(run: Run): Promise<RunSummary> {
  const path = '/api/v1/namespaces/bench/configmaps/{name}';
  return numberedRequests(run, { method: 'GET', path, namePrefix: 'cm-', modulo: CREATES, expect: 200 }, GETS, CLIENTS);
}

async function getsPhase(run: Run): Promise<void> {
  const r = await measured(run, `gets, ${CLIENTS} clients`, GETS, () => gets(run), true);
  run.figures.table.getP99 = r.p99Ms;
  run.figures.extras.push([
    `gets, ${CLIENTS} clients (${GETS})`,
    `${f0(r.perSecond)}/s, p50 ${f1(r.p50Ms)} ms, p99 ${f1(r.p99Ms)} ms`,
  ]);
}

/**
 * LIST_RUNS lists of `path` by one client after one unmeasured: the durations (ms) and the bytes of one (`bytes`, as
 * the caller read it, with wrk).
 */
async function timeList(run: Run, path: string, bytes = 0): Promise<{ ms: number[]; bytes: number }> {
  if (WRK) return { ms: (await wrkSequential(WRK, wrkTarget(run.server!), path, LIST_RUNS + 1)).slice(1), bytes };
  const r = await run.load.run<RunResult>(0, {
    kind: 'requests',
    target: target(run.server!, 1),
    method: 'GET',
    path,
    namePrefix: '',
    from: 0,
    to: LIST_RUNS + 1,
    step: 1,
    concurrency: 1,
    expect: 200,
    drain: true,
  });
  return { ms: r.latenciesMs.slice(1), bytes: r.bytes / (LIST_RUNS + 1) };
}

/** The number of items `path` lists (read once, parsed here). */
async function countItems(client: BenchClient, path: string): Promise<number> {
  const body = (await client.expect(200, 'GET', path)).body.toString('utf8');
  return (JSON.parse(body) as { items: unknown[] }).items.length;
}

async function listsPhase(run: Run, client: BenchClient): Promise<void> {
  const path = '/api/v1/namespaces/bench/configmaps';
  const body = (await client.expect(200, 'GET', path)).body;
  const items = (JSON.parse(body.toString('utf8')) as { items: unknown[] }).items.length;
  const rv0 = await measured(
    run,
    'lists, resourceVersion=0',
    LIST_RUNS,
    () => timeList(run, `${path}?resourceVersion=0`, body.length),
    true,
  );
  const consistent = await measured(run, 'lists, consistent', LIST_RUNS, () => timeList(run, path, body.length), true);
  run.figures.table.listRv0 = median(rv0.ms);
  run.figures.table.listConsistent = median(consistent.ms);
  const describe = (r: { ms: number[]; bytes: number }): string =>
    `median ${f1(median(r.ms))} ms, best ${f1(Math.min(...r.ms))} ms, worst ${f1(Math.max(...r.ms))} ms, ${f1(r.bytes / 2 ** 20)} MiB`;
  run.figures.extras.push([`list of ${items}, resourceVersion=0 (${LIST_RUNS} runs)`, describe(rv0)]);
  run.figures.extras.push([`list of ${items}, consistent (${LIST_RUNS} runs)`, describe(consistent)]);
  // Extra: the same list in pages of 500, every page (the client parses each page for its continue token).
  const paged: number[] = [];
  let pages = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    pages = 0;
    let cont = '';
    do {
      const r = await client.expect(
        200,
        'GET',
        `${path}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      pages++;
      cont = (JSON.parse(r.body.toString('utf8')) as { metadata: { continue?: string } }).metadata.continue ?? '';
    } while (cont);
    paged.push(performance.now() - t);
  }
  run.figures.extras.push([`list of ${items}, limit=500 (${pages} pages, 3 runs)`, `median ${f1(median(paged))} ms`]);
}

/**
 * WATCHERS watches of namespace `fanout` spread over the workers; FANOUT_UPDATES updates of one ConfigMap, each sent
 * once every watcher has the one before (after 5 unmeasured). The latency of each event: from sending the update
 * to the watcher reading it.
 */
async function fanoutPhase(run: Run, client: BenchClient): Promise<void> {
  await createNamespaces(client, ['fanout']);
  const ns = '/api/v1/namespaces/fanout/configmaps';
  let current = JSON.parse(
    (
      await client.expect(201, 'POST', ns, { ...configMap('fanout', SMALL_BYTES), metadata: { name: 'fan' } })
    ).body.toString('utf8'),
  ) as { metadata: { resourceVersion: string }; data: Record<string, string> };
  const path = `${ns}?watch=1&resourceVersion=${current.metadata.resourceVersion}&timeoutSeconds=900`;
  let waiting: { marker: string; left: number; done: () => void } | undefined;
  const watch = await run.load.watch(target(run.server!, 1), path, WATCHERS, (marker) => {
    if (waiting?.marker === marker && --waiting.left === 0) waiting.done();
  });
  const sentNs: Record<string, number> = {};
  const warm = 5;
  await measured(
    run,
    `fan-out, ${WATCHERS} watchers x ${FANOUT_UPDATES} updates`,
    FANOUT_UPDATES * WATCHERS,
    async () => {
      for (let i = -warm; i < FANOUT_UPDATES; i++) {
        const marker = `u${i}`;
        const seen = new Promise<void>((done, fail) => {
          const timer = setTimeout(
            () => fail(new Error(`update ${marker}: not every watcher saw it within 60 s`)),
            60_000,
          );
          waiting = { marker, left: watch.workers, done: () => (clearTimeout(timer), done()) };
        });
        current.data.mode = marker;
        sentNs[marker] = nowNs();
        const put = await client.expect(200, 'PUT', `${ns}/fan`, current);
        current = JSON.parse(put.body.toString('utf8')) as typeof current;
        await seen;
      }
    },
  );
  const { arrivals } = await watch.stop();
  const all: number[] = [];
  const p99s = arrivals.map((mine) => {
    const ms = Array.from({ length: FANOUT_UPDATES }, (_, i) => (mine[`u${i}`]! - sentNs[`u${i}`]!) / 1e6);
    all.push(...ms);
    return percentile(sortNumbers(ms), 99);
  });
  const sorted = sortNumbers(all);
  run.figures.table.fanoutP99 = Math.max(...p99s);
  run.figures.extras.push([
    `fan-out, every event (${sorted.length})`,
    `p50 ${f1(percentile(sorted, 50))} ms, p99 ${f1(percentile(sorted, 99))} ms, max ${f1(sorted[sorted.length - 1]!)} ms; ` +
      `watchers' p99 from ${f1(Math.min(...p99s))} ms`,
  ]);
}

/** A namespaced CRD with a small structural schema, for the custom-object figures. */
const BENCH_CRD = {
  apiVersion: 'apiextensions.platform/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'benchobjects.bench.example.com' },
  spec: {
    group: 'bench.example.com',
    scope: 'Namespaced',
    names: { plural: 'benchobjects', kind: 'BenchObject' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { data: { type: 'object', additionalProperties: { type: 'string' } } },
          },
        },
      },
    ],
  },
};

/** Custom objects of a CRD: creates/s by CLIENTS clients and the consistent list of them (extras). */
async function customPhase(run: Run, client: BenchClient): Promise<void> {
  await createNamespaces(client, ['custom']);
  await client.expect(201, 'POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', BENCH_CRD);
  const path = '/apis/bench.example.com/v1/namespaces/custom/benchobjects';
  // Served once the CRD is established, by each server process once its own informer has it: as many requests at
  // once as there are connections, so that every process (with --server-processes) answers.
  for (const deadline = Date.now() + 60_000; ;) {
    const all = await Promise.all(Array.from({ length: CLIENTS }, () => client.request('GET', `${path}?limit=1`)));
    const r = all.find((x) => x.status !== 200) ?? all[0]!;
    if (r.status === 200) break;
    if (Date.now() > deadline) throw new Error(`custom objects not served: ${r.status}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  const perProcess = Math.ceil(CLIENTS / Math.min(CLIENTS, run.load.size));
  const created = await measured(run, `custom object creates, ${CLIENTS} clients`, CREATES, () =>
    run.load.spread(
      {
        kind: 'requests',
        target: target(run.server!, perProcess),
        method: 'POST',
        path,
        body: { ...configMap('custom', SMALL_BYTES), apiVersion: 'bench.example.com/v1', kind: 'BenchObject' },
        namePrefix: 'co-',
        expect: 201,
      },
      CREATES,
      CLIENTS,
    ),
  );
  const list = await measured(run, 'custom object lists, consistent', LIST_RUNS, () => timeList(run, path), true);
  run.figures.extras.push([`custom objects: creates/s, ${CLIENTS} clients (${CREATES})`, f0(created.perSecond)]);
  run.figures.extras.push([`custom objects: consistent list of ${CREATES}`, `median ${f1(median(list.ms))} ms`]);
}

/** What the clients listing one way (resourceVersion=0, or consistently) did: served in time, ended, median (ms). */
interface ListKind {
  served: number;
  ended: number;
  medianMs: number;
}

/**
 * LARGE_CLIENTS clients listing `path` for LARGE_SECONDS, half with resourceVersion=0 and half consistently. wrk: one
 * process for each half (lists in flight at the end are dropped, so every list ended was served in time); the
 * workers: client c lists with resourceVersion=0 when even, consistently when odd, worker c % workers runs it.
 */
async function largeLists(run: Run, path: string): Promise<{ rv0: ListKind; consistent: ListKind }> {
  const rv0Path = `${path}?resourceVersion=0`;
  const rv0Clients = Math.ceil(LARGE_CLIENTS / 2);
  if (WRK) {
    const [rv0, consistent] = await Promise.all(
      [
        [rv0Path, rv0Clients],
        [path, LARGE_CLIENTS - rv0Clients],
      ].map(async ([p, n]) => {
        const r = await wrkListLoop(WRK!, wrkTarget(run.server!), p as string, n as number, LARGE_SECONDS);
        return { served: r.served, ended: r.served, medianMs: median(r.durationsMs) };
      }),
    );
    return { rv0: rv0!, consistent: consistent! };
  }
  const paths = Array.from({ length: LARGE_CLIENTS }, (_, c) => (c % 2 === 0 ? rv0Path : path));
  const workers = Math.min(run.load.size, LARGE_CLIENTS);
  const deadlineNs = nowNs() + LARGE_SECONDS * 1e9;
  const results = await Promise.all(
    Array.from({ length: workers }, (_, w) => {
      const mine = paths.filter((_p, c) => c % workers === w);
      return run.load.run<ListLoopResult>(w, {
        kind: 'listLoop',
        target: target(run.server!, mine.length),
        paths: mine,
        durationMs: LARGE_SECONDS * 1000,
      });
    }),
  );
  const lists = results.flatMap((r) => r.clients);
  const kind = (isRv0: boolean): ListKind => {
    const mine = lists.filter((l) => (l.path === rv0Path) === isRv0);
    const durations = mine.flatMap((l) => l.durationsMs);
    const served = mine.reduce((a, l) => a + l.endNs.filter((e) => e <= deadlineNs).length, 0);
    return { served, ended: durations.length, medianMs: median(durations) };
  };
  return { rv0: kind(true), consistent: kind(false) };
}

/** Large lists, on a fresh store and server (so that the peak RSS is theirs). */
async function largePhase(run: Run): Promise<void> {
  const backend = await startBackend(run.store);
  try {
    step(`${run.store}: large lists: starting a fresh store and API server`);
    run.server = await startServer(backend);
    const client = new BenchClient(run.server.url, run.server.ca, 2, TOKEN);
    try {
      await createNamespaces(client, ['large']);
      const created = await measured(
        run,
        `large: creates of 10 KiB, ${CLIENTS} clients`,
        LARGE_OBJECTS,
        () => createConfigMaps(run, 'large', LARGE_OBJECTS, CLIENTS, LARGE_BYTES),
        true,
      );
      const path = '/api/v1/namespaces/large/configmaps';
      // Consistent: every object created is in it (a list with resourceVersion=0 may come from a cache a moment behind).
      const items = await countItems(client, path);
      const before = run.server.memory();
      const { rv0, consistent } = await measured(
        run,
        `large: ${LARGE_CLIENTS} clients listing for ${LARGE_SECONDS} s`,
        0,
        () => largeLists(run, path),
        true,
      );
      const peak = run.server.memory();
      phaseCpu[phaseCpu.length - 1]!.requests = rv0.ended + consistent.ended;
      step(`${run.store}: large lists: idle for ${IDLE_SECONDS} s`);
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const idle = run.server.memory();
      const t = run.figures.table;
      t.largeServed = rv0.served + consistent.served;
      t.largeMedianRv0 = rv0.medianMs / 1000;
      t.largeMedianConsistent = consistent.medianMs / 1000;
      t.largePeakRss = peak.peakMiB;
      t.largeIdleRss = idle.currentMiB;
      const e = run.figures.extras;
      e.push([`large: creates/s of 10 KiB, ${CLIENTS} clients (${LARGE_OBJECTS})`, f0(created.perSecond)]);
      e.push([
        `large: lists of ${items} in ${LARGE_SECONDS} s (rv=0 / consistent)`,
        `${rv0.served} / ${consistent.served} served in time (${rv0.ended} / ${consistent.ended} ended)`,
      ]);
      e.push([
        'large: RSS before the lists, at the peak, idle',
        `${f0(before.currentMiB)} / ${f0(peak.peakMiB)} / ${f0(idle.currentMiB)} MiB`,
      ]);
      if (peak.processes.length > 1) e.push(['large: peak RSS per process (primary first)', perProcess(peak)]);
    } finally {
      client.close();
      await run.server.stop();
      run.server = undefined;
    }
  } finally {
    await backend.stop();
  }
}

function perProcess(m: ServerMemory): string {
  return m.processes.map((p) => `${f0(p.peakMiB)}/${f0(p.currentMiB)}`).join(', ') + ' MiB (peak/now)';
}

/** The phases of one store, on a server of its own, then the large lists on another. */
async function benchStore(store: StoreKind, load: LoadGenerator): Promise<Figures> {
  const run: Run = { store, load, figures: { store, table: {}, extras: [] } };
  const main = ['raw', 'creates', 'gets', 'lists', 'fanout', 'custom'].some((p) => PHASES.includes(p));
  if (main) {
    const backend = await startBackend(store);
    try {
      if (PHASES.includes('raw')) await rawPhase(run, backend);
      if (PHASES.some((p) => p !== 'raw' && p !== 'large')) {
        step(`${store}: starting the API server`);
        run.server = await startServer(backend);
        const client = new BenchClient(run.server.url, run.server.ca, CLIENTS, TOKEN);
        try {
          await createNamespaces(client, ['bench', 'single', 'warmup']);
          step(`${store}: warm-up`);
          await warmUp(run);
          const creates = PHASES.includes('creates');
          if (creates || PHASES.includes('gets') || PHASES.includes('lists')) await createsPhase(run, creates);
          if (PHASES.includes('gets')) await getsPhase(run);
          if (PHASES.includes('lists')) await listsPhase(run, client);
          if (PHASES.includes('fanout')) await fanoutPhase(run, client);
          const mem = run.server.memory();
          run.figures.table.peakRss = mem.peakMiB;
          run.figures.extras.push(['RSS after the fan-out (peak/now)', `${f0(mem.peakMiB)}/${f0(mem.currentMiB)} MiB`]);
          if (mem.processes.length > 1) run.figures.extras.push(['  per process (primary first)', perProcess(mem)]);
          if (PHASES.includes('custom')) await customPhase(run, client);
        } finally {
          client.close();
          await run.server.stop();
          run.server = undefined;
        }
      }
    } finally {
      await backend.stop();
    }
  }
  if (PHASES.includes('large')) await largePhase(run);
  return run.figures;
}

// ---- the report ----

const f0 = (n: number): string => Math.round(n).toLocaleString('en-US');
const f1 = (n: number): string => n.toFixed(1);
const f2 = (n: number): string => n.toFixed(2);

/** A row of the table: kube-apiserver 1.20's figure (issue 18) and the issue's target on each store. */
interface Row {
  key: FigureKey;
  label: string;
  format: (n: number) => string;
  kube?: number;
  /** `min`: at least; `max`: at most. */
  targets: Partial<Record<StoreKind, { min?: number; max?: number }>>;
}

/** kube-apiserver 1.20 on etcd 3.4, issue 18's table (same machine kind, same load). */
const KUBE = { create1: 418, create32: 1623, getP99: 26.4, listConsistent: 168, listRv0: 67.9, fanoutP99: 4.2 };
/** 3.2 GB (taken as 10^9 bytes) in MiB. */
const KUBE_LARGE_PEAK = 3.2e9 / 2 ** 20;

const ROWS: Row[] = [
  {
    key: 'create1',
    label: 'creates/s, 1 client',
    format: f0,
    kube: KUBE.create1,
    targets: { etcd: { min: KUBE.create1 } },
  },
  {
    key: 'create32',
    label: `creates/s, ${CLIENTS} clients`,
    format: f0,
    kube: KUBE.create32,
    targets: { etcd: { min: 1.5 * KUBE.create32 }, sqlite: { min: 2 * KUBE.create32 } },
  },
  {
    key: 'getP99',
    label: `get p99, ${CLIENTS} clients (ms)`,
    format: f1,
    kube: KUBE.getP99,
    targets: { etcd: { max: KUBE.getP99 }, sqlite: { max: 0.5 * KUBE.getP99 } },
  },
  {
    key: 'listConsistent',
    label: `list of ${CREATES}, no resourceVersion (ms)`,
    format: f1,
    kube: KUBE.listConsistent,
    targets: { etcd: { max: 40 }, sqlite: { max: 40 } },
  },
  {
    key: 'listRv0',
    label: `list of ${CREATES}, resourceVersion=0 (ms)`,
    format: f1,
    kube: KUBE.listRv0,
    targets: { etcd: { max: KUBE.listRv0 } },
  },
  {
    key: 'fanoutP99',
    label: `fan-out ${WATCHERS}x${FANOUT_UPDATES}, slowest watcher p99 (ms)`,
    format: f1,
    kube: KUBE.fanoutP99,
    targets: { etcd: { max: KUBE.fanoutP99 }, sqlite: { max: KUBE.fanoutP99 } },
  },
  {
    key: 'peakRss',
    label: 'peak RSS over the run (MiB)',
    format: f0,
    kube: 587,
    targets: { etcd: { max: 300 }, sqlite: { max: 300 } },
  },
  {
    key: 'largeServed',
    label: `large: lists served in ${LARGE_SECONDS} s`,
    format: f0,
    kube: 223,
    targets: { etcd: { min: 223 }, sqlite: { min: 223 } },
  },
  {
    key: 'largeMedianRv0',
    label: 'large: median list, resourceVersion=0 (s)',
    format: f2,
    kube: 0.66,
    targets: { etcd: { max: 0.66 } },
  },
  {
    key: 'largeMedianConsistent',
    label: 'large: median list, consistent (s)',
    format: f2,
    kube: 3.3,
    targets: { etcd: { max: 3.3 } },
  },
  {
    key: 'largePeakRss',
    label: 'large: peak RSS (MiB)',
    format: f0,
    kube: KUBE_LARGE_PEAK,
    targets: { etcd: { max: KUBE_LARGE_PEAK / 2 }, sqlite: { max: KUBE_LARGE_PEAK / 2 } },
  },
  { key: 'largeIdleRss', label: `large: RSS after ${IDLE_SECONDS} s idle (MiB)`, format: f0, targets: {} },
  { key: 'raw1', label: 'raw store puts/s, 1 client', format: f0, kube: 1090, targets: {} },
  { key: 'raw32', label: `raw store puts/s, ${CLIENTS} clients`, format: f0, kube: 5790, targets: {} },
];

function targetCell(row: Row, store: StoreKind, value: number | undefined): string {
  const t = row.targets[store];
  if (!t) return '';
  const bound = t.min !== undefined ? `>= ${row.format(t.min)}` : `<= ${row.format(t.max!)}`;
  if (value === undefined) return bound;
  const met = t.min !== undefined ? value >= t.min : value <= t.max!;
  return `${bound} ${met ? 'ok' : 'MISSED'}`;
}

function report(all: Figures[]): void {
  const cols = all.map((f) => f.store);
  const header = ['figure', 'kube 1.20 (etcd)', ...cols.flatMap((s) => [`ours (${s})`, `target (${s})`])];
  const widths = [46, 17, ...cols.flatMap(() => [13, 17])];
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ');
  console.log(
    "\n--- issue 18: kube-apiserver 1.20 (the issue's figures) and ours, with the targets (not asserted) ---",
  );
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of ROWS) {
    const values = all.map((f) => f.table[row.key]);
    if (values.every((v) => v === undefined)) continue;
    const kube = row.kube === undefined ? '' : row.format(row.kube);
    console.log(
      line([
        row.label,
        kube,
        ...all.flatMap((f, i) => [
          values[i] === undefined ? '-' : row.format(values[i]!),
          targetCell(row, f.store, values[i]),
        ]),
      ]),
    );
  }
  console.log(
    "The raw rows' reference is raw etcd puts through the issue's harness; ours: Store.create on etcd3 / SQLite from the worker processes.",
  );
  for (const f of all) {
    console.log(`\n--- ${f.store}: details ---`);
    for (const [what, figure] of f.extras) console.log(`${what.padEnd(58)} ${figure}`);
  }
  console.log(
    '\n--- CPU seconds by phase (from /proc/<pid>/stat; clients: the load generator, wrk or the worker processes, and this one) ---',
  );
  const cpuHeader = [
    'store',
    'load',
    'phase',
    'wall s',
    'requests',
    'server s',
    'etcd s',
    'clients s',
    'server ms/req',
    'clients ms/req',
  ];
  const cw = [6, 4, 44, 7, 9, 9, 7, 9, 13, 14];
  const cpuLine = (cells: string[]): string =>
    cells.map((c, i) => (i < 3 ? c.padEnd(cw[i]!) : c.padStart(cw[i]!))).join(' ');
  console.log(cpuLine(cpuHeader));
  for (const p of phaseCpu) {
    const per = (s: number): string => (p.requests > 0 ? f2((s * 1000) / p.requests) : '');
    console.log(
      cpuLine([
        p.store,
        p.generator,
        p.phase,
        f1(p.wallS),
        String(p.requests),
        f2(p.serverS),
        f2(p.etcdS),
        f2(p.clientsS),
        per(p.serverS),
        per(p.clientsS),
      ]),
    );
  }
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  chooseGenerator();
  const processes = Math.min(CLIENT_PROCESSES, CLIENTS);
  step(`starting ${processes} load worker processes`);
  const load = await LoadGenerator.start(processes);
  const all: Figures[] = [];
  try {
    for (const store of STORES) all.push(await benchStore(store, load));
  } finally {
    await load.close();
  }
  report(all);
  const perProcess = Math.ceil(CLIENTS / processes);
  console.log(
    WRK
      ? `\nLoad generator: wrk (${WRK}) for the creates, gets and lists (of 5,000, one client, and large): ${CLIENTS} clients = ${CLIENTS} HTTPS/1.1` +
          ` keep-alive connections, one request at a time each; the other phases: the Node worker processes.`
      : `\nLoad generator: the Node worker processes for every phase${loadgenNote ? ` (${loadgenNote})` : ''}.`,
  );
  console.log(
    `${CLIENTS} clients of the workers = ${processes} worker processes x ${perProcess} ${BENCH_HTTP2 ? 'HTTP/2 streams (one connection each)' : 'HTTPS/1.1 keep-alive connections'}, JSON, bearer token.` +
      ` ConfigMaps of ${SMALL_BYTES} bytes of data (large: ${LARGE_BYTES}).` +
      (SCALE !== 1 ? ` Sizes scaled by BENCH_SCALE=${SCALE}.` : ''),
  );
  console.log(
    `Server: ${SERVER_PROCESSES ? `--server-processes=${SERVER_PROCESSES}` : 'default --server-processes'}, ` +
      `${PRIORITY_AND_FAIRNESS ? 'API Priority and Fairness' : 'max-in-flight limits'}` +
      `${ENCRYPTION ? `, ConfigMaps encrypted by ${ENCRYPTION}` : ''}.`,
  );
  console.log(
    'Latencies are client-side (request sent to last byte received). Fan-out: from sending the update to a watcher' +
      ' reading its event. Peak RSS: VmHWM of the server process (the sum with several server processes).',
  );
  console.log(
    `Machine: ${cpus().length} CPUs; 1-min load average ${f1(loadBefore)} at the start, ${f1(loadavg()[0]!)} at the end, ` +
      `${f1(Math.max(...loadSamples, 0))} at most after a phase.`,
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
