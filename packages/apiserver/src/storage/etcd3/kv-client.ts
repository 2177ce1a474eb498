/**
 * etcd's KV service (Range and Txn) called straight on gRPC, with codecs for only the fields those calls use.
 *
 * Why not the `etcd3` npm client's `kv.range` / `kv.txn`: each of its calls ran through its connection pool (a host
 * shuffle, two policy wrappers each making an AbortSignal, async-hooks binding, a fresh auth Metadata, a deprecation
 * wrapper, option spreads and several promise layers), and its codecs (`@grpc/proto-loader` over protobufjs with
 * `defaults: true, longs: String`) turned every response into a plain object with every field filled in and every
 * int64 formatted as a decimal string, which the store then parsed back into a bigint. That was about a quarter of
 * the CPU the API server spent on a create or a get (issue 18). Here a request is written field by field with
 * protobufjs' `Writer`, a response is read with its `Reader` into plain objects holding only the fields the store
 * reads, and every int64 (revisions, counts, lease IDs) is a JavaScript number: exact below 2^53, which a revision
 * or a count will not reach (at a million writes a second etcd would need 285 years). Byte fields are slices of the
 * received message, not copies.
 *
 * The transport is gRPC framed by hand on one node:http2 connection per member (`KvClient`). Failures are cast to the
 * npm client's error classes (`castGrpcError`), which the store classifies (answer, not sent, unknown outcome) as it
 * does for the calls it still makes through the npm client (watches, leases, compaction, status).
 */
import * as http2 from 'node:http2';

import { castGrpcError } from 'etcd3';
import * as protobuf from 'protobufjs';

/** `mvccpb.KeyValue` (the fields the store reads). */
export interface RawKeyValue {
  key: Buffer;
  value: Buffer;
  create_revision: number;
  mod_revision: number;
}

/** `etcdserverpb.ResponseHeader` (only the revision is read). */
export interface RawHeader {
  revision: number;
}

/** `etcdserverpb.RangeRequest`. */
export interface RawRangeRequest {
  key: Uint8Array;
  range_end?: Uint8Array;
  limit?: number;
  revision?: number;
  sort_order?: (typeof SortOrder)[keyof typeof SortOrder];
  sort_target?: (typeof SortTarget)[keyof typeof SortTarget];
  keys_only?: boolean;
  count_only?: boolean;
  min_mod_revision?: number;
}

/** `etcdserverpb.RangeResponse`. */
export interface RawRangeResponse {
  header: RawHeader;
  kvs: RawKeyValue[];
  more: boolean;
  count: number;
}

/** `etcdserverpb.Compare` on the version, the create revision or the mod revision of one key. */
export interface RawCompare {
  key: Uint8Array;
  result: (typeof CompareResult)[keyof typeof CompareResult];
  target: (typeof CompareTarget)[keyof typeof CompareTarget];
  /** The value compared to (of the field `target` names). */
  value: number;
}

/** `etcdserverpb.RequestOp`: one of the three. */
export interface RawRequestOp {
  request_range?: RawRangeRequest;
  /** `lease`: lease IDs use all 64 bits, hence a bigint. */
  request_put?: { key: Uint8Array; value: Uint8Array; lease?: bigint; prev_kv?: boolean };
  request_delete_range?: { key: Uint8Array; range_end?: Uint8Array; prev_kv?: boolean };
}

/** `etcdserverpb.TxnRequest`. */
export interface RawTxnRequest {
  compare: RawCompare[];
  success: RawRequestOp[];
  failure: RawRequestOp[];
}

/** `etcdserverpb.ResponseOp`: the one field set answers the request at the same position. */
export interface RawResponseOp {
  response_range?: RawRangeResponse;
  response_put?: { header: RawHeader; prev_kv?: RawKeyValue };
  response_delete_range?: { header: RawHeader; deleted: number; prev_kvs: RawKeyValue[] };
}

/** `etcdserverpb.TxnResponse`. */
export interface RawTxnResponse {
  header: RawHeader;
  succeeded: boolean;
  responses: RawResponseOp[];
}

/** The enums of rpc.proto. */
export const CompareResult = { Equal: 0, Greater: 1, Less: 2, NotEqual: 3 } as const;
export const CompareTarget = { Version: 0, Create: 1, Mod: 2 } as const;
export const SortOrder = { None: 0, Ascend: 1, Descend: 2 } as const;
export const SortTarget = { Key: 0, Version: 1, Create: 2, Mod: 3 } as const;

