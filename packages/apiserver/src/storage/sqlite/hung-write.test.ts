/**
 * The SQLite store while another process holds the database's write lock: writes fail with Timeout at their deadline
 * and are not applied, reads go on, the health check fails; once the lock is released everything resumes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isStorageError } from '../errors';
import { type StoreEvent } from '../interface';
import { holdSqliteLock, type SqliteLockHolder } from '../testing/sqlite-lock';

import { SqliteStore } from './sqlite-store';

const enc = new TextEncoder();
let dir: string;
let store: SqliteStore | undefined;
let holder: SqliteLockHolder | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-hung-'));
});
afterEach(async () => {
  await holder?.release();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Retries `fn` until it resolves (60 s at most). */
async function eventually<T>(fn: () => Promise<T>): Promise<T> {
  for (const deadline = Date.now() + 60000; ;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test('writes time out unapplied while the lock is held elsewhere; reads go on; all resumes on release', async () => {
  const path = join(dir, 'state.db');
  const s = (store = await SqliteStore.open(path, { writeTimeoutMs: 500, expiryIntervalMs: 100 }));
  const a = await s.create('/a', enc.encode('a1'));
  const b = await s.create('/b', enc.encode('b1'));
  await s.create('/ttl', enc.encode('t'), { ttlSeconds: 1 });
  const before = await s.currentRevision();
  const events: StoreEvent[] = [];
  const ac = new AbortController();
  const watching = (async () => {
    for await (const ev of s.watch('/', before, ac.signal)) events.push(ev);
  })();

  holder = await holdSqliteLock(path);
  const writes = await Promise.all([
    s.create('/c', enc.encode('c1')).catch((e: unknown) => e),
    s.update('/a', enc.encode('a2'), a.modRevision).catch((e: unknown) => e),
    s.delete('/b', b.modRevision).catch((e: unknown) => e),
    s.compact(before).catch((e: unknown) => e),
  ]);
  for (const w of writes) {
    expect(isStorageError(w, 'Timeout')).toBe(true);
    expect((w as Error).message).toMatch(/^store timeout: the SQLite (store|database) /);
  }
  await expect(s.check(300)).rejects.toThrow(/store timeout/);
  // Reads are served by the read-only connection meanwhile, from the state before the lock.
  expect(new TextDecoder().decode((await s.get('/a'))!.value)).toBe('a1');
  expect((await s.list('/')).kvs.map((kv) => kv.key)).toEqual(expect.arrayContaining(['/a', '/b']));
  expect(await s.get('/c')).toBeUndefined();

  await holder.release();
  await eventually(() => s.check(2000));
  const after = await eventually(() => s.create('/after', enc.encode('x')));
  // Nothing of the timed-out writes was applied (they never started); the TTL key expired (before the lock was
  // taken, or once it was free).
  await eventually(async () => expect((await s.list('/')).kvs.map((kv) => kv.key)).toEqual(['/a', '/after', '/b']));
  expect(new TextDecoder().decode((await s.get('/a'))!.value)).toBe('a1');
  expect((await s.get('/b'))!.modRevision).toBe(b.modRevision);
  // Watches saw exactly what was applied, once each: the expiry of /ttl and the create of /after.
  const seen = (): string[] =>
    events.map((e) =>
      e.type === 'put' ? `put ${e.kv.key} ${e.revision}` : e.type === 'delete' ? `delete ${e.key}` : '',
    );
  await eventually(async () => expect(seen().sort()).toEqual(['delete /ttl', `put /after ${after.modRevision}`]));
  ac.abort();
  await watching;
}, 90000);

test('a write waiting for the lock lands once it is released within its deadline; the health check fails meanwhile', async () => {
  const path = join(dir, 'state.db');
  const s = (store = await SqliteStore.open(path, { writeTimeoutMs: 60000 }));
  const before = await s.currentRevision();
  holder = await holdSqliteLock(path);
  let settled = false;
  const write = s.create('/w', enc.encode('w')).finally(() => (settled = true));
  // Queued behind the waiting write, the check gives up at its own deadline and the write goes on waiting.
  await expect(s.check(300)).rejects.toThrow(/store timeout: .*not applied/);
  expect(settled).toBe(false);
  expect(await s.get('/w')).toBeUndefined();
  await holder.release();
  const kv = await write;
  expect(kv.modRevision).toBe(before + 1n);
  expect(new TextDecoder().decode((await s.get('/w'))!.value)).toBe('w');
  await s.check(2000);
}, 90000);
