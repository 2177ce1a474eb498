import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ApiObject } from '../api-object';
import { isStorageError } from '../errors';
import { type Revision, type Store, type StoreEvent, type StoreWatchOptions } from '../interface';
import { SqliteStore } from '../sqlite/sqlite-store';
import { StoreStorage } from '../storage';
import { jsonCodec } from '../testing/json-codec';
import { pod, show, takeWatch } from '../testing/storage-conformance';

import { Cacher, type CacherOptions } from './cacher';

/** Counts the watches opened on a real store (a decorator, not a mock: every call goes to the store). */
function countingWatches(store: Store): { store: Store; watches: () => number } {
  let n = 0;
  const watch = (
    prefix: string,
    after: Revision,
    signal: AbortSignal,
    o?: StoreWatchOptions,
  ): AsyncIterable<StoreEvent> => {
    n++;
    return store.watch(prefix, after, signal, o);
  };
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === 'watch') return watch;
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: wrapped, watches: () => n };
}

let dir: string;
let store: SqliteStore;
let counted: ReturnType<typeof countingWatches>;
let storage: StoreStorage;
let cacher: Cacher | undefined;
let now = 0;

async function makeCacher(o: Partial<CacherOptions> = {}): Promise<Cacher> {
  cacher = new Cacher(storage, { resourcePrefix: '/registry/pods/', now: () => now, waitTimeoutMs: 300, ...o });
  await cacher.start();
  return cacher;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cacher-'));
  store = await SqliteStore.open(join(dir, 'state.db'), { progressIntervalMs: 100 });
  counted = countingWatches(store);
  storage = new StoreStorage(counted.store, jsonCodec);
  now = 1_000_000;
});
afterEach(async () => {
  await cacher?.stop();
  cacher = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const key = (ns: string, n: string): string => `/registry/pods/${ns}/${n}`;

test('one store watch feeds every client watch', async () => {
  const c = await makeCacher();
  const first = await c.create(key('a', 'p0'), pod('a', 'p0'));
  const watches = Array.from({ length: 10 }, () =>
    c.watch('/registry/pods/', { recursive: true, resourceVersion: first.metadata!.resourceVersion }),
  );
  const created = await c.create(key('a', 'p1'), pod('a', 'p1'));
  for (const w of watches) {
    expect((await takeWatch(w, 1)).map(show)).toEqual([`ADDED p1@${created.metadata!.resourceVersion}`]);
    w.stop();
  }
  expect(counted.watches()).toBe(1);
});

test('a cache stopped while its first list is read opens no store watch, and feeds no client watch', async () => {
  const c = new Cacher(storage, { resourcePrefix: '/registry/pods/', now: () => now, waitTimeoutMs: 300 });
  const started = c.start();
  await c.stop();
  await started;
  expect(counted.watches()).toBe(0);
  const w = c.watch('/registry/pods/', { recursive: true, resourceVersion: '0' });
  await expect(w[Symbol.asyncIterator]().next()).resolves.toMatchObject({ done: true });
});

test("a shared read of the latest takes the cache's copy only when the store holds that very revision", async () => {
  const c = await makeCacher();
  const a = await c.create(key('a', 'p0'), pod('a', 'p0'));
  const cached = await c.get(key('a', 'p0'), { resourceVersion: a.metadata!.resourceVersion });
  // The store has the revision the cache holds: the same (frozen) instance, no decode.
  expect(await c.get(key('a', 'p0'), { shared: true })).toBe(cached);
  // Unshared reads stay private copies the caller may change.
  const own = await c.get(key('a', 'p0'));
  expect(own).not.toBe(cached);
  own.metadata!.name = 'mine';
  // Written behind the cache's back (its watch may not have the change yet): a shared read is still the latest.
  const b = await storage.guaranteedUpdate(key('a', 'p0'), (cur) => ({ ...cur, spec: { nodeName: 'n1' } }));
  const latest = await c.get(key('a', 'p0'), { shared: true });
  expect(latest.metadata?.resourceVersion).toBe(b.metadata!.resourceVersion);
  expect((latest as { spec?: { nodeName?: string } }).spec?.nodeName).toBe('n1');
});

test("updates start from the cache's copy without reading the store; a stale copy never wins", async () => {
  const c = await makeCacher();
  const a = await c.create(key('a', 'p0'), pod('a', 'p0', { spec: { n: 1 } }));
  await c.get(key('a', 'p0'), { resourceVersion: a.metadata!.resourceVersion }); // the cache has it
  let reads = 0;
  const get = store.get.bind(store);
  store.get = (k: string) => (reads++, get(k));
  const n = (o: ApiObject): number => (o as { spec: { n: number } }).spec.n;
  const b = await c.guaranteedUpdate(key('a', 'p0'), (cur) => ({ ...cur, spec: { n: n(cur) + 1 } }));
  expect(n(b)).toBe(2);
  expect(reads).toBe(0);

  // A stale copy (the first version) against the store's third: the compare-and-swap refuses it, the update
  // is made again on the store's copy.
  await storage.guaranteedUpdate(key('a', 'p0'), (cur) => ({ ...cur, spec: { n: n(cur) + 1 } }));
  const seen: number[] = [];
  const d = await storage.guaranteedUpdate(
    key('a', 'p0'),
    (cur) => (seen.push(n(cur)), { ...cur, spec: { n: n(cur) + 1 } }),
    { cached: a },
  );
  expect(seen).toEqual([1, 3]);
  expect(n(d)).toBe(4);

  // What fails on a stale copy (a precondition, or the update function) is tried on the store's.
  const e = await storage.guaranteedUpdate(key('a', 'p0'), (cur) => ({ ...cur, spec: { n: 5 } }), {
    cached: a,
    preconditions: { resourceVersion: d.metadata!.resourceVersion },
  });
  expect(n(e)).toBe(5);
  const f = await storage.guaranteedUpdate(
    key('a', 'p0'),
    (cur) => {
      if (cur.metadata!.resourceVersion !== e.metadata!.resourceVersion) throw new Error('stale');
      return { ...cur, spec: { n: 6 } };
    },
    { cached: a },
  );
  expect(n(f)).toBe(6);

  // An update that changes nothing against the stale copy still changes the store's (n 6 -> 1).
  const g = await storage.guaranteedUpdate(key('a', 'p0'), (cur) => ({ ...cur, spec: { n: 1 } }), { cached: a });
  expect(n(g)).toBe(1);
  expect(n(await storage.get(key('a', 'p0')))).toBe(1);
  // And one that changes nothing against a current copy is not written.
  const h = await storage.guaranteedUpdate(key('a', 'p0'), (cur) => cur, { cached: g });
  expect(h.metadata!.resourceVersion).toBe(g.metadata!.resourceVersion);
});

test("deletes start from the cache's copy without reading the store; a stale copy never wins", async () => {
  const c = await makeCacher();
  const n = (o: ApiObject): number => (o as { spec: { n: number } }).spec.n;
  const bump = (o: ApiObject): ApiObject => ({ ...o, spec: { n: n(o) + 1 } }) as ApiObject;
  const rv = (o: ApiObject): string => o.metadata!.resourceVersion!;
  const a = await c.create(key('a', 'p0'), pod('a', 'p0', { spec: { n: 1 } }));
  await c.get(key('a', 'p0'), { resourceVersion: rv(a) }); // the cache has it
  let reads = 0;
  const get = store.get.bind(store);
  store.get = (k: string) => (reads++, get(k));
  expect(n(await c.delete(key('a', 'p0')))).toBe(1);
  expect(reads).toBe(0);

  // A stale copy (the first version) against the store's second: the compare-and-swap refuses it, and the store's
  // copy is the one validated and deleted.
  const b = await storage.create(key('a', 'p1'), pod('a', 'p1', { spec: { n: 1 } }));
  const b2 = await storage.guaranteedUpdate(key('a', 'p1'), bump);
  const seen: string[] = [];
  const deleted = await storage.delete(key('a', 'p1'), {
    cached: b,
    validateDeletion: (cur) => void seen.push(rv(cur)),
  });
  expect(seen).toEqual([rv(b), rv(b2)]);
  expect(n(deleted)).toBe(2);
  // A stale copy of what is gone: not found.
  await expect(storage.delete(key('a', 'p1'), { cached: b })).rejects.toMatchObject({ code: 'KeyNotFound' });

  // A precondition that fails on a stale copy is decided by the store's copy, both ways.
  const e = await storage.create(key('a', 'p2'), pod('a', 'p2', { spec: { n: 1 } }));
  const e2 = await storage.guaranteedUpdate(key('a', 'p2'), bump);
  await storage.delete(key('a', 'p2'), { cached: e, preconditions: { resourceVersion: rv(e2) } });
  const f = await storage.create(key('a', 'p3'), pod('a', 'p3', { spec: { n: 1 } }));
  await storage.guaranteedUpdate(key('a', 'p3'), bump);
  await expect(
    storage.delete(key('a', 'p3'), { cached: f, preconditions: { resourceVersion: rv(f) } }),
  ).rejects.toThrow(/Precondition failed/);
  expect(n(await storage.get(key('a', 'p3')))).toBe(2);
});

test('a watch from before the ring is Compacted (410); from within the ring it replays', async () => {
  const c = await makeCacher({ capacity: 5, eventWindowMs: 1000 });
  const revs: string[] = [];
  for (let i = 0; i < 20; i++)
    revs.push((await c.create(key('a', `p${i}`), pod('a', `p${i}`))).metadata!.resourceVersion!);
  await c.get(key('a', 'p19'), { resourceVersion: revs[19] }); // caught up
  // All 20 events are younger than the window: still replayable.
  const young = c.watch('/registry/pods/', { recursive: true, resourceVersion: revs[0] });
  expect(await takeWatch(young, 19)).toHaveLength(19);
  young.stop();
  now += 2000; // now they are old; the next event evicts down to the capacity
  revs.push((await c.create(key('a', 'p20'), pod('a', 'p20'))).metadata!.resourceVersion!);
  await c.get(key('a', 'p20'), { resourceVersion: revs[20] });
  const old = c.watch('/registry/pods/', { recursive: true, resourceVersion: revs[0] });
  const err = await takeWatch(old, 1).catch((e: unknown) => e);
  expect(isStorageError(err, 'Compacted')).toBe(true);
  const recent = c.watch('/registry/pods/', { recursive: true, resourceVersion: revs[16] });
  expect((await takeWatch(recent, 4)).map((e) => e.object.metadata?.name)).toEqual(['p17', 'p18', 'p19', 'p20']);
  recent.stop();
});

test('"not older than" reads wait for the cache, then fail with RevisionTooLarge', async () => {
  const c = await makeCacher({ waitTimeoutMs: 2000 });
  const a = await c.create(key('a', 'p0'), pod('a', 'p0'));
  const next = (BigInt(a.metadata!.resourceVersion!) + 1n).toString();
  const waiting = c.list('/registry/pods/a/', { resourceVersion: next });
  await c.create(key('a', 'p1'), pod('a', 'p1'));
  expect((await waiting).items.map((o) => o.metadata?.name)).toEqual(['p0', 'p1']);
  const c2 = await makeCacher({ waitTimeoutMs: 100 });
  const t = Date.now();
  const err = await c2.get(key('a', 'p0'), { resourceVersion: '999999' }).catch((e: unknown) => e);
  expect(isStorageError(err, 'RevisionTooLarge')).toBe(true);
  expect(Date.now() - t).toBeLessThan(2000);
  await c.stop();
});

test('resourceVersion=0 lists come from memory, sorted, paginated; later pages continue at the same revision', async () => {
  const c = await makeCacher();
  let last = '';
  for (const n of ['d', 'b', 'a', 'e', 'c'])
    last = (await c.create(key('ns', n), pod('ns', n))).metadata!.resourceVersion!;
  await c.create(key('other', 'z'), pod('other', 'z'));
  await c.get(key('ns', 'a'), { resourceVersion: last });
  const p1 = await c.list('/registry/pods/ns/', { resourceVersion: '0', limit: 2 });
  expect(p1.items.map((o) => o.metadata?.name)).toEqual(['a', 'b']);
  await c.delete(key('ns', 'c'));
  const p2 = await c.list('/registry/pods/ns/', { limit: 2, continue: p1.continue });
  expect(p2.resourceVersion).toBe(p1.resourceVersion);
  expect(p2.items.map((o) => o.metadata?.name)).toEqual(['c', 'd']);
  const p3 = await c.list('/registry/pods/ns/', { limit: 2, continue: p2.continue });
  expect(p3.items.map((o) => o.metadata?.name)).toEqual(['e']);
  expect(p3.continue).toBeUndefined();
  const all = await c.list('/registry/pods/', { resourceVersion: '0' });
  expect(all.items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)).toEqual([
    'ns/a',
    'ns/b',
    'ns/d',
    'ns/e',
    'other/z',
  ]);
});

const names = (l: { items: ApiObject[] }): string[] => l.items.map((o) => o.metadata!.name!);

test('whole lists of a prefix share one frozen array with readers that only read, until an event under it comes', async () => {
  const c = await makeCacher({ listMemoMinItems: 2, listMemoIdleMs: 60_000 });
  for (const n of ['c', 'a', 'b']) await c.create(key('ns', n), pod('ns', n));
  const z = await c.create(key('other', 'z'), pod('other', 'z'));
  const first = await c.list('/registry/pods/ns/', { resourceVersion: z.metadata!.resourceVersion, shared: true });
  expect(names(first)).toEqual(['a', 'b', 'c']);
  expect(c.listMemoCount).toBe(1);
  // A consistent list and a resourceVersion=0 list of the same prefix get the same array, which cannot be changed.
  expect((await c.list('/registry/pods/ns/', { shared: true })).items).toBe(first.items);
  expect((await c.list('/registry/pods/ns', { resourceVersion: '0', shared: true })).items).toBe(first.items);
  expect(() => first.items.push(pod('ns', 'x'))).toThrow(TypeError);
  // A caller that does not say it only reads gets an array of its own.
  const own = await c.list('/registry/pods/ns/', {});
  expect(own.items).not.toBe(first.items);
  own.items.reverse();
  expect(names(own)).toEqual(['c', 'b', 'a']);
  expect(names(first)).toEqual(['a', 'b', 'c']);
  // A write under another prefix moves the revision, not the items.
  const y = await c.create(key('other', 'y'), pod('other', 'y'));
  const later = await c.list('/registry/pods/ns/', { resourceVersion: y.metadata!.resourceVersion, shared: true });
  expect(later.items).toBe(first.items);
  expect(later.resourceVersion).toBe(y.metadata!.resourceVersion);
  // Filtered and limited lists are their own.
  const filtered = await c.list('/registry/pods/ns/', {
    resourceVersion: '0',
    predicate: (o) => o.metadata?.name !== 'b',
  });
  expect(names(filtered)).toEqual(['a', 'c']);
  expect(names(await c.list('/registry/pods/ns/', { resourceVersion: '0', limit: 2, shared: true }))).toEqual([
    'a',
    'b',
  ]);
  // An event under the prefix: the next list has it, and the list handed out before is unchanged.
  await c.delete(key('ns', 'b'));
  const d = await c.create(key('ns', 'd'), pod('ns', 'd'));
  const next = await c.list('/registry/pods/ns/', { resourceVersion: d.metadata!.resourceVersion, shared: true });
  expect(names(next)).toEqual(['a', 'c', 'd']);
  expect(names(first)).toEqual(['a', 'b', 'c']);
  expect((await c.list('/registry/pods/ns/', { shared: true })).items).toBe(next.items);
  // A write under a prefix above drops the memo of the whole resource too.
  const all = await c.list('/registry/pods/', { resourceVersion: '0', shared: true });
  expect(names(all)).toEqual(['a', 'c', 'd', 'y', 'z']);
  await c.delete(key('other', 'y'));
  expect(names(await c.list('/registry/pods/', { shared: true }))).toEqual(['a', 'c', 'd', 'z']);
  expect((await c.list('/registry/pods/ns/', { shared: true })).items).toBe(next.items);
});

test('a kept list no list takes for listMemoIdleMs is dropped; short lists are not kept', async () => {
  const c = await makeCacher({ listMemoMinItems: 2, listMemoIdleMs: 100 });
  await c.create(key('ns', 'a'), pod('ns', 'a'));
  const b = await c.create(key('ns', 'b'), pod('ns', 'b'));
  const one = await c.create(key('one', 'a'), pod('one', 'a'));
  await c.list('/registry/pods/one/', { resourceVersion: one.metadata!.resourceVersion, shared: true });
  expect(c.listMemoCount).toBe(0);
  const first = await c.list('/registry/pods/ns/', { resourceVersion: b.metadata!.resourceVersion, shared: true });
  expect(c.listMemoCount).toBe(1);
  const deadline = Date.now() + 30_000;
  while (c.listMemoCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(c.listMemoCount).toBe(0);
  const again = await c.list('/registry/pods/ns/', { resourceVersion: '0', shared: true });
  expect(again.items).not.toBe(first.items);
  expect(names(again)).toEqual(['a', 'b']);
});

test('objects handed out are shared and frozen: a mutation throws instead of corrupting the cache', async () => {
  const c = await makeCacher();
  const a = await c.create(key('a', 'p0'), pod('a', 'p0'));
  const got = await c.get(key('a', 'p0'), { resourceVersion: a.metadata!.resourceVersion });
  expect(() => {
    got.metadata!.name = 'mutated';
  }).toThrow(TypeError);
  expect((await c.get(key('a', 'p0'), { resourceVersion: '0' })).metadata?.name).toBe('p0');
  // guaranteedUpdate hands the update function a private copy.
  const b = await c.guaranteedUpdate(key('a', 'p0'), (cur) => {
    cur.metadata!.labels = { x: 'y' };
    return cur;
  });
  expect(b.metadata?.labels).toEqual({ x: 'y' });
});
