/** The view of API objects storage works with, and the codec and key helpers. */

import { type ApiObject as ApiObjectType, type ObjectMeta } from '@platform/api';

/** The object metadata storage reads or sets (`resourceVersion` is set by storage on every object it returns). */
export type StoredObjectMeta = ObjectMeta;

/** Any API object (the type of @platform/api, so that codecs and the registry share it). */
export type ApiObject = ApiObjectType;

/**
 * Turns objects into stored bytes and back (the real JSON/Protobuf codecs come from @platform/api). `decode` throws
 * on bytes it cannot decode; storage turns that into an InvalidObject error naming `key`.
 */
export interface Codec {
  encode(obj: ApiObject): Uint8Array;
  decode(data: Uint8Array, key: string): ApiObject;
}

/** The storage key of an object: `<prefix>/<resource>/<namespace>/<name>` (namespaced) or without namespace. */
export function objectKey(prefix: string, resource: string, namespace: string | undefined, name: string): string {
  for (const [what, v] of [
    ['resource', resource],
    ['name', name],
    ['namespace', namespace],
  ] as const) {
    if (v === undefined) continue;
    if (v === '' || v.includes('/') || v === '.' || v === '..' || v.includes('\0')) {
      throw new TypeError(`invalid ${what} for a storage key: ${JSON.stringify(v)}`);
    }
  }
  const base = `${prefix.replace(/\/+$/, '')}/${resource}/`;
  return namespace === undefined ? `${base}${name}` : `${base}${namespace}/${name}`;
}
