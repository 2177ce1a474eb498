/**
 * What the generic store needs from storage: the typed `Storage` of STYLE.md §3.1 (`storage/storage.ts`), which the
 * storage layer implements over a backend `Store` and the cacher implements in front of it. Declared here as the
 * registry's side of the contract; `Storage` is assignable to it. Errors are `StorageError`s (`storage/errors.ts`),
 * translated into API errors in one place (`errors.ts`).
 */
import { type ApiObject } from '@platform/api';

/** Conditions an update or delete requires of the current object. */
export interface StoragePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Options of a list. `resourceVersion` follows Document 1's tables ('' = most recent, '0' = any). */
export interface StorageListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  limit?: number;
  continue?: string;
  /** Only objects for which this returns true are returned (selectors); paging counts matches only. */
  predicate?: (obj: ApiObject) => boolean;
  /** The caller only reads the items (the array may be the watch cache's, frozen and shared; see `Storage`). */
  shared?: boolean;
}

/** A page of objects. */
export interface StorageList {
  items: ApiObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A watch event from storage: `BOOKMARK` objects carry only `metadata.resourceVersion`. */
export interface StorageWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: ApiObject;
}

/** A running watch; `stop()` ends it. */
export interface StorageWatch extends AsyncIterable<StorageWatchEvent> {
  stop(): void;
}

/** The typed storage of one resource. */
export interface ObjectStorage {
  /** Stores a new object; KeyExists if present. Returns it with `metadata.resourceVersion` set. */
  create(key: string, obj: ApiObject, o?: { ttlSeconds?: number }): Promise<ApiObject>;
  /** KeyNotFound if absent. `resourceVersion` per Document 1's get table. */
  get(key: string, o?: { resourceVersion?: string; shared?: boolean }): Promise<ApiObject>;
  list(prefix: string, o?: StorageListOptions): Promise<StorageList>;
  /**
   * Read-modify-write with retries on conflict: `tryUpdate` gets the current object (`{}` when it is absent and
   * `ignoreNotFound` is set), and what it returns is written unless unchanged. `tryUpdate` may throw to abort.
   */
  guaranteedUpdate(
    key: string,
    tryUpdate: (current: ApiObject) => ApiObject | Promise<ApiObject>,
    o?: { ignoreNotFound?: boolean; preconditions?: StoragePreconditions; ttlSeconds?: number },
  ): Promise<ApiObject>;
  /** Deletes; returns the last state. KeyNotFound if absent; a precondition failure if one does not hold. */
  delete(key: string, o?: { preconditions?: StoragePreconditions }): Promise<ApiObject>;
  /** Watches `key`, or every key under it with `recursive`. */
  watch(
    key: string,
    o?: {
      resourceVersion?: string;
      recursive?: boolean;
      allowBookmarks?: boolean;
      predicate?: (obj: ApiObject) => boolean;
    },
  ): StorageWatch;
}
