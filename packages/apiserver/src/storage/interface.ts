/**
 * The backend `Store`: bytes and revisions (model: etcd's KV API as used by apiserver `pkg/storage/etcd3/store.go`).
 * etcd3 (`etcd3/`) and the embedded SQLite log (`sqlite/`) implement it; the typed `Storage` (`storage.ts`) and the
 * cacher sit above it. Both backends pass `testing/store-conformance.ts`.
 *
 * Revisions are int64 store revisions carried as `bigint`, never as JS numbers. Every successful write gets a new
 * revision greater than every earlier one; a key's `modRevision` is the revision of its last write and
 * `createRevision` the revision of the write that created it (since it last did not exist).
 */

/** An int64 store revision. 0 means "none" (a key that does not exist, or "from the beginning"). */
export type Revision = bigint;

/** One key with its value and revisions. Values are owned by the caller once returned (never mutated by the store). */
export interface KeyValue {
  key: string;
  value: Uint8Array;
  createRevision: Revision;
  modRevision: Revision;
  /** Set when the key was written with a TTL: the TTL it was written with, in seconds. */
  leaseTtlSeconds?: number;
}

/** A key that a delete removed: its last value, plus the revision of the delete itself. */
export interface DeletedKeyValue extends KeyValue {
  /** The revision at which the key was deleted (what a DELETED watch event carries). */
  deleteRevision: Revision;
}

/** One page of a range read. */
export interface ListResult {
  /** Keys in ascending byte order. */
  kvs: KeyValue[];
  /** The revision the read was served at (the requested one, or the store's current revision). */
  revision: Revision;
  /** True when keys after the last returned one remain in the range (at `revision`). */
  more: boolean;
  /** Total number of keys remaining in the range from `startKey`, including the returned ones (remainingItemCount). */
  count: number;
}

/**
 * A change seen by a watch. Events of one watch arrive in strictly increasing revision order, each exactly once.
 * - `put` with no `prevKv`: the key was created; with `prevKv`: updated (prevKv = the value before).
 * - `delete`: `prevKv` is the last value (what a DELETED API event shows).
 * - `progress`: every event up to `revision` has been delivered (becomes a BOOKMARK).
 */
export type StoreEvent =
  | { type: 'put'; kv: KeyValue; prevKv?: KeyValue; revision: Revision }
  | { type: 'delete'; key: string; prevKv: KeyValue; revision: Revision }
  | { type: 'progress'; revision: Revision };

/** Options of `Store.create` and `Store.update`. */
export interface WriteOptions {
  /** The key expires (is deleted, with a delete event) this many seconds after the write. Positive integer. */
  ttlSeconds?: number;
}

/** Options of `Store.list`. */
export interface StoreListOptions {
  /** Read at this past revision. Compacted if older than the compacted revision; RevisionTooLarge if in the future. */
  at?: Revision;
  /** At most this many keys (positive integer); unset = all. */
  limit?: number;
  /** Start at this key (inclusive) instead of the prefix itself; must lie within the prefix. */
  startKey?: string;
}

/**
 * What a consistent read of a prefix needs from a watch of it (`Store.freshness`), read as a quorum read would be:
 * a watch consumer that has applied every event of the prefix up to revision C holds the prefix's state as of
 * `revision` (so it may answer a consistent read) when
 * - C >= `revision`; or
 * - C >= `lastChange` (a store that knows the revision of the prefix's last change, deletes included: SQLite); or
 * - C >= `live.lastModRevision` and the consumer holds exactly `live.count` keys under the prefix (etcd: a read
 *   shows the newest modRevision of the live keys but not deletes, which the count then reveals: if every key live
 *   at `revision` was last written at or before C, the keys at `revision` are a subset of those at C with the same
 *   values, and equal counts make them the same set).
 */
export interface PrefixFreshness {
  /** The store's revision at the read (linearizable: at least every write acknowledged before it was asked). */
  revision: Revision;
  /** The revision of the last change (put or delete) under the prefix, up to `revision` or later. */
  lastChange?: Revision;
  /** The newest modRevision of a key under the prefix at `revision` (or the `after` asked, if larger), and the keys. */
  live?: { lastModRevision: Revision; count: number };
}

/** Options of `Store.watch`. */
export interface StoreWatchOptions {
  /** Deliver `progress` events from time to time (bookmarks). */
  progressNotify?: boolean;
}

/**
 * The backing store. All methods may throw a `StorageError`: Unreachable or Timeout when the store cannot answer
 * (never a hang), TooLarge when a write exceeds `MAX_REQUEST_BYTES` (checked before anything is sent), Unsupported for
 * options a backend does not implement. Keys are non-empty strings; the store compares them as UTF-8 bytes.
 */
