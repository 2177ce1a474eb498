/**
 * The generic registry store: every verb, implemented once for every resource (model: apiserver
 * `pkg/registry/generic/registry/store.go`). A resource supplies only a `StoreDefinition`: its kind, strategies,
 * and a few switches.
 *
 * Create: system metadata (uid, creationTimestamp) → generateName → prepareForCreate → validate (422 with causes)
 *   → canonicalize → validating admission → storage create.
 * Update: inside storage's guaranteedUpdate: new object from the current one → resourceVersion check (409 when
 *   stale) → system metadata kept from the current object → prepareForUpdate → validate → admission → write
 *   (skipped by storage when nothing changed). An update that removes the last finalizer of an object being deleted
 *   deletes it.
 * Delete: preconditions → admission → graceful deletion and finalizers (propagationPolicy) → either mark the
 *   object terminating (deletionTimestamp; 202) or remove it (200).
 * Dry-run runs every step but the storage write.
 */
import { randomUUID } from 'node:crypto';

import {
  alreadyExists,
  type ApiObject,
  badRequest,
  conflict,
  type FieldError,
  FieldPath,
  field,
  generateNameConflict,
  type GroupResource,
  invalid,
  isStatusError,
  type Kind,
  notFound,
  type ObjectMeta,
  successStatus,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validatePathSegmentName,
  nameIsDNSSubdomain,
  type NameValidator,
} from '@platform/api';

import { isStorageError } from '../../storage/errors';
import {
  capabilities,
  type CollectionDeleter,
  type Creater,
  type CreateStrategy,
  type DeleteRequest,
  type DeleteResult,
  type DeleteStrategy,
  type Getter,
  type GracefulDeleter,
  type Lister,
  type ListOptions,
  type ObjectList,
  type RequestContext,
  type UpdatedObjectInfo,
  type Updater,
  type UpdateStrategy,
  type ValidateObjectFunc,
  type Watcher,
  type WatchEvent,
  type WriteOptions,
} from '../rest/rest';
import { interpretStorageError } from './errors';
import { type ObjectStorage } from './storage-interface';

/** Everything a resource declares to get a full REST store. */
export interface StoreDefinition {
  kind: Kind;
  /** Storage key prefix of the resource, under the store prefix (`/registry/pods`). */
  keyPrefix: string;
  storage: ObjectStorage;
  createStrategy: CreateStrategy;
  updateStrategy: UpdateStrategy;
  deleteStrategy?: DeleteStrategy;
  /** How names are validated (default: DNS-1123 subdomain). */
  nameValidator?: NameValidator;
  /** Objects expire this many seconds after each write (events: `--event-ttl`). */
  ttlSeconds?: number;
  /** DELETE answers with the deleted object instead of a Success Status (true for most built-in kinds). */
  returnDeletedObject?: boolean;
  /** Builds the selector predicate of a list or watch; throws a 400 StatusError for a bad selector. */
  predicate: (o: ListOptions) => ((obj: ApiObject) => boolean) | undefined;
  /** Workers for deletecollection (`--delete-collection-workers`). */
  deleteCollectionWorkers?: number;
  /** Random suffix of generated names (injectable for tests). */
  randomSuffix?: () => string;
}

/** The characters Kubernetes uses in generated name suffixes (no vowels, no ambiguous characters). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const GENERATED_SUFFIX_LENGTH = 5;
/** generateName prefixes are cut so that prefix + suffix stays a valid name. */
const MAX_GENERATED_NAME_LENGTH = 63;

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++)
    s += SUFFIX_ALPHABET[Math.floor(Math.random() * SUFFIX_ALPHABET.length)];
  return s;
}

/** Metav1.Time text of a millisecond time: second precision, UTC. */
export function timeText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The finalizers the garbage collector acts on. */
const ORPHAN = 'orphan';
const FOREGROUND = 'foregroundDeletion';

