/**
 * Serialization of objects from the watch cache, once per object. The cache deep-freezes what it holds and hands
 * the same instance to every reader (`storage/immutable.ts`), so the bytes of such an object never change: a list
 * of 5,000 objects from memory concatenates 5,000 cached encodings instead of running JSON.stringify over them, and
 * a write seen by 100 watchers is encoded once, not 100 times. The output is byte for byte what the plain codecs
 * produce. Encodings live as long as their object (weak maps).
 */
import { randomUUID } from 'node:crypto';

import { type ApiObject, jsonCodec, type ProtobufCodec, protoType, WatchEventSchema } from '@platform/api';

import { isImmutable } from '../../storage/immutable';

const jsonCache = new WeakMap<object, Buffer>();
const protobufCaches = new WeakMap<ProtobufCodec, WeakMap<object, Buffer>>();

/** Stands for the items of a list while the rest of it is stringified (a string no object can contain by chance). */
const ITEMS_MARK = JSON.stringify(`\u0000items-${randomUUID()}\u0000`);
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

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

/** The JSON of an object or a list, as `jsonCodec.encode` writes it, reusing the encodings of immutable objects. */
export function encodeJson(obj: ApiObject): Buffer {
  if (isImmutable(obj)) return cachedJson(obj);
  const items = (obj as { items?: unknown }).items;
  if (!Array.isArray(items) || !items.some(isImmutable)) return jsonCodec.encode(obj);
  if (!items.every((i) => typeof i === 'object' && i !== null && !Array.isArray(i))) return jsonCodec.encode(obj);
  const outer = JSON.stringify({ ...(obj as object), items: JSON.parse(ITEMS_MARK) as string });
  const at = outer.indexOf(ITEMS_MARK);
  if (at < 0) return jsonCodec.encode(obj);
  const parts: Buffer[] = [Buffer.from(outer.slice(0, at)), OPEN];
  items.forEach((item: object, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(isImmutable(item) ? cachedJson(item) : jsonCodec.encode(item as ApiObject));
  });
  parts.push(CLOSE, Buffer.from(outer.slice(at + ITEMS_MARK.length)));
  return Buffer.concat(parts);
}

/** The Protobuf encoding (with its envelope) of an object, as `codec.encode` writes it, once per immutable object. */
export function encodeProtobuf(codec: ProtobufCodec, obj: ApiObject): Buffer {
  if (!isImmutable(obj)) return codec.encode(obj);
  let cache = protobufCaches.get(codec);
  if (!cache) {
    cache = new WeakMap();
    protobufCaches.set(codec, cache);
  }
  let b = cache.get(obj);
  if (b === undefined) {
    b = codec.encode(obj);
    cache.set(obj, b);
  }
  return b;
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
 * One event of a Protobuf watch stream, once per immutable object and event type: every watcher of a write gets
 * the same frame.
 */
export function encodeProtobufWatchEvent(codec: ProtobufCodec, type: string, object: ApiObject): Buffer {
  if (!isImmutable(object)) return protobufWatchFrame(codec, type, object);
  let cache = protobufEventCaches.get(codec);
  if (!cache) {
    cache = new WeakMap();
    protobufEventCaches.set(codec, cache);
  }
  let byType = cache.get(object);
  if (!byType) {
    byType = new Map();
    cache.set(object, byType);
  }
  let frame = byType.get(type);
  if (frame === undefined) {
    frame = protobufWatchFrame(codec, type, object);
    byType.set(type, frame);
  }
  return frame;
}

/** One event of a JSON watch stream: `{"type":...,"object":...}` and a newline. */
export function encodeJsonWatchEvent(type: string, object: ApiObject): Buffer {
  if (!isImmutable(object)) return Buffer.from(`${JSON.stringify({ type, object })}\n`);
  return Buffer.concat([Buffer.from(`{"type":${JSON.stringify(type)},"object":`), cachedJson(object), CLOSE_EVENT]);
}

const CLOSE_EVENT = Buffer.from('}\n');
