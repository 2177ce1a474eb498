/**
 * Storage benchmark (`npm run bench -- storage`): creates per second at concurrency 1 and 32 and the time to list
 * 10k objects, for etcd (the raw `etcd3` client and our layer), the embedded SQLite store, and the watch cache.
 * etcd runs with its default (durable) settings on a temp dir; SQLite with WAL + synchronous=FULL. Prints tables and
 * the ratios of the targets in docs/storage.md. Figures are printed, never asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { Etcd3 } from 'etcd3';

import { Cacher } from './cacher/cacher';
import { Etcd3Store } from './etcd3/etcd3-store';
import { type Store } from './interface';
import { SqliteStore } from './sqlite/sqlite-store';
import { StoreStorage } from './storage';
import { startEtcd } from './testing/etcd';
import { jsonCodec } from './testing/json-codec';
import { pod } from './testing/storage-conformance';

interface Row {
  backend: string;
  operation: string;
  concurrency: number;
  ops: number;
  seconds: number;
  perSecond: number;
}

const rows: Row[] = [];
const value = new TextEncoder().encode(JSON.stringify(pod('bench', 'x', { spec: { padding: 'x'.repeat(400) } })));

async function createRate(
  backend: string,
  concurrency: number,
  ops: number,
  create: (key: string) => Promise<unknown>,
): Promise<number> {
  const prefix = `/bench/${backend.replace(/\W/g, '')}/c${concurrency}/${Date.now()}/`;
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < ops; i = next++) await create(`${prefix}${String(i).padStart(6, '0')}`);
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  rows.push({ backend, operation: 'create', concurrency, ops, seconds, perSecond: ops / seconds });
  return ops / seconds;
}

async function timeList(backend: string, runs: number, list: () => Promise<number>): Promise<number> {
  await list(); // warm up
  let best = Infinity;
  let n = 0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    n = await list();
    best = Math.min(best, performance.now() - t);
  }
  rows.push({
    backend,
    operation: `list ${n} (best of ${runs})`,
    concurrency: 1,
    ops: 1,
    seconds: best / 1000,
    perSecond: 1000 / best,
  });
  return best;
}

async function fill(store: Store, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, n - i) }, (_, j) => {
        const name = `p${String(i + j).padStart(5, '0')}`;
        return store.create(`${prefix}${name}`, new TextEncoder().encode(JSON.stringify(pod('bench', name))));
      }),
    );
  }
}

/** Round trip of the same rows through a worker (what serving reads from the writer thread would add). */
async function workerRoundTripMs(payload: unknown): Promise<number> {
  const w = new Worker(
    `require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m))`,
    {
      eval: true,
    },
  );
  try {
    const once = (): Promise<void> => new Promise((r) => w.once('message', () => r()) && w.postMessage(payload));
    await once();
    const t = performance.now();
    await once();
    return performance.now() - t;
  } finally {
    await w.terminate();
  }
}

