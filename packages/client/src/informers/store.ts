/**
 * The informer's cache (model: client-go `tools/cache/thread_safe_store.go`, `index.go`): objects by
 * `namespace/name` key, with indexes kept up to date on every write. Objects in it are shared with every reader:
 * callers must not mutate them (`structuredClone` first).
 */
import { type ApiObject } from '@platform/api';

/** An index function: the index values of an object (an object may be under several). */
export type IndexFunc<T> = (obj: T) => string[];

/** The key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function metaNamespaceKey(obj: ApiObject): string {
  const m = obj.metadata;
  if (!m?.name) throw new Error('object has no metadata.name');
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
}

/** Splits a key into namespace ('' for cluster-scoped) and name. */
export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** The name of the namespace index. */
export const NAMESPACE_INDEX = 'namespace';
/** The name of the label index (`key=value` values). */
export const LABEL_INDEX = 'labels';

/** Indexes objects by namespace. */
export const namespaceIndexFunc: IndexFunc<ApiObject> = (o) => [o.metadata?.namespace ?? ''];
/** Indexes objects by each of their `key=value` labels. */
export const labelIndexFunc: IndexFunc<ApiObject> = (o) =>
  Object.entries(o.metadata?.labels ?? {}).map(([k, v]) => `${k}=${v}`);

/** A read-only view of the cache, with indexes. */
export interface Indexer<T> {
  get(key: string): T | undefined;
  list(): T[];
  listKeys(): string[];
  /** The objects under one value of an index; throws when the index does not exist. */
  byIndex(indexName: string, value: string): T[];
  /** The index values in use. */
  indexValues(indexName: string): string[];
}

/** The writable cache an informer owns. */
export class Store<T extends ApiObject> implements Indexer<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name → value → keys. */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexers(indexers);
  }

  /** Adds indexes; existing objects are indexed at once. Throws on a name already in use. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, f] of Object.entries(indexers)) {
      if (this.indexers.has(name)) throw new Error(`indexer ${JSON.stringify(name)} already exists`);
      this.indexers.set(name, f);
      const index = new Map<string, Set<string>>();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) for (const v of f(obj)) add(index, v, key);
    }
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`index ${JSON.stringify(indexName)} does not exist`);
    return [...(index.get(value) ?? [])].map((k) => this.items.get(k) as T);
  }

  indexValues(indexName: string): string[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`index ${JSON.stringify(indexName)} does not exist`);
    return [...index.keys()];
  }

  /** Adds or replaces an object; returns the previous one. */
  set(obj: T): T | undefined {
    const key = metaNamespaceKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, f] of this.indexers)
      for (const v of f(obj)) add(this.indices.get(name) as Map<string, Set<string>>, v, key);
    return old;
  }

  /** Removes an object by key; returns it. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private unindex(key: string, obj: T): void {
    for (const [name, f] of this.indexers) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      for (const v of f(obj)) {
        const keys = index.get(v);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(v);
      }
    }
  }
}

function add(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) index.set(value, (keys = new Set()));
  keys.add(key);
}
