/**
 * The etcd v3 `Store`, on the npm `etcd3` client (model: apiserver `pkg/storage/etcd3/store.go`).
 *
 * - Several endpoints: the client's connection pool spreads calls over them; a call failing with a recoverable gRPC
 *   error is retried on another member (the client's global retry policy), and a failing member is skipped for a few
 *   seconds (its circuit breaker). Every unary call has a deadline, so an unreachable cluster gives Timeout or
 *   Unreachable, never a hang.
 * - Mutual TLS from CA/cert/key files.
 * - Reads use the raw KV client (`client.kv.range`) for revision, limit and count; writes are transactions comparing
 *   `mod_revision` (compare-and-swap) or `create_revision = 0` (create).
 * - Watches use the raw gRPC watch stream (`client.watchClient.watch()`), not the client's `Watcher`, because the
 *   latter (a) resumes after a reconnection from the response header revision + 1, which can skip events when etcd
 *   sends a catch-up batch whose header revision is ahead of its events, and (b) turns a compaction cancel into a
 *   generic error without the compact revision. Ours resumes from the last delivered event revision + 1, drops
 *   duplicates, and reports Compacted with the revision.
 * - Progress: etcd sends progress notifications to synced watchers every
 *   `--experimental-watch-progress-notify-interval` (etcd's default is 10 minutes; run etcd with e.g. 5s to get
 *   timely bookmarks). Client-requested progress (`progress_request`) is not used: etcd 3.4 answers it with the store
 *   revision even while a watcher is still catching up, which would claim events were delivered that were not.
 * - TTLs use leases, shared between writes the way Kubernetes does (`--lease-reuse-duration-seconds`).
 */
import { readFileSync } from 'node:fs';

import { Etcd3, type IKeyValue, type IResponseHeader, type IWatchResponse } from 'etcd3';

import { checkKey, checkLimit, checkRevision, checkTtl, checkValue } from '../checks';
import {
  compacted,
  conflict,
  isStorageError,
  keyExists,
  keyNotFound,
  revisionTooLarge,
  type StorageError,
  timeout,
  unreachable,
  tooLarge,
} from '../errors';
import { EventQueue } from '../event-queue';
import {
  MAX_REQUEST_BYTES,
  parseRevision,
  prefixEnd,
  type DeletedKeyValue,
  type KeyValue,
  type StoreListOptions,
  type ListResult,
  type Revision,
  type Store,
  type StoreEvent,
  type StoreWatchOptions,
  type WriteOptions,
} from '../interface';

/** Options of `Etcd3Store`. */
export interface Etcd3StoreOptions {
  /** Member client URLs, `http(s)://host:port`. At least one. */
  endpoints: string[];
  /** Mutual TLS: CA bundle to trust, client certificate and key (PEM files). */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  /** Deadline of each unary call, ms. Default 10000. */
  requestTimeoutMs?: number;
  /** Time to establish a connection, ms. Default 5000. */
  dialTimeoutMs?: number;
  /** Seconds a TTL lease may be reused by later writes (`--lease-reuse-duration-seconds`). Default 60. */
  leaseReuseDurationSeconds?: number;
  /** A watch that cannot reconnect for this long fails with Unreachable, ms. Default 60000. */
  watchRetryTimeoutMs?: number;
}

const ALL_KEYS_END = Buffer.from([0]);

/** Maps an error of the etcd3 client to a StorageError (StorageErrors pass through). */
export function mapEtcdError(e: unknown, what: string, key?: string): StorageError {
  if (isStorageError(e)) return e;
  const err = e instanceof Error ? e : new Error(String(e));
  const msg = err.message;
  const name = err.constructor?.name ?? '';
  if (/request is too large|larger than max/.test(msg)) return tooLarge(key ?? '', 0, MAX_REQUEST_BYTES);
  if (name === 'GRPCDeadlineExceededError' || /deadline exceeded|timed out|request timed out/i.test(msg)) {
    return timeout(`${what}: ${msg}`, err);
  }
  return unreachable(`${what}: ${msg}`, err);
}

function toKv(kv: IKeyValue, ttl?: number): KeyValue {
  const out: KeyValue = {
    key: kv.key.toString(),
    value: kv.value,
    createRevision: parseRevision(kv.create_revision),
    modRevision: parseRevision(kv.mod_revision),
  };
  if (ttl !== undefined) out.leaseTtlSeconds = ttl;
  return out;
}

