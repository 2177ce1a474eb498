/**
 * The minimal structural view of an API object that storage needs. The full types come from @platform/api; these are
 * kept structural so that any of them fits.
 */

/** The object metadata storage reads or sets. */
export interface StoredObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  /** Set by storage on every object it returns: the modRevision as a decimal string. Never stored. */
  resourceVersion?: string;
  [field: string]: unknown;
}

/** Any API object. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: StoredObjectMeta;
  [field: string]: unknown;
}

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
