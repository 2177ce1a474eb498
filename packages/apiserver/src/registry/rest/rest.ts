/**
 * The contracts between the endpoint handlers and the registry (model: apiserver `pkg/registry/rest`).
 *
 * A handler never touches storage: it calls one of the capability interfaces below, which a resource's store
 * implements only where the resource supports the verb. The installer registers a route for a verb only when the
 * store has that capability (checked with the type guards at the end of this file).
 *
 * A resource's own behaviour lives in its strategy (defaults, validation, what status may change, generation),
 * plugged into the one generic store that implements every verb.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { type ApiObject, type DeleteOptions, type FieldError, type Kind, type Status } from '@platform/api';

/** Who is making a request (filled by authentication; empty until then). */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** Per-request facts every registry call gets. */
export interface RequestContext {
  /** The namespace of the request path ('' for cluster-scoped requests and lists across namespaces). */
  namespace: string;
  user?: UserInfo;
  /** The current time in milliseconds (injected so tests control timestamps). */
  now(): number;
  /** Aborted when the client goes away or the request times out. */
  signal?: AbortSignal;
}

/** Options of create, update and patch. */
export interface WriteOptions {
  /** `dryRun=All`: run everything but the final storage write. */
  dryRun: boolean;
  fieldManager?: string;
}

/** The admission callback run on the final object just before it is stored (validating admission). */
export type ValidateObjectFunc = (obj: ApiObject, old?: ApiObject) => Promise<void>;

/** Computes the new object of an update from the current one (`undefined` when it does not exist yet). */
export interface UpdatedObjectInfo {
  /** The name of the object being updated. */
  name: string;
  updatedObject(ctx: RequestContext, current: ApiObject | undefined): Promise<ApiObject>;
}

/** List options after parsing the query (selectors already compiled). */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: '' | 'NotOlderThan' | 'Exact';
  limit?: number;
  continue?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
}

/** A list result in its JSON form: `{apiVersion, kind, metadata, items}`. */
export interface ObjectList {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: ApiObject[];
}

/** One event of a watch, as the API serves it. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: ApiObject | Status;
}

/** The options of a delete as the registry gets them: DeleteOptions, with dry-run decided. */
export type DeleteRequest = Omit<DeleteOptions, 'dryRun' | 'apiVersion' | 'kind'> & { dryRun: boolean };

/** The outcome of a delete: the object (or a Status), and whether it is gone (false: finalizers or grace pending). */
export interface DeleteResult {
  object: ApiObject | Status;
  deleted: boolean;
}

/** Strategy: how one resource is created. */
export interface CreateStrategy<T extends ApiObject = ApiObject> {
  /** Normalise before validation (clear status, set generation). Must not fail. */
  prepareForCreate(ctx: RequestContext, obj: T): void;
  /** Report every problem. Must not mutate. */
  validate(ctx: RequestContext, obj: T): FieldError[];
  /** Non-fatal warnings returned in `Warning` headers. */
  warningsOnCreate?(ctx: RequestContext, obj: T): string[];
  /** Runs after validation passes; may mutate into canonical form. */
  canonicalize?(obj: T): void;
}

/** Strategy: how one resource (or its status subresource) is updated. */
export interface UpdateStrategy<T extends ApiObject = ApiObject> {
  /** PUT may create a missing object (true for a few resources, such as endpoints). */
  readonly allowCreateOnUpdate: boolean;
  /** An update without `metadata.resourceVersion` is accepted (last write wins). */
  readonly allowUnconditionalUpdate: boolean;
  /** Normalise the new object from the old one (keep status on the main resource, keep spec on status). */
  prepareForUpdate(ctx: RequestContext, obj: T, old: T): void;
  validateUpdate(ctx: RequestContext, obj: T, old: T): FieldError[];
  warningsOnUpdate?(ctx: RequestContext, obj: T, old: T): string[];
  canonicalize?(obj: T): void;
}

