/**
 * Typed clients of one resource (model: client-go's generated typed clients, here one generic class for every
 * kind of the scheme): get, list, watch, create, update, patch (each patch type), delete, deletecollection, and
 * the subresources (`status`, `scale`, `binding`, `eviction`...). Paths follow Document 1:
 * `/api/v1/[namespaces/<ns>/]<resource>[/<name>[/<subresource>]]` for the core group, `/apis/<group>/<version>/...`
 * otherwise.
 */
import {
  type ApiObject,
  type DeleteOptions,
  JSON_MEDIA_TYPE,
  type Kind,
  type ListMeta,
  type Status,
} from '@platform/api';
import { type Static, type TObject } from '@sinclair/typebox';

import { type Watch, watchFromResponse, watchOverWebSocket } from '../watch/watch';
import { type Query, type RestClient } from './rest-client';

/** A list response. */
export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** Options of list and watch (Document 1 "list and watch"). */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  limit?: number;
  continue?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  signal?: AbortSignal;
}

/** Options of writes. */
export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
}

/** The patch types the server accepts. */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** The Content-Type of each patch type. */
export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

/** How watches are carried. */
export type WatchTransport = 'http' | 'websocket';

function listQuery(o: ListOptions): Query {
  return {
    labelSelector: o.labelSelector || undefined,
    fieldSelector: o.fieldSelector || undefined,
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
    limit: o.limit,
    continue: o.continue || undefined,
    timeoutSeconds: o.timeoutSeconds,
    allowWatchBookmarks: o.allowWatchBookmarks || undefined,
  };
}

function writeQuery(o: WriteOptions): Query {
  return { dryRun: o.dryRun ? 'All' : undefined, fieldManager: o.fieldManager };
}

/**
 * The client of one resource, cluster-wide or in one namespace. `T` is the kind's type. Every method throws the
 * StatusErrors of {@link RestClient}.
 */
export class ResourceClient<T extends ApiObject = ApiObject> {
  constructor(
    readonly rest: RestClient,
    readonly kind: Kind,
    /** The namespace of namespaced resources; undefined lists and watches across all namespaces. */
    readonly ns?: string,
    /** `websocket` carries watches over a WebSocket instead of a chunked response. */
    readonly watchTransport: WatchTransport = 'http',
  ) {
    if (!kind.namespaced && ns !== undefined)
      throw new Error(
        `${kind.plural}.${kind.group || 'core'} is cluster-scoped: it has no namespace ${JSON.stringify(ns)}`,
      );
  }

  /** The same resource in namespace `ns`. */
  namespace(ns: string): ResourceClient<T> {
    return new ResourceClient<T>(this.rest, this.kind, ns, this.watchTransport);
  }

  /** The path of the collection, or of one object and its subresource. */
  path(name?: string, subresource?: string, ns = this.ns): string {
    const k = this.kind;
    let p = k.group === '' ? `/api/${k.version}` : `/apis/${k.group}/${k.version}`;
    if (k.namespaced && ns !== undefined) p += `/namespaces/${encodeURIComponent(ns)}`;
    p += `/${k.plural}`;
    if (name !== undefined) {
      if (name === '') throw new Error(`${k.kind}: a resource name is required`);
      p += `/${encodeURIComponent(name)}`;
      if (subresource) p += `/${subresource}`;
    }
    return p;
  }

  private nsOf(obj: ApiObject): string | undefined {
    if (!this.kind.namespaced) return undefined;
    const ns = obj.metadata?.namespace ?? this.ns;
    if (ns === undefined)
      throw new Error(`${this.kind.kind}: the object has no metadata.namespace and the client has no namespace`);
    return ns;
  }

  private nameOf(obj: ApiObject): string {
    const name = obj.metadata?.name;
    if (!name) throw new Error(`${this.kind.kind}: the object has no metadata.name`);
    return name;
  }

  private typed(obj: ApiObject): ApiObject {
    return { ...obj, apiVersion: obj.apiVersion ?? this.kind.apiVersion, kind: obj.kind ?? this.kind.kind };
  }

