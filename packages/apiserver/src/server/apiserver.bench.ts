/**
 * API server benchmark (`npm run bench -- apiserver`), on each store: the embedded SQLite store and a real etcd
 * (one member, its default durable settings, on a temp dir). The API server runs as a child process (the
 * `platform-apiserver` command: the compiled one when this file runs compiled, else its sources), so that its peak
 * RSS is its own (`VmHWM` of /proc/<pid>/status) and the clients (this process) do not share its event loop.
 *
 * With 32 concurrent HTTPS clients on keep-alive agents it measures: ConfigMap creates/s over the API against raw
 * `Store.create` calls/s at the same concurrency (the Store interface directly, in this process, on its own file /
 * key prefix of the same store), and the creates/s of one client; gets/s and their p50/p99 latency; the list of 5,000 ConfigMaps (resourceVersion=0, served from the watch
 * cache; the default, a consistent read; and paginated with limit=500, every page); watch fan-out (100 watchers
 * on the ConfigMaps of one namespace, latency from sending a write to each watcher receiving its event); and the
 * server's peak RSS once 10k ConfigMaps are stored. Figures are printed with the targets of issue 4 beside them,
 * never asserted. Sizes can be lowered for a quick run with BENCH_CREATES / BENCH_GETS.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { Etcd3Store } from '../storage/etcd3/etcd3-store';
import { type Store } from '../storage/interface';
import { SqliteStore } from '../storage/sqlite/sqlite-store';
import { freePort, startEtcd, type EtcdCluster } from '../storage/testing/etcd';
import { BenchClient, type ServerMemory, type ServerProcess, startServerProcess, step } from '../testing/bench-server';

const CONCURRENCY = 32;
/** ConfigMaps created by each of the two measured create runs (the first fills the listed namespace). */
const CREATES = Number(process.env.BENCH_CREATES ?? 5000);
const GETS = Number(process.env.BENCH_GETS ?? 10000);
/** ConfigMaps stored when the server's RSS is read. */
const STORED = 10000;
const WATCHERS = 100;
const FANOUT_WRITES = 100;

/** A ConfigMap of a realistic size (about 500 bytes of data). */
function configMap(namespace: string, name: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { app: 'bench', tier: 'backend' } },
    data: { 'config.yaml': `name: ${name}\npadding: ${'x'.repeat(400)}\n`, mode: 'bench' },
  };
}

/** Runs `op(i)` for i in [0, n) with `concurrency` workers; returns ops/s. */
async function rate(n: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) await op(i);
    }),
  );
  return n / ((performance.now() - t) / 1000);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function median(xs: number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
}

