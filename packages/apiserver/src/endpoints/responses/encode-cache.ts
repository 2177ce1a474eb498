/**
 * Serialization of objects from the watch cache, once per object. The cache deep-freezes what it holds and hands
 * the same instance to every reader (`storage/immutable.ts`), so the bytes of such an object never change: a list
 * of 5,000 objects from memory concatenates 5,000 cached encodings instead of running JSON.stringify over them, and
 * a write seen by 100 watchers is encoded once, not 100 times. The output is byte for byte what the plain codecs
 * produce. Encodings live as long as their object (weak maps).
 */
import { randomUUID } from 'node:crypto';

import {
  type ApiObject,
  hasProtobufMagic,
  jsonCodec,
  type ProtobufCodec,
  protoType,
  WatchEventSchema,
} from '@platform/api';

import { isImmutable } from '../../storage/immutable';

const jsonCache = new WeakMap<object, Buffer>();
const protobufCaches = new WeakMap<ProtobufCodec, WeakMap<object, Buffer>>();

/** The cache of `codec` in `caches`, made on first use. */
function perCodec<V>(caches: WeakMap<ProtobufCodec, WeakMap<object, V>>, codec: ProtobufCodec): WeakMap<object, V> {
  let cache = caches.get(codec);
  if (!cache) {
    cache = new WeakMap();
    caches.set(codec, cache);
  }
  return cache;
}

/** Stands for the items of a list while the rest of it is stringified (a string no object can contain by chance). */
const ITEMS_MARK = JSON.stringify(`\u0000items-${randomUUID()}\u0000`);
const COMMA = Buffer.from(',');

/** A buffer of its own (not a slice of Node's shared pool, which would keep a whole pool slab alive). */
function ownBuffer(text: string): Buffer {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  b.write(text);
  return b;
}

function cachedJson(obj: object): Buffer {
  let b = jsonCache.get(obj);
  if (b === undefined) {
    b = ownBuffer(JSON.stringify(obj));
    jsonCache.set(obj, b);
  }
  return b;
}

/**
 * A response body as a sequence of buffers, written one after the other (`writers.ts` streams them). `length` is
 * the total byte count when it is known before the first part is made (every part already encoded).
 */
export interface BodyParts {
  parts: Iterable<Buffer>;
  length?: number;
}

/** The JSON of one element of a list's array: the cached bytes of an immutable object, else a fresh encoding. */
function elementJson(item: object): Buffer {
  return isImmutable(item) ? cachedJson(item) : Buffer.from(JSON.stringify(item));
}

/** Joined element encodings come in buffers of about this size (the writers' chunk; see `writers.ts`). */
const JOINED_CHUNK = 64 * 1024;

/** Bytes made once, in chunks of about JOINED_CHUNK bytes, with their total length. */
interface Joined {
  chunks: Buffer[];
  length: number;
}

/**
 * Gathers parts into buffers of at least `size` bytes (the last one may be smaller); a part that is that large alone
 * is passed on as it is.
 */
export function* gather(parts: Iterable<Buffer>, size: number): Generator<Buffer> {
  let pending: Buffer[] = [];
  let bytes = 0;
  for (const p of parts) {
    pending.push(p);
    bytes += p.length;
    if (bytes >= size) {
      yield pending.length === 1 ? pending[0]! : Buffer.concat(pending, bytes);
      pending = [];
      bytes = 0;
    }
  }
  if (bytes > 0 || pending.length > 0) yield pending.length === 1 ? pending[0]! : Buffer.concat(pending, bytes);
}

/** `parts` gathered into chunks of JOINED_CHUNK bytes, kept. */
function join(parts: Iterable<Buffer>): Joined {
  const chunks = [...gather(parts, JOINED_CHUNK)];
  return { chunks, length: chunks.reduce((n, c) => n + c.length, 0) };
}

const joinedCache = new WeakMap<object, Joined>();

/**
 * The JSON of an immutable array's elements between its brackets, comma-separated, made once per array and kept as
 * long as it: the watch cache hands every whole list of a prefix at one revision the same frozen array (`Cacher`),
 * so the lists after the first write these chunks as they are, with no walk over their elements.
 */
