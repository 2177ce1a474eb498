/**
 * The etcd services the store calls (KV Range, Txn and Compact, Watch, Lease grants, Maintenance status) called
 * straight on gRPC, with codecs for only the fields those calls use.
 *
 * Why not the `etcd3` npm client: each of its calls ran through its connection pool (a host
 * shuffle, two policy wrappers each making an AbortSignal, async-hooks binding, a fresh auth Metadata, a deprecation
 * wrapper, option spreads and several promise layers), and its codecs (`@grpc/proto-loader` over protobufjs with
 * `defaults: true, longs: String`) turned every response into a plain object with every field filled in and every
 * int64 formatted as a decimal string, which the store then parsed back into a bigint. That was about a quarter of
 * the CPU the API server spent on a create or a get (issue 18), and on etcd every write came back once more as a
 * watch event through the same machinery. Here a request is written field by field with
 * protobufjs' `Writer`, a response is read with its `Reader` into plain objects holding only the fields the store
 * reads, and every int64 (revisions, counts) is a JavaScript number: exact below 2^53, which a revision
 * or a count will not reach (at a million writes a second etcd would need 285 years); lease IDs, which use all 64
 * bits, are bigints. Byte fields are slices of the received message, not copies.
 *
 * The transport is gRPC framed by hand on one node:http2 connection per member (`KvClient`): unary calls, and watches
 * as a stream whose request body stays open. Failures are `GrpcCallError`s, which the store classifies (answer, not
 * sent, unknown outcome).
 */
import * as http2 from 'node:http2';

import * as protobuf from 'protobufjs';

import { useLeanAsyncResourceBind } from './lean-bind';

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

/** `etcdserverpb.LeaseGrantResponse`. */
export interface RawLeaseGrantResponse {
  header: RawHeader;
  /** Lease IDs use all 64 bits, hence a bigint. */
  ID: bigint;
  TTL: number;
}

/** `etcdserverpb.StatusResponse` (the fields the store reads). */
export interface RawStatusResponse {
  header: RawHeader;
  dbSize: number;
}

/** `etcdserverpb.WatchCreateRequest` (the fields the store sets). */
export interface RawWatchCreateRequest {
  key: Uint8Array;
  range_end?: Uint8Array;
  /** The first revision to deliver; 0 or unset: from now. */
  start_revision?: number;
  progress_notify?: boolean;
  prev_kv?: boolean;
}

/** `mvccpb.Event`. */
export interface RawEvent {
  type: (typeof EventType)[keyof typeof EventType];
  kv: RawKeyValue;
  prev_kv?: RawKeyValue;
}

/** `etcdserverpb.WatchResponse` (fragments are never asked for). */
export interface RawWatchResponse {
  header: RawHeader;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  /** Set on a cancel: the watch started before this revision, which is compacted away. */
  compact_revision: number;
  cancel_reason: string;
  events: RawEvent[];
}

/** The enums of rpc.proto. */
export const CompareResult = { Equal: 0, Greater: 1, Less: 2, NotEqual: 3 } as const;
export const CompareTarget = { Version: 0, Create: 1, Mod: 2 } as const;
export const SortOrder = { None: 0, Ascend: 1, Descend: 2 } as const;
export const SortTarget = { Key: 0, Version: 1, Create: 2, Mod: 3 } as const;
export const EventType = { Put: 0, Delete: 1 } as const;

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

/** A request whose fields are all int64 (`LeaseGrantRequest`'s TTL; `CompactionRequest`'s revision), by number. */
function encodeInt64Fields(fields: readonly (number | undefined)[]): Buffer {
  const w = protobuf.Writer.create();
  fields.forEach((v, i) => {
    if (v) w.uint32(tag(i + 1, VARINT)).int64(v);
  });
  return w.finish() as Buffer;
}

/** A `WatchRequest` holding a `create_request`. */
function encodeWatchCreate(c: RawWatchCreateRequest): Buffer {
  const w = protobuf.Writer.create();
  w.uint32(tag(1, LEN)).fork().uint32(tag(1, LEN)).bytes(c.key);
  if (c.range_end !== undefined) w.uint32(tag(2, LEN)).bytes(c.range_end);
  if (c.start_revision) w.uint32(tag(3, VARINT)).int64(c.start_revision);
  if (c.progress_notify) w.uint32(tag(4, VARINT)).bool(true);
  if (c.prev_kv) w.uint32(tag(6, VARINT)).bool(true);
  w.ldelim();
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

/** An int64 as a bigint, exact over all 64 bits (lease IDs). */
function readBigInt64(r: protobuf.Reader): bigint {
  const buf = r.buf;
  let pos = r.pos;
  let value = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= r.len) throw new RangeError('etcd response: truncated varint');
    const b = buf[pos++] as number;
    value |= BigInt(b & 0x7f) << shift;
    if (b < 0x80) break;
    shift += 7n;
  }
  r.pos = pos;
  return BigInt.asIntN(64, value);
}

