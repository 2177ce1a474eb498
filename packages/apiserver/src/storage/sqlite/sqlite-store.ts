/**
 * The embedded store: one SQLite file holding an append-only log in the manner of k3s's kine (`kine` table: every
 * write appends a row whose id is the revision), without kine's weaknesses:
 * - Lists never scan the log: live keys are indexed in `current(name → id)` (lists and counts at the current revision
 *   walk it in key order), and reads at a past revision walk the `(name, id)` index taking the newest row per name.
 * - Compaction deletes superseded rows and tombstones below the compact revision, then `PRAGMA incremental_vacuum`
 *   returns the pages (the file is created with auto_vacuum=INCREMENTAL), so the file does not grow without bound.
 * - Durable: WAL + synchronous=FULL; a write is acknowledged only after its transaction committed.
 * - Group commit: one worker thread owns the write connection (`writer.ts`); while a batch is being committed, new
 *   writes queue here and form the next batch, committed in one transaction with one fsync.
 * - Watches are fed from the write path: the main thread receives every committed row in revision order and fans it
 *   out to subscribers; a watch from an older revision replays rows from the log first (synchronously, in the same
 *   tick as it subscribes, so there is no gap and no duplicate).
 * - Reads use a read-only connection on the main thread (WAL readers run beside the writer; a read of a few
 *   thousand rows costs less than the round trip to a worker, see docs/storage.md for the measurement).
 * - One owner: a lock on `<file>.lock` (an exclusive SQLite lock, released by the kernel when the process dies) makes
 *   a second process (or a second store in this process) fail clearly at open.
 * - Deadlines: every write has one (`writeTimeoutMs`, below the API server's `--request-timeout`). A write the writer
 *   has not answered by then (the database locked by another process, a hung disk, a stuck writer) fails with
 *   `Timeout` (504): "not applied" when it was never started (it is dropped, here or by the writer), "outcome unknown"
 *   when it was in the transaction being committed (it then lands whole, with its watch event, or not at all).
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

import Database from 'better-sqlite3';

import { checkKey, checkLimit, checkRevision, checkTtl, checkValue } from '../checks';
import { compacted, revisionTooLarge, StorageError, timeout, unreachable, type StorageErrorCode } from '../errors';
import { EventQueue } from '../event-queue';
import {
  prefixEnd,
  type DeletedKeyValue,
  type KeyValue,
  type StoreListOptions,
  type ListResult,
  type PrefixFreshness,
  type Revision,
  type Store,
  type StoreEvent,
  type StoreWatchOptions,
  type WriteOptions,
} from '../interface';
import {
  SCHEMA_SQL,
  type LogRow,
  type WriteError,
  type WriteOp,
  type WriteResult,
  type WriterMessage,
  type WriterRequest,
} from './writer';

/** Options of `SqliteStore.open`. */
export interface SqliteStoreOptions {
  /** How often watches asked for progress get a `progress` event (ms). Default 5000. */
  progressIntervalMs?: number;
  /** How often keys written with a TTL are checked for expiry (ms). Default 1000. */
  expiryIntervalMs?: number;
  /** Most ops committed in one transaction. Default 1000. */
  maxBatchOps?: number;
  /**
   * Deadline of each write, from the call to the writer's answer (ms). Default 60000. The API server sets it below
   * its `--request-timeout` (`storeWriteTimeoutMs`), so that a write the store cannot complete answers 504 from the
   * store, within the request's deadline.
   */
  writeTimeoutMs?: number;
}

/**
 * Every read the store issues (main thread, read-only connection). Exported so that a test can check their query
 * plans: none may scan the log.
 */
