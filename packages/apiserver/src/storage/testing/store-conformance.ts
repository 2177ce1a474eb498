/**
 * The conformance suite of a backend `Store` (compare apiserver `pkg/storage/testing/store_tests.go`).
 * `runStoreConformance(name, makeStore)` registers Jest tests; every backend's `*.conformance.test.ts` calls it.
 * The store is shared by the tests of one run (each test uses its own key prefix), and closed after the last.
 */
import { randomBytes } from 'node:crypto';

import { isStorageError } from '../errors';
import { type Revision, type Store, type StoreEvent } from '../interface';

/** Creates the store under test; `cleanup` (when given) runs after `store.close()`. */
export type MakeStore = () => Promise<{ store: Store; cleanup?: () => Promise<void> }>;

const enc = new TextEncoder();
const dec = new TextDecoder();
/** Encodes a string value. */
export const bytes = (s: string): Uint8Array => enc.encode(s);
/** Decodes a value to a string. */
export const text = (b: Uint8Array): string => dec.decode(b);

/**
 * Reads `n` events from a watch, failing after `timeoutMs`. Progress events are skipped unless `keepProgress`.
 */
export async function takeEvents(
  it: AsyncIterator<StoreEvent>,
  n: number,
  timeoutMs = 10000,
  keepProgress = false,
): Promise<StoreEvent[]> {
  const out: StoreEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    let r: IteratorResult<StoreEvent> | 'timeout';
    try {
      r = await Promise.race([
        it.next(),
        new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), Math.max(0, deadline - Date.now())))),
      ]);
    } finally {
      clearTimeout(timer); // also when next() rejects
    }
    if (r === 'timeout')
      throw new Error(`timed out after ${out.length} of ${n} events: ${JSON.stringify(out.map(describeEvent))}`);
    if (r.done) throw new Error(`watch ended after ${out.length} of ${n} events`);
    if (r.value.type === 'progress' && !keepProgress) continue;
    out.push(r.value);
  }
  return out;
}

/** A compact readable form of an event for assertions. */
export function describeEvent(e: StoreEvent): string {
  switch (e.type) {
    case 'put':
      return `${e.prevKv ? 'update' : 'create'} ${e.kv.key}=${text(e.kv.value)}@${e.revision}${e.prevKv ? ` prev=${text(e.prevKv.value)}@${e.prevKv.modRevision}` : ''}`;
    case 'delete':
      return `delete ${e.key}@${e.revision} prev=${text(e.prevKv.value)}@${e.prevKv.modRevision}`;
    case 'progress':
      return `progress@${e.revision}`;
  }
}

async function expectCode(p: Promise<unknown>, code: string): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    if (!isStorageError(e)) throw e;
    expect(e.code).toBe(code);
    return e;
  }
  throw new Error(`expected StorageError ${code}, got success`);
}

