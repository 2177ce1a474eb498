/**
 * The watch cache of one resource (model: apiserver `pkg/storage/cacher/cacher.go`, `watch_cache.go`).
 *
 * One `Cacher` per resource sits in front of a `Storage`. It lists the resource once, then keeps ONE watch on the
 * underlying storage (with bookmarks) that feeds every client watch. It holds:
 * - the current state, keyed and kept sorted by key, so lists (also paginated, also under a namespace) are served
 *   from memory in key order;
 * - a ring of recent events: at least `capacity` events (`--watch-cache-sizes` / `--default-watch-cache-size`), and
 *   every event younger than `eventWindowMs` even beyond that, up to `maxCapacity`.
 *
 * It serves: watches from a recent resourceVersion (older than the ring → Compacted, i.e. 410 "too old resource
 * version"); resourceVersion=0 gets and lists; "not older than N" gets and lists once it has caught up to N (it waits
 * at most `waitTimeoutMs`, then throws RevisionTooLarge, which the API turns into 504 + Retry-After); consistent lists
 * (no resourceVersion, no limit), once the store has proved it current (below). Everything else (unversioned gets,
 * Exact, continued and limited lists) and every write goes to the underlying storage
 * (`pkg/storage/cacher/delegator.go`).
 *
 * Consistent lists from the cache (Kubernetes 1.31's ConsistentListFromCache, `consistentListFromCache`): the
 * store answers, linearizably and without sending values, what the cache must have applied to hold the prefix's
 * state as of now (`Store.freshness`: on etcd a keys-only range for the newest key written since the cache's
 * revision, with the prefix's key count; on SQLite the committed revision and the last change its watches were
 * given). The list is served from memory as soon as the cache has applied that (usually at once, or after the events
 * in flight), carrying the cache's revision; it sees every write acknowledged before it started. If the cache cannot
 * show it within `consistentReadWaitMs`, or the store cannot tell, the store answers the list as before. Kubernetes
 * waits for the store's current revision through etcd progress requests instead; etcd 3.4 answers those unsafely
 * (see `etcd3/etcd3-store.ts`), and the revision moves with every other resource's writes, which this cache does not
 * see. Unversioned gets stay with the store: proving one key current costs the same read as reading it.
 *
 * Bookmarks: every progress of the underlying watch is passed on to client watches that allow bookmarks.
 *
 * Objects in the cache are deep-frozen when they enter it and handed out as they are, never copied (a 10k list from
 * memory costs a walk of the sorted keys): callers must treat them as read-only, and a mutation attempt throws a
 * TypeError instead of corrupting the cache. Writers work on the copies `guaranteedUpdate` makes. Being immutable,
 * each cached object is serialized for responses only once (`../immutable.ts`).
 *
 * Invariant: events are applied to the state, appended to the ring and fanned out in one synchronous step, and a
 * client watch subscribes and takes its replay from the ring in one synchronous step, so no event is lost or doubled.
 */
import { type ApiObject } from '../api-object';
import { compacted, isStorageError, keyNotFound, revisionTooLarge, unreachable } from '../errors';
import { EventQueue } from '../event-queue';
import { deepFreeze } from '../immutable';
import { type PrefixFreshness, type Revision } from '../interface';
import {
  encodeContinue,
  parseResourceVersion,
  type ApiObjectList,
  type DeleteOptions,
  type GetOptions,
  type ListOptions,
  type Predicate,
  type Storage,
  type UpdateFn,
  type UpdateOptions,
  type Watch,
  type WatchEvent,
  type WatchOptions,
} from '../storage';
import { SortedKeys } from './sorted-keys';