export const READ_SQL = {
  revision: `SELECT seq FROM sqlite_sequence WHERE name = 'kine'`,
  compactRevision: `SELECT value FROM meta WHERE key = 'compact_revision'`,
  getCurrent: `SELECT k.* FROM current c JOIN kine k ON k.id = c.id WHERE c.name = ?`,
  getAt: `SELECT * FROM kine WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1`,
  listCurrent: `SELECT k.* FROM current c JOIN kine k ON k.id = c.id WHERE c.name >= ? AND c.name < ? ORDER BY c.name LIMIT ?`,
  countCurrent: `SELECT COUNT(*) AS n FROM current WHERE name >= ? AND name < ?`,
  listAt: `SELECT k.* FROM (SELECT name, MAX(id) AS mid FROM kine WHERE name >= ? AND name < ? AND id <= ? GROUP BY name) m
    JOIN kine k ON k.id = m.mid WHERE k.deleted = 0 ORDER BY m.name LIMIT ?`,
  countAt: `SELECT COUNT(*) AS n FROM (SELECT name, MAX(id) AS mid FROM kine WHERE name >= ? AND name < ? AND id <= ? GROUP BY name) m
    JOIN kine k ON k.id = m.mid WHERE k.deleted = 0`,
  replay: `SELECT * FROM kine WHERE id > ? AND id <= ? AND name >= ? AND name < ? ORDER BY id`,
  lastChange: `SELECT MAX(id) AS id FROM kine WHERE name >= ? AND name < ?`,
  pageCount: `PRAGMA page_count`,
  pageSize: `PRAGMA page_size`,
} as const;

/**
 * The op as it is posted to the writer: a value that is a view of a larger buffer is copied to a buffer of its own,
 * because postMessage clones a view's whole ArrayBuffer. An encoded object under 4 KiB is one (Node's Buffer pool
 * hands out slices of 8 KiB slabs), and posting a 1.3 KB value cost 21 us instead of 5.
 */
function ownValue(op: WriteOp): WriteOp {
  if (!('value' in op) || op.value.byteLength === op.value.buffer.byteLength) return op;
  return { ...op, value: new Uint8Array(op.value) };
}

/** Most value bytes committed in one transaction (bounds the memory of a batch of large writes). */
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

/** Sorts after every key: U+10FFFF encodes as F4 8F BF BF, above any byte a UTF-8 key can start with. */
const KEY_MAX = '\u{10FFFF}'.repeat(4);

/**
 * Parses `sqlite:///absolute/path.db` (absolute) or `sqlite://relative/path.db` (relative to `cwd`) into a file path.
 * Throws a TypeError naming the problem for anything else (no host, no query, no in-memory database).
 */
export function parseSqliteUrl(url: string, cwd: string = process.cwd()): string {
  if (!url.startsWith('sqlite://')) throw new TypeError(`not a sqlite URL (want sqlite:///path/state.db): ${url}`);
  const rest = url.slice('sqlite://'.length);
  if (rest === '' || rest === '/') throw new TypeError(`sqlite URL has no file path: ${url}`);
  if (rest.includes('?') || rest.includes('#'))
    throw new TypeError(`sqlite URL must not have a query or fragment: ${url}`);
  const path = decodeURIComponent(rest);
  return isAbsolute(path) ? path : resolve(cwd, path);
}

interface Pending {
  op: WriteOp;
  /** Epoch ms after which the op is not started any more (and its caller gets a Timeout). */
  deadline: number;
  resolve: (r: LogRow[]) => void;
  reject: (e: unknown) => void;
  /** Fires at the deadline; cleared when the op is answered. */
  timer?: NodeJS.Timeout;
}

interface Subscriber {
  /** Only events after this revision (a watch may start in the future). */
  after: Revision;
  prefix: string;
  end: string;
  queue: EventQueue<StoreEvent>;
  progress: boolean;
  /** Revision of the last row of its range pushed to it (or its start): every change of its range is at or before. */
  last: Revision;
}

function toKv(row: LogRow): KeyValue {
  const kv: KeyValue = {
    key: row.name,
    value: row.value ?? new Uint8Array(0),
    createRevision: row.create_revision,
    modRevision: row.id,
  };
  if (row.lease > 0n) kv.leaseTtlSeconds = Number(row.lease);
  return kv;
}

function prevKvOf(row: LogRow): KeyValue {
  return {
    key: row.name,
    value: row.old_value ?? new Uint8Array(0),
    createRevision: row.create_revision,
    modRevision: row.prev_revision,
  };
}

function toEvent(row: LogRow): StoreEvent {
  if (row.deleted === 1n) return { type: 'delete', key: row.name, prevKv: prevKvOf(row), revision: row.id };
  if (row.created === 1n) return { type: 'put', kv: toKv(row), revision: row.id };
  return { type: 'put', kv: toKv(row), prevKv: prevKvOf(row), revision: row.id };
}