// Wire types and tags (field number << 3 | wire type) of rpc.proto and kv.proto.
const VARINT = 0;
const LEN = 2;
const tag = (field: number, wireType: number): number => (field << 3) | wireType;

// ---------------------------------------------------------------------------------------------------------------
// Encoding

function writeRange(w: protobuf.Writer, r: RawRangeRequest): void {
  w.uint32(tag(1, LEN)).bytes(r.key);
  if (r.range_end !== undefined) w.uint32(tag(2, LEN)).bytes(r.range_end);
  if (r.limit) w.uint32(tag(3, VARINT)).int64(r.limit);
  if (r.revision) w.uint32(tag(4, VARINT)).int64(r.revision);
  if (r.sort_order) w.uint32(tag(5, VARINT)).int32(r.sort_order);
  if (r.sort_target) w.uint32(tag(6, VARINT)).int32(r.sort_target);
  if (r.keys_only) w.uint32(tag(8, VARINT)).bool(true);
  if (r.count_only) w.uint32(tag(9, VARINT)).bool(true);
  if (r.min_mod_revision) w.uint32(tag(10, VARINT)).int64(r.min_mod_revision);
}

function writeOp(w: protobuf.Writer, op: RawRequestOp): void {
  if (op.request_range) {
    writeRange(w.uint32(tag(1, LEN)).fork(), op.request_range);
    w.ldelim();
  } else if (op.request_put) {
    const p = op.request_put;
    w.uint32(tag(2, LEN)).fork().uint32(tag(1, LEN)).bytes(p.key).uint32(tag(2, LEN)).bytes(asBuffer(p.value));
    if (p.lease) w.uint32(tag(3, VARINT)).int64(longBits(p.lease));
    if (p.prev_kv) w.uint32(tag(4, VARINT)).bool(true);
    w.ldelim();
  } else if (op.request_delete_range) {
    const d = op.request_delete_range;
    w.uint32(tag(3, LEN)).fork().uint32(tag(1, LEN)).bytes(d.key);
    if (d.range_end !== undefined) w.uint32(tag(2, LEN)).bytes(d.range_end);
    if (d.prev_kv) w.uint32(tag(3, VARINT)).bool(true);
    w.ldelim();
  }
}

/** A view of `b` as a Buffer (the writer copies a Uint8Array that is not one). */
function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** A 64-bit value as the low and high halves protobufjs' `Writer.int64` takes (exact, unlike a number or string). */
function longBits(v: bigint): protobuf.Long {
  const u = BigInt.asUintN(64, v);
  return { low: Number(u & 0xffffffffn) | 0, high: Number(u >> 32n) | 0, unsigned: false } as protobuf.Long;
}

/** Field numbers of `Compare.target_union` by target (version 4, create_revision 5, mod_revision 6). */
const COMPARE_FIELD = [4, 5, 6] as const;

function encodeTxn(t: RawTxnRequest): Buffer {
  const w = protobuf.Writer.create();
  for (const c of t.compare) {
    w.uint32(tag(1, LEN)).fork();
    if (c.result) w.uint32(tag(1, VARINT)).int32(c.result);
    if (c.target) w.uint32(tag(2, VARINT)).int32(c.target);
    w.uint32(tag(3, LEN)).bytes(c.key);
    // A oneof member is written even when zero: etcd reads its presence.
    w.uint32(tag(COMPARE_FIELD[c.target], VARINT)).int64(c.value);
    w.ldelim();
  }
  for (const op of t.success) {
    writeOp(w.uint32(tag(2, LEN)).fork(), op);
    w.ldelim();
  }
  for (const op of t.failure) {
    writeOp(w.uint32(tag(3, LEN)).fork(), op);
    w.ldelim();
  }
  return w.finish() as Buffer;
}