/** Strategy: how one resource is deleted. */
export interface DeleteStrategy<T extends ApiObject = ApiObject> {
  /**
   * Graceful deletion: the grace period to apply for this delete, given the one requested (undefined: the
   * object's default). Returning a positive number leaves the object in place with `deletionTimestamp` and
   * `deletionGracePeriodSeconds` set, for its owner (the node agent, for pods) to finish. Returning 0 deletes now.
   * Absent: no graceful deletion.
   */
  gracePeriod?(ctx: RequestContext, obj: T, requested: number | undefined): number;
  /**
   * True while something other than `metadata.finalizers` holds the object (namespaces: `spec.finalizers`). Such an
   * object is marked terminating on delete instead of removed, and removed by the update that clears the last hold.
   * Absent: only metadata finalizers and the grace period hold an object.
   */
  pendingFinalization?(obj: T): boolean;
  /** Changes an object being marked terminating (namespaces: phase Terminating). Must not fail. */
  prepareForDelete?(obj: T): void;
}

/** get */
export interface Getter {
  /** `shared`: the caller only reads the object (it may be the watch cache's frozen copy). */
  get(ctx: RequestContext, name: string, o: { resourceVersion?: string; shared?: boolean }): Promise<ApiObject>;
}

/** list */
export interface Lister {
  /** `shared`: the caller only reads the items (the array may be the watch cache's, frozen, shared by lists). */
  list(ctx: RequestContext, o: ListOptions & { shared?: boolean }): Promise<ObjectList>;
}

/** watch */
export interface Watcher {
  watch(ctx: RequestContext, o: ListOptions): AsyncIterable<WatchEvent>;
}

/** create */
export interface Creater {
  create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject>;
}

/**
 * create of a subresource that reads the parent's name from the URL (Kubernetes' `NamedCreater`), such as
 * `serviceaccounts/<name>/token`, whose body does not name the parent.
 */
export interface NamedCreater {
  createNamed(
    ctx: RequestContext,
    name: string,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject>;
}

/** update (PUT) and the write half of patch */
export interface Updater {
  /** Returns the stored object and whether it was created by this call. */
  update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }>;
}

/** delete */
export interface GracefulDeleter {
  delete(
    ctx: RequestContext,
    name: string,
    validate: ValidateObjectFunc | undefined,
    o: DeleteRequest,
  ): Promise<DeleteResult>;
}

/** deletecollection */
export interface CollectionDeleter {
  deleteCollection(
    ctx: RequestContext,
    validate: ValidateObjectFunc | undefined,
    o: DeleteRequest,
    list: ListOptions,
  ): Promise<ObjectList>;
}

/**
 * A subresource served by another server (`pods/log`, `pods/exec`): plain requests of `connectMethods` are handed
 * to `connect`, which writes the response.
 */
export interface Connecter {
  readonly connectMethods: readonly string[];
  connect(ctx: RequestContext, name: string, req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** What every REST storage has: the kind it serves. */
export interface RestStorage {
  readonly kind: Kind;
}

function has<K extends string>(s: object, method: K): s is Record<K, (...args: never[]) => unknown> {
  return typeof (s as Record<string, unknown>)[method] === 'function';
}

/** Type guards the installer uses to decide which verbs to serve. */
export const capabilities = {
  getter: (s: object): s is Getter => has(s, 'get'),
  lister: (s: object): s is Lister => has(s, 'list'),
  watcher: (s: object): s is Watcher => has(s, 'watch'),
  creater: (s: object): s is Creater => has(s, 'create'),
  namedCreater: (s: object): s is NamedCreater => has(s, 'createNamed'),
  updater: (s: object): s is Updater => has(s, 'update'),
  deleter: (s: object): s is GracefulDeleter => has(s, 'delete'),
  collectionDeleter: (s: object): s is CollectionDeleter => has(s, 'deleteCollection'),
  connecter: (s: object): s is Connecter => has(s, 'connect'),
};

/**
 * `ctx` for the work of `namespace`: `ctx` itself when it is already that namespace's, else a copy. The copy keeps
 * every property as it is, a getter too: the signal of a request is made only when read (`filters/timeout.ts`),
 * which a spread copy would do.
 */
export function withNamespace(ctx: RequestContext, namespace: string): RequestContext {
  if (ctx.namespace === namespace) return ctx;
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(ctx)) as RequestContext;
  copy.namespace = namespace;
  return copy;
}