function toError(e: WriteError): StorageError {
  if (e.code === 'Timeout') return timeout(e.message);
  return new StorageError(e.code as StorageErrorCode, e.message, {
    key: e.key,
    current: e.current ? toKv(e.current) : undefined,
    compactedRevision: e.compactedRevision,
    currentRevision: e.currentRevision,
  });
}

/** The embedded SQLite `Store`. Create with `SqliteStore.open`. */
export class SqliteStore implements Store {
  private readonly pending: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private batchId = 0;
  private readonly subscribers = new Set<Subscriber>();
  /** `freshness` calls waiting for the rows up to their revision to be dispatched. */
  private readonly dispatchWaiters = new Set<{ revision: Revision; done: (e?: StorageError) => void }>();
  /** Revision of the last committed row handed to subscribers; replays read up to here (invariant: no gap). */
  private dispatched: Revision;
  private closed = false;
  private broken: StorageError | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly stmts: Record<keyof typeof READ_SQL, Database.Statement>;
  private exited: Promise<void>;
  private expiring = false;

  private constructor(
    /** The database file. */
    readonly path: string,
    private readonly worker: Worker,
    private readonly readDb: Database.Database,
    private readonly lockDb: Database.Database,
    revision: Revision,
    private readonly options: Required<SqliteStoreOptions>,
  ) {
    this.dispatched = revision;
    this.exited = new Promise((res) => worker.once('exit', () => res()));
    this.stmts = Object.fromEntries(
      Object.entries(READ_SQL).map(([name, sql]) => [name, readDb.prepare(sql)]),
    ) as Record<keyof typeof READ_SQL, Database.Statement>;
    worker.on('message', (m: WriterMessage) => this.onMessage(m));
    worker.on('error', (e) => this.breakDown(unreachable(`sqlite writer failed: ${e.message}`, e)));
    worker.on('exit', (code) => {
      if (!this.closed) this.breakDown(unreachable(`sqlite writer exited with code ${code}`));
    });
    const progress = setInterval(() => this.sendProgress(), this.options.progressIntervalMs);
    const expiry = setInterval(() => {
      // One expiry pass at a time: while the writer cannot write, passes would only queue up to time out.
      if (this.closed || this.broken || this.expiring) return;
      this.expiring = true;
      this.enqueue({ op: 'expire', now: Date.now() })
        .catch(() => undefined)
        .finally(() => (this.expiring = false));
    }, this.options.expiryIntervalMs);
    progress.unref();
    expiry.unref();
    this.timers.push(progress, expiry);
  }

