/** A JSON `Codec` for tests (the real JSON/Protobuf codecs live in @platform/api). */
import { type ApiObject, type Codec } from '../api-object';

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

/** Encodes objects as JSON; decoding rejects anything that is not a JSON object. */
export const jsonCodec: Codec = {
  encode(obj: ApiObject): Uint8Array {
    return enc.encode(JSON.stringify(obj));
  },
  decode(data: Uint8Array, key: string): ApiObject {
    const v: unknown = JSON.parse(dec.decode(data));
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new Error(`value at ${key} is not a JSON object`);
    return v as ApiObject;
  },
};
