/**
 * The conformance suite of a typed `Storage` (StoreStorage over each backend, and the Cacher): resource versions,
 * read-modify-write, preconditions, lists with continue tokens, watches. Compare apiserver
 * `pkg/storage/testing/store_tests.go`. `runStorageConformance(name, make)` registers Jest tests.
 */
import { randomBytes } from 'node:crypto';

import { type ApiObject } from '../api-object';
import { isStorageError } from '../errors';
import { type Store } from '../interface';
import { type Storage, type Watch, type WatchEvent } from '../storage';

/** The `spec` of a test object (test objects carry an arbitrary spec beside their metadata). */
function specOf(obj: ApiObject): unknown {
  return (obj as ApiObject & { spec?: unknown }).spec;
}

/** What a suite run needs: the storage, optionally the raw store under it (for corrupt-value tests), cleanup. */
export type MakeStorage = () => Promise<{ storage: Storage; rawStore?: Store; cleanup?: () => Promise<void> }>;

/** A small object of the test kind. */
export function pod(namespace: string, name: string, extra: Record<string, unknown> = {}): ApiObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name, uid: `uid-${name}`, labels: {} }, ...extra };
}

/** Reads `n` watch events (BOOKMARKs skipped unless asked), failing after `timeoutMs`. */
export async function takeWatch(w: Watch, n: number, timeoutMs = 10000, keepBookmarks = false): Promise<WatchEvent[]> {
  const it = w[Symbol.asyncIterator]();
  const out: WatchEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    let r: IteratorResult<WatchEvent> | 'timeout';
    try {
      r = await Promise.race([
        it.next(),
        new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), Math.max(0, deadline - Date.now())))),
      ]);
    } finally {
      clearTimeout(timer); // also when next() rejects
    }
    if (r === 'timeout')
      throw new Error(`timed out after ${out.length} of ${n} events: ${JSON.stringify(out.map(show))}`);
    if (r.done) throw new Error(`watch ended after ${out.length} of ${n} events`);
    if (r.value.type === 'BOOKMARK' && !keepBookmarks) continue;
    out.push(r.value);
  }
  return out;
}

/** `TYPE name@rv` for assertions. */
export function show(e: WatchEvent): string {
  return `${e.type} ${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion ?? ''}`;
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'success';
  } catch (e) {
    if (isStorageError(e)) return e.code;
    throw e;
  }
}

