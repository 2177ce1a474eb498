/**
 * Consistent lists (no resourceVersion) served by the watch cache once the store proves it current
 * (`Store.freshness`), on both real stores: they are answered from memory, and none misses a write acknowledged
 * before it started, with writers busy on the listed prefix and on another one (which moves the store's revision
 * without events for the cache). etcd runs without periodic progress notifications, so nothing but the proof can
 * show the cache current.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type ApiObject } from '../api-object';
import { Etcd3Store } from '../etcd3/etcd3-store';
import { type Store, type StoreListOptions } from '../interface';
import { SqliteStore } from '../sqlite/sqlite-store';
import { StoreStorage } from '../storage';
import { startEtcd, type EtcdCluster } from '../testing/etcd';
import { jsonCodec } from '../testing/json-codec';
import { pod, show, takeWatch } from '../testing/storage-conformance';

import { Cacher } from './cacher';

jest.setTimeout(120_000);

/** Counts the lists and freshness reads sent to a real store (a decorator, not a mock: every call goes to it). */
function countingLists(store: Store): { store: Store; lists: () => number; proofs: () => number } {
  let n = 0;
  let proofs = 0;
  const list = (prefix: string, o?: StoreListOptions): ReturnType<Store['list']> => {
    n++;
    return store.list(prefix, o);
  };
  const freshness = (prefix: string, after: bigint): ReturnType<NonNullable<Store['freshness']>> => {
    proofs++;
    return store.freshness!(prefix, after);
  };
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === 'list') return list;
      if (prop === 'freshness') return freshness;
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: wrapped, lists: () => n, proofs: () => proofs };
}

interface Backend {
  store: Store;
  close(): Promise<void>;
}

const backends: Record<string, () => Promise<Backend>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'consistent-list-'));
    const store = await SqliteStore.open(join(dir, 'state.db'));
    return {
      store,
      close: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  etcd: async () => {
    const cluster: EtcdCluster = await startEtcd({ progressNotifyInterval: '' });
    const store = new Etcd3Store({ endpoints: cluster.endpoints });
    return {
      store,
      close: async () => {
        await store.close();
        await cluster.stop();
      },
    };
  },
};

const PREFIX = '/registry/pods/';
const key = (ns: string, n: string): string => `${PREFIX}${ns}/${n}`;
const names = (items: ApiObject[]): string[] => items.map((o) => `${o.metadata!.name}@${o.metadata!.resourceVersion}`);

