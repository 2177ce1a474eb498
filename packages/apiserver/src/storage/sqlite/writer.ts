/**
 * The single writer of the embedded store, run in a worker thread (better-sqlite3 is synchronous: a write waits for
 * fsync, which must not block the API server's event loop).
 *
 * `writerMain` runs in the worker (see `startWriter` in sqlite-store.ts). It keeps to plain functions and objects
 * and imports nothing at module level except types, so that loading this module in the worker costs nothing.
 *
 * Protocol (main → worker): `{ type: 'batch', id, ops, deadlines }`, then `{ type: 'close' }`. The worker runs all
 * ops of a batch in ONE transaction (each op in its own savepoint, so a failed compare-and-swap does not undo the
 * others), commits (one fsync with synchronous=FULL in WAL mode) and answers `{ type: 'result', id, results }` with,
 * per op, either the committed log rows or an error `{ code, message, key, current?, compactedRevision?,
 * currentRevision? }`. A commit failure fails every op of the batch. The main thread sends the next batch only after
 * the answer (group commit).
 *
 * Deadlines (`deadlines[i]`, epoch ms, one per op): the transaction starts with `BEGIN IMMEDIATE`, waiting for the
 * database's write lock (held by another process: a backup tool, an `sqlite3` shell) at most until the latest
 * deadline of the batch. An op whose deadline has passed before the write lock is ours is dropped with a `Timeout`
 * error and never applied: a request the API server already answered 504 cannot land late.
 */

import type * as workerThreads from 'node:worker_threads';

import type BetterSqlite3 from 'better-sqlite3';

/** A row of the log as the worker returns it (integers as bigint). */
export interface LogRow {
  id: bigint;
  name: string;
  created: bigint;
  deleted: bigint;
  create_revision: bigint;
  prev_revision: bigint;
  lease: bigint;
  value: Uint8Array | null;
  old_value: Uint8Array | null;
}

/** One write request. Revisions are bigints (structured clone carries them). */
export type WriteOp =
  | { op: 'create'; key: string; value: Uint8Array; ttl?: number }
  | { op: 'update'; key: string; value: Uint8Array; expect: bigint; ttl?: number }
  | { op: 'delete'; key: string; expect?: bigint }
  | { op: 'compact'; revision: bigint }
  | { op: 'expire'; now: number };

/** The error of one op, as plain data. */
export interface WriteError {
  code: string;
  message: string;
  key?: string;
  current?: LogRow;
  compactedRevision?: bigint;
  currentRevision?: bigint;
}

/** The outcome of one op: the rows it appended (in revision order), or its error. */
export type WriteResult = { ok: true; rows: LogRow[] } | { ok: false; error: WriteError };

/** Messages to the worker. */
export type WriterRequest = { type: 'batch'; id: number; ops: WriteOp[]; deadlines: number[] } | { type: 'close' };

/** Messages from the worker. */
export type WriterMessage =
  | { type: 'ready'; revision: bigint }
  | { type: 'result'; id: number; results: WriteResult[] }
  | { type: 'fatal'; message: string };

/** Data passed to the worker at start. */
export interface WriterData {
  path: string;
  sqliteModule: string;
}