  /** GET one object. `resourceVersion: '0'` may be served from the watch cache. */
  get(name: string, o: { resourceVersion?: string; signal?: AbortSignal } = {}): Promise<T> {
    return this.rest.request<T>({
      method: 'GET',
      path: this.path(name),
      query: { resourceVersion: o.resourceVersion },
      signal: o.signal,
    });
  }

  /** One page of a list (use `limit` and `continue` to page). */
  async list(o: ListOptions = {}): Promise<ObjectList<T>> {
    const list = (await this.rest.request<ApiObject>({
      method: 'GET',
      path: this.path(),
      query: listQuery(o),
      signal: o.signal,
    })) as Partial<ObjectList<T>>;
    // Protobuf leaves an empty repeated field out: an empty list has no `items`.
    return { ...list, items: list.items ?? [] };
  }

  /**
   * Starts a watch. Resolves when the response starts (a bad selector is a rejected promise); later errors,
   * including an expired version, are thrown from the iteration. Our API server sends the response head with the
   * first event, so on a quiet resource this waits for one (pass `signal` to give up).
   */
  async watch(o: ListOptions = {}): Promise<Watch<T>> {
    const query = { ...listQuery(o), watch: 'true' };
    if (this.watchTransport === 'websocket') {
      const q: Record<string, string> = {};
      for (const [k, v] of Object.entries(query)) if (v !== undefined) q[k] = String(v);
      return watchOverWebSocket<T>(this.rest, this.path(), q, o.signal);
    }
    const res = await this.rest.stream({ path: this.path(), query, signal: o.signal });
    return watchFromResponse<T>(this.rest, res);
  }

  /** POST a new object (its namespace is the object's, else the client's). */
  create(obj: T, o: WriteOptions = {}): Promise<T> {
    return this.rest.request<T>({
      method: 'POST',
      path: this.path(undefined, undefined, this.nsOf(obj)),
      query: writeQuery(o),
      body: this.typed(obj),
      signal: o.signal,
    });
  }

  /** PUT a whole object; fails with 409 Conflict when its resourceVersion is stale. */
  update(obj: T, o: WriteOptions = {}): Promise<T> {
    return this.rest.request<T>({
      method: 'PUT',
      path: this.path(this.nameOf(obj), undefined, this.nsOf(obj)),
      query: writeQuery(o),
      body: this.typed(obj),
      signal: o.signal,
    });
  }

  /** PUT the `status` subresource (the spec is left as stored). */
  updateStatus(obj: T, o: WriteOptions = {}): Promise<T> {
    return this.rest.request<T>({
      method: 'PUT',
      path: this.path(this.nameOf(obj), 'status', this.nsOf(obj)),
      query: writeQuery(o),
      body: this.typed(obj),
      signal: o.signal,
    });
  }

  /** PATCH an object (or a subresource of it) with a patch of `type`. */
  patch(
    name: string,
    type: PatchType,
    patch: unknown,
    o: WriteOptions & { subresource?: string; force?: boolean } = {},
  ): Promise<T> {
    const body = Buffer.isBuffer(patch)
      ? patch
      : Buffer.from(typeof patch === 'string' ? patch : JSON.stringify(patch));
    return this.rest.request<T>({
      method: 'PATCH',
      path: this.path(name, o.subresource),
      query: { ...writeQuery(o), force: o.force || undefined },
      body,
      contentType: PATCH_CONTENT_TYPES[type],
      signal: o.signal,
    });
  }

  /**
   * DELETE an object. Resolves with what the server returned: the object (when deletion is pending on
   * finalizers or graceful termination) or a Success Status.
   */
  delete(
    name: string,
    o: Omit<DeleteOptions, 'apiVersion' | 'kind'> & { signal?: AbortSignal } = {},
  ): Promise<T | Status> {
    const { signal, ...opts } = o;
    const hasBody = Object.keys(opts).length > 0;
    return this.rest.request<T>({
      method: 'DELETE',
      path: this.path(name),
      body: hasBody ? ({ apiVersion: 'v1', kind: 'DeleteOptions', ...opts } as ApiObject) : undefined,
      contentType: JSON_MEDIA_TYPE,
      signal,
    });
  }