/** Options of `Cacher`. */
export interface CacherOptions {
  /** The resource's key prefix, e.g. `/registry/pods/` (ends with '/'). */
  resourcePrefix: string;
  /** The storage key of an object (namespace/name layout under the prefix by default). */
  keyOf?: (obj: ApiObject) => string;
  /** Events kept at least (`--watch-cache-sizes`, `--default-watch-cache-size`). Default 100. */
  capacity?: number;
  /** Events younger than this are kept even beyond `capacity`, ms. Default 75000. */
  eventWindowMs?: number;
  /** Hard cap of the ring. Default max(10 × capacity, 10000). */
  maxCapacity?: number;
  /** How long a "not older than" read waits for the cache to catch up, ms. Default 3000. */
  waitTimeoutMs?: number;
  /** Injected clock (ms). */
  now?: () => number;
  /** Delay before re-listing after the underlying watch failed, ms. Default 1000. */
  relistDelayMs?: number;
  /** Serve consistent lists from memory once the store proves the cache current (module comment). Default true. */
  consistentListFromCache?: boolean;
  /**
   * How long a consistent list waits for the cache to apply what the store said is current before the store answers
   * the list instead, ms. Default 1000.
   */
  consistentReadWaitMs?: number;
  /**
   * Told of every consistent list once answered: by the store instead of memory (`fallback`), and whether it
   * succeeded (`apiserver_watch_cache_consistent_read_total`).
   */
  onConsistentList?: (o: { fallback: boolean; success: boolean }) => void;
  /**
   * A client watch with more undelivered events than this is too slow: it is ended (the client re-watches from
   * the last resourceVersion it saw, as after any closed watch). Default max(10 × capacity, 10000).
   */
  maxWatcherBacklog?: number;
  /** Whole lists of at least this many objects are kept for the lists after them (`listMemos`). Default 64. */
  listMemoMinItems?: number;
  /** A kept list no list took for this long is dropped, giving its encoding's memory back, ms. Default 10000. */
  listMemoIdleMs?: number;
}

interface CachedEvent {
  rv: Revision;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  object: ApiObject;
  prevObject?: ApiObject;
  time: number;
}

interface ClientWatch {
  prefix: string;
  exact: boolean;
  predicate: Predicate;
  bookmarks: boolean;
  queue: EventQueue<WatchEvent>;
  sentRv: Revision;
}

interface ListMemo {
  items: readonly ApiObject[];
  /** When a list last took it (performance.now()). */
  used: number;
}

interface ProofSlot {
  running?: Promise<PrefixFreshness | undefined>;
  queued?: Promise<PrefixFreshness | undefined>;
}

/** Whether a cache at revision `at` holds a prefix's state as of `f` by revision alone (`PrefixFreshness`). */
function currentByRevision(f: PrefixFreshness, at: Revision): boolean {
  return at >= f.revision || (f.lastChange !== undefined && at >= f.lastChange);
}

/** Whether a cache at revision `at` holding `count` keys under the prefix holds its state as of `f`, by its keys. */
function currentByKeys(f: PrefixFreshness, at: Revision, count: number): boolean {
  return f.live !== undefined && at >= f.live.lastModRevision && count === f.live.count;
}

function rvOf(obj: ApiObject): Revision {
  return BigInt(obj.metadata?.resourceVersion ?? '0');
}