  /**
   * Opens (creating when missing, with its directory) the store at `path`. Throws a StorageError('Unreachable')
   * naming the file when it is locked by another owner or cannot be opened.
   */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    if (!isAbsolute(path)) throw new TypeError(`sqlite store path must be absolute: ${path}`);
    // The store holds every object, Secrets included: owner-only directory and files. SQLite gives the -wal and
    // -shm files the database file's permissions, so creating the (empty, valid) database file first covers them.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    for (const f of [path, `${path}.lock`]) {
      if (!existsSync(f)) closeSync(openSync(f, 'a', 0o600));
    }
    const lockDb = acquireLock(path);
    let worker: Worker | undefined;
    try {
      worker = startWriter({ path, sqliteModule: require.resolve('better-sqlite3'), schema: SCHEMA_SQL });
      const w = worker;
      const revision = await new Promise<Revision>((res, rej) => {
        const onError = (e: Error): void => {
          const code = (e as { code?: unknown }).code;
          rej(unreachable(`cannot open ${path}: ${e.message ?? ''}${code ? ` (${String(code)})` : ''}`, e));
        };
        w.once('error', onError);
        w.once('exit', (code) => rej(unreachable(`cannot open ${path}: writer exited with code ${code}`)));
        w.once('message', (m: WriterMessage) => {
          w.off('error', onError);
          if (m.type === 'ready') res(m.revision);
          else
            rej(unreachable(`cannot open ${path}: ${m.type === 'fatal' ? m.message : `unexpected message ${m.type}`}`));
        });
      });
      w.removeAllListeners('exit');
      const readDb = new Database(path, { readonly: true, fileMustExist: true });
      readDb.defaultSafeIntegers(true);
      return new SqliteStore(path, w, readDb, lockDb, revision, {
        progressIntervalMs: options.progressIntervalMs ?? 5000,
        expiryIntervalMs: options.expiryIntervalMs ?? 1000,
        maxBatchOps: options.maxBatchOps ?? 1000,
        writeTimeoutMs: options.writeTimeoutMs ?? 60000,
      });
    } catch (e) {
      await worker?.terminate();
      lockDb.close();
      throw e;
    }
  }

  // ---- writes: queued, group-committed by the worker ----

  /**
   * Queues `op` for the writer with a deadline `timeoutMs` from now. At the deadline the caller gets a Timeout: an op
   * still queued here is dropped (certainly not applied); one in the batch the writer is running may still commit,
   * and its rows are then dispatched to watches like any other.
   */
  private enqueue(op: WriteOp, timeoutMs = this.options.writeTimeoutMs): Promise<LogRow[]> {
    if (this.broken) return Promise.reject(this.broken);
    if (this.closed) return Promise.reject(unreachable('store is closed'));
    return new Promise((resolve, reject) => {
      const p: Pending = {
        op,
        deadline: Date.now() + timeoutMs,
        resolve: (rows) => {
          clearTimeout(p.timer);
          resolve(rows);
        },
        reject: (e) => {
          clearTimeout(p.timer);
          reject(e);
        },
      };
      p.timer = setTimeout(() => this.expire(p, timeoutMs), timeoutMs);
      this.pending.push(p);
      this.flush();
    });
  }

  /** The deadline of `p` passed before the writer answered it. */
  private expire(p: Pending, timeoutMs: number): void {
    const queued = this.pending.indexOf(p);
    const why = `the SQLite store did not answer within ${timeoutMs}ms (the database is locked by another process, or the disk or the writer does not answer)`;
    if (queued >= 0) {
      this.pending.splice(queued, 1);
      p.reject(timeout(`${why}; the write was not applied`));
    } else {
      p.reject(timeout(`${why}; the write may still be applied: read the object to learn its state`));
    }
  }

  private flush(): void {
    if (this.inFlight || this.pending.length === 0 || this.broken) return;
    // A batch ends at maxBatchOps ops or MAX_BATCH_BYTES of values, whichever comes first (at least one op).
    let n = 0;
    let bytes = 0;
    while (n < this.pending.length && n < this.options.maxBatchOps) {
      const op = this.pending[n]!.op;
      const size = 'value' in op ? op.value.byteLength : 0;
      if (n > 0 && bytes + size > MAX_BATCH_BYTES) break;
      bytes += size;
      n++;
    }
    const batch = this.pending.splice(0, n);
    this.inFlight = batch;
    this.worker.postMessage({
      type: 'batch',
      id: ++this.batchId,
      ops: batch.map((p) => ownValue(p.op)),
      deadlines: batch.map((p) => p.deadline),
    } satisfies WriterRequest);
  }

  private onMessage(m: WriterMessage): void {
    if (m.type !== 'result') {
      if (m.type === 'fatal') this.breakDown(unreachable(m.message));
      return;
    }
    const batch = this.inFlight ?? [];
    this.inFlight = undefined;
    for (const r of m.results) if (r.ok) for (const row of r.rows) this.dispatch(row);
    // The writers are answered after the watches had their events: each hop of an event to a client watch (store
    // watch, watch cache, handler) is a promise reaction, and an answer given now would interleave the writer's own
    // reactions (its response's encoding and write) with them, so a watcher waited for the writer's response to be
    // sent (0.5-1 ms of the fan-out's p10 at one writer). setImmediate runs once those reactions are done, before
    // any timer (a write's deadline cannot fire in between). It also means a writer is answered only once the
    // event loop turns: code that loops on promises alone (lists answered from memory, one after another, with no
    // I/O between them) keeps the writers waiting for as long as it loops.
    setImmediate(() => this.answer(batch, m.results));
    for (const w of this.dispatchWaiters) if (w.revision <= this.dispatched) w.done();
    this.flush();
  }

  private answer(batch: Pending[], results: WriteResult[]): void {
    results.forEach((r, i) => {
      const p = batch[i]!;
      if (r.ok) p.resolve(r.rows);
      else p.reject(toError(r.error));
    });
  }

  private dispatch(row: LogRow): void {
    this.dispatched = row.id;
    if (this.subscribers.size === 0) return;
    const ev = toEvent(row);
    for (const s of this.subscribers) {
      if (row.id > s.after && row.name >= s.prefix && row.name < s.end) {
        s.queue.push(ev);
        s.last = row.id;
      }
    }
  }

  /** Sends every progress-enabled watch its progress at once (after the events already dispatched to it). */
  requestProgress(): void {
    if (!this.closed && !this.broken) this.sendProgress();
  }

  private sendProgress(): void {
    for (const s of this.subscribers) {
      if (s.progress && this.dispatched >= s.after) s.queue.push({ type: 'progress', revision: this.dispatched });
    }
  }

  private breakDown(err: StorageError): void {
    if (this.broken) return;
    this.broken = err;
    const all = [...(this.inFlight ?? []), ...this.pending.splice(0)];
    this.inFlight = undefined;
    for (const p of all) p.reject(err);
    for (const s of this.subscribers) s.queue.fail(err);
    this.subscribers.clear();
    for (const w of this.dispatchWaiters) w.done(err);
  }

  /** See `Store.create`. */
  async create(key: string, value: Uint8Array, o: WriteOptions = {}): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    checkTtl(o.ttlSeconds);
    const rows = await this.enqueue({ op: 'create', key, value, ttl: o.ttlSeconds });
    return toKv(rows[0]!);
  }

  /** See `Store.update`. */
  async update(key: string, value: Uint8Array, expectModRevision: Revision, o: WriteOptions = {}): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    checkRevision(expectModRevision, 'expectModRevision');
    checkTtl(o.ttlSeconds);
    const rows = await this.enqueue({ op: 'update', key, value, expect: expectModRevision, ttl: o.ttlSeconds });
    return toKv(rows[0]!);
  }

  /** See `Store.delete`. */
  async delete(key: string, expectModRevision?: Revision): Promise<DeletedKeyValue> {
    checkKey(key);
    if (expectModRevision !== undefined) checkRevision(expectModRevision, 'expectModRevision');
    const rows = await this.enqueue({ op: 'delete', key, expect: expectModRevision });
    const row = rows[0]!;
    return {
      ...prevKvOf(row),
      deleteRevision: row.id,
      ...(row.lease > 0n ? { leaseTtlSeconds: Number(row.lease) } : {}),
    };
  }

  /** See `Store.compact`. */
  async compact(revision: Revision): Promise<void> {
    checkRevision(revision);
    await this.enqueue({ op: 'compact', revision });
  }

  // ---- reads: read-only connection on this thread ----

  private open(): void {
    if (this.broken) throw this.broken;
    if (this.closed) throw unreachable('store is closed');
  }

  private revisionNow(): Revision {
    return ((this.stmts.revision.get() as { seq: bigint } | undefined)?.seq ?? 0n) as bigint;
  }

  private compactRevisionNow(): Revision {
    return ((this.stmts.compactRevision.get() as { value: bigint } | undefined)?.value ?? 0n) as bigint;
  }

  /** Checks a read revision against the snapshot; call inside a read transaction. */
  private checkAt(at: Revision, key?: string): void {
    const cr = this.compactRevisionNow();
    if (at < cr) throw compacted(at, cr, key);
    const rev = this.revisionNow();
    if (at > rev) throw revisionTooLarge(at, rev);
  }

  /** See `Store.get`. */
  async get(key: string, o: { at?: Revision } = {}): Promise<KeyValue | undefined> {
    checkKey(key);
    this.open();
    if (o.at === undefined || o.at === 0n) {
      const row = this.stmts.getCurrent.get(key) as LogRow | undefined;
      return row ? toKv(row) : undefined;
    }
    checkRevision(o.at, 'at');
    const at = o.at;
    return this.readDb.transaction(() => {
      this.checkAt(at, key);
      const row = this.stmts.getAt.get(key, at) as LogRow | undefined;
      return row && row.deleted === 0n ? toKv(row) : undefined;
    })();
  }

  /** See `Store.list`. */
  async list(prefix: string, o: StoreListOptions = {}): Promise<ListResult> {
    if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
    checkLimit(o.limit);
    if (o.at !== undefined) checkRevision(o.at, 'at');
    const start = o.startKey ?? prefix;
    if (o.startKey !== undefined && !o.startKey.startsWith(prefix)) {
      throw new TypeError(`startKey ${o.startKey} is outside prefix ${prefix}`);
    }
    const end = prefixEnd(prefix) ?? KEY_MAX;
    const limit = o.limit === undefined ? -1 : o.limit + 1;
    this.open();
    return this.readDb.transaction((): ListResult => {
      const rev = this.revisionNow();
      let rows: LogRow[];
      let count: number;
      if (o.at === undefined || o.at === 0n || o.at === rev) {
        rows = this.stmts.listCurrent.all(start, end, limit) as LogRow[];
        count = Number((this.stmts.countCurrent.get(start, end) as { n: bigint }).n);
      } else {
        this.checkAt(o.at);
        rows = this.stmts.listAt.all(start, end, o.at, limit) as LogRow[];
        count = Number((this.stmts.countAt.get(start, end, o.at) as { n: bigint }).n);
      }
      const more = o.limit !== undefined && rows.length > o.limit;
      if (more) rows.pop();
      return { kvs: rows.map(toKv), revision: o.at === undefined || o.at === 0n ? rev : o.at, more, count };
    })();
  }

  /** See `Store.count`. */
  async count(prefix: string): Promise<number> {
    this.open();
    return Number((this.stmts.countCurrent.get(prefix, prefixEnd(prefix) ?? KEY_MAX) as { n: bigint }).n);
  }

  /** See `Store.currentRevision`. */
  async currentRevision(): Promise<Revision> {
    this.open();
    return this.revisionNow();
  }

  /**
   * See `Store.freshness`, answered without reading a value: the revision committed now (a write acknowledged, or
   * seen by any read, before the call is at or below it), and, once every row up to it has been handed to the
   * watches, the last change under `prefix` as the watches of the prefix saw it (the smallest `last` of those whose
   * range covers it: each is at or after the prefix's last change, and the watch cache's own one is reached by its
   * events). Without such a watch, the log's index answers.
   */
  async freshness(prefix: string, after: Revision): Promise<PrefixFreshness> {
    if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
    checkRevision(after, 'after');
    this.open();
    const revision = this.revisionNow();
    if (this.dispatched < revision) await this.dispatchedUpTo(revision);
    let lastChange: Revision | undefined;
    for (const s of this.subscribers) {
      if (prefix.startsWith(s.prefix) && (lastChange === undefined || s.last < lastChange)) lastChange = s.last;
    }
    if (lastChange === undefined) {
      const row = this.stmts.lastChange.get(prefix, prefixEnd(prefix) ?? KEY_MAX) as { id: bigint | null };
      const cr = this.compactRevisionNow();
      lastChange = row.id !== null && row.id > cr ? row.id : cr;
    }
    return { revision, lastChange };
  }

  /** Resolves once the rows up to `revision` (committed) have been dispatched to watches. */
  private dispatchedUpTo(revision: Revision): Promise<void> {
    return new Promise((resolve, reject) => {
      const w = {
        revision,
        done: (e?: StorageError): void => {
          clearTimeout(timer);
          this.dispatchWaiters.delete(w);
          if (e) reject(e);
          else resolve();
        },
      };
      // The writer answers every committed batch; this bounds a wait on a writer that died between commit and answer.
      const timer = setTimeout(
        () => w.done(timeout(`the SQLite writer did not report revision ${revision} within 10s`)),
        10_000,
      );
      this.dispatchWaiters.add(w);
    });
  }

  /** See `Store.dbSize`: page_count × page_size of the main database file. */
  async dbSize(): Promise<number> {
    this.open();
    const pages = this.stmts.pageCount.get() as { page_count: bigint };
    const size = this.stmts.pageSize.get() as { page_size: bigint };
    return Number(pages.page_count * size.page_size);
  }

  /**
   * See `Store.check`: the writer must take the database's write lock and answer an empty op within `timeoutMs`
   * (so the check fails while another process holds the lock, or the disk or the writer hangs).
   */
  async check(timeoutMs: number): Promise<void> {
    this.open();
    await this.enqueue({ op: 'expire', now: 0 }, timeoutMs);
  }

  /** See `Store.watch`. Events come from the write path; older ones are replayed from the log. */
  watch(
    prefix: string,
    afterRevision: Revision,
    signal: AbortSignal,
    o: StoreWatchOptions = {},
  ): AsyncIterable<StoreEvent> {
    if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
    checkRevision(afterRevision, 'afterRevision');
    const queue = new EventQueue<StoreEvent>();
    const sub: Subscriber = {
      after: afterRevision,
      prefix,
      end: prefixEnd(prefix) ?? KEY_MAX,
      queue,
      progress: o.progressNotify === true,
      last: afterRevision,
    };
    // Subscribe and replay in one synchronous step: rows up to `dispatched` come from the log, later ones live.
    try {
      this.open();
      const upTo = this.dispatched;
      const replay = this.readDb.transaction(() => {
        const cr = this.compactRevisionNow();
        if (afterRevision + 1n < cr) throw compacted(afterRevision, cr, prefix);
        return this.stmts.replay.all(afterRevision, upTo, sub.prefix, sub.end) as LogRow[];
      })();
      for (const row of replay) queue.push(toEvent(row));
      if (replay.length > 0) sub.last = replay[replay.length - 1]!.id;
      this.subscribers.add(sub);
    } catch (e) {
      queue.fail(e);
    }
    const stop = (): void => {
      this.subscribers.delete(sub);
      queue.end();
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    return {
      [Symbol.asyncIterator]: () => {
        const it = queue[Symbol.asyncIterator]();
        return {
          next: () => it.next(),
          return: async (v?: unknown) => {
            stop();
            signal.removeEventListener('abort', stop);
            return { done: true, value: v as undefined };
          },
        };
      },
    };
  }

  /** See `Store.close`: waits for queued writes, stops the writer, releases the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    while ((this.inFlight || this.pending.length > 0) && !this.broken) {
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const s of this.subscribers) s.queue.end();
    this.subscribers.clear();
    for (const w of this.dispatchWaiters) w.done(unreachable('store is closed'));
    if (!this.broken) this.worker.postMessage({ type: 'close' });
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 5000).unref())]);
    await this.worker.terminate();
    this.readDb.close();
    this.lockDb.close();
  }
}

/**
 * Starts the writer thread on the compiled `writer.js` beside this file. From TypeScript sources (Jest, benchmarks
 * run from source) the worker transpiles `writer.ts` itself with the hook of `testing/ts-register.js`, so that
 * whatever instruments this process (a coverage run) does not leak into the worker's code.
 */
function startWriter(workerData: { path: string; sqliteModule: string; schema: string }): Worker {
  const compiled = join(__dirname, 'writer.js');
  const source =
    __filename.endsWith('.js') && existsSync(compiled)
      ? `require(${JSON.stringify(compiled)}).writerMain();`
      : `require(${JSON.stringify(join(__dirname, '..', 'testing', 'ts-register.js'))});` +
        `require(${JSON.stringify(join(__dirname, 'writer.ts'))}).writerMain();`;
  return new Worker(source, { eval: true, workerData });
}

/** Takes the exclusive owner lock of `path` (see the module comment). */
function acquireLock(path: string): Database.Database {
  const lockPath = `${path}.lock`;
  let db: Database.Database;
  try {
    db = new Database(lockPath, { timeout: 0 });
  } catch (e) {
    throw unreachable(`cannot open the lock file ${lockPath}: ${e instanceof Error ? e.message : String(e)}`, e);
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec(`CREATE TABLE IF NOT EXISTS owner (pid INTEGER)`);
    // A write takes the EXCLUSIVE lock; with locking_mode=EXCLUSIVE it is kept until the connection closes.
    db.exec(`BEGIN EXCLUSIVE; DELETE FROM owner; COMMIT`);
    db.prepare(`INSERT INTO owner (pid) VALUES (?)`).run(process.pid);
    return db;
  } catch (e) {
    db.close();
    const message = e instanceof Error ? e.message : String(e);
    throw unreachable(
      `${path} is in use by another API server process (lock ${lockPath}: ${message}); only one process may own an embedded store`,
      e,
    );
  }
}