/** Registers the conformance tests of `name` (see the module comment). */
export function runStoreConformance(name: string, makeStore: MakeStore): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    let cleanup: (() => Promise<void>) | undefined;
    let prefix: string;
    beforeAll(async () => {
      ({ store, cleanup } = await makeStore());
    }, 120000);
    afterAll(async () => {
      await store?.close();
      await cleanup?.();
    }, 60000);
    beforeEach(() => {
      prefix = `/conformance/${randomBytes(4).toString('hex')}/`;
    });

    test('create, get, create again is KeyExists', async () => {
      const kv = await store.create(`${prefix}a`, bytes('one'));
      expect(kv.key).toBe(`${prefix}a`);
      expect(kv.modRevision).toBe(kv.createRevision);
      expect(typeof kv.modRevision).toBe('bigint');
      expect(kv.modRevision).toBeGreaterThan(0n);
      const got = await store.get(`${prefix}a`);
      expect(got && text(got.value)).toBe('one');
      expect(got?.modRevision).toBe(kv.modRevision);
      expect(await store.get(`${prefix}missing`)).toBeUndefined();
      const err = await expectCode(store.create(`${prefix}a`, bytes('two')), 'KeyExists');
      expect((err as { key: string }).key).toBe(`${prefix}a`);
      expect(text((await store.get(`${prefix}a`))!.value)).toBe('one');
    });

    test('update is a compare-and-swap on the mod revision', async () => {
      const kv = await store.create(`${prefix}k`, bytes('v1'));
      const kv2 = await store.update(`${prefix}k`, bytes('v2'), kv.modRevision);
      expect(kv2.modRevision).toBeGreaterThan(kv.modRevision);
      expect(kv2.createRevision).toBe(kv.createRevision);
      const err = (await expectCode(store.update(`${prefix}k`, bytes('v3'), kv.modRevision), 'Conflict')) as {
        current: { modRevision: Revision; value: Uint8Array };
      };
      expect(err.current.modRevision).toBe(kv2.modRevision);
      expect(text(err.current.value)).toBe('v2');
      await expectCode(store.update(`${prefix}nope`, bytes('x'), 1n), 'KeyNotFound');
      expect(text((await store.get(`${prefix}k`))!.value)).toBe('v2');
    });

    test('delete returns the deleted value; conditional delete conflicts; absent is KeyNotFound', async () => {
      const kv = await store.create(`${prefix}d`, bytes('bye'));
      const kv2 = await store.update(`${prefix}d`, bytes('bye2'), kv.modRevision);
      await expectCode(store.delete(`${prefix}d`, kv.modRevision), 'Conflict');
      const del = await store.delete(`${prefix}d`, kv2.modRevision);
      expect(text(del.value)).toBe('bye2');
      expect(del.modRevision).toBe(kv2.modRevision);
      expect(del.deleteRevision).toBeGreaterThan(kv2.modRevision);
      expect(await store.get(`${prefix}d`)).toBeUndefined();
      await expectCode(store.delete(`${prefix}d`), 'KeyNotFound');
      // Re-create after delete: a new createRevision.
      const again = await store.create(`${prefix}d`, bytes('back'));
      expect(again.createRevision).toBeGreaterThan(del.deleteRevision);
      const unconditional = await store.delete(`${prefix}d`);
      expect(text(unconditional.value)).toBe('back');
    });

    test('list returns exactly the keys under the prefix, sorted, at one revision', async () => {
      for (const k of ['b', 'a', 'c/x', 'c/y']) await store.create(`${prefix}${k}`, bytes(k));
      await store.create(`${prefix.slice(0, -1)}X`, bytes('outside')); // shares the prefix minus its slash
      const all = await store.list(prefix);
      expect(all.kvs.map((kv) => kv.key)).toEqual(['a', 'b', 'c/x', 'c/y'].map((k) => prefix + k));
      expect(all.count).toBe(4);
      expect(all.more).toBe(false);
      expect(all.revision).toBe(await store.currentRevision());
      expect((await store.list(`${prefix}c/`)).kvs.map((kv) => text(kv.value))).toEqual(['c/x', 'c/y']);
      expect(await store.count(prefix)).toBe(4);
      expect((await store.list(`${prefix}zzz/`)).kvs).toEqual([]);
    });

    test('get and list at a past revision see the past', async () => {
      const a = await store.create(`${prefix}a`, bytes('a1'));
      const b = await store.create(`${prefix}b`, bytes('b1'));
      const at = b.modRevision;
      await store.update(`${prefix}a`, bytes('a2'), a.modRevision);
      await store.delete(`${prefix}b`);
      await store.create(`${prefix}c`, bytes('c1'));
      const past = await store.list(prefix, { at });
      expect(past.revision).toBe(at);
      expect(past.kvs.map((kv) => `${kv.key.slice(prefix.length)}=${text(kv.value)}`)).toEqual(['a=a1', 'b=b1']);
      const now = await store.list(prefix);
      expect(now.kvs.map((kv) => `${kv.key.slice(prefix.length)}=${text(kv.value)}`)).toEqual(['a=a2', 'c=c1']);
      expect(text((await store.get(`${prefix}a`, { at: a.modRevision }))!.value)).toBe('a1');
      expect(await store.get(`${prefix}c`, { at })).toBeUndefined();
      const future = (await store.currentRevision()) + 1000n;
      await expectCode(store.list(prefix, { at: future }), 'RevisionTooLarge');
    });

    test('pagination with startKey + limit at a fixed revision is consistent while writes go on', async () => {
      const keys = Array.from({ length: 25 }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
      for (const k of keys) await store.create(k, bytes(k));
      const first = await store.list(prefix, { limit: 10 });
      expect(first.kvs).toHaveLength(10);
      expect(first.more).toBe(true);
      expect(first.count).toBe(25);
      const rev = first.revision;
      // Writes after the first page must not show in the later pages.
      await store.delete(keys[15]!);
      await store.create(`${prefix}0105`, bytes('late'));
      const seen = first.kvs.map((kv) => kv.key);
      let last = first;
      while (last.more) {
        const startKey = `${last.kvs[last.kvs.length - 1]!.key}\0`;
        last = await store.list(prefix, { at: rev, limit: 10, startKey });
        expect(last.revision).toBe(rev);
        seen.push(...last.kvs.map((kv) => kv.key));
      }
      expect(seen).toEqual(keys);
      const page2 = await store.list(prefix, { at: rev, limit: 10, startKey: `${keys[9]!}\0` });
      expect(page2.count).toBe(15);
    });

    test('watch from a revision delivers every later event exactly once, in order', async () => {
      const a = await store.create(`${prefix}a`, bytes('1'));
      const a2 = await store.update(`${prefix}a`, bytes('2'), a.modRevision);
      await store.create(`${prefix.slice(0, -1)}-other`, bytes('not watched'));
      const b = await store.create(`${prefix}b`, bytes('b'));
      const ac = new AbortController();
      const it = store.watch(prefix, a.modRevision, ac.signal)[Symbol.asyncIterator]();
      // Writes racing with the start of the watch.
      const more = (async () => {
        await store.delete(`${prefix}b`);
        const a3 = await store.update(`${prefix}a`, bytes('3'), a2.modRevision);
        for (let i = 0; i < 20; i++) await store.create(`${prefix}n${i}`, bytes(String(i)));
        return a3;
      })();
      const events = await takeEvents(it, 24);
      await more;
      ac.abort();
      const revs = events.map((e) => e.revision);
      expect([...revs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))).toEqual(revs);
      expect(new Set(revs).size).toBe(revs.length);
      expect(events.slice(0, 4).map(describeEvent)).toEqual([
        `update ${prefix}a=2@${a2.modRevision} prev=1@${a.modRevision}`,
        `create ${prefix}b=b@${b.modRevision}`,
        expect.stringMatching(new RegExp(`^delete ${prefix}b@\\d+ prev=b@${b.modRevision}$`)),
        expect.stringMatching(new RegExp(`^update ${prefix}a=3@\\d+ prev=2@${a2.modRevision}$`)),
      ]);
      expect(events.slice(4).map((e) => (e.type === 'put' ? text(e.kv.value) : '?'))).toEqual(
        Array.from({ length: 20 }, (_, i) => String(i)),
      );
      // The iterator ends after abort.
      const r = await it.next();
      expect(r.done).toBe(true);
    });

    test('a watch from a future revision delivers only the events after it', async () => {
      const now = await store.currentRevision();
      const ac = new AbortController();
      const it = store.watch(prefix, now + 3n, ac.signal)[Symbol.asyncIterator]();
      const revs: Revision[] = [];
      for (let i = 0; i < 5; i++) revs.push((await store.create(`${prefix}f${i}`, bytes(String(i)))).modRevision);
      const events = await takeEvents(it, 1);
      ac.abort();
      expect(events[0]!.revision).toBeGreaterThan(now + 3n);
      expect(events[0]!.revision).toBe(revs.find((r) => r > now + 3n));
    });

    test('watch from compacted history fails with Compacted; reads at compacted revisions too', async () => {
      const a = await store.create(`${prefix}a`, bytes('1'));
      let kv = a;
      for (let i = 2; i <= 5; i++) kv = await store.update(`${prefix}a`, bytes(String(i)), kv.modRevision);
      await store.compact(kv.modRevision);
      await store.compact(kv.modRevision); // again: a no-op
      expect(text((await store.get(`${prefix}a`))!.value)).toBe('5');
      expect(text((await store.get(`${prefix}a`, { at: kv.modRevision }))!.value)).toBe('5');
      const err = (await expectCode(store.get(`${prefix}a`, { at: a.modRevision }), 'Compacted')) as {
        compactedRevision: Revision;
      };
      expect(err.compactedRevision).toBe(kv.modRevision);
      await expectCode(store.list(prefix, { at: a.modRevision }), 'Compacted');
      const ac = new AbortController();
      const it = store.watch(prefix, a.modRevision, ac.signal)[Symbol.asyncIterator]();
      const werr = (await expectCode(it.next(), 'Compacted')) as { compactedRevision: Revision };
      expect(werr.compactedRevision).toBe(kv.modRevision);
      ac.abort();
      // Watching from just before the compacted revision still works.
      const ac2 = new AbortController();
      const it2 = store.watch(prefix, kv.modRevision - 1n, ac2.signal)[Symbol.asyncIterator]();
      const [ev] = await takeEvents(it2, 1);
      expect(ev!.revision).toBe(kv.modRevision);
      ac2.abort();
      await expectCode(store.compact((await store.currentRevision()) + 100n), 'RevisionTooLarge');
    });

    test('50 writers x 20 compare-and-swap increments lose no update', async () => {
      const key = `${prefix}counter`;
      await store.create(key, bytes('0'));
      let conflicts = 0;
      const writer = async (): Promise<void> => {
        for (let i = 0; i < 20; i++) {
          let cur = (await store.get(key))!;
          for (let attempt = 1; ; attempt++) {
            try {
              await store.update(key, bytes(String(Number(text(cur.value)) + 1)), cur.modRevision);
              break;
            } catch (e) {
              if (!isStorageError(e, 'Conflict')) throw e;
              conflicts++;
              cur = e.current!;
              // Jittered backoff, as real clients do: without it 50 writers make ~50 attempts per success, which
              // costs a consensus round each on etcd. The loop must still lose nothing, which is what we check.
              await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** attempt, 100)));
            }
          }
        }
      };
      await Promise.all(Array.from({ length: 50 }, writer));
      expect(text((await store.get(key))!.value)).toBe('1000');
      expect(conflicts).toBeGreaterThan(0); // the loop was really contended
    }, 120000);

    test('1 MiB values round-trip; a value over the limit is TooLarge and nothing is written', async () => {
      const big = randomBytes(1024 * 1024);
      const kv = await store.create(`${prefix}big`, big);
      expect(Buffer.from((await store.get(`${prefix}big`))!.value).equals(big)).toBe(true);
      const big2 = randomBytes(1024 * 1024);
      await store.update(`${prefix}big`, big2, kv.modRevision);
      expect(Buffer.from((await store.list(prefix)).kvs[0]!.value).equals(big2)).toBe(true);
      const huge = new Uint8Array(1.5 * 1024 * 1024 + 1);
      const before = await store.currentRevision();
      await expectCode(store.create(`${prefix}huge`, huge), 'TooLarge');
      await expectCode(store.update(`${prefix}big`, huge, kv.modRevision), 'TooLarge');
      expect(await store.get(`${prefix}huge`)).toBeUndefined();
      expect(await store.currentRevision()).toBe(before);
    });

    test('10k keys: create, list, count, paginate', async () => {
      const n = 10000;
      const value = bytes('x'.repeat(100));
      for (let i = 0; i < n; i += 500) {
        await Promise.all(
          Array.from({ length: Math.min(500, n - i) }, (_, j) =>
            store.create(`${prefix}${String(i + j).padStart(5, '0')}`, value),
          ),
        );
      }
      const all = await store.list(prefix);
      expect(all.kvs).toHaveLength(n);
      expect(all.kvs[0]!.key).toBe(`${prefix}00000`);
      expect(all.kvs[n - 1]!.key).toBe(`${prefix}09999`);
      expect(await store.count(prefix)).toBe(n);
      const page = await store.list(prefix, { limit: 500, startKey: `${prefix}05000` });
      expect(page.kvs).toHaveLength(500);
      expect(page.count).toBe(5000);
      expect(page.more).toBe(true);
    }, 120000);

    test('a key written with a TTL expires with a delete event', async () => {
      const ac = new AbortController();
      const rev = await store.currentRevision();
      const it = store.watch(prefix, rev, ac.signal)[Symbol.asyncIterator]();
      const kv = await store.create(`${prefix}ttl`, bytes('ephemeral'), { ttlSeconds: 1 });
      expect(kv.leaseTtlSeconds).toBeGreaterThanOrEqual(1);
      await store.create(`${prefix}stays`, bytes('forever'));
      const events = await takeEvents(it, 3, 15000);
      ac.abort();
      expect(events.map(describeEvent)[2]).toMatch(
        new RegExp(`^delete ${prefix}ttl@\\d+ prev=ephemeral@${kv.modRevision}$`),
      );
      expect(await store.get(`${prefix}ttl`)).toBeUndefined();
      expect(await store.get(`${prefix}stays`)).toBeDefined();
    }, 30000);

    test('progress notifications report the revision reached', async () => {
      const ac = new AbortController();
      const kv = await store.create(`${prefix}p`, bytes('p'));
      const it = store.watch(prefix, kv.modRevision - 1n, ac.signal, { progressNotify: true })[Symbol.asyncIterator]();
      const events = await takeEvents(it, 2, 20000, true);
      ac.abort();
      expect(events[0]!.type).toBe('put');
      expect(events[1]!.type).toBe('progress');
      expect(events[1]!.revision).toBeGreaterThanOrEqual(kv.modRevision);
    }, 30000);

    test('bad input is rejected with errors that name the problem', async () => {
      await expect(store.create('', bytes('x'))).rejects.toThrow(/key must be a non-empty string/);
      await expect(store.create(`${prefix}x`, 'str' as unknown as Uint8Array)).rejects.toThrow(/Uint8Array/);
      await expect(store.create(`${prefix}x`, bytes('x'), { ttlSeconds: -1 })).rejects.toThrow(/ttlSeconds/);
      await expect(store.list(prefix, { limit: 0 })).rejects.toThrow(/limit/);
      await expect(store.update(`${prefix}x`, bytes('x'), 1 as unknown as bigint)).rejects.toThrow(/bigint/);
    });

    test('health check, revision, database size', async () => {
      await store.check(2000);
      expect(await store.dbSize()).toBeGreaterThan(0);
      const r1 = await store.currentRevision();
      const kv = await store.create(`${prefix}r`, bytes('r'));
      expect(kv.modRevision).toBeGreaterThan(r1);
      expect(await store.currentRevision()).toBeGreaterThanOrEqual(kv.modRevision);
    });
  });
}