/** The watch cache of one resource; see the module comment. Call `start()` before use and `stop()` at shutdown. */
export class Cacher implements Storage {
  private readonly prefix: string;
  private readonly keyOf: (obj: ApiObject) => string;
  private readonly capacity: number;
  private readonly maxCapacity: number;
  private readonly windowMs: number;
  private readonly waitTimeoutMs: number;
  private readonly now: () => number;
  private readonly state = new Map<string, ApiObject>();
  private sortedKeys = new SortedKeys();
  private ring: CachedEvent[] = [];
  private ringHead = 0;
  /** Watches may start at any revision ≥ this one (the initial list's, or the last evicted event's). */
  private oldestRv: Revision = 0n;
  /** The revision the cache reflects. */
  private rv: Revision = 0n;
  private ready = false;
  private readonly watchers = new Set<ClientWatch>();
  private readonly waiters = new Set<() => void>();
  private underlying: Watch | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly storage: Storage,
    options: CacherOptions,
  ) {
    this.prefix = options.resourcePrefix.endsWith('/') ? options.resourcePrefix : `${options.resourcePrefix}/`;
    this.keyOf =
      options.keyOf ??
      ((obj): string => {
        const m = obj.metadata ?? {};
        return m.namespace ? `${this.prefix}${m.namespace}/${m.name ?? ''}` : `${this.prefix}${m.name ?? ''}`;
      });
    this.capacity = options.capacity ?? 100;
    this.maxCapacity = options.maxCapacity ?? Math.max(this.capacity * 10, 10000);
    this.windowMs = options.eventWindowMs ?? 75000;
    this.waitTimeoutMs = options.waitTimeoutMs ?? 3000;
    this.now = options.now ?? Date.now;
    this.relistDelayMs = options.relistDelayMs ?? 1000;
    this.maxWatcherBacklog = options.maxWatcherBacklog ?? Math.max(this.capacity * 10, 10000);
    this.consistentFromCache = options.consistentListFromCache ?? true;
    this.consistentReadWaitMs = options.consistentReadWaitMs ?? 1000;
    this.onConsistentList = options.onConsistentList;
    // Shorter lists cost less to walk than the memo's bookkeeping.
    this.listMemoMinItems = options.listMemoMinItems ?? 64;
    this.listMemoIdleMs = options.listMemoIdleMs ?? 10_000;
  }

  private readonly listMemoMinItems: number;

  private readonly listMemoIdleMs: number;

  private readonly onConsistentList: CacherOptions['onConsistentList'];

  private readonly maxWatcherBacklog: number;

  private readonly consistentFromCache: boolean;

  private readonly consistentReadWaitMs: number;

  /** Per listed prefix, the freshness read in flight and the one the lists that came meanwhile wait for. */
  private readonly proofs = new Map<string, ProofSlot>();

  /**
   * The last whole list of each listed prefix, while no event under it came since: every whole list of the prefix
   * gets the same frozen array, so the response writers encode its items once for all of them
   * (`encode-cache.ts`). Dropped by the next event under the prefix, a relist, or `listMemoIdleMs` without a list.
   */
  private readonly listMemos = new Map<string, ListMemo>();

  private memoSweep: NodeJS.Timeout | undefined;

  /** Consistent lists answered from memory and by the store (for tests and metrics). */
  readonly consistentLists = { fromCache: 0, fromStorage: 0 };

  private readonly relistDelayMs: number;

  /** Starts listing and watching; resolves once the first list is in (the cache is ready). */
  async start(): Promise<void> {
    await this.relist();
    if (!this.stopped) this.loop = this.run();
  }

  /** Stops the underlying watch and ends every client watch. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.dropListMemos();
    this.underlying?.stop();
    for (const w of this.watchers) w.queue.end();
    this.watchers.clear();
    await this.loop;
  }

  /** True once the cache holds a complete list. */
  get isReady(): boolean {
    return this.ready;
  }

  /** Client watches being fed (for tests and metrics). */
  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Whole lists kept for the lists after them (`listMemos`; for tests and metrics). */
  get listMemoCount(): number {
    return this.listMemos.size;
  }

  /** The revision the cache reflects (for tests and metrics). */
  get revision(): Revision {
    return this.rv;
  }

  private async relist(): Promise<void> {
    const list = await this.storage.list(this.prefix, {});
    // Stopped while the list was read: no watch is opened, since nothing would stop it.
    if (this.stopped) return;
    this.dropListMemos();
    this.state.clear();
    for (const obj of list.items) this.state.set(this.keyOf(obj), deepFreeze(obj));
    this.sortedKeys = SortedKeys.fromSorted([...this.state.keys()].sort(compareKeys));
    this.ring = [];
    this.ringHead = 0;
    this.rv = BigInt(list.resourceVersion);
    this.oldestRv = this.rv;
    this.ready = true;
    this.underlying = this.storage.watch(this.prefix, {
      recursive: true,
      resourceVersion: list.resourceVersion,
      allowBookmarks: true,
    });
    this.wakeWaiters();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        for await (const ev of this.underlying!) this.apply(ev);
        if (this.stopped) return;
        throw unreachable('underlying watch ended');
      } catch (e) {
        if (this.stopped) return;
        // The underlying history is gone (or the store failed): client watches cannot be continued exactly.
        this.ready = false;
        const err = isStorageError(e, 'Compacted') ? e : compacted(this.rv, this.rv);
        for (const w of this.watchers) w.queue.fail(err);
        this.watchers.clear();
        for (let delay = this.relistDelayMs; ; delay = Math.min(delay * 2, 30000)) {
          // Unref'd: a cacher left running over a closed store must not keep the process alive.
          await new Promise((r) => setTimeout(r, delay).unref());
          if (this.stopped) return;
          try {
            await this.relist();
            break;
          } catch {
            // keep trying; reads meanwhile wait and time out
          }
        }
      }
    }
  }

  private apply(ev: WatchEvent): void {
    const rv = rvOf(ev.object);
    if (ev.type === 'BOOKMARK') {
      if (rv > this.rv) this.rv = rv;
      for (const w of this.watchers) {
        if (w.bookmarks && this.rv >= w.sentRv) {
          w.queue.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: this.rv.toString() } } });
          w.sentRv = this.rv;
        }
      }
      this.wakeWaiters();
      return;
    }
    deepFreeze(ev.object);
    const key = this.keyOf(ev.object);
    if (this.listMemos.size > 0)
      for (const dir of this.listMemos.keys()) if (key.startsWith(dir)) this.listMemos.delete(dir);
    const prevObject = this.state.get(key);
    if (ev.type === 'DELETED') {
      this.state.delete(key);
      this.sortedKeys.delete(key);
    } else {
      if (!prevObject) this.sortedKeys.insert(key);
      this.state.set(key, ev.object);
    }
    const cached: CachedEvent = { rv, type: ev.type, key, object: ev.object, prevObject, time: this.now() };
    this.ring.push(cached);
    this.evict();
    this.rv = rv;
    for (const w of this.watchers) this.deliver(w, cached);
    this.wakeWaiters();
  }

  private evict(): void {
    const now = this.now();
    while (this.ring.length - this.ringHead > this.capacity) {
      const first = this.ring[this.ringHead]!;
      if (now - first.time < this.windowMs && this.ring.length - this.ringHead <= this.maxCapacity) break;
      this.oldestRv = first.rv;
      this.ring[this.ringHead] = undefined as unknown as CachedEvent;
      this.ringHead++;
    }
    if (this.ringHead > 1024 && this.ringHead * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.ringHead);
      this.ringHead = 0;
    }
  }

  private deliver(w: ClientWatch, e: CachedEvent): void {
    if (w.exact ? e.key !== w.prefix : !e.key.startsWith(w.prefix)) return;
    let out: WatchEvent | undefined;
    // A DELETED event's object is the last state, already carrying the deletion revision.
    const cur = e.type !== 'DELETED' && w.predicate(e.object);
    const prev = e.type === 'DELETED' ? w.predicate(e.object) : e.prevObject !== undefined && w.predicate(e.prevObject);
    if (e.type === 'DELETED') {
      if (prev) out = { type: 'DELETED', object: e.object };
    } else if (cur && prev) out = { type: 'MODIFIED', object: e.object };
    else if (cur) out = { type: 'ADDED', object: e.object };
    else if (prev) out = { type: 'DELETED', object: e.object };
    if (out) {
      w.queue.push(out);
      w.sentRv = e.rv;
      if (w.queue.size > this.maxWatcherBacklog) {
        // Too slow: cut off now, what it has not taken dropped (it re-watches from the last event it took).
        this.watchers.delete(w);
        w.queue.discard();
      }
    }
  }

  private wakeWaiters(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Waits until the cache is ready and has reached `rv`; RevisionTooLarge after waitTimeoutMs. */
  private async waitUntilFresh(rv: Revision): Promise<void> {
    if (this.ready && this.rv >= rv) return;
    // A revision newer than this resource's last event is usually just the store's (a list answered by the store
    // at its current revision): the underlying watch's next progress tells, so ask for it now; a store that cannot
    // answer that in time (etcd 3.4) proves the cache current instead, as consistent lists do.
    if (this.ready) {
      this.storage.requestProgress?.();
      if (this.storage.freshness) void this.catchUpByProof(rv);
    }
    const deadline = this.now() + this.waitTimeoutMs;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.waiters.delete(check);
          reject(revisionTooLarge(rv, this.rv));
        },
        Math.max(0, deadline - this.now()),
      );
      const check = (): void => {
        if (this.ready && this.rv >= rv) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve();
        }
      };
      this.waiters.add(check);
    });
  }

  /**
   * Moves the cache's revision to the store's when the store shows that nothing under this resource changed since
   * the cache's last event (`PrefixFreshness`), as a progress notification would: waiters for `rv` are then served
   * at once instead of after etcd's next progress notification (minutes by default).
   */
  private async catchUpByProof(rv: Revision): Promise<void> {
    let f: PrefixFreshness | undefined;
    try {
      f = await this.prove(this.prefix);
    } catch {
      return; // the wait ends as it would have
    }
    if (!f || !this.ready || f.revision <= this.rv || f.revision < rv) return;
    if (!currentByRevision(f, this.rv) && !currentByKeys(f, this.rv, this.state.size)) return;
    this.apply({ type: 'BOOKMARK', object: { metadata: { resourceVersion: f.revision.toString() } } });
  }

  // ---- reads served from memory, or delegated ----

  /**
   * See `Storage.get`: resourceVersion unset goes to storage; '0' and 'N' are served from memory. A read of the
   * latest that is `shared` takes the cache's copy when storage finds that very revision, instead of a decode.
   */
  async get(key: string, opts: GetOptions = {}): Promise<ApiObject> {
    const rv = parseResourceVersion(opts.resourceVersion);
    if (rv === undefined) {
      if (!opts.shared) return this.storage.get(key, opts);
      return this.storage.get(key, { ...opts, decoded: (modRevision) => this.cachedAt(key, modRevision) });
    }
    await this.waitUntilFresh(rv);
    const obj = this.state.get(key);
    if (!obj) throw keyNotFound(key);
    return obj;
  }

  /** The cache's object at `key` if it is the one written at `modRevision`. */
  private cachedAt(key: string, modRevision: Revision): ApiObject | undefined {
    const obj = this.state.get(key);
    return obj?.metadata?.resourceVersion === modRevision.toString() ? obj : undefined;
  }

  /**
   * See `Storage.list`: served from memory for resourceVersion '0', "not older than N", and unset (consistent) once
   * the store proves the cache current (see the module comment).
   */
  async list(prefix: string, opts: ListOptions = {}): Promise<ApiObjectList> {
    const rv = parseResourceVersion(opts.resourceVersion);
    if (rv === undefined && this.consistentFromCache && this.servesConsistently(prefix, opts)) {
      const fromCache = await this.consistentList(prefix.endsWith('/') ? prefix : `${prefix}/`, opts);
      if (fromCache) {
        this.consistentLists.fromCache++;
        this.onConsistentList?.({ fallback: false, success: true });
        return fromCache;
      }
      this.consistentLists.fromStorage++;
      try {
        const list = await this.storage.list(prefix, opts);
        this.onConsistentList?.({ fallback: true, success: true });
        return list;
      } catch (e) {
        this.onConsistentList?.({ fallback: true, success: false });
        throw e;
      }
    }
    const delegate =
      rv === undefined ||
      opts.continue ||
      opts.resourceVersionMatch === 'Exact' ||
      (opts.limit !== undefined && rv !== 0n) ||
      !prefix.startsWith(this.prefix.slice(0, -1));
    if (delegate) return this.storage.list(prefix, opts);
    if (opts.limit !== undefined && (!Number.isSafeInteger(opts.limit) || opts.limit <= 0)) {
      return this.storage.list(prefix, opts); // the storage reports the bad limit
    }
    await this.waitUntilFresh(rv);
    const dir = prefix.endsWith('/') ? prefix : `${prefix}/`;
    const readRv = this.rv;
    if (!opts.predicate && opts.limit === undefined) {
      return { items: this.whole(dir, opts.shared === true), resourceVersion: readRv.toString() };
    }
    const items: ApiObject[] = [];
    const limit = opts.limit;
    let lastKey: string | undefined;
    for (const key of this.sortedKeys.from(dir)) {
      if (!key.startsWith(dir)) break;
      const obj = this.state.get(key)!;
      if (opts.predicate && !opts.predicate(obj)) continue;
      if (limit !== undefined && items.length === limit) {
        return {
          items,
          resourceVersion: readRv.toString(),
          continue: encodeContinue(readRv, `${lastKey!.slice(dir.length)}\0`),
        };
      }
      items.push(obj);
      lastKey = key;
    }
    return { items, resourceVersion: readRv.toString() };
  }

  /** A consistent list the cache may answer: whole (no limit or continue), under this resource, no match given. */
  private servesConsistently(prefix: string, opts: ListOptions): boolean {
    const dir = prefix.endsWith('/') ? prefix : `${prefix}/`;
    return (
      dir.startsWith(this.prefix) &&
      !opts.continue &&
      opts.limit === undefined &&
      opts.resourceVersionMatch === undefined &&
      this.storage.freshness !== undefined
    );
  }

  /**
   * A consistent list of `dir` from memory, once the cache holds what the store says is current (see the module
   * comment); undefined when the store cannot tell or the cache does not get there within `consistentReadWaitMs`.
   */
  private async consistentList(dir: string, opts: ListOptions): Promise<ApiObjectList | undefined> {
    if (!this.ready) return undefined;
    let proof: PrefixFreshness | undefined;
    try {
      proof = await this.prove(dir);
    } catch {
      return undefined; // the store answers the list, or says what is wrong
    }
    if (!proof) return undefined;
    const current = proof;
    const attempt = (): ApiObjectList | undefined => (this.ready ? this.listIfCurrent(dir, opts, current) : undefined);
    const now = attempt();
    if (now) return now;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        resolve(undefined);
      }, this.consistentReadWaitMs);
      // Checked after every event the cache applies, and the list taken in that same synchronous step.
      const check = (): void => {
        const list = attempt();
        if (!list) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(list);
      };
      this.waiters.add(check);
    });
  }

  /**
   * The store's answer for `dir` (`Storage.freshness`), from a read sent after this call: the lists that arrive while
   * a read of the same prefix is in flight share the next one (a read sent before a list started may miss writes
   * acknowledged before it), so concurrent lists cost the store at most two reads at a time.
   */
  private prove(dir: string): Promise<PrefixFreshness | undefined> {
    let slot = this.proofs.get(dir);
    if (!slot) {
      slot = {};
      this.proofs.set(dir, slot);
    }
    const running = slot.running;
    if (!running) return this.sendProof(dir, slot);
    const s = slot;
    const settled = (): void => undefined;
    s.queued ??= running.then(settled, settled).then(() => {
      s.queued = undefined;
      return this.sendProof(dir, s);
    });
    return s.queued;
  }

  private sendProof(dir: string, slot: ProofSlot): Promise<PrefixFreshness | undefined> {
    const p = this.storage.freshness!(dir, this.rv);
    slot.running = p;
    const done = (): void => {
      if (slot.running === p) slot.running = undefined;
      if (!slot.running && !slot.queued && this.proofs.get(dir) === slot) this.proofs.delete(dir);
    };
    p.then(done, done);
    return p;
  }

  /** The list of `dir` at the cache's revision if `f` shows the cache current (`PrefixFreshness`), else undefined. */
  private listIfCurrent(dir: string, opts: ListOptions, f: PrefixFreshness): ApiObjectList | undefined {
    const predicate = opts.predicate;
    const at = this.rv;
    const byRevision = currentByRevision(f, at);
    if (!byRevision && !(f.live && at >= f.live.lastModRevision)) return undefined;
    let items: ApiObject[];
    let count = 0;
    if (predicate) {
      items = [];
      for (const key of this.sortedKeys.from(dir)) {
        if (!key.startsWith(dir)) break;
        count++;
        const obj = this.state.get(key)!;
        if (predicate(obj)) items.push(obj);
      }
    } else {
      items = this.whole(dir, opts.shared === true);
      count = items.length;
    }
    if (!byRevision && !currentByKeys(f, at, count)) return undefined;
    return { items, resourceVersion: at.toString() };
  }

  /**
   * Every object under `dir`, in key order, as the cache holds them now. A `shared` caller (one that only reads it)
   * gets the prefix's memo while no event under it came since (`listMemos`), or a new array kept as the memo when
   * long enough: frozen, as its objects are. Any other caller gets an array of its own.
   */
  private whole(dir: string, shared: boolean): ApiObject[] {
    const memo = this.listMemos.get(dir);
    if (memo) {
      memo.used = performance.now();
      return shared ? (memo.items as ApiObject[]) : memo.items.slice();
    }
    const items: ApiObject[] = [];
    for (const key of this.sortedKeys.from(dir)) {
      if (!key.startsWith(dir)) break;
      items.push(this.state.get(key)!);
    }
    if (shared && items.length >= this.listMemoMinItems) {
      this.listMemos.set(dir, { items: deepFreeze(items), used: performance.now() });
      this.memoSweep ??= setTimeout(() => this.sweepListMemos(), this.listMemoIdleMs).unref();
    }
    return items;
  }

  /** Drops the list memos no list took for `listMemoIdleMs`; comes back while any is left. */
  private sweepListMemos(): void {
    this.memoSweep = undefined;
    const now = performance.now();
    for (const [dir, memo] of this.listMemos) if (now - memo.used >= this.listMemoIdleMs) this.listMemos.delete(dir);
    if (this.listMemos.size > 0) this.memoSweep = setTimeout(() => this.sweepListMemos(), this.listMemoIdleMs).unref();
  }

  private dropListMemos(): void {
    this.listMemos.clear();
    clearTimeout(this.memoSweep);
    this.memoSweep = undefined;
  }

  /** See `Storage.watch`: served from the ring and the live event stream. */
  watch(key: string, opts: WatchOptions = {}): Watch {
    const recursive = opts.recursive === true;
    const prefix = recursive && !key.endsWith('/') ? `${key}/` : key;
    const queue = new EventQueue<WatchEvent>();
    const w: ClientWatch = {
      prefix,
      exact: !recursive,
      predicate: opts.predicate ?? ((): boolean => true),
      bookmarks: opts.allowBookmarks === true,
      queue,
      sentRv: 0n,
    };
    const stop = (): void => {
      this.watchers.delete(w);
      queue.end();
    };
    const begin = async (): Promise<void> => {
      // A stopped cache feeds nothing: the client watches again elsewhere.
      if (this.stopped) return queue.end();
      const rv = parseResourceVersion(opts.resourceVersion) ?? 0n;
      await this.waitUntilFresh(rv);
      if (queue.isEnded) return;
      if (this.stopped) return queue.end();
      // Synchronous from here: snapshot (state or ring) and subscription happen in one step.
      if (rv === 0n) {
        for (const k of this.sortedKeys.from(prefix)) {
          if (recursive ? !k.startsWith(prefix) : k !== prefix) break;
          const obj = this.state.get(k)!;
          if (w.predicate(obj)) queue.push({ type: 'ADDED', object: obj });
        }
        w.sentRv = this.rv;
      } else {
        if (rv < this.oldestRv) throw compacted(rv, this.oldestRv, key);
        for (let i = this.ringHead; i < this.ring.length; i++) {
          const e = this.ring[i]!;
          if (e.rv > rv) this.deliver(w, e);
        }
        if (w.sentRv < rv) w.sentRv = rv;
      }
      this.watchers.add(w);
    };
    begin().catch((e: unknown) => queue.fail(e));
    const watch: Watch = {
      stop,
      [Symbol.asyncIterator]: () => {
        const it = queue[Symbol.asyncIterator]();
        return {
          next: () => it.next(),
          return: async (v?: unknown) => {
            stop();
            return { done: true, value: v as undefined };
          },
        };
      },
    };
    return watch;
  }

  // ---- writes and health go to the underlying storage ----

  /** See `Storage.create` (delegated). */
  create(key: string, obj: ApiObject, opts?: { ttlSeconds?: number }): Promise<ApiObject> {
    return this.storage.create(key, obj, opts);
  }

  /**
   * See `Storage.guaranteedUpdate` (delegated): it starts from the cache's copy, if any, instead of a read of the
   * store (the compare-and-swap catches a stale one), as Kubernetes' cacher does.
   */
  guaranteedUpdate(key: string, tryUpdate: UpdateFn, opts: UpdateOptions = {}): Promise<ApiObject> {
    const cached = opts.cached ?? this.state.get(key);
    return this.storage.guaranteedUpdate(key, tryUpdate, cached ? { ...opts, cached } : opts);
  }

  /** See `Storage.delete` (delegated), starting from the cache's copy, as updates do. */
  delete(key: string, opts: DeleteOptions = {}): Promise<ApiObject> {
    const cached = opts.cached ?? this.state.get(key);
    return this.storage.delete(key, cached ? { ...opts, cached } : opts);
  }

  /** See `Storage.readinessCheck`: the store answers and the cache holds a complete list. */
  async readinessCheck(): Promise<void> {
    await this.storage.readinessCheck();
    if (!this.ready) throw unreachable(`watch cache for ${this.prefix} is not ready`);
  }
}

/** Byte-order comparison of keys (UTF-16 order equals UTF-8 byte order for BMP keys, which storage keys are). */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
