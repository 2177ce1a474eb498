/** Argument checks shared by the backends, so that both reject bad input the same way before doing any I/O. */
import { tooLarge } from './errors';
import { keyBytes, MAX_REQUEST_BYTES, REQUEST_OVERHEAD_BYTES, type Revision } from './interface';

/** Throws a TypeError naming the problem when `key` is not a usable store key (non-empty, no NUL). */
export function checkKey(key: unknown, what = 'key'): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) throw new TypeError(`${what} must be a non-empty string`);
  if (key.includes('\0')) throw new TypeError(`${what} must not contain NUL characters: ${JSON.stringify(key)}`);
}

/** Throws TooLarge when key + value exceed the request limit; TypeError when value is not bytes. */
export function checkValue(key: string, value: unknown): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`value for ${key} must be a Uint8Array`);
  const bytes = keyBytes(key) + value.byteLength + REQUEST_OVERHEAD_BYTES;
  if (bytes > MAX_REQUEST_BYTES)
    throw tooLarge(key, value.byteLength + keyBytes(key), MAX_REQUEST_BYTES - REQUEST_OVERHEAD_BYTES);
}

/** Throws a TypeError unless `ttl` is undefined or a positive safe integer number of seconds. */
export function checkTtl(ttl: unknown): asserts ttl is number | undefined {
  if (ttl === undefined) return;
  if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl <= 0) {
    throw new TypeError(`ttlSeconds must be a positive integer, got ${String(ttl)}`);
  }
}

/** Throws a TypeError unless `rev` is a non-negative bigint. */
export function checkRevision(rev: unknown, what = 'revision'): asserts rev is Revision {
  if (typeof rev !== 'bigint' || rev < 0n)
    throw new TypeError(`${what} must be a non-negative bigint, got ${String(rev)}`);
}

/** Throws a TypeError unless `limit` is undefined or a positive safe integer. */
export function checkLimit(limit: unknown): asserts limit is number | undefined {
  if (limit === undefined) return;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit <= 0) {
    throw new TypeError(`limit must be a positive integer, got ${String(limit)}`);
  }
}