function joinedJson(elements: readonly object[]): Joined {
  let joined = joinedCache.get(elements);
  if (!joined) {
    joined = join(
      (function* () {
        for (let i = 0; i < elements.length; i++) {
          if (i > 0) yield COMMA;
          yield elementJson(elements[i]!);
        }
      })(),
    );
    joinedCache.set(elements, joined);
  }
  return joined;
}

/**
 * The JSON of an object whose `field` is an array of objects (a list's `items`, a Table's `rows`), as parts: the
 * object up to the array, each element, the rest; byte for byte what `jsonCodec.encode` writes. The elements are
 * encoded as the parts are taken, so a list is never held as one string or buffer, except for an immutable array
 * (see `joinedJson`). Undefined when `obj[field]` is not an array of objects (the caller encodes the object whole).
 */
export function jsonArrayParts(obj: object, field: 'items' | 'rows'): BodyParts | undefined {
  const elements = (obj as Record<string, unknown>)[field];
  if (!Array.isArray(elements)) return undefined;
  const frozen: boolean = isImmutable(elements);
  if (!frozen && !elements.every((i) => typeof i === 'object' && i !== null && !Array.isArray(i))) return undefined;
  const outer = JSON.stringify({ ...obj, [field]: JSON.parse(ITEMS_MARK) as string });
  const at = outer.indexOf(ITEMS_MARK);
  if (at < 0) return undefined;
  const head = Buffer.from(`${outer.slice(0, at)}[`);
  const tail = Buffer.from(`]${outer.slice(at + ITEMS_MARK.length)}`);
  if (frozen) {
    const joined = joinedJson(elements as object[]);
    return { parts: [head, ...joined.chunks, tail], length: head.length + joined.length + tail.length };
  }
  const items = elements as object[];
  // With every element cached, the length is known up front (and the bytes are the cache's, not copies).
  const cached: Buffer[] = [];
  let length: number | undefined = head.length + tail.length + Math.max(0, items.length - 1);
  for (const item of items) {
    if (!isImmutable(item)) {
      length = undefined;
      break;
    }
    const b = cachedJson(item);
    cached.push(b);
    length += b.length;
  }
  function* parts(): Generator<Buffer> {
    yield head;
    for (let i = 0; i < items.length; i++) {
      if (i > 0) yield COMMA;
      yield cached[i] ?? elementJson(items[i]!);
    }
    yield tail;
  }
  return length === undefined ? { parts: parts() } : { parts: parts(), length };
}

/** The JSON of an object or a list, as `jsonCodec.encode` writes it, reusing the encodings of immutable objects. */
export function encodeJson(obj: ApiObject): Buffer {
  if (isImmutable(obj)) return cachedJson(obj);
  const items = (obj as { items?: unknown }).items;
  if (!Array.isArray(items) || !items.some(isImmutable)) return jsonCodec.encode(obj);
  const body = jsonArrayParts(obj, 'items');
  return body ? Buffer.concat([...body.parts]) : jsonCodec.encode(obj);
}

/** The Protobuf encoding (with its envelope) of an object, as `codec.encode` writes it, once per immutable object. */
export function encodeProtobuf(codec: ProtobufCodec, obj: ApiObject): Buffer {
  if (!isImmutable(obj)) return codec.encode(obj);
  const cache = perCodec(protobufCaches, codec);
  let b = cache.get(obj);
  if (b === undefined) {
    b = codec.encode(obj);
    cache.set(obj, b);
  }
  return b;
}

/** The varint encoding of a non-negative integer (Protobuf lengths). */
function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

/** The varint at `at`: its value and where the next field starts; undefined when malformed. */
function readVarint(b: Uint8Array, at: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let shift = 1, i = at; i < b.length && i < at + 5; i++, shift *= 0x80) {
    const byte = b[i]!;
    value += (byte & 0x7f) * shift;
    if (byte < 0x80) return { value, next: i + 1 };
  }
  return undefined;
}