/** The etcd3 `Store`. */
export class Etcd3Store implements Store {
  /** The underlying client (benchmarks compare against it; do not write through it). */
  readonly client: Etcd3;
  private readonly requestTimeoutMs: number;
  private readonly leaseReuseSeconds: number;
  private readonly watchRetryTimeoutMs: number;
  private lease: { id: string; expiresAt: number } | undefined;
  private closed = false;
  private readonly watchAborts = new Set<AbortController>();

  constructor(options: Etcd3StoreOptions) {
    if (!Array.isArray(options.endpoints) || options.endpoints.length === 0) {
      throw new TypeError('etcd3 store needs at least one endpoint');
    }
    for (const ep of options.endpoints) {
      if (!/^https?:\/\/[^/]+$/.test(ep)) throw new TypeError(`etcd endpoint must be http(s)://host:port, got ${ep}`);
    }
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10000;
    this.leaseReuseSeconds = options.leaseReuseDurationSeconds ?? 60;
    this.watchRetryTimeoutMs = options.watchRetryTimeoutMs ?? 60000;
    const tls = options.tls;
    const read = (f: string | undefined, what: string): Buffer | undefined => {
      if (f === undefined || f === '') return undefined;
      try {
        return readFileSync(f);
      } catch (e) {
        throw new TypeError(`cannot read etcd ${what} file ${f}: ${(e as Error).message}`);
      }
    };
    const ca = read(tls?.caFile, 'CA');
    const cert = read(tls?.certFile, 'certificate');
    const key = read(tls?.keyFile, 'key');
    if ((cert === undefined) !== (key === undefined)) {
      throw new TypeError('etcd TLS needs both a certificate file and a key file');
    }
    const secure = options.endpoints.some((e) => e.startsWith('https://'));
    if (secure && options.endpoints.some((e) => e.startsWith('http://'))) {
      throw new TypeError('etcd endpoints must be all http:// or all https://');
    }
    const requestTimeoutMs = this.requestTimeoutMs;
    this.client = new Etcd3({
      hosts: options.endpoints,
      dialTimeout: options.dialTimeoutMs ?? 5000,
      credentials: secure ? { rootCertificate: ca ?? Buffer.alloc(0), privateKey: key, certChain: cert } : undefined,
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + requestTimeoutMs }),
      grpcOptions: { 'grpc.max_receive_message_length': 2 ** 31 - 1 },
    });
  }

  private checkOpen(): void {
    if (this.closed) throw unreachable('store is closed');
  }

  private async call<T>(what: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    this.checkOpen();
    try {
      return await fn();
    } catch (e) {
      throw await this.translate(e, what, key);
    }
  }

  /** Translates range/compact errors that carry store semantics (compacted, future revision). */
  private async translate(e: unknown, what: string, key?: string, at?: Revision): Promise<StorageError> {
    const msg = e instanceof Error ? e.message : '';
    if (/required revision has been compacted/.test(msg) && at !== undefined) {
      return compacted(at, await this.probeCompactRevision(at), key);
    }
    if (/required revision is a future revision/.test(msg)) {
      return revisionTooLarge(at ?? 0n, await this.currentRevision().catch(() => 0n));
    }
    return mapEtcdError(e, what, key);
  }

  /** etcd reports the compact revision only on a watch: start one at `at` and read its cancel response. */
  private async probeCompactRevision(at: Revision): Promise<Revision> {
    try {
      const stream = await this.client.watchClient.watch();
      try {
        return await new Promise<Revision>((resolve) => {
          const timer = setTimeout(() => resolve(0n), this.requestTimeoutMs);
          stream.on('data', (res: IWatchResponse) => {
            // etcd may first confirm the creation, then cancel with the compact revision.
            if (!res.canceled && parseRevision(res.compact_revision) === 0n) return;
            clearTimeout(timer);
            resolve(parseRevision(res.compact_revision));
          });
          stream.on('error', () => resolve(0n));
          stream.write({ create_request: { key: ALL_KEYS_END, start_revision: at.toString() } });
        });
      } finally {
        stream.cancel();
      }
    } catch {
      return 0n;
    }
  }

  private async range(
    what: string,
    key: string,
    req: { range_end?: Buffer; revision?: Revision; limit?: number; count_only?: boolean; key?: string },
  ): Promise<{ header: IResponseHeader; kvs: IKeyValue[]; more: boolean; count: string }> {
    this.checkOpen();
    try {
      return await this.client.kv.range({
        key: Buffer.from(req.key ?? key),
        range_end: req.range_end,
        revision: req.revision === undefined ? undefined : req.revision.toString(),
        limit: req.limit,
        count_only: req.count_only,
      });
    } catch (e) {
      throw await this.translate(e, what, key, req.revision);
    }
  }

  /** A lease for `ttl` seconds, reused while its expiry stays within [now+ttl, now+ttl+reuse] (Kubernetes' rule). */
  private async leaseFor(ttl: number): Promise<string> {
    const now = Date.now();
    const reuse = Math.min(Math.ceil(ttl * 0.05), this.leaseReuseSeconds);
    const l = this.lease;
    if (l && l.expiresAt >= now + ttl * 1000 && l.expiresAt <= now + (ttl + reuse) * 1000) return l.id;
    const res = await this.call('lease grant', undefined, () =>
      this.client.leaseClient.leaseGrant({ TTL: ttl + reuse }),
    );
    this.lease = { id: res.ID, expiresAt: now + (ttl + reuse) * 1000 };
    return res.ID;
  }

  /** See `Store.create`. */
  async create(key: string, value: Uint8Array, o: WriteOptions = {}): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    checkTtl(o.ttlSeconds);
    const lease = o.ttlSeconds === undefined ? undefined : await this.leaseFor(o.ttlSeconds);
    const k = Buffer.from(key);
    const res = await this.call('create', key, () =>
      this.client.kv.txn({
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [
          { request_put: { key: k, value: Buffer.from(value.buffer, value.byteOffset, value.byteLength), lease } },
        ],
        failure: [],
      }),
    );
    if (!res.succeeded) throw keyExists(key);
    const rev = parseRevision(res.header.revision);
    const kv: KeyValue = { key, value, createRevision: rev, modRevision: rev };
    if (o.ttlSeconds !== undefined) kv.leaseTtlSeconds = o.ttlSeconds;
    return kv;
  }

  /** See `Store.update`. */
  async update(key: string, value: Uint8Array, expectModRevision: Revision, o: WriteOptions = {}): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    checkRevision(expectModRevision, 'expectModRevision');
    checkTtl(o.ttlSeconds);
    const lease = o.ttlSeconds === undefined ? undefined : await this.leaseFor(o.ttlSeconds);
    const k = Buffer.from(key);
    const res = await this.call('update', key, () =>
      this.client.kv.txn({
        compare: [
          { key: k, target: 'Mod', result: 'Equal', mod_revision: expectModRevision.toString() },
          { key: k, target: 'Version', result: 'Greater', version: 0 },
        ],
        success: [
          {
            request_put: {
              key: k,
              value: Buffer.from(value.buffer, value.byteOffset, value.byteLength),
              lease,
              prev_kv: true,
            },
          },
        ],
        failure: [{ request_range: { key: k } }],
      }),
    );
    if (!res.succeeded) {
      const cur = res.responses[0]?.response_range.kvs[0];
      if (!cur) throw keyNotFound(key);
      throw conflict(key, expectModRevision, toKv(cur));
    }
    const rev = parseRevision(res.header.revision);
    const prev = res.responses[0]?.response_put.prev_kv;
    const kv: KeyValue = {
      key,
      value,
      createRevision: prev ? parseRevision(prev.create_revision) : rev,
      modRevision: rev,
    };
    if (o.ttlSeconds !== undefined) kv.leaseTtlSeconds = o.ttlSeconds;
    return kv;
  }

  /** See `Store.delete`. */
  async delete(key: string, expectModRevision?: Revision): Promise<DeletedKeyValue> {
    checkKey(key);
    if (expectModRevision !== undefined) checkRevision(expectModRevision, 'expectModRevision');
    const k = Buffer.from(key);
    const res = await this.call('delete', key, () =>
      this.client.kv.txn({
        compare: [
          expectModRevision === undefined
            ? { key: k, target: 'Version', result: 'Greater', version: 0 }
            : { key: k, target: 'Mod', result: 'Equal', mod_revision: expectModRevision.toString() },
        ],
        success: [{ request_delete_range: { key: k, prev_kv: true } }],
        failure: [{ request_range: { key: k } }],
      }),
    );
    if (!res.succeeded) {
      const cur = res.responses[0]?.response_range.kvs[0];
      if (!cur) throw keyNotFound(key);
      throw conflict(key, expectModRevision ?? 0n, toKv(cur));
    }
    const prev = res.responses[0]?.response_delete_range.prev_kvs[0];
    if (!prev) throw keyNotFound(key);
    return { ...toKv(prev), deleteRevision: parseRevision(res.header.revision) };
  }

  /** See `Store.get`. */
  async get(key: string, o: { at?: Revision } = {}): Promise<KeyValue | undefined> {
    checkKey(key);
    if (o.at !== undefined) checkRevision(o.at, 'at');
    const res = await this.range('get', key, { revision: o.at === 0n ? undefined : o.at });
    const kv = res.kvs[0];
    return kv ? toKv(kv) : undefined;
  }

  /** See `Store.list`. */
  async list(prefix: string, o: StoreListOptions = {}): Promise<ListResult> {
    if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
    checkLimit(o.limit);
    if (o.at !== undefined) checkRevision(o.at, 'at');
    if (o.startKey !== undefined && !o.startKey.startsWith(prefix)) {
      throw new TypeError(`startKey ${o.startKey} is outside prefix ${prefix}`);
    }
    const end = prefixEnd(prefix);
    const at = o.at === 0n ? undefined : o.at;
    const start = o.startKey ?? prefix;
    const res = await this.range('list', prefix, {
      key: start === '' ? '\0' : start,
      range_end: end === undefined ? ALL_KEYS_END : Buffer.from(end),
      revision: at,
      limit: o.limit,
    });
    return {
      kvs: res.kvs.map((kv) => toKv(kv)),
      revision: at ?? parseRevision(res.header.revision),
      more: res.more,
      count: Number(res.count),
    };
  }

  /** See `Store.count`. */
  async count(prefix: string): Promise<number> {
    const end = prefixEnd(prefix);
    const res = await this.range('count', prefix, {
      key: prefix === '' ? '\0' : prefix,
      range_end: end === undefined ? ALL_KEYS_END : Buffer.from(end),
      count_only: true,
    });
    return Number(res.count);
  }

  /** See `Store.currentRevision`. */
  async currentRevision(): Promise<Revision> {
    const res = await this.range('current revision', '\0', { count_only: true });
    return parseRevision(res.header.revision);
  }

  /** See `Store.compact`. Compacting at or below the compacted revision is a no-op. */
  async compact(revision: Revision): Promise<void> {
    checkRevision(revision);
    this.checkOpen();
    try {
      await this.client.kv.compact({ revision: revision.toString(), physical: false });
    } catch (e) {
      if (/required revision has been compacted/.test(e instanceof Error ? e.message : '')) return;
      throw await this.translate(e, 'compact', undefined, revision);
    }
  }

  /** See `Store.dbSize`: the database size reported by the member that answers. */
  async dbSize(): Promise<number> {
    const res = await this.call('status', undefined, () => this.client.maintenance.status());
    return Number(res.dbSize);
  }

  /** See `Store.check`: a linearizable read within `timeoutMs`. */
  async check(timeoutMs: number): Promise<void> {
    this.checkOpen();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.client.kv
          .range({ key: Buffer.from('health'), count_only: true }, { deadline: Date.now() + timeoutMs })
          .catch((e: unknown) => {
            throw mapEtcdError(e, 'health check');
          }),
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => rej(timeout(`etcd did not answer within ${timeoutMs}ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** See `Store.watch` and the module comment. */
  watch(
    prefix: string,
    afterRevision: Revision,
    signal: AbortSignal,
    o: StoreWatchOptions = {},
  ): AsyncIterable<StoreEvent> {
    if (typeof prefix !== 'string') throw new TypeError('prefix must be a string');
    checkRevision(afterRevision, 'afterRevision');
    const queue = new EventQueue<StoreEvent>();
    const ac = new AbortController();
    const abort = (): void => ac.abort();
    if (signal.aborted) ac.abort();
    else signal.addEventListener('abort', abort, { once: true });
    this.watchAborts.add(ac);
    ac.signal.addEventListener('abort', () => queue.end(), { once: true });
    void this.runWatch(prefix, afterRevision, ac.signal, o.progressNotify === true, queue).finally(() => {
      this.watchAborts.delete(ac);
      signal.removeEventListener('abort', abort);
    });
    return {
      [Symbol.asyncIterator]: () => {
        const it = queue[Symbol.asyncIterator]();
        return {
          next: () => it.next(),
          return: async (v?: unknown) => {
            ac.abort();
            return { done: true, value: v as undefined };
          },
        };
      },
    };
  }

  private async runWatch(
    prefix: string,
    after: Revision,
    signal: AbortSignal,
    progress: boolean,
    queue: EventQueue<StoreEvent>,
  ): Promise<void> {
    let next = after + 1n; // first revision not yet delivered
    let backoffMs = 50;
    let failingSince: number | undefined;
    const end = prefixEnd(prefix);
    while (!signal.aborted && !queue.isEnded) {
      let outcome: { retry: boolean; error?: unknown };
      try {
        const stream = await this.client.watchClient.watch();
        outcome = await new Promise((resolve) => {
          let watchId: string | undefined;
          const finish = (o: { retry: boolean; error?: unknown }): void => {
            signal.removeEventListener('abort', onAbort);
            (stream as unknown as NodeJS.EventEmitter).removeAllListeners('data');
            stream.cancel();
            resolve(o);
          };
          const onAbort = (): void => finish({ retry: false });
          signal.addEventListener('abort', onAbort, { once: true });
          stream.on('data', (res: IWatchResponse) => {
            if (res.created) {
              watchId = res.watch_id;
              failingSince = undefined;
              backoffMs = 50;
            }
            if (res.canceled) {
              const cr = parseRevision(res.compact_revision);
              if (cr > 0n) finish({ retry: false, error: compacted(next - 1n, cr, prefix) });
              else finish({ retry: true, error: unreachable(`watch canceled: ${res.cancel_reason}`) });
              return;
            }
            if (res.created || (watchId !== undefined && res.watch_id !== watchId)) return;
            if (res.events.length === 0) {
              const rev = parseRevision(res.header.revision);
              if (progress && rev >= next - 1n) {
                queue.push({ type: 'progress', revision: rev });
                next = rev + 1n;
              }
              return;
            }
            for (const ev of res.events) {
              const rev = parseRevision(ev.kv.mod_revision);
              if (rev < next) continue; // already delivered before a reconnection
              if (String(ev.type).toUpperCase() === 'DELETE') {
                if (!ev.prev_kv) {
                  finish({ retry: false, error: compacted(rev - 1n, rev, ev.kv.key.toString()) });
                  return;
                }
                queue.push({ type: 'delete', key: ev.kv.key.toString(), prevKv: toKv(ev.prev_kv), revision: rev });
              } else {
                const kv = toKv(ev.kv);
                const isCreate = kv.createRevision === kv.modRevision;
                queue.push(
                  isCreate || !ev.prev_kv
                    ? { type: 'put', kv, revision: rev }
                    : { type: 'put', kv, prevKv: toKv(ev.prev_kv), revision: rev },
                );
              }
              next = rev + 1n;
            }
          });
          stream.on('error', (e: unknown) => finish({ retry: true, error: e }));
          stream.on('end', () => finish({ retry: true, error: new Error('watch stream ended') }));
          stream.write({
            create_request: {
              key: Buffer.from(prefix === '' ? '\0' : prefix),
              range_end: end === undefined ? ALL_KEYS_END : Buffer.from(end),
              start_revision: next.toString(),
              progress_notify: progress,
              prev_kv: true,
            },
          });
        });
      } catch (e) {
        outcome = { retry: true, error: e };
      }
      if (signal.aborted) break;
      if (!outcome.retry) {
        if (outcome.error !== undefined) queue.fail(outcome.error);
        else queue.end();
        return;
      }
      failingSince ??= Date.now();
      if (this.closed || Date.now() - failingSince > this.watchRetryTimeoutMs) {
        queue.fail(mapEtcdError(outcome.error, 'watch'));
        return;
      }
      await new Promise((r) => setTimeout(r, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 2000);
    }
    queue.end();
  }

  /** See `Store.close`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const ac of this.watchAborts) ac.abort();
    this.client.close();
  }
}