async function startServer(dir: string, storeServers: string): Promise<ServerProcess> {
  const port = await freePort();
  const certDir = join(dir, 'pki');
  const args = [
    `--store-servers=${storeServers}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--endpoint-reconciler-type=none',
    `--enable-priority-and-fairness=${PRIORITY_AND_FAIRNESS}`,
    ...encryptionArgs(dir),
    ...(SERVER_PROCESSES ? [`--server-processes=${SERVER_PROCESSES}`] : []),
  ];
  return startServerProcess({ args, port, certDir, readyTimeoutMs: 60_000 });
}

/**
 * BENCH_ENCRYPTION=aescbc (or aesgcm, secretbox): the measured ConfigMaps are stored encrypted by that provider
 * (`--encryption-provider-config`), to compare with a run without it.
 */
const ENCRYPTION = process.env.BENCH_ENCRYPTION ?? '';

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

/**
 * BENCH_PRIORITY_AND_FAIRNESS=true: the server runs with API Priority and Fairness (its default; these anonymous
 * clients are one flow of the global-default level), to compare with a run with the max-in-flight limits.
 */
const PRIORITY_AND_FAIRNESS = process.env.BENCH_PRIORITY_AND_FAIRNESS === 'true';

/**
 * BENCH_SERVER_PROCESSES=N: the server runs with `--server-processes=N` (unset: its default, one per CPU on etcd and
 * one on SQLite); the peak RSS is then the sum over the primary and its server processes.
 */
const SERVER_PROCESSES = process.env.BENCH_SERVER_PROCESSES ?? '';

/** ConfigMaps created by the one-client run. */
const SINGLE_CREATES = Math.min(CREATES, 1000);

/** The figures of one store. */
interface Figures {
  store: string;
  rawPutsPerSecond: number;
  apiCreatesPerSecond: number;
  /** Creates/s of one client, one request at a time. */
  singleCreatesPerSecond: number;
  getsPerSecond: number;
  /** Latency of the gets at CONCURRENCY, ms. */
  getMs: { p50: number; p99: number };
  listCacheMs: { best: number; median: number };
  listDefaultMs: { best: number; median: number };
  listPagedMs: { best: number; median: number; pages: number };
  listedItems: number;
  fanout: { p50: number; p99: number; max: number; events: number };
  rss: ServerMemory & { configMaps: number };
  /** The same creates and list for custom objects of a CRD (JSON in the store, no watch cache). */
  custom: { createsPerSecond: number; listDefaultMs: { best: number; median: number }; listedItems: number };
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

/** Custom-object creates/s (best of two runs of CREATES) and the list of CREATES of them, after the ConfigMaps. */
async function benchCustom(client: BenchClient): Promise<Figures['custom']> {
  await client.expect(201, 'POST', '/apis/apiextensions.platform/v1/customresourcedefinitions', BENCH_CRD);
  const base = '/apis/bench.example.com/v1/namespaces';
  // Served once the CRD is established (a second or so), by each server process once its own informer has it: as
  // many requests at once as there are connections, so that every process (with --server-processes) answers.
  for (const deadline = Date.now() + 60_000; ;) {
    const all = await Promise.all(
      Array.from({ length: CONCURRENCY }, () => client.request('GET', `${base}/bench/benchobjects?limit=1`)),
    );
    const r = all.find((x) => x.status !== 200) ?? all[0]!;
    if (r.status === 200) break;
    if (Date.now() > deadline) throw new Error(`custom objects not served: ${r.status}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  const create = (ns: string) => (i: number) => {
    const cm = configMap(ns, `co-${String(i).padStart(6, '0')}`);
    return client.expect(201, 'POST', `${base}/${ns}/benchobjects`, {
      ...cm,
      apiVersion: 'bench.example.com/v1',
      kind: 'BenchObject',
    });
  };
  await rate(200, CONCURRENCY, create('warmup'));
  const c1 = await rate(CREATES, CONCURRENCY, create('bench'));
  const c2 = await rate(CREATES, CONCURRENCY, create('bench2'));
  const listPath = `${base}/bench/benchobjects`;
  const full = JSON.parse((await client.expect(200, 'GET', listPath)).body.toString('utf8'));
  const listDefaultMs = await timeRuns(10, async () => void (await client.expect(200, 'GET', listPath)));
  return { createsPerSecond: Math.max(c1, c2), listDefaultMs, listedItems: (full.items as unknown[]).length };
}

/** Raw store creates at CONCURRENCY, best of two runs, with a value of the size the API stores. */
async function rawPuts(store: Store, prefix: string): Promise<number> {
  const value = new TextEncoder().encode(JSON.stringify(configMap('bench', 'cm-000000')));
  let best = 0;
  for (const run of [1, 2]) {
    best = Math.max(
      best,
      await rate(CREATES, CONCURRENCY, (i) => store.create(`${prefix}r${run}/cm-${String(i).padStart(6, '0')}`, value)),
    );
  }
  return best;
}

async function timeRuns(runs: number, f: () => Promise<void>): Promise<{ best: number; median: number }> {
  await f(); // warm up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    times.push(performance.now() - t);
  }
  return { best: Math.min(...times), median: median(times) };
}

