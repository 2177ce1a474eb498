/**
 * The typed `Storage` (STYLE.md §3.1; model: apiserver `pkg/storage/interfaces.go` and `pkg/storage/etcd3/store.go`):
 * API objects in, API objects out, over any backend `Store`, through an injected `Codec`.
 *
 * - Objects are stored without `metadata.resourceVersion`; every object returned carries the key's modRevision as
 *   a decimal string (`resourceVersion`), and every list its read revision.
 * - `guaranteedUpdate` owns the read-modify-write loop: on a compare-and-swap conflict it retries with the value the
 *   conflict carried (no extra read). Nothing above storage writes its own retry loop.
 * - Lists follow the resourceVersion/resourceVersionMatch table of Document 1; continue tokens carry the revision of
 *   the first page and the next key (compacted revision → Compacted, i.e. 410 "continue token expired").
 * - An undecodable stored value is an InvalidObject error naming its key, for get, list and watch alike (as in
 *   Kubernetes 1.21: a list does not silently drop an object it cannot read).
 */
import { type ApiObject, type Codec } from './api-object';
import {
  invalidObject,
  invalidRequest,
  isStorageError,
  keyNotFound,
  preconditionFailed,
  revisionTooLarge,
  type StorageError,
} from './errors';
import { EventQueue } from './event-queue';
import { type ValueTransformer } from './encryption/providers';
import { type KeyValue, type PrefixFreshness, type Revision, type Store, type StoreEvent } from './interface';

/** Options of `Storage.get`. */
export interface GetOptions {
  /** '' / unset: the latest; '0': any (the cacher serves it from memory); 'N': not older than N. */
  resourceVersion?: string;
  /**
   * The caller only reads the object and never changes it: the watch cache may answer with its own frozen copy when
   * that is the stored object (whose response bytes it has already encoded), instead of a fresh decode.
   */
  shared?: boolean;
  /**
   * The object already decoded from the key's value at a modRevision, if known (the watch cache's copy): returned
   * instead of decoding the value again. Same key and revision, same bytes, so the same object.
   */
  decoded?: (modRevision: Revision) => ApiObject | undefined;
}

/** A filter on objects (label and field selectors compile to one). */
export type Predicate = (obj: ApiObject) => boolean;

/** Options of `Storage.list`. */
export interface ListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /** Most items to return (positive integer). */
  limit?: number;
  /** The continue token of the previous page. */
  continue?: string;
  /** Only objects for which this is true are returned (and counted towards `limit`). */
  predicate?: Predicate;
  /**
   * The caller only reads the items: the array may be one the watch cache hands every whole list of the prefix at
   * its revision (frozen), whose encoding the response writers then make once (`Cacher`'s list memos).
   */
  shared?: boolean;
}

/** A page of objects. */
export interface ApiObjectList {
  items: ApiObject[];
  /** The revision the list was read at. */
  resourceVersion: string;
  /** Token for the next page; undefined at the end. */
  continue?: string;
  /** Items after this page (only when known exactly: no predicate). */
  remainingItemCount?: number;
}

/** Conditions that must hold on the stored object for an update or delete (HTTP 409 otherwise). */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Computes the new object from the current one. May mutate and return its argument (a private copy). */
export type UpdateFn = (current: ApiObject) => ApiObject | Promise<ApiObject>;

/** Options of `Storage.guaranteedUpdate`. */
export interface UpdateOptions {
  preconditions?: Preconditions;
  /** Create the object when absent (`tryUpdate` then receives `{}`). */
  ignoreNotFound?: boolean;
  ttlSeconds?: number;
  /**
   * The object as the watch cache holds it (with its resourceVersion), tried first instead of reading the store, as
   * Kubernetes' cacher does: the compare-and-swap refuses it if it is stale, and a precondition or `tryUpdate` that
   * fails on it is tried again on the store's copy before the failure counts.
   */
  cached?: ApiObject;
}

/** Options of `Storage.delete`. */
export interface DeleteOptions {
  preconditions?: Preconditions;
  /** Called with the current object before deleting; throw to refuse. Runs again on every retry. */
  validateDeletion?: (current: ApiObject) => void | Promise<void>;
  /** As `UpdateOptions.cached`: the watch cache's copy, tried first instead of reading the store. */
  cached?: ApiObject;
}