const TYPE_META_TAG = 0x0a; // Unknown.typeMeta: field 1, length-delimited
const RAW_TAG = 0x12; // Unknown.raw and a list's items: field 2, length-delimited

/**
 * An enveloped encoding split in two: `prefix`, the bytes up to the length of `raw` (the magic, `typeMeta` and the
 * tag of `raw`), and `raw`, the object's own message, which runs to the end. Undefined for another layout.
 */
function splitEnvelope(b: Buffer): { prefix: Buffer; raw: Buffer } | undefined {
  if (!hasProtobufMagic(b) || b[4] !== TYPE_META_TAG) return undefined;
  const typeMeta = readVarint(b, 5);
  if (!typeMeta) return undefined;
  const rawTag = typeMeta.next + typeMeta.value;
  if (b[rawTag] !== RAW_TAG) return undefined;
  const raw = readVarint(b, rawTag + 1);
  if (!raw || raw.next + raw.value !== b.length) return undefined;
  return { prefix: b.subarray(0, rawTag + 1), raw: b.subarray(raw.next) };
}

/** An object's own message inside a list: a view of its cached enveloped encoding when it is immutable. */
function itemRaw(codec: ProtobufCodec, item: ApiObject): Uint8Array {
  if (!isImmutable(item)) return codec.encodeRaw(item);
  return splitEnvelope(encodeProtobuf(codec, item))?.raw ?? codec.encodeRaw(item);
}

/** Each of `raws` (items' own messages) as a list's field 2: its tag and length, then itself. */
function* itemFields(raws: Uint8Array[]): Generator<Buffer> {
  for (const r of raws) {
    yield Buffer.concat([Buffer.of(RAW_TAG), varint(r.length)]);
    yield Buffer.isBuffer(r) ? r : Buffer.from(r.buffer, r.byteOffset, r.byteLength);
  }
}

/** The length of `raws` as a list's fields 2 (see itemFields). */
function itemFieldsLength(raws: Uint8Array[]): number {
  let n = 0;
  for (const r of raws) n += 1 + varint(r.length).length + r.length;
  return n;
}

/**
 * The parts of a list's enveloped encoding (see protobufListParts) around its items' fields, `items` (of `length`
 * bytes).
 */
function protobufListFrame(empty: { prefix: Buffer; raw: Buffer }, items: Iterable<Buffer>, length: number): BodyParts {
  const rawLength = empty.raw.length + length;
  const start = Buffer.concat([empty.prefix, varint(rawLength), empty.raw]);
  return {
    parts: (function* () {
      yield start;
      yield* items;
    })(),
    length: start.length + length,
  };
}

const protobufJoinedCaches = new WeakMap<ProtobufCodec, WeakMap<object, Joined>>();

/** The fields 2 of an immutable array's items, once per codec and array (the Protobuf twin of `joinedJson`). */
function joinedProtobufItems(codec: ProtobufCodec, items: readonly ApiObject[]): Joined {
  const cache = perCodec(protobufJoinedCaches, codec);
  let joined = cache.get(items);
  if (!joined) {
    joined = join(itemFields(items.map((i) => itemRaw(codec, i))));
    cache.set(items, joined);
  }
  return joined;
}

/** Per codec and list apiVersion/kind: whether a list's items follow its metadata as field 2 (checked once). */
const protobufListLayouts = new WeakMap<ProtobufCodec, Map<string, boolean>>();

/**
 * The enveloped Protobuf of a list, as `codec.encode` writes it, as parts: the envelope and the list's own fields,
 * then each item as field 2 — the bytes of immutable items are their cached encodings, not copies. Undefined when
 * the list cannot be written so (no items, items without a kind, or a layout that does not check out: the first
 * time a list kind is seen, the parts of a one-item list are compared with the codec's encoding of it).
 */