/** Registers the typed-storage conformance tests. */
export function runStorageConformance(name: string, make: MakeStorage): void {
  describe(`Storage conformance: ${name}`, () => {
    let storage: Storage;
    let rawStore: Store | undefined;
    let cleanup: (() => Promise<void>) | undefined;
    let dir: string;
    let ns: string;
    const key = (n: string): string => `${dir}${ns}/${n}`;
    beforeAll(async () => {
      ({ storage, rawStore, cleanup } = await make());
    }, 120000);
    afterAll(async () => {
      await cleanup?.();
    }, 60000);
    beforeEach(() => {
      dir = '/registry/pods/';
      ns = `ns-${randomBytes(4).toString('hex')}`;
    });

    test('create sets resourceVersion; get returns it; errors for duplicates, missing keys, preset versions', async () => {
      const created = await storage.create(key('a'), pod(ns, 'a'));
      expect(created.metadata?.resourceVersion).toMatch(/^[1-9][0-9]*$/);
      const got = await storage.get(key('a'), { resourceVersion: created.metadata!.resourceVersion });
      expect(got).toEqual(created);
      expect(await storage.get(key('a'))).toEqual(created);
      expect(await code(storage.create(key('a'), pod(ns, 'a')))).toBe('KeyExists');
      expect(await code(storage.get(key('nope')))).toBe('KeyNotFound');
      const withRv = pod(ns, 'b');
      withRv.metadata!.resourceVersion = '5';
      expect(await code(storage.create(key('b'), withRv))).toBe('InvalidObject');
      expect(await code(storage.get(key('a'), { resourceVersion: 'abc' }))).toBe('InvalidRequest');
    });

    test('guaranteedUpdate: applies, skips no-op writes, checks preconditions, creates with ignoreNotFound', async () => {
      const a = await storage.create(key('a'), pod(ns, 'a', { spec: { n: 1 } }));
      const b = await storage.guaranteedUpdate(key('a'), (cur) => ({ ...cur, spec: { n: 2 } }));
      expect(BigInt(b.metadata!.resourceVersion!)).toBeGreaterThan(BigInt(a.metadata!.resourceVersion!));
      expect(specOf(b)).toEqual({ n: 2 });
      const same = await storage.guaranteedUpdate(key('a'), (cur) => cur);
      expect(same.metadata?.resourceVersion).toBe(b.metadata?.resourceVersion);
      expect(await code(storage.guaranteedUpdate(key('a'), (c) => c, { preconditions: { uid: 'other' } }))).toBe(
        'InvalidObject',
      );
      expect(
        await code(
          storage.guaranteedUpdate(key('a'), (c) => c, {
            preconditions: { resourceVersion: a.metadata!.resourceVersion },
          }),
        ),
      ).toBe('InvalidObject');
      expect(await code(storage.guaranteedUpdate(key('missing'), (c) => c))).toBe('KeyNotFound');
      const made = await storage.guaranteedUpdate(key('new'), () => pod(ns, 'new'), { ignoreNotFound: true });
      expect(made.metadata?.name).toBe('new');
      await expect(storage.guaranteedUpdate(key('a'), () => Promise.reject(new Error('refused')))).rejects.toThrow(
        'refused',
      );
    });

    test('guaranteedUpdate retries conflicts: 20 writers x 10 increments lose nothing', async () => {
      await storage.create(key('c'), pod(ns, 'c', { spec: { n: 0 } }));
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          for (let i = 0; i < 10; i++) {
            await storage.guaranteedUpdate(key('c'), (cur) => ({
              ...cur,
              spec: { n: (specOf(cur) as { n: number }).n + 1 },
            }));
          }
        }),
      );
      expect(specOf(await storage.get(key('c')))).toEqual({ n: 200 });
    }, 60000);

    test('delete returns the last state at the deletion revision; preconditions and validation can refuse', async () => {
      const a = await storage.create(key('a'), pod(ns, 'a'));
      expect(await code(storage.delete(key('a'), { preconditions: { uid: 'x' } }))).toBe('InvalidObject');
      await expect(
        storage.delete(key('a'), {
          validateDeletion: () => {
            throw new Error('has finalizers');
          },
        }),
      ).rejects.toThrow('has finalizers');
      const d = await storage.delete(key('a'), { preconditions: { uid: 'uid-a' } });
      expect(d.metadata?.name).toBe('a');
      expect(BigInt(d.metadata!.resourceVersion!)).toBeGreaterThan(BigInt(a.metadata!.resourceVersion!));
      expect(await code(storage.get(key('a')))).toBe('KeyNotFound');
      expect(await code(storage.delete(key('a')))).toBe('KeyNotFound');
    });

    test('list: sorted, at a revision, paginated with continue tokens at one snapshot', async () => {
      let last: ApiObject | undefined;
      const names12 = Array.from({ length: 12 }, (_, i) => `p${String(i).padStart(2, '0')}`);
      for (const n of names12) last = await storage.create(key(n), pod(ns, n));
      const rv = last!.metadata!.resourceVersion!;
      const all = await storage.list(`${dir}${ns}/`, { resourceVersion: rv });
      expect(all.items.map((o) => o.metadata?.name)).toEqual(names12);
      expect(BigInt(all.resourceVersion)).toBeGreaterThanOrEqual(BigInt(rv));
      const zero = await storage.list(`${dir}${ns}/`, { resourceVersion: '0' });
      expect(zero.items.length).toBeLessThanOrEqual(12); // "any" version; not necessarily complete
      const p1 = await storage.list(`${dir}${ns}/`, { limit: 5 });
      expect(p1.items).toHaveLength(5);
      expect(p1.continue).toBeTruthy();
      expect(p1.remainingItemCount).toBe(7);
      await storage.delete(key('p07'));
      const names = p1.items.map((o) => o.metadata?.name);
      let page = p1;
      while (page.continue) {
        page = await storage.list(`${dir}${ns}/`, { limit: 5, continue: page.continue });
        expect(page.resourceVersion).toBe(p1.resourceVersion);
        names.push(...page.items.map((o) => o.metadata?.name));
      }
      expect(names).toEqual(names12);
      const exact = await storage.list(`${dir}${ns}/`, { resourceVersion: rv, resourceVersionMatch: 'Exact' });
      expect(exact.resourceVersion).toBe(rv);
      expect(exact.items).toHaveLength(12);
      const filtered = await storage.list(`${dir}${ns}/`, {
        limit: 2,
        predicate: (o) => ['p03', 'p05', 'p09'].includes(o.metadata!.name!),
      });
      expect(filtered.items.map((o) => o.metadata?.name)).toEqual(['p03', 'p05']);
      const rest = await storage.list(`${dir}${ns}/`, {
        limit: 2,
        continue: filtered.continue,
        predicate: (o) => ['p03', 'p05', 'p09'].includes(o.metadata!.name!),
      });
      expect(rest.items.map((o) => o.metadata?.name)).toEqual(['p09']);
      expect(await code(storage.list(`${dir}${ns}/`, { continue: 'garbage!' }))).toBe('InvalidRequest');
      expect(await code(storage.list(`${dir}${ns}/`, { continue: p1.continue, resourceVersion: rv }))).toBe(
        'InvalidRequest',
      );
      expect(await code(storage.list(`${dir}${ns}/`, { resourceVersion: `${BigInt(rv) + 1000000n}` }))).toBe(
        'RevisionTooLarge',
      );
    }, 30000);

    test('watch from a resourceVersion: every later change once, in order, DELETED at the deletion revision', async () => {
      const a = await storage.create(key('a'), pod(ns, 'a'));
      const w = storage.watch(`${dir}${ns}/`, { recursive: true, resourceVersion: a.metadata!.resourceVersion });
      const b = await storage.create(key('b'), pod(ns, 'b'));
      const a2 = await storage.guaranteedUpdate(key('a'), (c) => ({ ...c, spec: { v: 2 } }));
      const d = await storage.delete(key('b'));
      const events = await takeWatch(w, 3);
      w.stop();
      expect(events.map(show)).toEqual([
        `ADDED b@${b.metadata!.resourceVersion}`,
        `MODIFIED a@${a2.metadata!.resourceVersion}`,
        `DELETED b@${d.metadata!.resourceVersion}`,
      ]);
    });

    test('watch with resourceVersion 0 starts with the current state as ADDED; a single-key watch sees only its key', async () => {
      await storage.create(key('x'), pod(ns, 'x'));
      await storage.create(key('xy'), pod(ns, 'xy'));
      const last = await storage.create(key('y'), pod(ns, 'y'));
      // Make sure a cache has caught up before asking for "any" version.
      await storage.get(key('y'), { resourceVersion: last.metadata!.resourceVersion });
      const w = storage.watch(`${dir}${ns}/`, { recursive: true, resourceVersion: '0' });
      const initial = await takeWatch(w, 3);
      expect(initial.map((e) => `${e.type} ${e.object.metadata?.name}`).sort()).toEqual([
        'ADDED x',
        'ADDED xy',
        'ADDED y',
      ]);
      const one = storage.watch(key('x'), { resourceVersion: last.metadata!.resourceVersion });
      await storage.guaranteedUpdate(key('xy'), (c) => ({ ...c, spec: 1 }));
      const x2 = await storage.guaranteedUpdate(key('x'), (c) => ({ ...c, spec: 1 }));
      expect((await takeWatch(one, 1)).map(show)).toEqual([`MODIFIED x@${x2.metadata!.resourceVersion}`]);
      expect((await takeWatch(w, 2)).map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual([
        'MODIFIED xy',
        'MODIFIED x',
      ]);
      w.stop();
      one.stop();
    });

    test('watch with a predicate turns entering and leaving the selection into ADDED and DELETED', async () => {
      const a = await storage.create(key('a'), pod(ns, 'a', { spec: { on: false } }));
      const w = storage.watch(`${dir}${ns}/`, {
        recursive: true,
        resourceVersion: a.metadata!.resourceVersion,
        predicate: (o) => (specOf(o) as { on?: boolean } | undefined)?.on === true,
      });
      await storage.guaranteedUpdate(key('a'), (c) => ({ ...c, spec: { on: true } }));
      await storage.guaranteedUpdate(key('a'), (c) => ({ ...c, spec: { on: true, x: 1 } }));
      await storage.guaranteedUpdate(key('a'), (c) => ({ ...c, spec: { on: false } }));
      expect((await takeWatch(w, 3)).map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
      w.stop();
    });

    test('bookmarks report progress when allowed', async () => {
      const a = await storage.create(key('a'), pod(ns, 'a'));
      const w = storage.watch(`${dir}${ns}/`, {
        recursive: true,
        resourceVersion: a.metadata!.resourceVersion,
        allowBookmarks: true,
      });
      const [bm] = await takeWatch(w, 1, 20000, true);
      w.stop();
      expect(bm!.type).toBe('BOOKMARK');
      expect(BigInt(bm!.object.metadata!.resourceVersion!)).toBeGreaterThanOrEqual(
        BigInt(a.metadata!.resourceVersion!),
      );
    }, 30000);

    test('a corrupt stored value is an InvalidObject error naming its key', async () => {
      if (!rawStore) return; // only where the raw store is at hand (a cache would keep failing on it)
      await rawStore.create(key('bad'), new TextEncoder().encode('{not json'));
      const err = await storage.get(key('bad')).catch((e: unknown) => e);
      expect(isStorageError(err, 'InvalidObject')).toBe(true);
      expect((err as Error).message).toContain(key('bad'));
      await expect(storage.list(`${dir}${ns}/`)).rejects.toThrow(key('bad'));
      await rawStore.delete(key('bad'));
    });

    test('readiness check passes', async () => {
      await storage.readinessCheck();
    });
  });
}