/** Opens WATCHERS watches on the ConfigMaps of `namespace`, then writes and times each event's arrival. */
async function fanout(server: ServerProcess, client: BenchClient, namespace: string): Promise<Figures['fanout']> {
  await client.expect(201, 'POST', `/api/v1/namespaces/${namespace}/configmaps`, configMap(namespace, 'fan'));
  const rv = JSON.parse(
    (await client.expect(200, 'GET', `/api/v1/namespaces/${namespace}/configmaps?limit=1`)).body.toString('utf8'),
  ).metadata.resourceVersion as string;
  const agent = new Agent({ keepAlive: false, maxSockets: WATCHERS + 1, ca: server.ca });
  const latencies: number[] = [];
  /** Waiters of the write in flight: how many watchers still have to see it. */
  let pending: { value: string; sentAt: number; left: number; done: () => void } | undefined;
  const requests: ReturnType<typeof httpsRequest>[] = [];
  let ready = 0;
  const allReady = new Promise<void>((resolveReady, rejectReady) => {
    for (let w = 0; w < WATCHERS; w++) {
      const req = httpsRequest(
        `${server.url}/api/v1/namespaces/${namespace}/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=600`,
        { agent },
        (res) => {
          if (res.statusCode !== 200) {
            rejectReady(new Error(`watch: ${res.statusCode}`));
            return;
          }
          if (++ready === WATCHERS) resolveReady();
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const now = performance.now();
            buf += chunk;
            for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              const e = JSON.parse(line) as { type: string; object: { data?: { mode?: string } } };
              const p = pending;
              if (p && e.type === 'MODIFIED' && e.object.data?.mode === p.value) {
                latencies.push(now - p.sentAt);
                if (--p.left === 0) p.done();
              }
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', (err) => rejectReady(err));
      req.end();
      requests.push(req);
    }
  });
  await allReady;
  let current = JSON.parse(
    (await client.expect(200, 'GET', `/api/v1/namespaces/${namespace}/configmaps/fan`)).body.toString('utf8'),
  ) as { data: Record<string, string> };
  for (let i = 0; i < FANOUT_WRITES; i++) {
    const value = `write-${i}`;
    const seen = new Promise<void>((done) => {
      pending = { value, sentAt: performance.now(), left: WATCHERS, done };
    });
    current.data.mode = value;
    current = JSON.parse(
      (await client.expect(200, 'PUT', `/api/v1/namespaces/${namespace}/configmaps/fan`, current)).body.toString(
        'utf8',
      ),
    ) as { data: Record<string, string> };
    await seen;
  }
  for (const req of requests) req.destroy();
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    events: sorted.length,
  };
}

async function benchStore(storeName: string, dir: string, serverStore: string, raw: Store): Promise<Figures> {
  step(`${storeName}: raw store creates`);
  const rawPutsPerSecond = await rawPuts(raw, '/rawbench/');
  await raw.close();
  step(`${storeName}: starting the API server`);
  const server = await startServer(dir, serverStore);
  const client = new BenchClient(server.url, server.ca, CONCURRENCY);
  try {
    for (const ns of ['bench', 'bench2', 'single', 'fanout', 'warmup']) {
      await client.expect(201, 'POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns },
      });
    }
    const create = (ns: string) => (i: number) =>
      client.expect(
        201,
        'POST',
        `/api/v1/namespaces/${ns}/configmaps`,
        configMap(ns, `cm-${String(i).padStart(6, '0')}`),
      );
    // Warm-up (JIT, connections); these count towards the STORED ConfigMaps.
    const warm = 500;
    await rate(warm, CONCURRENCY, create('warmup'));
    step(`${storeName}: API creates`);
    const c1 = await rate(CREATES, CONCURRENCY, create('bench'));
    const c2 = await rate(CREATES, CONCURRENCY, create('bench2'));
    const apiCreatesPerSecond = Math.max(c1, c2);
    step(`${storeName}: API creates, one client`);
    const singleCreatesPerSecond = await rate(SINGLE_CREATES, 1, create('single'));
    const filled = warm + 2 * CREATES + SINGLE_CREATES;
    if (filled < STORED) await rate(STORED - filled, CONCURRENCY, (i) => create('warmup')(warm + i));
    const stored = Math.max(filled, STORED) + 1; // + the fan-out ConfigMap
    step(`${storeName}: gets`);
    const getLatencies: number[] = [];
    const getsPerSecond = await rate(GETS, CONCURRENCY, async (i) => {
      const t = performance.now();
      await client.expect(200, 'GET', `/api/v1/namespaces/bench/configmaps/cm-${String(i % CREATES).padStart(6, '0')}`);
      getLatencies.push(performance.now() - t);
    });
    getLatencies.sort((a, b) => a - b);
    const getMs = { p50: percentile(getLatencies, 50), p99: percentile(getLatencies, 99) };
    step(`${storeName}: lists`);
    const listPath = '/api/v1/namespaces/bench/configmaps';
    const full = JSON.parse((await client.expect(200, 'GET', `${listPath}?resourceVersion=0`)).body.toString('utf8'));
    const listedItems = (full.items as unknown[]).length;
    const listCacheMs = await timeRuns(
      10,
      async () => void (await client.expect(200, 'GET', `${listPath}?resourceVersion=0`)),
    );
    const listDefaultMs = await timeRuns(10, async () => void (await client.expect(200, 'GET', listPath)));
    let pages = 0;
    const listPagedMs = await timeRuns(5, async () => {
      pages = 0;
      let cont = '';
      do {
        const r = await client.expect(
          200,
          'GET',
          `${listPath}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
        );
        pages++;
        cont = (JSON.parse(r.body.toString('utf8')).metadata.continue as string | undefined) ?? '';
      } while (cont);
    });
    step(`${storeName}: watch fan-out`);
    const fan = await fanout(server, client, 'fanout');
    const mem = server.memory();
    step(`${storeName}: custom objects`);
    const custom = await benchCustom(client);
    return {
      store: storeName,
      rawPutsPerSecond,
      apiCreatesPerSecond,
      singleCreatesPerSecond,
      getsPerSecond,
      getMs,
      listCacheMs,
      listDefaultMs,
      listPagedMs: { ...listPagedMs, pages },
      listedItems,
      fanout: fan,
      rss: { ...mem, configMaps: stored },
      custom,
    };
  } finally {
    client.close();
    await server.stop();
  }
}

function report(all: Figures[]): void {
  const ok = (good: boolean): string => (good ? 'ok' : 'MISSED');
  const f1 = (n: number): string => n.toFixed(1);
  for (const f of all) {
    const ratio = f.apiCreatesPerSecond / f.rawPutsPerSecond;
    console.log(`\n--- ${f.store} (${CONCURRENCY} concurrent HTTPS clients, keep-alive) ---`);
    const rows: [string, string, string][] = [
      ['raw Store.create/s', f1(f.rawPutsPerSecond), ''],
      ['API ConfigMap creates/s', f1(f.apiCreatesPerSecond), ''],
      ['API creates / raw puts', `${(ratio * 100).toFixed(0)}%`, `>= 70%: ${ok(ratio >= 0.7)}`],
      ['API ConfigMap creates/s, 1 client', f1(f.singleCreatesPerSecond), ''],
      ['API ConfigMap gets/s', f1(f.getsPerSecond), ''],
      ['API ConfigMap get latency', `p50 ${f1(f.getMs.p50)} ms, p99 ${f1(f.getMs.p99)} ms`, ''],
      [
        `list ${f.listedItems}, resourceVersion=0 (watch cache)`,
        `${f1(f.listCacheMs.best)} ms best, ${f1(f.listCacheMs.median)} ms median`,
        `< 100 ms: ${ok(f.listCacheMs.median < 100)}`,
      ],
      [
        `list ${f.listedItems}, default (consistent)`,
        `${f1(f.listDefaultMs.best)} ms best, ${f1(f.listDefaultMs.median)} ms median`,
        '',
      ],
      [
        `list ${f.listedItems}, limit=500 (${f.listPagedMs.pages} pages)`,
        `${f1(f.listPagedMs.best)} ms best, ${f1(f.listPagedMs.median)} ms median`,
        '',
      ],
      [
        `watch fan-out, ${WATCHERS} watchers x ${FANOUT_WRITES} writes`,
        `p50 ${f1(f.fanout.p50)} ms, p99 ${f1(f.fanout.p99)} ms, max ${f1(f.fanout.max)} ms (${f.fanout.events} events)`,
        `p99 < 50 ms: ${ok(f.fanout.p99 < 50)}`,
      ],
      ['API custom object creates/s', f1(f.custom.createsPerSecond), ''],
      [
        `list ${f.custom.listedItems} custom objects, default (consistent)`,
        `${f1(f.custom.listDefaultMs.best)} ms best, ${f1(f.custom.listDefaultMs.median)} ms median`,
        '',
      ],
      [
        `server peak RSS (child VmHWM), ${f.rss.configMaps} ConfigMaps`,
        `${f1(f.rss.peakMiB)} MiB (now ${f1(f.rss.currentMiB)} MiB)`,
        `< 300 MB: ${ok(f.rss.peakMiB * 1024 * 1024 < 300e6)}`,
      ],
    ];
    // Several server processes: each one's peak and current RSS (the first is the primary).
    if (f.rss.processes.length > 1)
      rows.push([
        `  ${f.rss.processes.length} processes (primary first)`,
        f.rss.processes.map((p) => `${f1(p.peakMiB)}/${f1(p.currentMiB)}`).join(', ') + ' MiB',
        '',
      ]);
    for (const [what, figure, target] of rows) console.log(`${what.padEnd(52)} ${figure.padEnd(48)} ${target}`);
  }
  console.log(
    '\nLatencies are client-side (request sent to last byte received). Fan-out latency: from sending the PUT to a' +
      ' watcher reading its event. Peak RSS: VmHWM of the API server process (a child process) over the whole run;' +
      " with several server processes, the sum of their VmHWMs and the primary's.",
  );
}

async function main(): Promise<void> {
  const all: Figures[] = [];
  const loadBefore = loadavg()[0]!;
  const stores = (process.env.BENCH_STORES ?? 'sqlite,etcd').split(',');
  if (stores.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-bench-'));
    try {
      const raw = await SqliteStore.open(join(dir, 'raw.db'));
      all.push(await benchStore('SQLite (embedded)', dir, `sqlite://${join(dir, 'state.db')}`, raw));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (stores.includes('etcd')) {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-bench-'));
    let cluster: EtcdCluster | undefined;
    try {
      cluster = await startEtcd({ timing: 'defaults', progressNotifyInterval: '' });
      const raw = new Etcd3Store({ endpoints: cluster.endpoints });
      all.push(await benchStore('etcd (1 member, durable)', dir, cluster.endpoints.join(','), raw));
    } finally {
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (ENCRYPTION) console.log(`\nConfigMaps stored encrypted by ${ENCRYPTION} (BENCH_ENCRYPTION).`);
  console.log(
    SERVER_PROCESSES
      ? `\nWith --server-processes=${SERVER_PROCESSES} (BENCH_SERVER_PROCESSES).`
      : '\nWith the default --server-processes (BENCH_SERVER_PROCESSES=N to set it).',
  );
  console.log(
    PRIORITY_AND_FAIRNESS
      ? '\nWith API Priority and Fairness (BENCH_PRIORITY_AND_FAIRNESS=true).'
      : '\nWith the max-in-flight limits (BENCH_PRIORITY_AND_FAIRNESS=true for priority and fairness).',
  );
  report(all);
  // Every figure is CPU-bound on the clients' side too: say how busy the machine was.
  console.log(
    `Machine: ${cpus().length} CPUs, load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end (1 min).`,
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