function encodeRange(r: RawRangeRequest): Buffer {
  const w = protobuf.Writer.create();
  writeRange(w, r);
  return w.finish() as Buffer;
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding (unknown fields are skipped)

/**
 * A non-negative varint as a number, without protobufjs' `Long`: exact below 2^53 (see the module comment). A
 * negative int64 (ten bytes on the wire) would come out as a large positive number; none of the fields read are.
 */
function readInt64(r: protobuf.Reader): number {
  const buf = r.buf;
  let pos = r.pos;
  let value = 0;
  let scale = 1;
  for (;;) {
    if (pos >= r.len) throw new RangeError('etcd response: truncated varint');
    const b = buf[pos++] as number;
    value += (b & 0x7f) * scale;
    if (b < 0x80) break;
    scale *= 128;
  }
  r.pos = pos;
  return value;
}

/** Reads an embedded message's length and returns where it ends. */
function embeddedEnd(r: protobuf.Reader): number {
  const len = r.uint32();
  return r.pos + len;
}

function readHeader(r: protobuf.Reader, end: number): RawHeader {
  const h: RawHeader = { revision: 0 };
  while (r.pos < end) {
    const t = r.uint32();
    if (t === tag(3, VARINT)) h.revision = readInt64(r);
    else r.skipType(t & 7);
  }
  return h;
}

function readKv(r: protobuf.Reader, end: number): RawKeyValue {
  const kv: RawKeyValue = { key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0 };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t) {
      case tag(1, LEN):
        kv.key = r.bytes() as Buffer;
        break;
      case tag(2, VARINT):
        kv.create_revision = readInt64(r);
        break;
      case tag(3, VARINT):
        kv.mod_revision = readInt64(r);
        break;
      case tag(5, LEN):
        kv.value = r.bytes() as Buffer;
        break;
      default:
        r.skipType(t & 7);
    }
  }
  return kv;
}

const EMPTY = Buffer.alloc(0);
const NO_HEADER: RawHeader = Object.freeze({ revision: 0 });

function readRangeResponse(r: protobuf.Reader, end: number): RawRangeResponse {
  const res: RawRangeResponse = { header: NO_HEADER, kvs: [], more: false, count: 0 };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t) {
      case tag(1, LEN):
        res.header = readHeader(r, embeddedEnd(r));
        break;
      case tag(2, LEN):
        res.kvs.push(readKv(r, embeddedEnd(r)));
        break;
      case tag(3, VARINT):
        res.more = r.bool();
        break;
      case tag(4, VARINT):
        res.count = readInt64(r);
        break;
      default:
        r.skipType(t & 7);
    }
  }
  return res;
}

function readPutResponse(r: protobuf.Reader, end: number): NonNullable<RawResponseOp['response_put']> {
  const res: NonNullable<RawResponseOp['response_put']> = { header: NO_HEADER };
  while (r.pos < end) {
    const t = r.uint32();
    if (t === tag(1, LEN)) res.header = readHeader(r, embeddedEnd(r));
    else if (t === tag(2, LEN)) res.prev_kv = readKv(r, embeddedEnd(r));
    else r.skipType(t & 7);
  }
  return res;
}

function readDeleteResponse(r: protobuf.Reader, end: number): NonNullable<RawResponseOp['response_delete_range']> {
  const res: NonNullable<RawResponseOp['response_delete_range']> = { header: NO_HEADER, deleted: 0, prev_kvs: [] };
  while (r.pos < end) {
    const t = r.uint32();
    if (t === tag(1, LEN)) res.header = readHeader(r, embeddedEnd(r));
    else if (t === tag(2, VARINT)) res.deleted = readInt64(r);
    else if (t === tag(3, LEN)) res.prev_kvs.push(readKv(r, embeddedEnd(r)));
    else r.skipType(t & 7);
  }
  return res;
}

function readResponseOp(r: protobuf.Reader, end: number): RawResponseOp {
  const op: RawResponseOp = {};
  while (r.pos < end) {
    const t = r.uint32();
    if (t === tag(1, LEN)) op.response_range = readRangeResponse(r, embeddedEnd(r));
    else if (t === tag(2, LEN)) op.response_put = readPutResponse(r, embeddedEnd(r));
    else if (t === tag(3, LEN)) op.response_delete_range = readDeleteResponse(r, embeddedEnd(r));
    else r.skipType(t & 7); // a nested Txn's answer: never asked for
  }
  return op;
}

function decodeRange(data: Buffer): RawRangeResponse {
  const r = protobuf.Reader.create(data);
  return readRangeResponse(r, r.len);
}

function decodeTxn(data: Buffer): RawTxnResponse {
  const r = protobuf.Reader.create(data);
  const res: RawTxnResponse = { header: NO_HEADER, succeeded: false, responses: [] };
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === tag(1, LEN)) res.header = readHeader(r, embeddedEnd(r));
    else if (t === tag(2, VARINT)) res.succeeded = r.bool();
    else if (t === tag(3, LEN)) res.responses.push(readResponseOp(r, embeddedEnd(r)));
    else r.skipType(t & 7);
  }
  return res;
}

/** The codecs, exported for tests: `encode*` gives the request's wire form, `decode*` reads a response's. */
export const codec = { encodeRange, encodeTxn, decodeRange, decodeTxn };

