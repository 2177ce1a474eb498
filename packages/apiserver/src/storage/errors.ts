/**
 * Typed storage errors (model: apiserver `pkg/storage/errors.go`).
 *
 * Every failure of a `Store`, of the typed `Storage` and of the cacher is a `StorageError` with a `code`. Callers branch
 * on the code through `isStorageError(err, code)`, a brand check that works across duplicate module copies and Jest
 * module registries (never `instanceof`). The registry translates codes to API `Status` errors in one place:
 * KeyNotFound → 404, KeyExists → 409 AlreadyExists, Conflict → 409, InvalidObject → 500 (or 409 for failed
 * preconditions), Compacted → 410 Expired, RevisionTooLarge → 504 with Retry-After, TooLarge → 413, Unreachable and
 * Timeout → 503/504, Unsupported → 500 (a bug: an operation the backend does not implement), InvalidRequest → 400
 * (a malformed continue token, resourceVersion or option combination).
 */
import { type KeyValue, type Revision } from './interface';

/** The machine-readable reason of a storage failure. */
export type StorageErrorCode =
  | 'KeyNotFound'
  | 'KeyExists'
  | 'Conflict'
  | 'Unreachable'
  | 'Timeout'
  | 'InvalidObject'
  | 'Compacted'
  | 'RevisionTooLarge'
  | 'TooLarge'
  | 'Unsupported'
  | 'InvalidRequest';

const BRAND = Symbol.for('@platform/apiserver/storage/StorageError');

/** Extra data a storage error may carry, depending on its code. */
export interface StorageErrorDetails {
  /** The store key the operation was about, when there is one. */
  key?: string;
  /** Compacted: the store's compacted revision (reads and watches must start at or after it). */
  compactedRevision?: Revision;
  /** RevisionTooLarge: the newest revision the store or cache has. */
  currentRevision?: Revision;
  /** Conflict: the key's current value, so that a compare-and-swap loop can retry without another read. */
  current?: KeyValue;
  /** The underlying error (for Unreachable, Timeout, InvalidObject). */
  cause?: unknown;
}

/**
 * A storage failure. Construct it through the helpers below (`keyNotFound`, `conflict`, ...) so that messages are
 * uniform. Instances are immutable.
 */
export class StorageError extends Error {
  /** Brand for `isStorageError`; survives duplicate module copies (a global symbol). */
  readonly [BRAND] = true;
  readonly code: StorageErrorCode;
  readonly key: string | undefined;
  readonly compactedRevision: Revision | undefined;
  readonly currentRevision: Revision | undefined;
  readonly current: KeyValue | undefined;

  constructor(code: StorageErrorCode, message: string, details: StorageErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'StorageError';
    this.code = code;
    this.key = details.key;
    this.compactedRevision = details.compactedRevision;
    this.currentRevision = details.currentRevision;
    this.current = details.current;
  }
}

/**
 * True when `err` is a StorageError (of the given code, when one is given). A brand check, not `instanceof`.
 */
export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  if (typeof err !== 'object' || err === null || (err as Record<symbol, unknown>)[BRAND] !== true) return false;
  return code === undefined || (err as StorageError).code === code;
}

/** The key does not exist (get without ignoreNotFound, update, delete). */
export function keyNotFound(key: string): StorageError {
  return new StorageError('KeyNotFound', `key not found: ${key}`, { key });
}

/** A create found the key already present. */
export function keyExists(key: string): StorageError {
  return new StorageError('KeyExists', `key exists: ${key}`, { key });
}

/** A compare-and-swap failed: the key's mod revision is not the expected one. `current` is the key's value now. */
export function conflict(key: string, expected: Revision, current: KeyValue): StorageError {
  return new StorageError(
    'Conflict',
    `compare failed for ${key}: expected mod revision ${expected}, current ${current.modRevision}`,
    { key, current },
  );
}

/** The requested revision has been compacted away. */
export function compacted(requested: Revision, compactedRevision: Revision, key?: string): StorageError {
  return new StorageError(
    'Compacted',
    `revision ${requested} has been compacted (compacted revision ${compactedRevision})`,
    { key, compactedRevision },
  );
}

/** The requested revision is newer than the store (or the cache, after waiting) has. */
export function revisionTooLarge(requested: Revision, currentRevision: Revision): StorageError {
  return new StorageError('RevisionTooLarge', `too large resource version: ${requested}, current: ${currentRevision}`, {
    currentRevision,
  });
}

/** The value (with its key) exceeds the request size limit; nothing was sent. */
export function tooLarge(key: string, bytes: number, limit: number): StorageError {
  return new StorageError('TooLarge', `request for ${key} is too large: ${bytes} bytes, limit ${limit}`, { key });
}

/** The store could not be reached. */
export function unreachable(message: string, cause?: unknown): StorageError {
  return new StorageError('Unreachable', `store unreachable: ${message}`, { cause });
}

/** The store did not answer in time. */
export function timeout(message: string, cause?: unknown): StorageError {
  return new StorageError('Timeout', `store timeout: ${message}`, { cause });
}

/** A stored value could not be decoded, or a precondition on the object failed. */
export function invalidObject(key: string, message: string, cause?: unknown): StorageError {
  return new StorageError('InvalidObject', `invalid object at ${key}: ${message}`, { key, cause });
}

/** The backend does not implement the operation or option (only what the API server issues is implemented). */
export function unsupported(message: string): StorageError {
  return new StorageError('Unsupported', `unsupported storage operation: ${message}`);
}

/** The request's options are malformed or contradict each other (HTTP 400). */
export function invalidRequest(message: string): StorageError {
  return new StorageError('InvalidRequest', message);
}

/** A precondition (uid or resourceVersion) did not hold on the stored object (HTTP 409, as in Kubernetes). */
export function preconditionFailed(key: string, message: string): StorageError {
  return new StorageError('InvalidObject', `Precondition failed: ${message}`, { key });
}