export function protobufListParts(codec: ProtobufCodec, list: ApiObject): BodyParts | undefined {
  const items = (list as { items?: unknown }).items;
  if (!Array.isArray(items) || items.length === 0) return undefined;
  if (!items.every((i: ApiObject) => typeof i?.apiVersion === 'string' && typeof i.kind === 'string')) return undefined;
  let empty: { prefix: Buffer; raw: Buffer } | undefined;
  try {
    empty = splitEnvelope(codec.encode({ ...list, items: [] } as ApiObject));
  } catch {
    return undefined; // the codec's own encoding reports the problem
  }
  if (!empty) return undefined;
  let layouts = protobufListLayouts.get(codec);
  if (!layouts) {
    layouts = new Map();
    protobufListLayouts.set(codec, layouts);
  }
  const layoutKey = `${list.apiVersion ?? ''}/${list.kind ?? ''}`;
  let layoutOk = layouts.get(layoutKey);
  if (layoutOk === undefined) {
    const first = items[0] as ApiObject;
    const expected = codec.encode({ ...list, items: [first] } as ApiObject);
    const raws = [itemRaw(codec, first)];
    const framed = Buffer.concat([...protobufListFrame(empty, itemFields(raws), itemFieldsLength(raws)).parts]);
    layoutOk = framed.equals(expected);
    layouts.set(layoutKey, layoutOk);
  }
  if (!layoutOk) return undefined;
  const frozen: boolean = isImmutable(items);
  if (frozen) {
    const joined = joinedProtobufItems(codec, items as ApiObject[]);
    return protobufListFrame(empty, joined.chunks, joined.length);
  }
  const raws = items.map((i: ApiObject) => itemRaw(codec, i));
  return protobufListFrame(empty, itemFields(raws), itemFieldsLength(raws));
}

const protobufEventCaches = new WeakMap<ProtobufCodec, WeakMap<object, Map<string, Buffer>>>();

/** A Protobuf watch frame: the 4-byte big-endian length, then the `WatchEvent` whose `object.raw` is the object. */
function protobufWatchFrame(codec: ProtobufCodec, type: string, object: ApiObject): Buffer {
  const raw = encodeProtobuf(codec, object);
  const msg = protoType(WatchEventSchema.$id as string)
    .encode({ type, object: { raw } })
    .finish();
  const frame = Buffer.allocUnsafeSlow(4 + msg.length);
  frame.writeUInt32BE(msg.length, 0);
  frame.set(msg, 4);
  return frame;
}

/**
 * The frame of an immutable object's event of `type` in `cache`, made by `make` once: an event goes to every
 * watcher of its collection, and every one of them gets the same frame.
 */
function eventFrame(
  cache: WeakMap<object, Map<string, Buffer>>,
  type: string,
  object: ApiObject,
  make: () => Buffer,
): Buffer {
  let byType = cache.get(object);
  if (!byType) {
    byType = new Map();
    cache.set(object, byType);
  }
  let frame = byType.get(type);
  if (frame === undefined) {
    frame = make();
    byType.set(type, frame);
  }
  return frame;
}

/** One event of a Protobuf watch stream, once per immutable object and event type (see `eventFrame`). */
export function encodeProtobufWatchEvent(codec: ProtobufCodec, type: string, object: ApiObject): Buffer {
  if (!isImmutable(object)) return protobufWatchFrame(codec, type, object);
  return eventFrame(perCodec(protobufEventCaches, codec), type, object, () => protobufWatchFrame(codec, type, object));
}

const jsonEventCache = new WeakMap<object, Map<string, Buffer>>();

/**
 * One event of a JSON watch stream, `{"type":...,"object":...}` and a newline; once per immutable object and event
 * type (see `eventFrame`).
 */
export function encodeJsonWatchEvent(type: string, object: ApiObject): Buffer {
  if (!isImmutable(object)) return Buffer.from(`${JSON.stringify({ type, object })}\n`);
  return eventFrame(jsonEventCache, type, object, () =>
    Buffer.concat([Buffer.from(`{"type":${JSON.stringify(type)},"object":`), cachedJson(object), CLOSE_EVENT]),
  );
}

const CLOSE_EVENT = Buffer.from('}\n');