/** Options of `Storage.watch`. */
export interface WatchOptions {
  /** unset / '0': current state as ADDED, then changes; 'N': changes after N. */
  resourceVersion?: string;
  /** Watch every key under `key` (which then ends with '/'); otherwise exactly `key`. */
  recursive?: boolean;
  /** Send BOOKMARK events (progress). */
  allowBookmarks?: boolean;
  predicate?: Predicate;
}

/** A watch event. BOOKMARK objects carry only `metadata.resourceVersion`. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: ApiObject;
}

/** A running watch: iterate it; `stop()` ends it (idempotent). Errors (Compacted → 410) are thrown by the iterator. */
export interface Watch extends AsyncIterable<WatchEvent> {
  stop(): void;
}

/** Typed storage of API objects (see the module comment). */
export interface Storage {
  /** Creates the object at `key`. KeyExists if present; InvalidObject if it carries a resourceVersion. */
  create(key: string, obj: ApiObject, opts?: { ttlSeconds?: number }): Promise<ApiObject>;
  /** Reads the object at `key`. KeyNotFound if absent; RevisionTooLarge if the store is older than asked. */
  get(key: string, opts?: GetOptions): Promise<ApiObject>;
  /** Lists objects under `prefix` (a directory: ends with '/'). */
  list(prefix: string, opts?: ListOptions): Promise<ApiObjectList>;
  /** Read-modify-write with retries on conflict (see the module comment). */
  guaranteedUpdate(key: string, tryUpdate: UpdateFn, opts?: UpdateOptions): Promise<ApiObject>;
  /** Deletes the object; returns its last state with resourceVersion = the deletion revision. */
  delete(key: string, opts?: DeleteOptions): Promise<ApiObject>;
  /** Watches `key` (or every key under it with `recursive`). */
  watch(key: string, opts?: WatchOptions): Watch;
  /** Asks the store's watches for a progress notification (bookmark) soon, where the store can (see `Store`). */
  requestProgress?(): void;
  /**
   * What proves a watch of `prefix` current for a consistent read (`Store.freshness`); undefined when the store
   * cannot tell (consistent reads then go to the store).
   */
  freshness?(prefix: string, after: Revision): Promise<PrefixFreshness | undefined>;
  /** Throws when the backing store does not answer in time. */
  readinessCheck(): Promise<void>;
}

/** Parses a resourceVersion parameter; InvalidRequest for anything but a non-negative decimal integer. */
export function parseResourceVersion(rv: string | undefined): Revision | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^(0|[1-9][0-9]{0,18})$/.test(rv)) throw invalidRequest(`invalid resourceVersion: ${JSON.stringify(rv)}`);
  return BigInt(rv);
}

/** Encodes a continue token: the read revision and the next key relative to the list prefix. */
export function encodeContinue(revision: Revision, nextKeyRelative: string): string {
  const json = JSON.stringify({ v: 'meta.platform/v1', rv: revision.toString(), start: nextKeyRelative });
  return Buffer.from(json).toString('base64url');
}

/** Decodes a continue token; InvalidRequest if it is malformed. */
export function decodeContinue(token: string): { revision: Revision; start: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalidRequest('continue key is not valid: not base64-encoded JSON');
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (typeof p !== 'object' || p === null || p.v !== 'meta.platform/v1') {
    throw invalidRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.platform/v1)',
    );
  }
  if (typeof p.rv !== 'string' || !/^[1-9][0-9]{0,18}$/.test(p.rv)) {
    throw invalidRequest('continue key is not valid: incorrect encoded start resourceVersion');
  }
  if (typeof p.start !== 'string' || p.start.startsWith('/') || p.start.split('/').includes('..')) {
    throw invalidRequest('continue key is not valid: invalid start key');
  }
  return { revision: BigInt(p.rv), start: p.start };
}

/** The predicate of a watch without one. */
const matchAll: Predicate = () => true;

function withRv(obj: ApiObject, rv: Revision): ApiObject {
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: rv.toString() };
  return obj;
}