async function main(): Promise<void> {
  const N1 = Number(process.env.BENCH_OPS_C1 ?? 1500);
  const N32 = Number(process.env.BENCH_OPS_C32 ?? 4000);
  const LIST_N = 10000;
  const dir = mkdtempSync(join(tmpdir(), 'storage-bench-'));
  const cluster = await startEtcd({ timing: 'defaults', progressNotifyInterval: '' });
  try {
    // --- etcd: raw client vs our layer, same transaction (create if absent) ---
    const ours = new Etcd3Store({ endpoints: cluster.endpoints });
    const raw = new Etcd3({ hosts: cluster.endpoints });
    const rawCreate = async (key: string): Promise<void> => {
      const r = await raw
        .if(key, 'Create', '==', 0)
        .then(raw.put(key).value(Buffer.from(value)))
        .commit();
      if (!r.succeeded) throw new Error('exists');
    };
    // Alternate raw, ours, ours, raw and keep each one's best run, so that warm-up favours neither.
    const pair = async (c: number, n: number): Promise<[number, number]> => {
      const r1 = await createRate('etcd raw etcd3 client', c, n, rawCreate);
      const o1 = await createRate('etcd Etcd3Store', c, n, (k) => ours.create(k, value));
      const o2 = await createRate('etcd Etcd3Store', c, n, (k) => ours.create(k, value));
      const r2 = await createRate('etcd raw etcd3 client', c, n, rawCreate);
      return [Math.max(r1, r2), Math.max(o1, o2)];
    };
    const [etcdRaw1, etcdOurs1] = await pair(1, N1);
    const [etcdRaw32, etcdOurs32] = await pair(32, N32);

    // --- SQLite ---
    const sqlite = await SqliteStore.open(join(dir, 'state.db'));
    const sqlite1 = Math.max(
      await createRate('sqlite SqliteStore', 1, N1, (k) => sqlite.create(k, value)),
      await createRate('sqlite SqliteStore', 1, N1, (k) => sqlite.create(k, value)),
    );
    const sqlite32 = Math.max(
      await createRate('sqlite SqliteStore', 32, N32, (k) => sqlite.create(k, value)),
      await createRate('sqlite SqliteStore', 32, N32, (k) => sqlite.create(k, value)),
    );

    // --- lists of 10k objects ---
    const prefix = '/registry/pods/bench/';
    await fill(ours, prefix, LIST_N);
    await fill(sqlite, prefix, LIST_N);
    await timeList(
      'etcd raw etcd3 client (bytes)',
      5,
      async () => Object.keys(await raw.getAll().prefix(prefix).buffers()).length,
    );
    await timeList('etcd Etcd3Store (bytes)', 5, async () => (await ours.list(prefix)).kvs.length);
    const sqliteListMs = await timeList(
      'sqlite SqliteStore (bytes)',
      5,
      async () => (await sqlite.list(prefix)).kvs.length,
    );
    const typedSqlite = new StoreStorage(sqlite, jsonCodec);
    const typedEtcd = new StoreStorage(ours, jsonCodec);
    await timeList('etcd StoreStorage (decoded)', 5, async () => (await typedEtcd.list(prefix)).items.length);
    const storeListMs = await timeList(
      'sqlite StoreStorage (decoded)',
      5,
      async () => (await typedSqlite.list(prefix)).items.length,
    );
    const cacher = new Cacher(typedSqlite, { resourcePrefix: '/registry/pods/' });
    await cacher.start();
    const cacherListMs = await timeList('sqlite Cacher, resourceVersion=0', 20, async () => {
      return (await cacher.list(prefix, { resourceVersion: '0' })).items.length;
    });
    const etcdCacher = new Cacher(typedEtcd, { resourcePrefix: '/registry/pods/' });
    await etcdCacher.start();
    const etcdStoreListMs = rows.find((r) => r.backend === 'etcd StoreStorage (decoded)')!.seconds * 1000;
    const etcdCacherListMs = await timeList('etcd Cacher, resourceVersion=0', 20, async () => {
      return (await etcdCacher.list(prefix, { resourceVersion: '0' })).items.length;
    });
    // Consistent lists (no resourceVersion): from memory once the store proves the cache current.
    await timeList('sqlite Cacher, consistent', 20, async () => (await cacher.list(prefix)).items.length);
    await timeList('etcd Cacher, consistent', 20, async () => (await etcdCacher.list(prefix)).items.length);
    const rawRows = (await sqlite.list(prefix)).kvs;
    const transferMs = await workerRoundTripMs(rawRows);
    await cacher.stop();
    await etcdCacher.stop();
    await sqlite.close();
    await ours.close();
    raw.close();

    const pad = (s: string, n: number): string => s.padEnd(n);
    console.log(
      `${pad('backend', 36)} ${pad('operation', 24)} ${pad('conc.', 6)} ${pad('ops', 7)} ${pad('seconds', 9)} ops/s`,
    );
    for (const r of rows) {
      console.log(
        `${pad(r.backend, 36)} ${pad(r.operation, 24)} ${pad(String(r.concurrency), 6)} ${pad(String(r.ops), 7)} ${pad(
          r.seconds.toFixed(4),
          9,
        )} ${r.perSecond.toFixed(1)}`,
      );
    }
    const pct = (a: number, b: number): string => `${((a / b) * 100).toFixed(0)}%`;
    const x = (a: number, b: number): string => `${(a / b).toFixed(1)}x`;
    console.log('\nratios (target in brackets)');
    console.log(`  Etcd3Store / raw etcd3 creates, concurrency 1:   ${pct(etcdOurs1, etcdRaw1)} [>= 90%]`);
    console.log(`  Etcd3Store / raw etcd3 creates, concurrency 32:  ${pct(etcdOurs32, etcdRaw32)} [>= 90%]`);
    console.log(`  SQLite / etcd durable creates, concurrency 32:   ${x(sqlite32, etcdOurs32)} [>= 2x]`);
    console.log(`  SQLite / etcd durable creates, concurrency 1:    ${x(sqlite1, etcdOurs1)}`);
    console.log(
      `  10k list, StoreStorage(sqlite) / Cacher:          ${x(storeListMs, cacherListMs)} faster from the cache [>= 10x]`,
    );
    console.log(
      `  10k list, StoreStorage(etcd) / Cacher:            ${x(etcdStoreListMs, etcdCacherListMs)} faster from the cache [>= 10x]`,
    );
    console.log(
      `  SQLite reads on the main thread: 10k rows read in ${sqliteListMs.toFixed(1)} ms; handing the same rows across a worker would add ${transferMs.toFixed(1)} ms`,
    );
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