function decodeLeaseGrant(data: Buffer): RawLeaseGrantResponse {
  const r = protobuf.Reader.create(data);
  const res: RawLeaseGrantResponse = { header: NO_HEADER, ID: 0n, TTL: 0 };
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === tag(1, LEN)) res.header = readHeader(r, embeddedEnd(r));
    else if (t === tag(2, VARINT)) res.ID = readBigInt64(r);
    else if (t === tag(3, VARINT)) res.TTL = readInt64(r);
    else r.skipType(t & 7);
  }
  return res;
}

/** A response of which only the header is read (`CompactionResponse`), or the header and the database size. */
function decodeStatus(data: Buffer): RawStatusResponse {
  const r = protobuf.Reader.create(data);
  const res: RawStatusResponse = { header: NO_HEADER, dbSize: 0 };
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === tag(1, LEN)) res.header = readHeader(r, embeddedEnd(r));
    else if (t === tag(3, VARINT)) res.dbSize = readInt64(r);
    else r.skipType(t & 7);
  }
  return res;
}

function readEvent(r: protobuf.Reader, end: number): RawEvent {
  const ev: RawEvent = { type: EventType.Put, kv: NO_KV };
  while (r.pos < end) {
    const t = r.uint32();
    if (t === tag(1, VARINT)) ev.type = r.int32() === EventType.Delete ? EventType.Delete : EventType.Put;
    else if (t === tag(2, LEN)) ev.kv = readKv(r, embeddedEnd(r));
    else if (t === tag(3, LEN)) ev.prev_kv = readKv(r, embeddedEnd(r));
    else r.skipType(t & 7);
  }
  return ev;
}

const NO_KV: RawKeyValue = Object.freeze({ key: EMPTY, value: EMPTY, create_revision: 0, mod_revision: 0 });

function decodeWatchResponse(data: Buffer): RawWatchResponse {
  const r = protobuf.Reader.create(data);
  const res: RawWatchResponse = {
    header: NO_HEADER,
    watch_id: 0,
    created: false,
    canceled: false,
    compact_revision: 0,
    cancel_reason: '',
    events: [],
  };
  while (r.pos < r.len) {
    const t = r.uint32();
    switch (t) {
      case tag(1, LEN):
        res.header = readHeader(r, embeddedEnd(r));
        break;
      case tag(2, VARINT):
        res.watch_id = readInt64(r);
        break;
      case tag(3, VARINT):
        res.created = r.bool();
        break;
      case tag(4, VARINT):
        res.canceled = r.bool();
        break;
      case tag(5, VARINT):
        res.compact_revision = readInt64(r);
        break;
      case tag(6, LEN):
        res.cancel_reason = r.string();
        break;
      case tag(11, LEN):
        res.events.push(readEvent(r, embeddedEnd(r)));
        break;
      default:
        r.skipType(t & 7);
    }
  }
  return res;
}

/** The codecs, exported for tests: `encode*` gives the request's wire form, `decode*` reads a response's. */
export const codec = {
  encodeRange,
  encodeTxn,
  encodeWatchCreate,
  decodeRange,
  decodeTxn,
  decodeWatchResponse,
  decodeLeaseGrant,
};

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