function withoutRv(obj: ApiObject): ApiObject {
  if (obj.metadata?.resourceVersion === undefined) return obj;
  const { resourceVersion: _drop, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

/** The copy a read-modify-write tries next: the watch cache's (`cached`) or the store's (`kv`, absent: no key). */
interface Start {
  cached?: ApiObject;
  kv?: KeyValue;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** Checks preconditions on `current` (with resourceVersion set). */
export function checkPreconditions(key: string, pre: Preconditions | undefined, current: ApiObject): void {
  if (!pre) return;
  if (pre.uid !== undefined && pre.uid !== current.metadata?.uid) {
    throw preconditionFailed(
      key,
      `UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata?.uid ?? ''}`,
    );
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== current.metadata?.resourceVersion) {
    throw preconditionFailed(
      key,
      `ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata?.resourceVersion ?? ''}`,
    );
  }
}

/** Options of `StoreStorage`. */
export interface StoreStorageOptions {
  /** Health check time-out (`--store-healthcheck-timeout`), ms. Default 2000. */
  healthcheckTimeoutMs?: number;
  /** Most keys read per page when a predicate filters a limited list. Default 500. */
  listPageSize?: number;
  /** Encryption at rest (`--encryption-provider-config`): the encoded object ↔ the bytes stored. */
  transformer?: ValueTransformer;
}

/** `Storage` over a backend `Store` and a `Codec`. */
export class StoreStorage implements Storage {
  constructor(
    readonly store: Store,
    private readonly codec: Codec,
    private readonly options: StoreStorageOptions = {},
  ) {}

  requestProgress(): void {
    this.store.requestProgress?.();
  }

  /** See `Storage.freshness`. */
  async freshness(prefix: string, after: Revision): Promise<PrefixFreshness | undefined> {
    return this.store.freshness?.(prefix, after);
  }

  /** Decodes a stored value; InvalidObject naming the key when the codec fails. */
  decode(kv: KeyValue, rv: Revision = kv.modRevision): ApiObject {
    return this.decodeBytes(kv.value, kv.key, rv);
  }

  /** The object of a stored value, decrypted first when the resource is encrypted. */
  private async read(kv: KeyValue, rv: Revision = kv.modRevision): Promise<ApiObject> {
    if (!this.options.transformer) return this.decode(kv, rv);
    return this.decodeBytes((await this.open(kv)).data, kv.key, rv);
  }

  /** The encoded object of a stored value; `stale` when it should be written again with the current key. */
  private async open(kv: KeyValue): Promise<{ data: Uint8Array; stale: boolean }> {
    const t = this.options.transformer;
    if (!t) return { data: kv.value, stale: false };
    try {
      return await t.fromStorage(kv.value, kv.key);
    } catch (e) {
      throw invalidObject(kv.key, `cannot decrypt stored object: ${e instanceof Error ? e.message : String(e)}`, e);
    }
  }

  /** The bytes to store for an encoded object. */
  private async seal(data: Uint8Array, key: string): Promise<Uint8Array> {
    const t = this.options.transformer;
    return t ? t.toStorage(data, key) : data;
  }

  private decodeBytes(value: Uint8Array, key: string, rv: Revision): ApiObject {
    let obj: ApiObject;
    try {
      obj = this.codec.decode(value, key);
    } catch (e) {
      throw invalidObject(key, `cannot decode stored object: ${e instanceof Error ? e.message : String(e)}`, e);
    }
    if (typeof obj !== 'object' || obj === null) throw invalidObject(key, 'decoded value is not an object');
    return withRv(obj, rv);
  }

  private encode(obj: ApiObject, key: string): Uint8Array {
    if (typeof obj !== 'object' || obj === null) throw invalidObject(key, 'not an object');
    return this.codec.encode(withoutRv(obj));
  }

  /** See `Storage.create`. */
  async create(key: string, obj: ApiObject, opts: { ttlSeconds?: number } = {}): Promise<ApiObject> {
    if (obj?.metadata?.resourceVersion)
      throw invalidObject(key, 'resourceVersion should not be set on objects to be created');
    const data = this.encode(obj, key);
    const kv = await this.store.create(key, await this.seal(data, key), opts);
    // The bytes just written, before encryption: nothing to decrypt again.
    return this.decodeBytes(data, kv.key, kv.modRevision);
  }

  /** See `Storage.get`. */
  async get(key: string, opts: GetOptions = {}): Promise<ApiObject> {
    const min = parseResourceVersion(opts.resourceVersion);
    const kv = await this.store.get(key);
    if (min !== undefined && min > 0n) {
      const cur = await this.store.currentRevision();
      if (cur < min) throw revisionTooLarge(min, cur);
    }
    if (!kv) throw keyNotFound(key);
    return opts.decoded?.(kv.modRevision) ?? this.read(kv);
  }

  /** See `Storage.list`. */
  async list(prefix: string, opts: ListOptions = {}): Promise<ApiObjectList> {
    if (!prefix.endsWith('/')) prefix += '/';
    const rv = parseResourceVersion(opts.resourceVersion);
    const match = opts.resourceVersionMatch;
    if (match !== undefined && match !== 'NotOlderThan' && match !== 'Exact') {
      throw invalidRequest(`unknown resourceVersionMatch ${String(match)}`);
    }
    if (match !== undefined && rv === undefined) {
      throw invalidRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    if (opts.limit !== undefined && (!Number.isSafeInteger(opts.limit) || opts.limit <= 0)) {
      throw invalidRequest(`limit must be a positive integer, got ${String(opts.limit)}`);
    }
    let at: Revision | undefined;
    let startKey: string | undefined;
    if (opts.continue) {
      if (match !== undefined) throw invalidRequest('resourceVersionMatch is forbidden for continue');
      if (rv !== undefined && rv !== 0n) {
        throw invalidRequest('specifying resource version is not allowed when using continue');
      }
      const c = decodeContinue(opts.continue);
      at = c.revision;
      startKey = prefix + c.start;
    } else if (rv !== undefined && rv !== 0n) {
      if (match === 'Exact' || (match === undefined && opts.limit !== undefined)) at = rv;
      else {
        const cur = await this.store.currentRevision();
        if (cur < rv) throw revisionTooLarge(rv, cur);
      }
    } else if (match === 'Exact') {
      throw invalidRequest('resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
    }
    const items: ApiObject[] = [];
    const pred = opts.predicate;
    const limit = opts.limit;
    const pageSize = limit === undefined ? undefined : pred ? Math.max(limit, this.options.listPageSize ?? 500) : limit;
    for (;;) {
      const page = await this.store.list(prefix, { at, limit: pageSize, startKey });
      at = page.revision;
      let lastKey: string | undefined;
      let decoded = 0;
      for (const kv of page.kvs) {
        // Decoding thousands of objects is CPU work: let other requests run every 1000 objects.
        if (++decoded % 1000 === 0) await new Promise((r) => setImmediate(r));
        lastKey = kv.key;
        const obj = this.options.transformer ? await this.read(kv) : this.decode(kv);
        if (pred && !pred(obj)) continue;
        items.push(obj);
        if (limit !== undefined && items.length === limit) break;
      }
      const stoppedEarly = lastKey !== undefined && lastKey !== page.kvs[page.kvs.length - 1]?.key;
      const more = page.more || stoppedEarly;
      if (limit !== undefined && items.length >= limit && more) {
        const out: ApiObjectList = {
          items,
          resourceVersion: at.toString(),
          continue: encodeContinue(at, `${lastKey!.slice(prefix.length)}\0`),
        };
        if (!pred) out.remainingItemCount = page.count - page.kvs.length;
        return out;
      }
      if (!more || lastKey === undefined) return { items, resourceVersion: at.toString() };
      startKey = `${lastKey}\0`;
    }
  }

  private async currentKv(key: string): Promise<KeyValue | undefined> {
    return this.store.get(key);
  }

  /**
   * Where a read-modify-write (an update, a delete) starts: the watch cache's copy when it is given with its
   * revision (`UpdateOptions.cached`), without reading the store, else the store's.
   */
  private async start(key: string, cached: ApiObject | undefined): Promise<Start> {
    return cached?.metadata?.resourceVersion ? { cached } : { kv: await this.currentKv(key) };
  }

  /** The cache's copy may be behind the store: where it cannot decide, the store's copy does. */
  private async readStore(key: string, s: Start): Promise<void> {
    s.cached = undefined;
    s.kv = await this.currentKv(key);
  }

  /** A write refused with Conflict: the store's copy (its current kv) is where the next try starts. */
  private static conflicted(s: Start, e: unknown): void {
    s.cached = undefined;
    s.kv = (e as StorageError).current;
  }

  /** See `Storage.guaranteedUpdate`. */
  async guaranteedUpdate(key: string, tryUpdate: UpdateFn, opts: UpdateOptions = {}): Promise<ApiObject> {
    // Encrypted values are read from the store: whether one must be written again with the current key shows there.
    const s = await this.start(key, this.options.transformer ? undefined : opts.cached);
    for (;;) {
      let current: ApiObject;
      let modRevision: Revision | undefined;
      let stored: { data: Uint8Array; stale: boolean } | undefined;
      let updated: ApiObject;
      const { cached, kv } = s;
      if (cached) {
        current = cached; // only read here (the cache's objects are frozen); tryUpdate gets a copy
        modRevision = BigInt(cached.metadata!.resourceVersion!);
      } else {
        if (!kv && !opts.ignoreNotFound) throw keyNotFound(key);
        stored = kv ? await this.open(kv) : undefined;
        current = kv ? this.decodeBytes(stored!.data, kv.key, kv.modRevision) : {};
        modRevision = kv?.modRevision;
      }
      try {
        if (modRevision !== undefined) checkPreconditions(key, opts.preconditions, current);
        updated = await tryUpdate(structuredClone(current));
      } catch (e) {
        if (!cached) throw e;
        await this.readStore(key, s); // only the store's copy can refuse the update
        continue;
      }
      const data = this.encode(updated, key);
      // An unchanged object is not written again, unless it was encrypted with a key that no longer writes.
      const before = cached ? this.encode(current, key) : stored?.data;
      if (before && !stored?.stale && sameBytes(data, before) && opts.ttlSeconds === undefined) {
        if (!cached) return current;
        await this.readStore(key, s); // unchanged from the cache's copy: compared (and written) against the store's
        continue;
      }
      const value = await this.seal(data, key);
      try {
        const written =
          modRevision !== undefined
            ? await this.store.update(key, value, modRevision, { ttlSeconds: opts.ttlSeconds })
            : await this.store.create(key, value, { ttlSeconds: opts.ttlSeconds });
        return this.decodeBytes(data, written.key, written.modRevision);
      } catch (e) {
        if (isStorageError(e, 'Conflict')) StoreStorage.conflicted(s, e);
        else if (isStorageError(e, 'KeyExists') || isStorageError(e, 'KeyNotFound')) await this.readStore(key, s);
        else throw e;
      }
    }
  }

  /** See `Storage.delete`, from the cache's copy as updates (the delete's compare-and-swap refuses a stale one). */
  async delete(key: string, opts: DeleteOptions = {}): Promise<ApiObject> {
    const s = await this.start(key, opts.cached);
    for (;;) {
      let current: ApiObject;
      let modRevision: Revision;
      const { cached, kv } = s;
      if (cached) {
        current = cached;
        modRevision = BigInt(cached.metadata!.resourceVersion!);
      } else {
        if (!kv) throw keyNotFound(key);
        current = await this.read(kv);
        modRevision = kv.modRevision;
      }
      try {
        checkPreconditions(key, opts.preconditions, current);
        await opts.validateDeletion?.(structuredClone(current));
      } catch (e) {
        if (!cached) throw e;
        await this.readStore(key, s); // only the store's copy can refuse the delete
        continue;
      }
      try {
        const deleted = await this.store.delete(key, modRevision);
        return await this.read(deleted, deleted.deleteRevision);
      } catch (e) {
        if (isStorageError(e, 'Conflict')) StoreStorage.conflicted(s, e);
        else if (cached && isStorageError(e, 'KeyNotFound')) await this.readStore(key, s);
        else throw e;
      }
    }
  }

  /** See `Storage.watch`. */
  watch(key: string, opts: WatchOptions = {}): Watch {
    const recursive = opts.recursive === true;
    if (recursive && !key.endsWith('/')) key += '/';
    const rv = parseResourceVersion(opts.resourceVersion);
    const out = new EventQueue<WatchEvent>();
    const ac = new AbortController();
    const matches = (k: string): boolean => (recursive ? k.startsWith(key) : k === key);
    const pred = opts.predicate ?? matchAll;
    const run = async (): Promise<void> => {
      let after = rv ?? 0n;
      if (rv === undefined || rv === 0n) {
        // Current state as ADDED, then changes after the revision of that read.
        const initial = recursive ? await this.store.list(key) : await this.store.list(key, { limit: 1 });
        after = initial.revision;
        for (const kv of initial.kvs) {
          if (!matches(kv.key)) continue;
          const obj = await this.read(kv);
          if (pred(obj)) out.push({ type: 'ADDED', object: obj });
        }
      }
      for await (const ev of this.store.watch(key, after, ac.signal, {
        progressNotify: opts.allowBookmarks === true,
      })) {
        const we = this.options.transformer
          ? await this.toWatchEventAsync(ev, matches, pred)
          : this.toWatchEvent(ev, matches, pred);
        if (we) out.push(we);
      }
    };
    run().then(
      () => out.end(),
      (e: unknown) => out.fail(e),
    );
    const iterable: Watch = {
      stop: () => {
        ac.abort();
        out.end();
      },
      [Symbol.asyncIterator]: () => {
        const it = out[Symbol.asyncIterator]();
        return {
          next: () => it.next(),
          return: async (v?: unknown) => {
            iterable.stop();
            return { done: true, value: v as undefined };
          },
        };
      },
    };
    return iterable;
  }

  private toWatchEvent(ev: StoreEvent, matches: (k: string) => boolean, pred: Predicate): WatchEvent | undefined {
    if (ev.type === 'progress')
      return { type: 'BOOKMARK', object: { metadata: { resourceVersion: ev.revision.toString() } } };
    if (ev.type === 'delete') {
      if (!matches(ev.key)) return undefined;
      const prev = this.decode(ev.prevKv, ev.revision);
      return pred(prev) ? { type: 'DELETED', object: prev } : undefined;
    }
    if (!matches(ev.kv.key)) return undefined;
    const cur = this.decode(ev.kv);
    const curMatch = pred(cur);
    if (!ev.prevKv) return curMatch ? { type: 'ADDED', object: cur } : undefined;
    // Without a predicate (the watch cache's own watch) every previous value matches: no need to decode it.
    const prevMatch = pred === matchAll || pred(this.decode(ev.prevKv));
    if (curMatch && prevMatch) return { type: 'MODIFIED', object: cur };
    if (curMatch) return { type: 'ADDED', object: cur };
    if (prevMatch) return { type: 'DELETED', object: cur };
    return undefined;
  }

  /** `toWatchEvent` for an encrypted resource: its values are decrypted first. */
  private async toWatchEventAsync(
    ev: StoreEvent,
    matches: (k: string) => boolean,
    pred: Predicate,
  ): Promise<WatchEvent | undefined> {
    if (ev.type === 'progress') return this.toWatchEvent(ev, matches, pred);
    const clear = async (kv: KeyValue): Promise<KeyValue> => ({ ...kv, value: (await this.open(kv)).data });
    if (ev.type === 'delete') {
      if (!matches(ev.key)) return undefined;
      return this.toWatchEvent({ ...ev, prevKv: await clear(ev.prevKv) }, matches, pred);
    }
    if (!matches(ev.kv.key)) return undefined;
    return this.toWatchEvent(
      { ...ev, kv: await clear(ev.kv), ...(ev.prevKv ? { prevKv: await clear(ev.prevKv) } : {}) },
      matches,
      pred,
    );
  }

  /** See `Storage.readinessCheck`. */
  async readinessCheck(): Promise<void> {
    await this.store.check(this.options.healthcheckTimeoutMs ?? 2000);
  }
}