  /** DELETE every object the selectors match (in the client's namespace, or cluster-wide). */
  deleteCollection(o: ListOptions & Omit<DeleteOptions, 'apiVersion' | 'kind'> = {}): Promise<ObjectList<T> | Status> {
    const {
      labelSelector,
      fieldSelector,
      resourceVersion,
      resourceVersionMatch,
      limit,
      timeoutSeconds,
      signal,
      ...opts
    } = o;
    return this.rest.request<ApiObject>({
      method: 'DELETE',
      path: this.path(),
      query: listQuery({ labelSelector, fieldSelector, resourceVersion, resourceVersionMatch, limit, timeoutSeconds }),
      body:
        Object.keys(opts).length > 0 ? ({ apiVersion: 'v1', kind: 'DeleteOptions', ...opts } as ApiObject) : undefined,
      contentType: JSON_MEDIA_TYPE,
      signal,
    }) as Promise<ObjectList<T> | Status>;
  }

  /** GET a subresource (`scale`, `status`, `log`...). */
  getSubresource<R extends ApiObject = ApiObject>(
    name: string,
    subresource: string,
    o: { signal?: AbortSignal } = {},
  ): Promise<R> {
    return this.rest.request<R>({ method: 'GET', path: this.path(name, subresource), signal: o.signal });
  }

  /** POST to a subresource (`binding`, `eviction`, `token`). */
  createSubresource<R extends ApiObject = ApiObject>(
    name: string,
    subresource: string,
    body: ApiObject,
    o: WriteOptions = {},
  ): Promise<R> {
    return this.rest.request<R>({
      method: 'POST',
      path: this.path(name, subresource),
      query: writeQuery(o),
      body,
      signal: o.signal,
    });
  }

  /** PUT a subresource (`scale`, `status`). */
  updateSubresource<R extends ApiObject = ApiObject>(
    name: string,
    subresource: string,
    body: ApiObject,
    o: WriteOptions = {},
  ): Promise<R> {
    return this.rest.request<R>({
      method: 'PUT',
      path: this.path(name, subresource),
      query: writeQuery(o),
      body,
      signal: o.signal,
    });
  }
}

/**
 * The entry point: a client per kind of the scheme, sharing one {@link RestClient} (its connection pool and rate
 * limit).
 */
export class Clientset {
  constructor(
    readonly rest: RestClient,
    readonly o: { watchTransport?: WatchTransport } = {},
  ) {}

  /** The client of a kind object (`clientset.resource(PodKind)`), typed by its schema. */
  resource<S extends TObject>(kind: Kind<S>, namespace?: string): ResourceClient<Static<S> & ApiObject> {
    return new ResourceClient<Static<S> & ApiObject>(
      this.rest,
      kind as unknown as Kind,
      namespace,
      this.o.watchTransport,
    );
  }

  /** The client of a kind by apiVersion and kind name (`v1`, `Pod`); throws when the scheme does not know it. */
  forKind(apiVersion: string, kind: string, namespace?: string): ResourceClient {
    const k = this.rest.scheme.kindFor(apiVersion, kind);
    if (!k) throw new Error(`unknown kind ${kind} in ${apiVersion}`);
    return new ResourceClient(this.rest, k, namespace, this.o.watchTransport);
  }

  /** The client of a resource by group, version and plural name (`apps`, `v1`, `deployments`). */
  forResource(group: string, version: string, resource: string, namespace?: string): ResourceClient {
    const k = this.rest.scheme.kindForResource({ group, version }, resource);
    if (!k) throw new Error(`unknown resource ${resource} in ${group ? `${group}/` : ''}${version}`);
    return new ResourceClient(this.rest, k, namespace, this.o.watchTransport);
  }
}