/** The gRPC status codes the store reads. */
export const GrpcStatus = {
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  RESOURCE_EXHAUSTED: 8,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;
const { DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE } = GrpcStatus;
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
 * A failed call: its gRPC status code (`GrpcStatus`), and etcd's message or why the call did not finish, worded as
 * grpc-js words it (`<code> <NAME>: <details>`). The store classifies it by both (answer, not sent, unknown outcome).
 */
export class GrpcCallError extends Error {
  constructor(
    readonly code: number,
    details: string,
  ) {
    super(`${code} ${STATUS_NAMES[code] ?? 'UNKNOWN'}: ${details}`);
    this.name = 'GrpcCallError';
  }
}

function grpcError(code: number, details: string): Error {
  return new GrpcCallError(code, details);
}

/** A call whose stream closed without a status: never sent on a connection never established, else cut off. */
function unfinished(conn: { connected: boolean }, why: string): Error {
  return conn.connected
    ? grpcError(UNAVAILABLE, `connection failed during the call: ${why}`)
    : grpcError(UNAVAILABLE, `No connection established: ${why}`);
}

/** A `grpc-message` as sent (percent-encoded), or as it is when it is not valid percent-encoding. */
function percentDecoded(msg: string): string {
  try {
    return decodeURIComponent(msg);
  } catch {
    return msg;
  }
}

/** A gRPC message as sent on the wire: not compressed, its length, the message. */
function grpcFrame(body: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(5 + body.length);
  frame[0] = 0;
  frame.writeUInt32BE(body.length, 1);
  body.copy(frame, 5);
  return frame;
}

/**
 * Splits a streamed response body into its gRPC messages, whether a chunk holds several or a message spans chunks
 * (joined once, when it is whole). The messages are views of the chunks, not copies.
 */
class MessageReader {
  private chunks: Buffer[] = [];
  private length = 0;

  /** The messages `chunk` completes. Throws on a compressed message (never asked for). */
  read(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.length += chunk.length;
    const out: Buffer[] = [];
    while (this.length >= 5) {
      let buf = this.chunks[0] as Buffer;
      if (buf.length < 5) buf = this.join();
      if (buf[0] !== 0) throw new Error('compressed message');
      const end = 5 + buf.readUInt32BE(1);
      if (this.length < end) break;
      if (buf.length < end) buf = this.join();
      out.push(buf.subarray(5, end));
      this.length -= end;
      if (buf.length === end) this.chunks.shift();
      else this.chunks[0] = buf.subarray(end);
    }
    return out;
  }

  private join(): Buffer {
    const all = Buffer.concat(this.chunks, this.length);
    this.chunks = [all];
    return all;
  }
}

/** Receives a watch stream's responses and its end (`KvClient.watch`). */
export interface WatchListener {
  response(res: RawWatchResponse): void;
  /** The stream ended by itself (not by `close()`): why, as a failed call's error. */
  end(error: Error): void;
}

/** An open watch stream. */
export interface WatchStream {
  /** Ends the stream (its listener is told nothing more). Idempotent. */
  close(): void;
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
    // Every call opens a stream, and Node 20 leaves ~2 KB of old-space garbage per stream without this (lean-bind.ts).
    useLeanAsyncResourceBind();
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

  /**
   * Opens the stream of a call to `path` on the connection (connecting first when there is none), counted among the
   * connection's open calls until it closes; or, when it cannot be sent, the error to fail it with.
   */
  private openStream(path: string, timeoutMs?: number): { conn: Connection; stream: http2.ClientHttp2Stream } | Error {
    if (this.closed) return grpcError(UNAVAILABLE, 'client was already closed');
    const conn = (this.conn ??= this.connect());
    const headers: http2.OutgoingHttpHeaders = {
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
    };
    if (timeoutMs !== undefined) headers['grpc-timeout'] = `${timeoutMs}m`;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = conn.session.request(headers);
    } catch (e) {
      // The connection is closing (GOAWAY, destroyed): the call was not sent; the next one opens a new connection.
      if (this.conn === conn) this.conn = undefined;
      return grpcError(UNAVAILABLE, `No connection established: ${(e as Error).message}`);
    }
    conn.open++;
    return { conn, stream };
  }

  /**
   * Calls `closed` once `stream` closes, with its gRPC status (`code`, and the status' error unless OK), or with no
   * status, when the call did not finish, and why (the connection's failure, the stream's error, a reset).
   */
  private static whenClosed(
    conn: Connection,
    stream: http2.ClientHttp2Stream,
    closed: (status: { code: number; error?: Error } | undefined, why: string) => void,
  ): void {
    let headers: http2.IncomingHttpHeaders | undefined;
    let trailers: http2.IncomingHttpHeaders | undefined;
    let streamError: Error | undefined;
    stream.on('response', (h) => (headers = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('error', (e: Error) => (streamError = e));
    stream.once('close', () => {
      conn.open--;
      // A trailers-only answer (an error) carries the status in the headers.
      const status = trailers?.['grpc-status'] ?? headers?.['grpc-status'];
      if (status !== undefined) {
        const code = Number(status);
        const msg = trailers?.['grpc-message'] ?? headers?.['grpc-message'];
        closed(
          { code, error: code === 0 ? undefined : grpcError(code, typeof msg === 'string' ? percentDecoded(msg) : '') },
          '',
        );
        return;
      }
      const cause = conn.error ?? streamError;
      closed(undefined, cause?.message ?? (headers ? `stream closed (HTTP ${headers[':status']})` : 'stream closed'));
    });
  }

  private call<Req, Res>(
    path: string,
    encode: (r: Req) => Buffer,
    decode: (b: Buffer) => Res,
    req: Req,
    deadline: number,
  ): Promise<Res> {
    const frame = grpcFrame(encode(req));
    // grpc-timeout takes at most 8 digits.
    const timeoutMs = Math.min(Math.max(1, deadline - Date.now()), 99999999);
    const opened = this.openStream(path, timeoutMs);
    if (opened instanceof Error) return Promise.reject(opened);
    const { conn, stream } = opened;
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => {
        timedOut = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }, timeoutMs);
      stream.on('data', (c: Buffer) => chunks.push(c));
      KvClient.whenClosed(conn, stream, (status, why) => {
        clearTimeout(timer);
        if (status && !timedOut) {
          if (status.error) {
            reject(status.error);
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
        reject(conn.connected && timedOut ? grpcError(DEADLINE_EXCEEDED, 'Deadline exceeded') : unfinished(conn, why));
      });
      stream.end(frame);
    });
  }

  /**
   * `Watch.Watch` with one watch (`req`): a stream whose request body stays open, and whose response body is a
   * sequence of `WatchResponse` messages, each given to `listener.response` as it arrives, in order. It ends with
   * `listener.end` and the reason as a call's failure (etcd's status, the connection failing or never established, a
   * hung member found by the keepalive pings: the stream counts among the connection's open calls), unless `close()`
   * (which resets the stream: etcd then cancels its watchers) ended it first. No deadline: it runs until one of these.
   */
  watch(req: RawWatchCreateRequest, listener: WatchListener): WatchStream {
    const create = grpcFrame(encodeWatchCreate(req));
    const opened = this.openStream('/etcdserverpb.Watch/Watch');
    let done = false;
    if (opened instanceof Error) {
      // Told as every end is, after the caller has its handle.
      setImmediate(() => {
        if (!done) listener.end(opened);
      });
      return { close: () => (done = true) };
    }
    const { conn, stream } = opened;
    const end = (e: Error): void => {
      if (done) return;
      done = true;
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL);
      listener.end(e);
    };
    const messages = new MessageReader();
    stream.on('data', (chunk: Buffer) => {
      let res: RawWatchResponse[];
      try {
        res = messages.read(chunk).map(decodeWatchResponse);
      } catch (e) {
        end(grpcError(INTERNAL, `cannot read the watch response: ${(e as Error).message}`));
        return;
      }
      for (const r of res) if (!done) listener.response(r);
    });
    KvClient.whenClosed(conn, stream, (status, why) =>
      end(
        status ? (status.error ?? grpcError(UNAVAILABLE, 'the member ended the watch stream')) : unfinished(conn, why),
      ),
    );
    stream.write(create);
    return {
      close: () => {
        if (done) return;
        done = true;
        stream.close(http2.constants.NGHTTP2_CANCEL);
      },
    };
  }

  /** Calls and watch streams open on the connection now (tests: closed watches leave none behind). */
  get openCalls(): number {
    return this.conn?.open ?? 0;
  }

  /** `KV.Range` with a deadline (epoch ms). */
  range(req: RawRangeRequest, o: { deadline: number }): Promise<RawRangeResponse> {
    return this.call('/etcdserverpb.KV/Range', encodeRange, decodeRange, req, o.deadline);
  }

  /** `KV.Txn` with a deadline (epoch ms). */
  txn(req: RawTxnRequest, o: { deadline: number }): Promise<RawTxnResponse> {
    return this.call('/etcdserverpb.KV/Txn', encodeTxn, decodeTxn, req, o.deadline);
  }

  /** `Lease.LeaseGrant` of a lease for `ttl` seconds (etcd picks its ID), with a deadline (epoch ms). */
  leaseGrant(ttl: number, o: { deadline: number }): Promise<RawLeaseGrantResponse> {
    return this.call(
      '/etcdserverpb.Lease/LeaseGrant',
      (t: number) => encodeInt64Fields([t]),
      decodeLeaseGrant,
      ttl,
      o.deadline,
    );
  }

  /** `KV.Compact` at `revision` (not physical: etcd answers before its database is compacted), with a deadline. */
  compact(revision: number, o: { deadline: number }): Promise<{ header: RawHeader }> {
    return this.call(
      '/etcdserverpb.KV/Compact',
      (r: number) => encodeInt64Fields([r]),
      decodeStatus,
      revision,
      o.deadline,
    );
  }

  /** `Maintenance.Status` of the member, with a deadline (epoch ms). */
  status(o: { deadline: number }): Promise<RawStatusResponse> {
    return this.call('/etcdserverpb.Maintenance/Status', () => EMPTY, decodeStatus, undefined, o.deadline);
  }

  /** Closes the connection for good: open calls fail, later calls fail with "client was already closed". */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.conn?.session.destroy();
    this.conn = undefined;
  }
}
