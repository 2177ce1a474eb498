/**
 * Serializers of API objects: JSON, and Protobuf wrapped in the envelope of Document 1 ("Protobuf envelope"):
 * the magic bytes `k8s\0`, then an `Unknown` message carrying `typeMeta` (apiVersion, kind) and `raw` (the
 * object's own message). Storage encodes with one of these (`--storage-media-type`), the API server negotiates
 * between them, and the client decodes responses with them.
 *
 * `decode` trusts its input to be well-formed for the codec but not to be valid: it throws a `CodecError`
 * naming what is wrong (bad magic, unknown kind, truncated message), never returns garbage.
 */
import type * as protobuf from 'protobufjs';

import { fromProto, protoType, toProto, unknownType } from '../schema/protobuf';
import { type ApiObject } from '../scheme/kind';
import { type Scheme } from '../scheme/scheme';

/** The JSON media type. */
export const JSON_MEDIA_TYPE = 'application/json';
/** The Protobuf media type of this platform (Kubernetes' `application/vnd.kubernetes.protobuf`, renamed). */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.platform.protobuf';

/**
 * Kubernetes' name of the same Protobuf (the `k8s\0` envelope, 1.21's field numbers): what client-go sends and
 * asks for. The API server reads it and answers it by that name; a client configured with it talks as client-go.
 */
export const KUBERNETES_PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** Whether a media type (parameters ignored) names the Protobuf serialization, by either name. */
export function isProtobufMediaType(mediaType: string | undefined): boolean {
  const t = (mediaType ?? '').split(';')[0]?.trim().toLowerCase();
  return t === PROTOBUF_MEDIA_TYPE || t === KUBERNETES_PROTOBUF_MEDIA_TYPE;
}
/** The magic prefix of the Protobuf envelope. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Encodes and decodes API objects in one media type. */
export interface Codec {
  readonly mediaType: string;
  /** Serializes an object that has `apiVersion` and `kind`. */
  encode(obj: ApiObject): Buffer;
  /** Deserializes; throws `CodecError` on malformed input. */
  decode(data: Uint8Array): ApiObject;
}

const CODEC_ERROR = Symbol.for('platform.api.CodecError');

/** Malformed serialized data. */
export class CodecError extends Error {
  readonly [CODEC_ERROR] = true;
  constructor(message: string) {
    super(message);
    this.name = 'CodecError';
  }
}

/** Brand check for {@link CodecError}. */
export function isCodecError(err: unknown): err is CodecError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[CODEC_ERROR] === true;
}

/** The JSON codec. */
export const jsonCodec: Codec = {
  mediaType: JSON_MEDIA_TYPE,
  encode: (obj) => Buffer.from(JSON.stringify(obj)),
  decode: (data) => {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    } catch (err) {
      throw new CodecError(`invalid JSON: ${(err as Error).message}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new CodecError('invalid JSON: not an object');
    return value as ApiObject;
  },
};

/** True when `data` starts with the Protobuf envelope's magic prefix. */
export function hasProtobufMagic(data: Uint8Array): boolean {
  return data.length >= 4 && data[0] === 0x6b && data[1] === 0x38 && data[2] === 0x73 && data[3] === 0x00;
}

/**
 * An apiVersion whose group Kubernetes spells `<name>.k8s.io` in the platform's spelling (`<name>.platform`): the
 * same kind, as clients written for Kubernetes name it (the API server answers them in their spelling).
 */
function platformSpelling(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  return group.endsWith('.k8s.io')
    ? `${group.slice(0, -'.k8s.io'.length)}.platform${apiVersion.slice(slash)}`
    : apiVersion;
}

/** The Protobuf codec for the kinds of a scheme. */
export class ProtobufCodec implements Codec {
  readonly mediaType = PROTOBUF_MEDIA_TYPE;

  /** Schema id and message type per `apiVersion/kind`, looked up once (every object encoded or decoded needs them). */
  private readonly types = new Map<string, { id: string; type: protobuf.Type }>();
  private envelopeType: protobuf.Type | undefined;

  constructor(private readonly scheme: Scheme) {}

  private typeOf(apiVersion: string | undefined, kind: string | undefined): { id: string; type: protobuf.Type } {
    const cacheKey = `${apiVersion ?? ''}/${kind ?? ''}`;
    let t = this.types.get(cacheKey);
    if (t === undefined) {
      const s =
        apiVersion && kind
          ? (this.scheme.schemaFor(apiVersion, kind) ?? this.scheme.schemaFor(platformSpelling(apiVersion), kind))
          : undefined;
      if (!s || !s.$id)
        throw new CodecError(
          `no Protobuf type for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}`,
        );
      t = { id: s.$id, type: protoType(s.$id) };
      this.types.set(cacheKey, t);
    }
    return t;
  }

  private envelope(): protobuf.Type {
    return (this.envelopeType ??= unknownType());
  }

  /** The object's own message, without the envelope (used for embedded objects and by {@link encode}). */
  encodeRaw(obj: ApiObject): Uint8Array {
    const { id, type } = this.typeOf(obj.apiVersion, obj.kind);
    return type.encode(toProto(id, obj as Record<string, unknown>)).finish();
  }

  encode(obj: ApiObject): Buffer {
    const raw = this.encodeRaw(obj);
    const envelope = this.envelope()
      .encode({ typeMeta: { apiVersion: obj.apiVersion, kind: obj.kind }, raw })
      .finish();
    return Buffer.concat([PROTOBUF_MAGIC, envelope]);
  }

  decode(data: Uint8Array): ApiObject {
    if (!hasProtobufMagic(data)) throw new CodecError('provided data does not have the Protobuf envelope prefix');
    let envelope: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array; contentEncoding?: string };
    try {
      envelope = this.envelope().decode(data.subarray(4)) as typeof envelope;
    } catch (err) {
      throw new CodecError(`malformed Protobuf envelope: ${(err as Error).message}`);
    }
    if (envelope.contentEncoding)
      throw new CodecError(`unsupported content encoding ${JSON.stringify(envelope.contentEncoding)}`);
    const apiVersion = envelope.typeMeta?.apiVersion;
    const kind = envelope.typeMeta?.kind;
    return this.decodeRaw(envelope.raw ?? new Uint8Array(0), apiVersion ?? '', kind ?? '');
  }

  /** Decodes an object's own message, given its apiVersion and kind from elsewhere. */
  decodeRaw(raw: Uint8Array, apiVersion: string, kind: string): ApiObject {
    const { id, type } = this.typeOf(apiVersion, kind);
    let msg: Record<string, unknown>;
    try {
      msg = type.decode(raw) as unknown as Record<string, unknown>;
    } catch (err) {
      throw new CodecError(`malformed Protobuf ${kind}: ${(err as Error).message}`);
    }
    return { apiVersion, kind, ...fromProto(id, msg) };
  }
}