describe.each(Object.keys(backends))('consistent lists from the watch cache on %s', (name) => {
  let backend: Backend;
  let counted: ReturnType<typeof countingLists>;
  let storage: StoreStorage;
  let cacher: Cacher;

  beforeAll(async () => {
    backend = await backends[name]!();
    counted = countingLists(backend.store);
    storage = new StoreStorage(counted.store, jsonCodec);
    cacher = new Cacher(storage, { resourcePrefix: PREFIX, consistentReadWaitMs: 30_000 });
    await cacher.start();
  });
  afterAll(async () => {
    await cacher?.stop();
    await backend?.close();
  });

  test('are answered from memory, as the store would answer them, after writes elsewhere and deletes', async () => {
    for (let i = 0; i < 20; i++) await cacher.create(key(`ns${i % 2}`, `p${i}`), pod(`ns${i % 2}`, `p${i}`));
    await cacher.delete(key('ns0', 'p4'));
    await cacher.delete(key('ns1', 'p7'));
    // Writes on another prefix move the store's revision past every event the cache sees.
    for (let i = 0; i < 5; i++) await storage.create(`/registry/other/o${i}`, pod('x', `o${i}`));
    const listsBefore = counted.lists();
    const servedBefore = cacher.consistentLists.fromCache;
    for (const dir of [PREFIX, `${PREFIX}ns0/`, `${PREFIX}ns1/`]) {
      const fromCache = await cacher.list(dir);
      const fromStore = await storage.list(dir);
      expect(names(fromCache.items)).toEqual(names(fromStore.items));
      expect(BigInt(fromCache.resourceVersion)).toBeLessThanOrEqual(BigInt(fromStore.resourceVersion));
    }
    const selected = await cacher.list(PREFIX, { predicate: (o) => o.metadata!.name!.endsWith('1') });
    expect(names(selected.items).map((n) => n.split('@')[0])).toEqual(['p1', 'p11']);
    expect(cacher.consistentLists.fromCache - servedBefore).toBe(4);
    // Only the three comparison reads reached the store.
    expect(counted.lists() - listsBefore).toBe(3);
  });

  test("a watch from the store's revision starts at once on a resource nobody writes", async () => {
    // The store's revision moves past the quiet resource's last event, as a paginated list answered by the store
    // reports it; etcd sends no progress notification here, so only the proof can show the cache that current.
    const quiet = new Cacher(storage, { resourcePrefix: '/registry/quiet/', waitTimeoutMs: 20_000 });
    await quiet.start();
    try {
      await storage.create('/registry/quiet/ns/q0', pod('ns', 'q0'));
      for (let i = 0; i < 3; i++) await storage.create(`/registry/noise/n${i}-${name}`, pod('x', `n${i}`));
      const { resourceVersion } = await storage.list('/registry/noise/');
      const w = quiet.watch('/registry/quiet/', { recursive: true, resourceVersion });
      // Before any event of its own: the wait for that revision is what the watch is held by.
      for (const deadline = Date.now() + 15_000; quiet.revision < BigInt(resourceVersion);) {
        if (Date.now() > deadline) throw new Error(`the cache stayed at ${quiet.revision} < ${resourceVersion}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const created = await storage.create('/registry/quiet/ns/q1', pod('ns', 'q1'));
      expect((await takeWatch(w, 1, 30_000)).map(show)).toEqual([`ADDED q1@${created.metadata!.resourceVersion}`]);
      w.stop();
    } finally {
      await quiet.stop();
    }
  });

  test('concurrent lists share the store reads that prove the cache current', async () => {
    const proofs = counted.proofs();
    const lists = await Promise.all(Array.from({ length: 20 }, () => cacher.list(PREFIX)));
    expect(new Set(lists.map((l) => names(l.items).join()))).toHaveProperty('size', 1);
    // One read in flight, and one sent after it for the lists that came while it was.
    expect(counted.proofs() - proofs).toBe(2);
  });

  test('the store tells what a watch of the prefix must have applied: deletes and writes elsewhere included', async () => {
    const store = backend.store;
    const dir = '/registry/proof/ns/';
    const enc = (n: string): Uint8Array => jsonCodec.encode(pod('ns', n));
    const a = await store.create(`${dir}a`, enc('a'));
    const b = await store.create(`${dir}b`, enc('b'));
    /** Whether a consumer at revision `at` holding `count` keys of `dir` is current, by `PrefixFreshness`' rule. */
    const current = async (at: bigint, count: number): Promise<boolean> => {
      const f = (await store.freshness!(dir, at))!;
      if (at >= f.revision || (f.lastChange !== undefined && at >= f.lastChange)) return true;
      return f.live !== undefined && at >= f.live.lastModRevision && count === f.live.count;
    };
    expect(await current(b.modRevision, 2)).toBe(true);
    expect(await current(a.modRevision, 1)).toBe(false);
    const d = await store.delete(`${dir}a`);
    // A consumer that has not applied the delete is not current, though no live key changed.
    expect(await current(b.modRevision, 2)).toBe(false);
    expect(await current(d.deleteRevision, 1)).toBe(true);
    // Writes elsewhere move the store's revision, not what the prefix needs.
    const other = await store.create('/registry/elsewhere/x', enc('x'));
    expect(await current(d.deleteRevision, 1)).toBe(true);
    const f = (await store.freshness!(dir, d.deleteRevision))!;
    expect(f.revision).toBeGreaterThanOrEqual(other.modRevision);
    // With a watch of the prefix open (SQLite then answers from what it handed the watch): the same answers.
    const ac = new AbortController();
    const events = store.watch('/registry/proof/', d.deleteRevision, ac.signal)[Symbol.asyncIterator]();
    const c = await store.create(`${dir}c`, enc('c'));
    expect((await events.next()).value).toMatchObject({ type: 'put', revision: c.modRevision });
    expect(await current(d.deleteRevision, 1)).toBe(false);
    expect(await current(c.modRevision, 2)).toBe(true);
    ac.abort();
  });

  test('never miss a write acknowledged before they started, with writers on the prefix and elsewhere', async () => {
    /** Each completed write of a key, in order: its revision, and whether it left the key deleted. */
    const history = new Map<string, { rv: bigint; deleted: boolean }[]>();
    let stop = false;
    const writer = async (w: number): Promise<void> => {
      const keys = Array.from({ length: 4 }, (_, i) => key(`w${w % 2}`, `k${w}-${i}`));
      for (let round = 0; !stop; round++) {
        const k = keys[round % keys.length]!;
        const h = history.get(k) ?? [];
        history.set(k, h);
        // Each key goes round: created, updated twice, deleted.
        const step = h.length % 4;
        let o: ApiObject;
        if (step === 0) o = await cacher.create(k, pod(`w${w % 2}`, k.slice(k.lastIndexOf('/') + 1)));
        else if (step === 3) o = await cacher.delete(k);
        else o = await cacher.guaranteedUpdate(k, (cur) => ({ ...cur, spec: { round } }));
        h.push({ rv: BigInt(o.metadata!.resourceVersion!), deleted: step === 3 });
        writes++;
      }
    };
    const elsewhere = async (): Promise<void> => {
      for (let i = 0; !stop; i++) await storage.create(`/registry/other/e${i}`, pod('x', `e${i}`));
    };
    interface Checked {
      dir: string;
      acked: Map<string, number>;
      items: Map<string, bigint>;
      rv: bigint;
    }
    const checks: Checked[] = [];
    let writes = 0;
    // At least `n` lists each, and until the writers have written 300 times (lists are faster than writes).
    const lister = async (n: number, l: number): Promise<void> => {
      for (let i = 0; i < n || writes < 300; i++) {
        // Each list is a request of its own, as a client's list comes from the network: a list answered from memory
        // settles without any I/O, and a loop of them would keep the event loop from everything else (the store's
        // answers to the writers among them) for as long as it runs.
        await new Promise((r) => setImmediate(r));
        const dir = i % 3 === 2 ? `${PREFIX}w${(i + l) % 2}/` : PREFIX;
        // What was acknowledged before this list started: the number of completed writes of each key.
        const acked = new Map([...history].map(([k, h]) => [k, h.length]));
        const list = await cacher.list(dir);
        const items = new Map(
          list.items.map((o) => [key(o.metadata!.namespace!, o.metadata!.name!), BigInt(o.metadata!.resourceVersion!)]),
        );
        checks.push({ dir, acked, items, rv: BigInt(list.resourceVersion) });
      }
    };
    const servedBefore = cacher.consistentLists.fromCache;
    const writers = [0, 1, 2, 3].map(writer);
    const other = elsewhere();
    await Promise.all([lister(200, 0), lister(200, 1)]);
    stop = true;
    await Promise.all([...writers, other]);

    // Every write has completed now: a list may show a write acknowledged after it started, never an older one.
    const problems: string[] = [];
    for (const c of checks) {
      for (const [k, h] of history) {
        if (!k.startsWith(c.dir)) continue;
        const n = c.acked.get(k) ?? 0;
        const seen = c.items.get(k);
        if (seen !== undefined && seen > c.rv) problems.push(`${k}@${seen} in a list at ${c.rv}`);
        if (n === 0) continue;
        // The writes the list may reflect: the last acknowledged one, or any later one.
        const allowed = h.slice(n - 1);
        const ok =
          seen === undefined ? allowed.some((w) => w.deleted) : allowed.some((w) => !w.deleted && w.rv === seen);
        if (!ok) {
          problems.push(
            `${k}: list of ${c.dir} at ${c.rv} shows ${seen ?? 'nothing'}; acknowledged before it: ${JSON.stringify(h.slice(0, n).map((w) => `${w.deleted ? 'del' : 'put'}@${w.rv}`))}`,
          );
        }
      }
    }
    expect(problems.slice(0, 10)).toEqual([]);
    expect(checks.length).toBeGreaterThanOrEqual(400);
    expect(history.size).toBe(16);
    // The lists were served from memory (a store list now and then, when the cache was too slow, is allowed).
    expect(cacher.consistentLists.fromCache - servedBefore).toBeGreaterThan(checks.length * 0.75);
  });
});

/** Holds the events of a real store's watches while paused (a decorator: every call still goes to the store). */
function pausableWatches(store: Store): { store: Store; pause(): void; resume(): void } {
  let gate: Promise<void> = Promise.resolve();
  let open = (): void => undefined;
  const watch: Store['watch'] = (prefix, after, signal, o) => {
    const inner = store.watch(prefix, after, signal, o);
    return {
      [Symbol.asyncIterator]: () => {
        const it = inner[Symbol.asyncIterator]();
        return {
          next: async () => {
            const r = await it.next();
            await gate;
            return r;
          },
          return: (v?: unknown) => it.return!(v),
        };
      },
    };
  };
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === 'watch') return watch;
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return {
    store: wrapped,
    pause: (): void => {
      gate = new Promise((r) => (open = r));
    },
    resume: () => open(),
  };
}

test('a cache that cannot show itself current in time leaves the consistent list to the store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'consistent-list-'));
  const store = await SqliteStore.open(join(dir, 'state.db'));
  const pausable = pausableWatches(store);
  const cacher = new Cacher(new StoreStorage(pausable.store, jsonCodec), {
    resourcePrefix: PREFIX,
    consistentReadWaitMs: 200,
  });
  try {
    await cacher.start();
    const caughtUp = async (rv: string): Promise<void> => {
      for (const deadline = Date.now() + 30_000; cacher.revision < BigInt(rv);) {
        if (Date.now() > deadline) throw new Error(`the cache did not reach ${rv}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await caughtUp((await cacher.create(key('a', 'x'), pod('a', 'x'))).metadata!.resourceVersion!);
    pausable.pause();
    const y = await cacher.create(key('a', 'y'), pod('a', 'y'));
    const list = await cacher.list(PREFIX);
    expect(names(list.items)).toEqual(expect.arrayContaining([`y@${y.metadata!.resourceVersion}`]));
    expect(cacher.consistentLists).toEqual({ fromCache: 0, fromStorage: 1 });
    pausable.resume();
    await caughtUp(y.metadata!.resourceVersion!);
    expect(names((await cacher.list(PREFIX)).items)).toEqual(names(list.items));
    expect(cacher.consistentLists).toEqual({ fromCache: 1, fromStorage: 1 });
  } finally {
    pausable.resume();
    await cacher.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