// ---------------------------------------------------------------------------------------------------------------
// Calls

/** The connection settings of a member's KV client. */
export interface KvClientOptions {
  /** Mutual TLS (for `https://` members): CA bundle to trust, client certificate and key, PEM. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** While calls are open, the connection is pinged this often, ms. Default 10000 (etcd refuses more than one per 5 s). */
  keepaliveTimeMs?: number;
  /** A ping not answered within this is a dead connection: it is closed and its calls fail, ms. Default 5000. */
  keepaliveTimeoutMs?: number;
  /** A connection not established within this is given up, ms. Default 5000. */
  dialTimeoutMs?: number;
}

/** gRPC status codes used here. */
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;
const STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/**
 * A failed call as the npm client reports one (`castGrpcError`: `GRPCUnavailableError`, etcd's own messages to their
 * classes...), with grpc-js' message form `<code> <NAME>: <details>`, so the store reads every failure the same way.
 */
function grpcError(code: number, details: string): Error {
  const e = new Error(`${code} ${STATUS_NAMES[code] ?? 'UNKNOWN'}: ${details}`) as Error & { code: number };
  e.code = code;
  return castGrpcError(e);
}

/** A `grpc-message` as sent (percent-encoded), or as it is when it is not valid percent-encoding. */
function percentDecoded(msg: string): string {
  try {
    return decodeURIComponent(msg);
  } catch {
    return msg;
  }
}

/** One HTTP/2 connection to a member and what watches over it. */
interface Connection {
  readonly session: http2.ClientHttp2Session;
  /** Established (once true, a call on it may have reached the member). */
  connected: boolean;
  /** Calls open on it (it is pinged only then: etcd sends GOAWAY to a client pinging an idle connection). */
  open: number;
  /** Since when a ping is unanswered (epoch ms), if one is. */
  pingSince: number | undefined;
  lastPingAt: number;
  /** Why it failed, for the calls that fail with it. */
  error: Error | undefined;
}

/**
 * The KV service of one etcd member: gRPC unary calls framed by hand on one node:http2 connection, opened at the
 * first call and again after it fails (not through grpc-js, whose call stack per request — interceptors, resolving,
 * retrying and load-balancing call layers, filters, a stack trace captured per call — cost as much CPU as the HTTP/2
 * stream itself). What grpc-js gave and the store needs is kept: deadlines (sent as `grpc-timeout` and enforced here),
 * keepalive pings that close a connection to a hung member, mutual TLS, a dial timeout, reconnection at the next
 * call, and the npm client's error classes.
 */
