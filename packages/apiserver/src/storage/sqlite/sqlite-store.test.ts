import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { isStorageError } from '../errors';
import { type StoreEvent } from '../interface';

import { parseSqliteUrl, READ_SQL, SqliteStore } from './sqlite-store';

const enc = new TextEncoder();
const dec = new TextDecoder();
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-store-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('parseSqliteUrl', () => {
  test('absolute and relative paths', () => {
    expect(parseSqliteUrl('sqlite:///var/lib/platform/state.db')).toBe('/var/lib/platform/state.db');
    expect(parseSqliteUrl('sqlite://data/state.db', '/srv')).toBe('/srv/data/state.db');
    expect(parseSqliteUrl('sqlite:///a%20b/state.db')).toBe('/a b/state.db');
  });
  test('bad URLs name the problem', () => {
    expect(() => parseSqliteUrl('http://x')).toThrow(/not a sqlite URL/);
    expect(() => parseSqliteUrl('sqlite://')).toThrow(/no file path/);
    expect(() => parseSqliteUrl('sqlite:///x.db?mode=memory')).toThrow(/query/);
  });
});

test('a second owner of the same file fails clearly; the lock is released on close', async () => {
  const path = join(dir, 'state.db');
  const store = await SqliteStore.open(path);
  const err = await SqliteStore.open(path).catch((e: unknown) => e);
  expect(isStorageError(err, 'Unreachable')).toBe(true);
  expect((err as Error).message).toMatch(/in use by another API server process/);
  await store.close();
  const again = await SqliteStore.open(path);
  await again.close();
});

test('the database is owner-only; a file that is not a database is refused with an error naming it', async () => {
  const path = join(dir, 'sub', 'state.db');
  const store = await SqliteStore.open(path);
  await store.create('/secret', enc.encode('s'));
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
  expect(statSync(join(dir, 'sub')).mode & 0o777).toBe(0o700);
  await store.close();
  const garbage = join(dir, 'garbage.db');
  writeFileSync(garbage, 'this is not a database '.repeat(100));
  const err = await SqliteStore.open(garbage).catch((e: unknown) => e);
  expect(isStorageError(err, 'Unreachable')).toBe(true);
  expect((err as Error).message).toContain(garbage);
  expect((err as Error).message).toMatch(/not a database/);
  await expect(SqliteStore.open('relative/state.db')).rejects.toThrow(/must be absolute/);
});

test('no read scans the log: every query plan searches an index', async () => {
  const path = join(dir, 'state.db');
  const store = await SqliteStore.open(path);
  await store.close();
  const db = new Database(path, { readonly: true });
  try {
    for (const [name, sql] of Object.entries(READ_SQL)) {
      if (sql.startsWith('PRAGMA')) continue;
      const params = (sql.match(/\?/g) ?? []).map(() => 1);
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(
        (r) => r.detail,
      );
      // `SCAN m` walks a GROUP BY co-routine (already index-driven); sqlite_sequence has one row per table.
      const scans = plan.filter((d) => /^SCAN /.test(d) && !/^SCAN (m|sqlite_sequence)\b/.test(d));
      expect({ name, scans }).toEqual({ name, scans: [] });
      if (name !== 'revision') expect(plan.some((d) => /^SEARCH /.test(d))).toBe(true);
    }
  } finally {
    db.close();
  }
});

test('lists stay fast with 100k rows of history, at the current and at a past revision', async () => {
  const store = await SqliteStore.open(join(dir, 'state.db'));
  try {
    const keys = Array.from({ length: 1000 }, (_, i) => `/registry/things/${String(i).padStart(4, '0')}`);
    let revs = await Promise.all(keys.map((k) => store.create(k, enc.encode('0'))));
    const early = revs[revs.length - 1]!.modRevision;
    for (let round = 1; round < 100; round++) {
      revs = await Promise.all(keys.map((k, i) => store.update(k, enc.encode(String(round)), revs[i]!.modRevision)));
    }
    expect(await store.currentRevision()).toBeGreaterThanOrEqual(100000n);
    let t = performance.now();
    const now = await store.list('/registry/things/');
    const currentMs = performance.now() - t;
    expect(now.kvs).toHaveLength(1000);
    expect(dec.decode(now.kvs[0]!.value)).toBe('99');
    t = performance.now();
    const past = await store.list('/registry/things/', { at: early });
    const pastMs = performance.now() - t;
    expect(past.kvs).toHaveLength(1000);
    expect(dec.decode(past.kvs[0]!.value)).toBe('0');
    t = performance.now();
    const page = await store.list('/registry/things/', { at: early + 5000n, limit: 100, startKey: keys[500] });
    const pageMs = performance.now() - t;
    expect(page.kvs).toHaveLength(100);
    // Generous bounds (CI machines vary); a full scan of the log per row would take seconds.
    expect(currentMs).toBeLessThan(250);
    expect(pastMs).toBeLessThan(1000);
    expect(pageMs).toBeLessThan(1000);
  } finally {
    await store.close();
  }
}, 120000);