function meta(obj: ApiObject): ObjectMeta {
  if (!obj.metadata) obj.metadata = {};
  return obj.metadata;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The generic REST store of one resource. */
export class GenericStore implements Getter, Lister, Watcher, Creater, Updater, GracefulDeleter, CollectionDeleter {
  readonly kind: Kind;
  private readonly gr: GroupResource;
  private readonly nameValidator: NameValidator;
  private readonly suffix: () => string;

  constructor(private readonly def: StoreDefinition) {
    this.kind = def.kind;
    this.gr = { group: def.kind.group, resource: def.kind.plural };
    this.nameValidator = def.nameValidator ?? nameIsDNSSubdomain;
    this.suffix = def.randomSuffix ?? randomSuffix;
  }

  /** The storage key prefix of the resource (`/registry/pods`). */
  get keyPrefix(): string {
    return this.def.keyPrefix;
  }

  /** The group and resource, as errors name them. */
  get groupResource(): GroupResource {
    return this.gr;
  }

  // ---- keys ------------------------------------------------------------------------------------------------

  /** The storage key of an object; 400 when the name is not a valid path segment or the namespace is missing. */
  keyFor(ctx: RequestContext, name: string): string {
    const problems = validatePathSegmentName(name, false);
    if (name === '') throw badRequest('name is required');
    if (problems.length) throw badRequest(`Name parameter invalid: ${JSON.stringify(name)}: ${problems.join('; ')}`);
    if (this.kind.namespaced) {
      if (!ctx.namespace) throw badRequest('Namespace parameter required.');
      return `${this.def.keyPrefix}/${ctx.namespace}/${name}`;
    }
    return `${this.def.keyPrefix}/${name}`;
  }

  /** The key prefix of a list: one namespace, or all of the resource. */
  listPrefix(ctx: RequestContext): string {
    return this.kind.namespaced && ctx.namespace ? `${this.def.keyPrefix}/${ctx.namespace}/` : `${this.def.keyPrefix}/`;
  }

  private fail(err: unknown, name: string, operation: string): never {
    throw interpretStorageError(err, this.gr, name, operation);
  }

  /**
   * The object with this resource's apiVersion and kind. Objects from the watch cache are frozen (shared by every
   * watcher): those are copied rather than changed.
   */
  private withTypeMeta<T extends ApiObject>(obj: T): T {
    if (obj.apiVersion === this.kind.apiVersion && obj.kind === this.kind.kind) return obj;
    if (Object.isFrozen(obj)) return { ...obj, apiVersion: this.kind.apiVersion, kind: this.kind.kind };
    obj.apiVersion = this.kind.apiVersion;
    obj.kind = this.kind.kind;
    return obj;
  }

  // ---- reads -----------------------------------------------------------------------------------------------

  async get(ctx: RequestContext, name: string, o: { resourceVersion?: string; shared?: boolean }): Promise<ApiObject> {
    const key = this.keyFor(ctx, name);
    try {
      return this.withTypeMeta(
        await this.def.storage.get(key, { resourceVersion: o.resourceVersion, shared: o.shared === true }),
      );
    } catch (err) {
      this.fail(err, name, 'get');
    }
  }

  async list(ctx: RequestContext, o: ListOptions & { shared?: boolean }): Promise<ObjectList> {
    const predicate = this.def.predicate(o);
    let page;
    try {
      page = await this.def.storage.list(this.listPrefix(ctx), {
        resourceVersion: o.resourceVersion,
        resourceVersionMatch: o.resourceVersionMatch || undefined,
        limit: o.limit,
        continue: o.continue,
        predicate,
        shared: o.shared === true,
      });
    } catch (err) {
      this.fail(err, '', 'list');
    }
    const metadata: ObjectList['metadata'] = { resourceVersion: page.resourceVersion };
    if (page.continue) metadata.continue = page.continue;
    if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
    return { apiVersion: this.kind.apiVersion, kind: this.kind.listKind, metadata, items: page.items };
  }

  /** Bad selectors throw here, before the watch handler answers 200 (the stream's headers go out at once). */
  watch(ctx: RequestContext, o: ListOptions): AsyncIterable<WatchEvent> {
    return this.watchWith(ctx, o, this.def.predicate(o));
  }

  private async *watchWith(
    ctx: RequestContext,
    o: ListOptions,
    predicate: ReturnType<StoreDefinition['predicate']>,
  ): AsyncIterable<WatchEvent> {
    let w;
    try {
      w = this.def.storage.watch(this.listPrefix(ctx), {
        resourceVersion: o.resourceVersion,
        recursive: true,
        predicate,
        allowBookmarks: o.allowWatchBookmarks,
      });
    } catch (err) {
      this.fail(err, '', 'watch');
    }
    const stop = (): void => w.stop();
    ctx.signal?.addEventListener('abort', stop, { once: true });
    try {
      for await (const e of w) yield { type: e.type, object: this.withTypeMeta(e.object) };
    } catch (err) {
      this.fail(err, '', 'watch');
    } finally {
      ctx.signal?.removeEventListener('abort', stop);
      w.stop();
    }
  }

  // ---- create ----------------------------------------------------------------------------------------------

  /** The shared first half of create (also used by update-creates): metadata, strategy, validation. */
  private beforeCreate(ctx: RequestContext, obj: ApiObject): void {
    const m = meta(obj);
    if (this.kind.namespaced) {
      if (m.namespace && ctx.namespace && m.namespace !== ctx.namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      if (!m.namespace) m.namespace = ctx.namespace;
    } else {
      delete m.namespace;
    }
    if (!m.name && m.generateName) {
      const prefix = m.generateName.slice(0, MAX_GENERATED_NAME_LENGTH - GENERATED_SUFFIX_LENGTH);
      m.name = prefix + this.suffix();
    }
    m.uid = randomUUID();
    m.creationTimestamp = timeText(ctx.now());
    delete m.resourceVersion;
    delete m.selfLink;
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    this.def.createStrategy.prepareForCreate(ctx, obj);
    const errs: FieldError[] = [
      ...validateObjectMeta(
        m,
        { namespaced: this.kind.namespaced, nameValidator: this.nameValidator },
        new FieldPath('metadata'),
      ),
      ...this.def.createStrategy.validate(ctx, obj),
    ];
    if (errs.length) throw invalid({ group: this.kind.group, kind: this.kind.kind }, m.name ?? '', errs);
    this.def.createStrategy.canonicalize?.(obj);
  }

  async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject> {
    const isGeneratedName = !obj.metadata?.name && !!obj.metadata?.generateName;
    this.beforeCreate(ctx, obj);
    const m = meta(obj);
    const name = m.name as string;
    const key = this.keyFor(ctx, name);
    if (validate) await validate(obj);
    this.withTypeMeta(obj);
    if (o.dryRun) {
      // A dry-run create still fails where the real one would on an existing name.
      if (await this.exists(key, name)) throw alreadyExists(this.gr, name);
      return obj;
    }
    try {
      return this.withTypeMeta(await this.def.storage.create(key, obj, { ttlSeconds: this.def.ttlSeconds }));
    } catch (err) {
      // A generated name that collided: the client may simply try again.
      if (isGeneratedName && isStorageError(err, 'KeyExists')) throw generateNameConflict(this.gr, name, 1);
      this.fail(err, name, 'create');
    }
  }

  private async exists(key: string, name: string): Promise<boolean> {
    try {
      await this.def.storage.get(key, {});
      return true;
    } catch (err) {
      if (isStorageError(err, 'KeyNotFound')) return false;
      this.fail(err, name, 'get');
    }
  }

  // ---- update ----------------------------------------------------------------------------------------------

  async update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    const key = this.keyFor(ctx, info.name);
    const strategy = this.def.updateStrategy;
    let created = false;
    const tryUpdate = async (found: ApiObject | undefined): Promise<ApiObject> => {
      created = false;
      // Storage hands an absent object over as `{}`; a stored one always has a resourceVersion.
      const current = found?.metadata?.resourceVersion ? found : undefined;
      if (!current) {
        if (!strategy.allowCreateOnUpdate) throw notFound(this.gr, info.name);
        const obj = await info.updatedObject(ctx, undefined);
        this.checkName(obj, info.name);
        this.beforeCreate(ctx, obj);
        if (validateCreate) await validateCreate(obj);
        created = true;
        return this.withTypeMeta(obj);
      }
      const obj = await info.updatedObject(ctx, structuredClone(current));
      this.checkName(obj, info.name);
      const m = meta(obj);
      const cm = meta(current);
      if (!m.resourceVersion) {
        if (!strategy.allowUnconditionalUpdate) {
          throw invalid({ group: this.kind.group, kind: this.kind.kind }, info.name, [
            field.invalid(new FieldPath('metadata', 'resourceVersion'), 0, 'must be specified for an update'),
          ]);
        }
      } else if (m.resourceVersion !== cm.resourceVersion) {
        throw conflict(
          this.gr,
          info.name,
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      }
      // A uid in the body is a precondition, as Kubernetes reads a replaced object's uid: another object's is 409.
      if (m.uid && m.uid !== cm.uid) {
        throw conflict(
          this.gr,
          info.name,
          `Precondition failed: UID in precondition: ${m.uid}, UID in object meta: ${cm.uid ?? ''}`,
        );
      }
      // System fields are the server's: a client cannot change them through an update.
      if (this.kind.namespaced) m.namespace = cm.namespace;
      else delete m.namespace;
      m.uid = cm.uid;
      m.creationTimestamp = cm.creationTimestamp;
      if (cm.deletionTimestamp) m.deletionTimestamp = cm.deletionTimestamp;
      else delete m.deletionTimestamp;
      if (cm.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = cm.deletionGracePeriodSeconds;
      else delete m.deletionGracePeriodSeconds;
      delete m.selfLink;
      m.resourceVersion = cm.resourceVersion;
      strategy.prepareForUpdate(ctx, obj, current);
      const errs: FieldError[] = [
        ...validateObjectMetaUpdate(m, cm, new FieldPath('metadata')),
        ...validateObjectMeta(
          m,
          { namespaced: this.kind.namespaced, nameValidator: this.nameValidator },
          new FieldPath('metadata'),
        ),
        ...strategy.validateUpdate(ctx, obj, current),
      ];
      if (errs.length) throw invalid({ group: this.kind.group, kind: this.kind.kind }, info.name, dedupe(errs));
      strategy.canonicalize?.(obj);
      if (validateUpdate) await validateUpdate(obj, current);
      return this.withTypeMeta(obj);
    };

    let object: ApiObject;
    if (o.dryRun) {
      let current: ApiObject | undefined;
      try {
        current = await this.def.storage.get(key, {});
      } catch (err) {
        if (!isStorageError(err, 'KeyNotFound')) this.fail(err, info.name, 'update');
      }
      object = await tryUpdate(current);
      if (current && sameJson(stripRv(object), stripRv(current))) object = current;
    } else {
      try {
        object = await this.def.storage.guaranteedUpdate(key, tryUpdate, {
          ignoreNotFound: true,
          ttlSeconds: this.def.ttlSeconds,
        });
      } catch (err) {
        this.fail(err, info.name, 'update');
      }
    }
    // The last finalizer of a terminating object is gone: the object is removed now.
    const m = meta(object);
    if (
      !o.dryRun &&
      m.deletionTimestamp &&
      !m.finalizers?.length &&
      !(m.deletionGracePeriodSeconds && m.deletionGracePeriodSeconds > 0) &&
      !this.def.deleteStrategy?.pendingFinalization?.(object)
    ) {
      try {
        object = await this.def.storage.delete(key, { preconditions: { resourceVersion: m.resourceVersion } });
      } catch (err) {
        if (!isStorageError(err, 'KeyNotFound') && !isStorageError(err, 'Conflict'))
          this.fail(err, info.name, 'delete');
      }
    }
    return { object: this.withTypeMeta(object), created };
  }

  private checkName(obj: ApiObject, name: string): void {
    const m = meta(obj);
    if (m.name === undefined || m.name === '') m.name = name;
    else if (m.name !== name) {
      throw badRequest(`the name of the object (${m.name}) does not match the name on the URL (${name})`);
    }
  }

  // ---- delete ----------------------------------------------------------------------------------------------

  async delete(
    ctx: RequestContext,
    name: string,
    validate: ValidateObjectFunc | undefined,
    o: DeleteRequest,
  ): Promise<DeleteResult> {
    const key = this.keyFor(ctx, name);
    let current: ApiObject;
    try {
      current = await this.def.storage.get(key, {});
    } catch (err) {
      this.fail(err, name, 'delete');
    }
    this.checkPreconditions(current, o);
    if (validate) await validate(current);
    const cm = meta(current);

    const grace = this.def.deleteStrategy?.gracePeriod?.(ctx, current, o.gracePeriodSeconds ?? undefined) ?? 0;
    const finalizers = this.finalizersFor(cm.finalizers ?? [], o);
    const alreadyTerminating = cm.deletionTimestamp !== undefined;
    const pending = (obj: ApiObject): boolean => this.def.deleteStrategy?.pendingFinalization?.(obj) ?? false;
    const mustWait = finalizers.length > 0 || grace > 0 || pending(current);

    if (alreadyTerminating || mustWait) {
      const shorterGrace =
        alreadyTerminating &&
        grace < (cm.deletionGracePeriodSeconds ?? 0) &&
        cm.deletionGracePeriodSeconds !== undefined;
      const finalizersChanged = !sameJson(finalizers, cm.finalizers ?? []);
      if (alreadyTerminating && !shorterGrace && !finalizersChanged) {
        return { object: this.withTypeMeta(current), deleted: false };
      }
      const mark = (obj: ApiObject): ApiObject => {
        const m = meta(obj);
        const now = ctx.now();
        if (!m.deletionTimestamp || shorterGrace) {
          m.deletionTimestamp = timeText(now + grace * 1000);
          m.deletionGracePeriodSeconds = grace;
        }
        if (finalizers.length) m.finalizers = finalizers;
        else delete m.finalizers;
        this.def.deleteStrategy?.prepareForDelete?.(obj);
        return this.withTypeMeta(obj);
      };
      if (o.dryRun) return { object: mark(structuredClone(current)), deleted: false };
      if (mustWait || finalizersChanged || shorterGrace) {
        let updated: ApiObject;
        try {
          updated = await this.def.storage.guaranteedUpdate(key, async (latest) => {
            if (!latest.metadata?.resourceVersion) throw notFound(this.gr, name);
            this.checkPreconditions(latest, o);
            return mark(latest);
          });
        } catch (err) {
          this.fail(err, name, 'delete');
        }
        const um = meta(updated);
        if (um.finalizers?.length || (um.deletionGracePeriodSeconds ?? 0) > 0 || pending(updated)) {
          return { object: this.withTypeMeta(updated), deleted: false };
        }
        current = updated;
      }
    }

    if (o.dryRun) return { object: this.deletedAnswer(current), deleted: true };
    let deleted: ApiObject;
    try {
      deleted = await this.def.storage.delete(key, {
        preconditions: {
          uid: o.preconditions?.uid ?? undefined,
          resourceVersion: o.preconditions?.resourceVersion ?? undefined,
        },
      });
    } catch (err) {
      if (isStorageError(err, 'Conflict') && o.preconditions) this.checkPreconditions(await this.get(ctx, name, {}), o);
      this.fail(err, name, 'delete');
    }
    return { object: this.deletedAnswer(deleted), deleted: true };
  }

  private deletedAnswer(obj: ApiObject): ApiObject {
    if (this.def.returnDeletedObject) return this.withTypeMeta(obj);
    const m = meta(obj);
    return successStatus({ name: m.name, group: this.kind.group, kind: this.kind.plural, uid: m.uid }) as ApiObject;
  }

  private checkPreconditions(obj: ApiObject, o: DeleteRequest): void {
    const p = o.preconditions;
    if (!p) return;
    const m = meta(obj);
    if (p.uid && p.uid !== m.uid) {
      throw conflict(
        this.gr,
        m.name ?? '',
        `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${m.uid ?? ''}`,
      );
    }
    if (p.resourceVersion && p.resourceVersion !== m.resourceVersion) {
      throw conflict(
        this.gr,
        m.name ?? '',
        `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion ?? ''}`,
      );
    }
  }

  /** The finalizers after applying the garbage collection policy of a delete (model: `deletionFinalizersForGarbageCollection`). */
  private finalizersFor(existing: string[], o: DeleteRequest): string[] {
    let orphan = existing.includes(ORPHAN);
    let foreground = existing.includes(FOREGROUND);
    if (o.propagationPolicy === 'Orphan' || o.orphanDependents === true) {
      orphan = true;
      foreground = false;
    } else if (o.propagationPolicy === 'Foreground') {
      foreground = true;
      orphan = false;
    } else if (o.propagationPolicy === 'Background' || o.orphanDependents === false) {
      orphan = false;
      foreground = false;
    }
    const rest = existing.filter((f) => f !== ORPHAN && f !== FOREGROUND);
    if (orphan) rest.push(ORPHAN);
    if (foreground) rest.push(FOREGROUND);
    return rest;
  }

  async deleteCollection(
    ctx: RequestContext,
    validate: ValidateObjectFunc | undefined,
    o: DeleteRequest,
    listOptions: ListOptions,
  ): Promise<ObjectList> {
    const list = await this.list(ctx, listOptions);
    const items = list.items;
    const deleted: ApiObject[] = [];
    const workers = Math.max(1, this.def.deleteCollectionWorkers ?? 1);
    let next = 0;
    const work = async (): Promise<void> => {
      while (next < items.length) {
        const item = items[next++] as ApiObject;
        const itemCtx = { ...ctx, namespace: item.metadata?.namespace ?? ctx.namespace };
        try {
          const r = await this.delete(itemCtx, item.metadata?.name ?? '', validate, { ...o, preconditions: undefined });
          deleted.push(r.deleted ? item : (r.object as ApiObject));
        } catch (err) {
          // An object deleted meanwhile is no failure of the collection delete.
          if (!(isStatusError(err) && err.code === 404)) throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(workers, items.length) }, work));
    return {
      apiVersion: this.kind.apiVersion,
      kind: this.kind.listKind,
      metadata: { resourceVersion: list.metadata.resourceVersion },
      items: deleted,
    };
  }
}

function stripRv(obj: ApiObject): ApiObject {
  const c = structuredClone(obj);
  if (c.metadata) delete c.metadata.resourceVersion;
  return c;
}

function dedupe(errs: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errs.filter((e) => {
    const k = `${e.type}|${e.field}|${e.detail}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** True when `s` has every capability of a full resource store (used by tests of the installer). */
export function isFullStore(s: object): boolean {
  return Object.values(capabilities).every((check) => check(s));
}