export class KvClient {
  private conn: Connection | undefined;
  private closed = false;
  private readonly keepaliveTimeMs: number;
  private readonly keepaliveTimeoutMs: number;
  private readonly dialTimeoutMs: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    /** `http://host:port` or `https://host:port`. */
    private readonly url: string,
    private readonly options: KvClientOptions = {},
  ) {
    this.keepaliveTimeMs = options.keepaliveTimeMs ?? 10000;
    this.keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? 5000;
    this.dialTimeoutMs = options.dialTimeoutMs ?? 5000;
    this.timer = setInterval(() => this.keepalive(), Math.min(this.keepaliveTimeMs, this.keepaliveTimeoutMs) / 2);
    this.timer.unref();
  }

  private connect(): Connection {
    const tls = this.options.tls;
    const session = http2.connect(this.url, {
      ca: tls?.ca,
      cert: tls?.cert,
      key: tls?.key,
      // Large lists: a wide window per stream and per connection, so etcd is not held back by window updates.
      settings: { initialWindowSize: 8 * 1024 * 1024, enablePush: false },
      maxSessionMemory: 64,
    });
    const conn: Connection = {
      session,
      connected: false,
      open: 0,
      pingSince: undefined,
      lastPingAt: 0,
      error: undefined,
    };
    const dial = setTimeout(() => {
      conn.error ??= new Error(`no connection within ${this.dialTimeoutMs}ms`);
      session.destroy();
    }, this.dialTimeoutMs);
    dial.unref();
    session.once('connect', () => {
      conn.connected = true;
      clearTimeout(dial);
      session.setLocalWindowSize(32 * 1024 * 1024);
    });
    session.on('error', (e: Error) => (conn.error ??= e));
    const drop = (): void => {
      clearTimeout(dial);
      if (this.conn === conn) this.conn = undefined;
    };
    // After a GOAWAY the connection takes no new calls; those open finish on it.
    session.once('goaway', drop);
    session.once('close', drop);
    session.unref();
    return conn;
  }

  /** Pings the connection while calls are open; one unanswered for `keepaliveTimeoutMs` closes it. */
  private keepalive(): void {
    const conn = this.conn;
    if (!conn) return;
    const now = Date.now();
    if (conn.pingSince !== undefined) {
      if (now - conn.pingSince > this.keepaliveTimeoutMs) {
        conn.error ??= new Error(`keepalive ping not answered within ${this.keepaliveTimeoutMs}ms`);
        conn.session.destroy();
      }
      return;
    }
    if (conn.open > 0 && now - conn.lastPingAt >= this.keepaliveTimeMs && !conn.session.connecting) {
      conn.pingSince = conn.lastPingAt = now;
      conn.session.ping((err) => {
        if (!err) conn.pingSince = undefined;
      });
    }
  }

  private call<Req, Res>(
    path: string,
    encode: (r: Req) => Buffer,
    decode: (b: Buffer) => Res,
    req: Req,
    deadline: number,
  ): Promise<Res> {
    if (this.closed) return Promise.reject(grpcError(UNAVAILABLE, 'client was already closed'));
    const conn = (this.conn ??= this.connect());
    const body = encode(req);
    const frame = Buffer.allocUnsafe(5 + body.length);
    frame[0] = 0; // not compressed
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    // grpc-timeout takes at most 8 digits.
    const timeoutMs = Math.min(Math.max(1, deadline - Date.now()), 99999999);
    return new Promise((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = conn.session.request({
          ':method': 'POST',
          ':path': path,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-timeout': `${timeoutMs}m`,
        });
      } catch (e) {
        // The connection is closing (GOAWAY, destroyed): the call was not sent; the next one opens a new connection.
        if (this.conn === conn) this.conn = undefined;
        reject(grpcError(UNAVAILABLE, `No connection established: ${(e as Error).message}`));
        return;
      }
      conn.open++;
      let headers: http2.IncomingHttpHeaders | undefined;
      let trailers: http2.IncomingHttpHeaders | undefined;
      let streamError: Error | undefined;
      let timedOut = false;
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => {
        timedOut = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }, timeoutMs);
      stream.on('response', (h) => (headers = h));
      stream.on('trailers', (t) => (trailers = t));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (e: Error) => (streamError = e));
      stream.once('close', () => {
        clearTimeout(timer);
        conn.open--;
        // A trailers-only answer (an error) carries the status in the headers.
        const status = trailers?.['grpc-status'] ?? headers?.['grpc-status'];
        if (status !== undefined && !timedOut) {
          const code = Number(status);
          if (code !== 0) {
            const msg = trailers?.['grpc-message'] ?? headers?.['grpc-message'];
            reject(grpcError(code, typeof msg === 'string' ? percentDecoded(msg) : ''));
            return;
          }
          const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
          if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5) {
            reject(grpcError(2, `unexpected response framing (${body.length} bytes)`));
            return;
          }
          try {
            resolve(decode(body.subarray(5)));
          } catch (e) {
            reject(grpcError(2, `cannot decode the response: ${(e as Error).message}`));
          }
          return;
        }
        // No status: the call did not finish. On a connection never established, it was never sent.
        const cause = conn.error ?? streamError;
        const why = cause?.message ?? (headers ? `stream closed (HTTP ${headers[':status']})` : 'stream closed');
        if (!conn.connected) {
          reject(grpcError(UNAVAILABLE, `No connection established: ${why}`));
        } else if (timedOut) {
          reject(grpcError(DEADLINE_EXCEEDED, 'Deadline exceeded'));
        } else {
          reject(grpcError(UNAVAILABLE, `connection failed during the call: ${why}`));
        }
      });
      stream.end(frame);
    });
  }

  /** `KV.Range` with a deadline (epoch ms). */
  range(req: RawRangeRequest, o: { deadline: number }): Promise<RawRangeResponse> {
    return this.call('/etcdserverpb.KV/Range', encodeRange, decodeRange, req, o.deadline);
  }

  /** `KV.Txn` with a deadline (epoch ms). */
  txn(req: RawTxnRequest, o: { deadline: number }): Promise<RawTxnResponse> {
    return this.call('/etcdserverpb.KV/Txn', encodeTxn, decodeTxn, req, o.deadline);
  }

  /** Closes the connection for good: open calls fail, later calls fail with "client was already closed". */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.conn?.session.destroy();
    this.conn = undefined;
  }
}