/** The schema: the log (kine's columns plus expires_at), the index of live keys, and metadata (compact revision). */
export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS kine (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  lease INTEGER NOT NULL,
  value BLOB,
  old_value BLOB,
  expires_at INTEGER
);
CREATE INDEX IF NOT EXISTS kine_name_id ON kine (name, id);
CREATE UNIQUE INDEX IF NOT EXISTS kine_name_prev_revision ON kine (name, prev_revision);
CREATE INDEX IF NOT EXISTS kine_expires_at ON kine (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS current (name TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
`;

/* eslint-disable @typescript-eslint/no-require-imports */
/** The worker's body (runs only inside the writer thread). */
export function writerMain(): void {
  const { parentPort, workerData } = require('node:worker_threads') as typeof workerThreads;
  const data = workerData as WriterData & { schema: string };
  const Database = require(data.sqliteModule) as typeof BetterSqlite3;
  const port = parentPort!;
  try {
    runWriter(port, data, Database);
  } catch (e) {
    // Errors thrown out of a worker lose their message in transit (better-sqlite3's SqliteError); say it ourselves.
    const code =
      typeof e === 'object' && e !== null && 'code' in e ? ` (${String((e as { code: unknown }).code)})` : '';
    port.postMessage({
      type: 'fatal',
      message: `${e instanceof Error ? e.message : String(e)}${code}`,
    } satisfies WriterMessage);
    port.close();
  }
}

function runWriter(
  port: workerThreads.MessagePort,
  data: WriterData & { schema: string },
  Database: typeof BetterSqlite3,
): void {
  const db = new Database(data.path);
  db.defaultSafeIntegers(true);
  const fresh = (db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master`).get() as { n: bigint }).n === 0n;
  // auto_vacuum must be chosen before the first table exists; an older file is converted once with VACUUM.
  db.pragma('auto_vacuum = INCREMENTAL');
  if (!fresh && (db.pragma('auto_vacuum', { simple: true }) as bigint) !== 2n) db.exec('VACUUM');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec(data.schema);
  // From here on each batch sets how long to wait for the write lock (its deadline); nothing else waits for it.
  db.pragma('busy_timeout = 0');

  const stmts = {
    current: db.prepare(`SELECT k.* FROM current c JOIN kine k ON k.id = c.id WHERE c.name = ?`),
    latest: db.prepare(`SELECT id FROM kine WHERE name = ? ORDER BY id DESC LIMIT 1`),
    insert: db.prepare(
      `INSERT INTO kine (id, name, created, deleted, create_revision, prev_revision, lease, value, old_value, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    setCurrent: db.prepare(`INSERT OR REPLACE INTO current (name, id) VALUES (?, ?)`),
    delCurrent: db.prepare(`DELETE FROM current WHERE name = ?`),
    revision: db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'kine'`),
    getMeta: db.prepare(`SELECT value FROM meta WHERE key = ?`),
    setMeta: db.prepare(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`),
    compact: db.prepare(
      `DELETE FROM kine WHERE id < @r AND (deleted = 1 OR id < (
         SELECT MAX(k2.id) FROM kine k2 WHERE k2.name = kine.name AND k2.id <= @r))`,
    ),
    expired: db.prepare(
      `SELECT k.name, k.id FROM kine k JOIN current c ON c.id = k.id
       WHERE k.expires_at IS NOT NULL AND k.expires_at <= ? ORDER BY k.id`,
    ),
  };
  const readRevision = (): bigint => ((stmts.revision.get() as { seq: bigint } | undefined)?.seq ?? 0n) as bigint;
  let revision = readRevision();

  // A plain object, not a class: this function must not depend on helpers a compiler might hoist out of it.
  const OP_ERROR = Symbol('op-error');
  type OpError = { [OP_ERROR]: true; error: WriteError };
  const fail = (error: WriteError): never => {
    throw { [OP_ERROR]: true, error } satisfies OpError;
  };
  const isOpError = (e: unknown): e is OpError => typeof e === 'object' && e !== null && OP_ERROR in e;
  const append = (
    name: string,
    created: boolean,
    deleted: boolean,
    createRevision: bigint | null,
    prevRevision: bigint,
    ttl: number,
    value: Uint8Array | null,
    oldValue: Uint8Array | null,
  ): LogRow => {
    const id = revision + 1n;
    const expiresAt = ttl > 0 ? Date.now() + ttl * 1000 : null;
    const row: LogRow = {
      id,
      name,
      created: created ? 1n : 0n,
      deleted: deleted ? 1n : 0n,
      create_revision: createRevision ?? id,
      prev_revision: prevRevision,
      lease: BigInt(ttl),
      value,
      old_value: oldValue,
    };
    stmts.insert.run(
      id,
      name,
      row.created,
      row.deleted,
      row.create_revision,
      prevRevision,
      row.lease,
      value,
      oldValue,
      expiresAt,
    );
    if (deleted) stmts.delCurrent.run(name);
    else stmts.setCurrent.run(name, id);
    revision = id;
    return row;
  };
  const deleteKey = (key: string, expect: bigint | undefined): LogRow => {
    const cur = stmts.current.get(key) as LogRow | undefined;
    if (!cur) return fail({ code: 'KeyNotFound', message: `key not found: ${key}`, key });
    if (expect !== undefined && cur.id !== expect) {
      return fail({ code: 'Conflict', message: `compare failed for ${key}`, key, current: cur });
    }
    return append(key, false, true, cur.create_revision, cur.id, Number(cur.lease), null, cur.value);
  };
  const runOp = (op: WriteOp): LogRow[] => {
    switch (op.op) {
      case 'create': {
        if (stmts.current.get(op.key))
          return fail({ code: 'KeyExists', message: `key exists: ${op.key}`, key: op.key });
        const prev = stmts.latest.get(op.key) as { id: bigint } | undefined;
        return [append(op.key, true, false, null, prev?.id ?? 0n, op.ttl ?? 0, op.value, null)];
      }
      case 'update': {
        const cur = stmts.current.get(op.key) as LogRow | undefined;
        if (!cur) return fail({ code: 'KeyNotFound', message: `key not found: ${op.key}`, key: op.key });
        if (cur.id !== op.expect) {
          return fail({ code: 'Conflict', message: `compare failed for ${op.key}`, key: op.key, current: cur });
        }
        return [append(op.key, false, false, cur.create_revision, cur.id, op.ttl ?? 0, op.value, cur.value)];
      }
      case 'delete':
        return [deleteKey(op.key, op.expect)];
      case 'compact': {
        const compactedRevision = ((stmts.getMeta.get('compact_revision') as { value: bigint } | undefined)?.value ??
          0n) as bigint;
        if (op.revision > revision) {
          return fail({
            code: 'RevisionTooLarge',
            message: `compact revision ${op.revision} is newer than the current revision ${revision}`,
            currentRevision: revision,
          });
        }
        if (op.revision <= compactedRevision) return [];
        stmts.compact.run({ r: op.revision });
        stmts.setMeta.run('compact_revision', op.revision);
        return [];
      }
      case 'expire': {
        const rows = stmts.expired.all(op.now) as { name: string; id: bigint }[];
        return rows.map((r) => deleteKey(r.name, r.id));
      }
    }
  };
  const runOpTx = db.transaction(runOp);
  const tx = { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK') };
  const expired: WriteResult = {
    ok: false,
    error: {
      code: 'Timeout',
      message:
        'the SQLite store could not start the write before its deadline (the database is locked by another process, ' +
        'or the disk does not answer); the write was not applied',
    },
  };
  const failAll = (results: WriteResult[], live: number[], error: WriteError): void => {
    for (const i of live) results[i] = { ok: false, error };
  };
  /** Runs the ops whose deadline has not passed in one transaction; the others are dropped (`expired`). */
  const runBatch = (ops: WriteOp[], deadlines: number[]): WriteResult[] => {
    const results: WriteResult[] = ops.map(() => expired);
    let live = ops.map((_, i) => i).filter((i) => deadlines[i]! > Date.now());
    if (live.length === 0) return results;
    const wait = Math.max(...live.map((i) => deadlines[i]!)) - Date.now();
    db.pragma(`busy_timeout = ${Math.max(0, Math.ceil(wait))}`);
    try {
      tx.begin.run();
    } catch (e) {
      const busy = (e as { code?: unknown }).code === 'SQLITE_BUSY';
      failAll(results, live, {
        code: busy ? 'Timeout' : 'Unreachable',
        message: busy
          ? `the SQLite database stayed locked by another process for ${Math.ceil(wait)}ms; the write was not applied`
          : `sqlite write failed to start: ${e instanceof Error ? e.message : String(e)}; the write was not applied`,
      });
      return results;
    }
    // Waiting for the lock may have outlived some deadlines: those ops are dropped too.
    live = live.filter((i) => deadlines[i]! > Date.now());
    const before = revision;
    try {
      for (const i of live) {
        const opBefore = revision;
        try {
          results[i] = { ok: true, rows: runOpTx(ops[i]!) };
        } catch (e) {
          revision = opBefore; // the savepoint rolled back whatever this op appended
          if (isOpError(e)) results[i] = { ok: false, error: e.error };
          else {
            const message = e instanceof Error ? e.message : String(e);
            results[i] = { ok: false, error: { code: 'Unreachable', message: `sqlite write failed: ${message}` } };
          }
        }
      }
      tx.commit.run();
    } catch (e) {
      if (db.inTransaction) tx.rollback.run();
      revision = before;
      failAll(results, live, {
        code: 'Unreachable',
        message: `sqlite commit failed: ${e instanceof Error ? e.message : String(e)}`,
      });
    }
    return results;
  };

  port.on('message', (msg: WriterRequest) => {
    if (msg.type === 'close') {
      db.close();
      port.close();
      return;
    }
    let results: WriteResult[];
    try {
      results = runBatch(msg.ops, msg.deadlines);
    } catch (e) {
      revision = readRevision();
      const message = `sqlite commit failed: ${e instanceof Error ? e.message : String(e)}`;
      results = msg.ops.map(() => ({ ok: false, error: { code: 'Unreachable', message } }));
    }
    if (msg.ops.some((o) => o.op === 'compact')) {
      try {
        db.pragma('busy_timeout = 0');
        db.pragma('incremental_vacuum');
      } catch {
        // Vacuuming is an optimisation; the next compaction tries again.
      }
    }
    port.postMessage({ type: 'result', id: msg.id, results } satisfies WriterMessage);
  });
  port.postMessage({ type: 'ready', revision } satisfies WriterMessage);
}
