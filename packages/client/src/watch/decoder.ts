/**
 * Decoding of watch streams (model: apimachinery `pkg/watch/streamwatcher.go` and `runtime/serializer/streaming`):
 * newline-delimited JSON `{type, object}` frames, or 4-byte big-endian length-prefixed Protobuf `WatchEvent`
 * messages whose `object.raw` is the object in the `k8s\0` envelope. Chunks may split or join frames anywhere.
 *
 * Decoders turn bytes into {@link RawWatchEvent}s and throw {@link WatchDecodeError} on malformed input; the watch
 * ({@link ./watch}) decides what ERROR events mean.
 */
import { type ApiObject, type ProtobufCodec, protoType, type Status, WatchEventSchema } from '@platform/api';

/** The event types of a watch. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

const EVENT_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/** One decoded event; `object` is a Status for ERROR events. */
export interface RawWatchEvent {
  type: WatchEventType;
  object: ApiObject | Status;
}

const BRAND = Symbol.for('platform.client.WatchDecodeError');

/** A watch stream that is not well-formed. */
export class WatchDecodeError extends Error {
  readonly [BRAND] = true;
  constructor(message: string) {
    super(message);
    this.name = 'WatchDecodeError';
  }
}

/** Brand check for {@link WatchDecodeError}. */
export function isWatchDecodeError(err: unknown): err is WatchDecodeError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** Incremental decoder of one watch stream. */
export interface WatchDecoder {
  /** Feeds bytes; returns every event completed by them. Throws {@link WatchDecodeError}. */
  push(chunk: Uint8Array): RawWatchEvent[];
  /** Bytes of an incomplete frame still buffered (a stream that ends with some was cut off mid-frame). */
  readonly pending: number;
}

/** Largest frame accepted (a corrupt length prefix must not make us buffer gigabytes). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

function checkEvent(type: unknown, object: unknown): RawWatchEvent {
  if (typeof type !== 'string' || !EVENT_TYPES.has(type))
    throw new WatchDecodeError(`watch event has unknown type ${JSON.stringify(type)}`);
  if (object === null || typeof object !== 'object' || Array.isArray(object))
    throw new WatchDecodeError(`watch event ${type} has no object`);
  return { type: type as WatchEventType, object: object as ApiObject };
}

/** Decodes newline-delimited JSON watch frames. */
export class JsonWatchDecoder implements WatchDecoder {
  private buf = '';
  private readonly utf8 = new TextDecoder('utf-8');

  get pending(): number {
    return this.buf.trim().length;
  }

  push(chunk: Uint8Array): RawWatchEvent[] {
    this.buf += this.utf8.decode(chunk, { stream: true });
    if (this.buf.length > MAX_FRAME_BYTES) throw new WatchDecodeError('watch frame exceeds the maximum size');
    const out: RawWatchEvent[] = [];
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl).trim();
      this.buf = this.buf.slice(nl + 1);
      if (line === '') continue;
      out.push(JsonWatchDecoder.decodeFrame(line));
    }
    return out;
  }

  /** Decodes one JSON frame (a WebSocket message, or one line). */
  static decodeFrame(text: string): RawWatchEvent {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (err) {
      throw new WatchDecodeError(`watch frame is not valid JSON: ${(err as Error).message}`);
    }
    if (v === null || typeof v !== 'object') throw new WatchDecodeError('watch frame is not a JSON object');
    const { type, object } = v as { type?: unknown; object?: unknown };
    return checkEvent(type, object);
  }
}

/** Decodes length-prefixed Protobuf `WatchEvent` frames. */
export class ProtobufWatchDecoder implements WatchDecoder {
  private buf: Buffer = Buffer.alloc(0);

  constructor(private readonly codec: ProtobufCodec) {}

  get pending(): number {
    return this.buf.length;
  }

  push(chunk: Uint8Array): RawWatchEvent[] {
    this.buf = this.buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buf, chunk]);
    const out: RawWatchEvent[] = [];
    while (this.buf.length >= 4) {
      const len = this.buf.readUInt32BE(0);
      if (len > MAX_FRAME_BYTES) throw new WatchDecodeError(`watch frame of ${len} bytes exceeds the maximum size`);
      if (this.buf.length < 4 + len) break;
      const msg = this.buf.subarray(4, 4 + len);
      this.buf = this.buf.subarray(4 + len);
      out.push(this.decodeMessage(msg));
    }
    return out;
  }

  private decodeMessage(msg: Uint8Array): RawWatchEvent {
    let ev: { type?: string; object?: { raw?: Uint8Array } };
    try {
      ev = protoType(WatchEventSchema.$id as string).decode(msg) as typeof ev;
    } catch (err) {
      throw new WatchDecodeError(`malformed Protobuf watch event: ${(err as Error).message}`);
    }
    const raw = ev.object?.raw;
    if (!raw || raw.length === 0) throw new WatchDecodeError(`Protobuf watch event ${ev.type ?? ''} has no object`);
    let object: ApiObject;
    try {
      object = this.codec.decode(raw);
    } catch (err) {
      throw new WatchDecodeError(`Protobuf watch event ${ev.type ?? ''}: ${(err as Error).message}`);
    }
    return checkEvent(ev.type, object);
  }
}