export interface Store {
  /** Creates `key`. KeyExists if present. Returns the new key value. */
  create(key: string, value: Uint8Array, o?: WriteOptions): Promise<KeyValue>;
  /** Reads `key` (at a past revision with `at`); undefined when absent. Compacted if `at` < compacted revision. */
  get(key: string, o?: { at?: Revision }): Promise<KeyValue | undefined>;
  /** Reads keys starting with `prefix`, in ascending key order, all at one revision. */
  list(prefix: string, o?: StoreListOptions): Promise<ListResult>;
  /**
   * Compare-and-swap: writes `value` only if the key's modRevision equals `expectModRevision`.
   * Conflict (carrying the current kv in `err.current`) if it differs; KeyNotFound if the key is absent.
   */
  update(key: string, value: Uint8Array, expectModRevision: Revision, o?: WriteOptions): Promise<KeyValue>;
  /**
   * Deletes `key` (only if its modRevision equals `expectModRevision`, when given). Returns the deleted key value.
   * Conflict (with the current kv) / KeyNotFound.
   */
  delete(key: string, expectModRevision?: Revision): Promise<DeletedKeyValue>;
  /**
   * Streams changes of keys starting with `prefix` whose revision is greater than `afterRevision`, in revision
   * order, each exactly once, until `signal` aborts (the iteration then ends normally). Throws (from the iterator)
   * Compacted when events after `afterRevision` are no longer available, and Unreachable when the store is lost
   * for good. The iterator buffers without bound: consume it.
   */
  watch(prefix: string, afterRevision: Revision, signal: AbortSignal, o?: StoreWatchOptions): AsyncIterable<StoreEvent>;
  /** The store's current revision (the revision of the last write). */
  currentRevision(): Promise<Revision>;
  /**
   * Asks every watch with progress notifications for one soon, at the revision it has reached (etcd's
   * `RequestProgress`): a watch cache waiting for a revision newer than its last event learns it has it. Optional:
   * stores without it send progress on their own schedule only.
   */
  requestProgress?(): void;
  /**
   * See `PrefixFreshness`: what proves a watch consumer (the watch cache) current for a consistent read of `prefix`,
   * read linearizably and without reading values where the store can. `after` is the revision the consumer has
   * reached (an etcd read then only looks at keys written after it). Optional: without it, consistent reads go to
   * the store.
   */
  freshness?(prefix: string, after: Revision): Promise<PrefixFreshness>;
  /**
   * Discards history before `revision`: reads at older revisions and watches from before it then fail with
   * Compacted. Compacting at or below the compacted revision is a no-op. RevisionTooLarge beyond the current one.
   */
  compact(revision: Revision): Promise<void>;
  /** Number of keys starting with `prefix` now (apiserver_storage_objects). */
  count(prefix: string): Promise<number>;
  /** Size of the database in bytes (apiserver_storage_db_total_size_in_bytes). */
  dbSize(): Promise<number>;
  /** Health check: resolves when the store answers within `timeoutMs`; throws Unreachable or Timeout otherwise. */
  check(timeoutMs: number): Promise<void>;
  /** Releases connections, timers and locks. Idempotent. Pending watches end. */
  close(): Promise<void>;
}

/**
 * The largest write a store accepts: etcd's default `--max-request-bytes` (1.5 MiB), applied to key + value +
 * a fixed allowance for the request envelope. SQLite uses the same limit so that both backends accept the same data.
 */
export const MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;

/** Bytes of a request we reserve for the envelope (transaction compare, lease, framing) under MAX_REQUEST_BYTES. */
export const REQUEST_OVERHEAD_BYTES = 1024;

const utf8 = new TextEncoder();

/** The UTF-8 length of a key. */
export function keyBytes(key: string): number {
  return utf8.encode(key).byteLength;
}

/**
 * The exclusive end of the range of keys starting with `prefix` (etcd's GetPrefixRangeEnd), as a string compared
 * in UTF-8 byte order; undefined when every key is in range (empty prefix, or a prefix of only U+10FFFF).
 */
export function prefixEnd(prefix: string): string | undefined {
  const cps = Array.from(prefix);
  while (cps.length > 0) {
    const last = cps.pop()!.codePointAt(0)!;
    // UTF-8 preserves code point order, so bumping the last code point gives the first string after the prefix range.
    let next = last + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return cps.join('') + String.fromCodePoint(next);
  }
  return undefined;
}

/** Parses a decimal revision string from the wire (etcd3 passes int64s as strings). */
export function parseRevision(s: string | number | undefined): Revision {
  if (s === undefined || s === '') return 0n;
  return BigInt(s);
}