test('compaction removes superseded rows and tombstones and gives the pages back', async () => {
  const store = await SqliteStore.open(join(dir, 'state.db'));
  try {
    const value = new Uint8Array(8 * 1024).fill(7);
    const keys = Array.from({ length: 300 }, (_, i) => `/c/${i}`);
    let revs = await Promise.all(keys.map((k) => store.create(k, value)));
    for (let round = 0; round < 5; round++) {
      revs = await Promise.all(keys.map((k, i) => store.update(k, value, revs[i]!.modRevision)));
    }
    await Promise.all(keys.slice(0, 150).map((k) => store.delete(k)));
    const before = await store.dbSize();
    const rev = await store.currentRevision();
    await store.compact(rev);
    const after = await store.dbSize();
    expect(after).toBeLessThan(before * 0.3);
    expect(await store.count('/c/')).toBe(150);
    const db = new Database(join(dir, 'state.db'), { readonly: true });
    try {
      const rows = (db.prepare(`SELECT COUNT(*) AS n FROM kine WHERE name LIKE '/c/%'`).get() as { n: number }).n;
      expect(rows).toBeLessThanOrEqual(151); // one live row per key (+ possibly the last tombstone at the compact revision)
      expect(db.pragma('auto_vacuum', { simple: true })).toBe(2);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
  } finally {
    await store.close();
  }
}, 60000);

test('a watch started during a stream of writes sees each write once (replay then live, no gap)', async () => {
  const store = await SqliteStore.open(join(dir, 'state.db'));
  try {
    const first = await store.create('/w/0', enc.encode('0'));
    const writes = (async () => {
      for (let i = 1; i <= 300; i++) await store.create(`/w/${i}`, enc.encode(String(i)));
    })();
    await new Promise((r) => setImmediate(r));
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const ev of store.watch('/w/', first.modRevision, ac.signal)) {
      if (ev.type === 'put') seen.push(ev.kv.key);
      if (seen.length === 300) break;
    }
    await writes;
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => `/w/${i + 1}`));
  } finally {
    await store.close();
  }
});

test('a write is answered after its event went through the watches (a fan-out does not wait for the writer)', async () => {
  const store = await SqliteStore.open(join(dir, 'state.db'));
  const ac = new AbortController();
  try {
    const first = await store.create('/f/a', enc.encode('0'));
    // Several async layers between the store and the consumer, as store watch → watch cache → handler.
    async function* relay<T>(from: AsyncIterable<T>): AsyncIterable<T> {
      for await (const x of from) yield x;
    }
    let chain: AsyncIterable<StoreEvent> = store.watch('/f/', first.modRevision, ac.signal);
    for (let i = 0; i < 6; i++) chain = relay(chain);
    const seen: bigint[] = [];
    const consumer = (async () => {
      for await (const ev of chain) if (ev.type === 'put') seen.push(ev.revision);
    })();
    for (let i = 1; i <= 20; i++) {
      const kv = await store.update('/f/a', enc.encode(String(i)), i === 1 ? first.modRevision : seen.at(-1)!);
      expect(seen.at(-1)).toBe(kv.modRevision);
    }
    ac.abort();
    await consumer.catch(() => undefined);
  } finally {
    ac.abort();
    await store.close();
  }
});

test('crash safety: every acknowledged write survives SIGKILL and the log stays consistent', async () => {
  const path = join(dir, 'state.db');
  const child = spawn(process.execPath, [join(__dirname, '../testing/sqlite-writer-child.js'), path], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let errOut = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (errOut += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 60000;
  while ((out.match(/^ack /gm) ?? []).length < 2000) {
    if (child.exitCode !== null) throw new Error(`child exited early: ${errOut}`);
    if (Date.now() > deadline) throw new Error(`child too slow: ${out.length} bytes of output; ${errOut}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  // While the child owns the store, another process cannot open it.
  const locked = await SqliteStore.open(path).catch((e: unknown) => e);
  expect((locked as Error).message).toMatch(/in use/);
  child.kill('SIGKILL');
  await exited;
  // Only complete lines count: the last one may have been cut by the kill.
  const lines = out
    .split('\n')
    .slice(0, -1)
    .filter((l) => l.startsWith('ack '));
  const acked = new Map<string, { value: string; rev: bigint }>();
  for (const l of lines) {
    const [, key, value, rev] = l.split(' ');
    acked.set(key!, { value: value!, rev: BigInt(rev!) });
  }
  const store = await SqliteStore.open(path);
  try {
    const list = await store.list('/crash/');
    const byKey = new Map(list.kvs.map((kv) => [kv.key, kv]));
    for (const [key, a] of acked) {
      const kv = byKey.get(key);
      expect(kv).toBeDefined();
      const value = dec.decode(kv!.value);
      if (value === a.value) expect(kv!.modRevision).toBe(a.rev);
      else {
        // A later write of the same key (the child's update) committed, but its acknowledgement died with the child.
        expect({ key, value }).toEqual({ key, value: `${a.value}-u` });
        expect(kv!.modRevision).toBeGreaterThan(a.rev);
      }
    }
    // Writes after the last ack may have committed too (acknowledgement lost in the kill), never the reverse.
    expect(list.kvs.length).toBeGreaterThanOrEqual(new Set([...acked.keys()]).size);
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare(`SELECT id, name, deleted, prev_revision FROM kine ORDER BY id`).all() as {
        id: number;
        name: string;
        deleted: number;
        prev_revision: number;
      }[];
      // Revisions strictly increasing, each key's chain links to its previous row, no duplicates.
      const lastOf = new Map<string, number>();
      let prevId = 0;
      for (const r of rows) {
        expect(r.id).toBeGreaterThan(prevId);
        prevId = r.id;
        expect(r.prev_revision).toBe(lastOf.get(r.name) ?? 0);
        lastOf.set(r.name, r.id);
      }
      // The live-key index equals the set of latest rows.
      const current = db.prepare(`SELECT name, id FROM current ORDER BY name`).all() as { name: string; id: number }[];
      expect(current).toEqual(
        [...lastOf.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, id]) => ({ name, id })),
      );
      expect(current.map((c) => c.name)).toEqual(list.kvs.map((kv) => kv.key));
    } finally {
      db.close();
    }
    // The reopened store keeps working from the recovered revision.
    const next = await store.create('/crash/after', enc.encode('x'));
    expect(next.modRevision).toBeGreaterThan(list.revision);
  } finally {
    await store.close();
  }
}, 90000);
