/**
 * Custom resources in the API server (model: 1.21's `apiextensions-apiserver/pkg/apiserver/apiserver.go` and its
 * controllers). An informer of CustomResourceDefinitions (fed by the CRD store's own list and watch) drives:
 *
 * - the naming controller: `status.acceptedNames` and `NamesAccepted` (conflicts with other CRDs of the group and
 *   with built-in resources of the group);
 * - the establishing controller: `Established` once the names are accepted;
 * - the finalizer controller: a deleted CRD's custom objects are deleted, then its cleanup finalizer removed;
 * - serving: every served version of an established CRD is installed in the routing table (discovery follows at
 *   once), re-installed when the CRD changes and removed when it goes.
 *
 * Post-start hooks `start-apiextensions-informers`, `start-apiextensions-controllers` and `crd-informer-synced`
 * say when each part runs, as in Document 1's readiness checks.
 */
import {
  type ApiObject,
  type CustomResourceDefinition,
  type CustomResourceDefinitionNames,
  type Kind,
  type Scheme,
} from '@platform/api';
import { type Logger } from '@platform/common';

import { type RequestScope } from '../endpoints/handlers/scope';
import { type ApiInstaller } from '../endpoints/installer';
import { type RequestInfo } from '../endpoints/request-info';
import { RegistryClient } from '../admission/internal-client';
import { type Storage } from '../storage/storage';
import { type ObjectStorage } from '../registry/generic/storage-interface';
import { type GenericStore, timeText } from '../registry/generic/store';
import { type RequestContext, type RestStorage, type Updater } from '../registry/rest/rest';
import { ConvertingObjectStorage, NONE_CONVERTER, WebhookConverter } from './conversion';
import { CLEANUP_FINALIZER, conditionOf, setCondition } from './crd-strategy';
import { buildCustomResourceVersion, definitionName, type CustomResourceVersion } from './custom-resource';
import { type CompiledSchema, compileSchema, toOpenAPIV2 } from './schema';

type CRD = CustomResourceDefinition;
type Json = Record<string, unknown>;

const GROUP = 'apiextensions.platform';
const RESOURCE = 'customresourcedefinitions';

/** What the API server lends to custom resources. */
export interface ApiExtensionsHost {
  installer: ApiInstaller;
  scheme: Scheme;
  storePrefix: string;
  /**
   * The typed JSON storage of the custom objects of `group/resource` (in the store that resource's keys live in) for
   * one generation of their CRD: every object decoded from the store passes through `decoded` (it may change it), and
   * the storage is the resource's watch cache when the server keeps them. `release()` stops that cache (its store
   * watch and every watch it feeds) once the CRD changes or goes.
   */
  storageFor(group: string, resource: string, decoded: (o: ApiObject) => ApiObject): CustomObjectStorage;
  /** A request scope with the server's serializers, admission and limits. */
  scope(kind: Kind, resourceKind: Kind, storage: RestStorage, subresource: string): RequestScope;
  deleteCollectionWorkers: number;
  now(): number;
  log: Logger;
}

/** The storage of one generation of a CRD's custom objects (`ApiExtensionsHost.storageFor`). */
export interface CustomObjectStorage {
  storage: Storage;
  release(): void;
}

/** JSON with object keys sorted, to compare values whatever order their fields were decoded in. */
function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/** The scope of `apiextensions.platform/v1` CRDs (and its status), from the routing table. */
function crdStorage(installer: ApiInstaller, subresource: string): RestStorage | undefined {
  const info = { apiGroup: GROUP, apiVersion: 'v1', resource: RESOURCE, subresource } as RequestInfo;
  return installer.scopeFor(info)?.storage;
}

/** What is served for one CRD: its versions' storages, and the spec and names they were built from. */
interface Served {
  fingerprint: string;
  /** The custom objects' storage (their watch cache), dropped with this generation of the CRD. */
  storage: CustomObjectStorage;
  group: string;
  plural: string;
  versions: Map<string, CustomResourceVersion>;
  terminating: boolean;
}

/** The CRD machinery of one API server. */
export class ApiExtensions {
  private readonly crds = new Map<string, CRD>();
  private readonly served = new Map<string, Served>();
  /** Bumped on every change of what is served (the /openapi/v2 document is rebuilt then). */
  generation = 0;
  private synced = false;
  private readonly syncedWaiters: (() => void)[] = [];
  private controllersRunning = false;
  private readonly queue = new Set<string>();
  private draining = false;
  private readonly retry = new Map<string, NodeJS.Timeout>();

  /** Reads services and endpoints for conversion webhooks addressed by service. */
  private readonly client: RegistryClient;

  constructor(private readonly host: ApiExtensionsHost) {
    this.client = new RegistryClient(
      host.scheme,
      (apiGroup, apiVersion, resource, subresource) =>
        host.installer.scopeFor({ apiGroup, apiVersion, resource, subresource } as RequestInfo),
      host.now,
    );
  }

  /** The post-start hooks of Document 1, on the server's hook registry. */
  install(addPostStartHook: (name: string, hook: (signal: AbortSignal) => Promise<void>) => void): void {
    addPostStartHook('start-apiextensions-informers', async (signal) => {
      void this.runInformer(signal);
    });
    addPostStartHook('start-apiextensions-controllers', async (signal) => {
      this.controllersRunning = true;
      signal.addEventListener('abort', () => {
        for (const t of this.retry.values()) clearTimeout(t);
      });
      for (const name of this.crds.keys()) this.enqueue(name);
    });
    addPostStartHook('crd-informer-synced', async (signal) => {
      if (this.synced) return;
      await new Promise<void>((resolve, reject) => {
        this.syncedWaiters.push(resolve);
        signal.addEventListener('abort', () => reject(new Error('stopped before the CRD informer synced')));
      });
    });
  }

  private ctx(signal?: AbortSignal): RequestContext {
    return { namespace: '', now: this.host.now, ...(signal ? { signal } : {}) };
  }

  private main(): GenericStore {
    const s = crdStorage(this.host.installer, '');
    if (!s) throw new Error('customresourcedefinitions are not served');
    return s as GenericStore;
  }

  /** List, then watch from the list's revision; on any failure list again after a second. */
  private async runInformer(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const list = await this.main().list(this.ctx(signal), {});
        const names = new Set<string>();
        for (const o of list.items) {
          const crd = o as CRD;
          const name = crd.metadata?.name ?? '';
          names.add(name);
          this.crds.set(name, crd);
          this.enqueue(name);
        }
        for (const name of [...this.crds.keys()]) {
          if (!names.has(name)) {
            this.crds.delete(name);
            this.enqueue(name);
          }
        }
        if (!this.synced) {
          this.synced = true;
          for (const w of this.syncedWaiters.splice(0)) w();
        }
        const stream = this.main().watch(this.ctx(signal), {
          resourceVersion: list.metadata.resourceVersion ?? '0',
          allowWatchBookmarks: true,
        });
        for await (const e of stream) {
          if (e.type === 'ERROR') break;
          if (e.type === 'BOOKMARK') continue;
          const crd = e.object as CRD;
          const name = crd.metadata?.name ?? '';
          if (e.type === 'DELETED') this.crds.delete(name);
          else this.crds.set(name, crd);
          this.enqueue(name);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.host.log.warn('The CustomResourceDefinition informer failed; listing again', { err });
      }
      if (!signal.aborted) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    if (!this.draining) void this.drain();
  }

  /** One worker: CRDs are synced one at a time, each from the informer's latest state. */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.size) {
        const name = this.queue.values().next().value as string;
        this.queue.delete(name);
        try {
          await this.sync(name);
        } catch (err) {
          this.host.log.warn('Syncing a CustomResourceDefinition failed; retrying', { name, err });
          this.later(name, 1000);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private later(name: string, ms: number): void {
    if (this.retry.has(name)) return;
    const t = setTimeout(() => {
      this.retry.delete(name);
      this.enqueue(name);
    }, ms);
    t.unref?.();
    this.retry.set(name, t);
  }

  private async sync(name: string): Promise<void> {
    const crd = this.crds.get(name);
    if (!crd) {
      this.unserve(name);
      // Other CRDs of the group may now get names this one held.
      for (const [other, o] of this.crds) if (o.spec.group === name.slice(name.indexOf('.') + 1)) this.enqueue(other);
      return;
    }
    let current = crd;
    if (this.controllersRunning) {
      current = await this.reconcileStatus(crd);
      if (current.metadata?.deletionTimestamp && current.metadata.finalizers?.includes(CLEANUP_FINALIZER)) {
        this.serve(current);
        await this.finalize(current);
        return;
      }
    }
    this.serve(current);
  }

  // ---- naming and establishing -------------------------------------------------------------------------

  /** The names of a group already taken: by built-in resources, and by the accepted names of other CRDs. */
  private takenNames(crd: CRD): { resources: Set<string>; kinds: Set<string> } {
    const resources = new Set<string>();
    const kinds = new Set<string>();
    const group = crd.spec.group;
    for (const k of this.host.scheme.kinds()) {
      if (k.group !== group) continue;
      resources.add(k.plural);
      resources.add(k.singular);
      for (const s of k.shortNames) resources.add(s);
      kinds.add(k.kind);
      kinds.add(k.listKind);
    }
    for (const [name, o] of this.crds) {
      if (name === crd.metadata?.name || o.spec.group !== group) continue;
      const n = o.status?.acceptedNames;
      if (!n) continue;
      for (const r of [n.plural, n.singular, ...(n.shortNames ?? [])]) if (r) resources.add(r);
      for (const k of [n.kind, n.listKind]) if (k) kinds.add(k);
    }
    return { resources, kinds };
  }

  /** The names this CRD may use and why not (model: 1.21's naming controller). */
  private acceptedNames(crd: CRD): { names: CustomResourceDefinitionNames; conflict?: string } {
    const wanted = crd.spec.names;
    const { resources, kinds } = this.takenNames(crd);
    const inUse = (v: string): string => `${JSON.stringify(v)} is already in use`;
    let conflict: string | undefined;
    if (resources.has(wanted.plural)) conflict = inUse(wanted.plural);
    else if (wanted.singular && resources.has(wanted.singular)) conflict = inUse(wanted.singular);
    else if ((wanted.shortNames ?? []).some((s) => resources.has(s)))
      conflict = inUse((wanted.shortNames ?? []).find((s) => resources.has(s)) as string);
    else if (kinds.has(wanted.kind)) conflict = inUse(wanted.kind);
    else if (wanted.listKind && kinds.has(wanted.listKind)) conflict = inUse(wanted.listKind);
    if (conflict) return { names: crd.status?.acceptedNames ?? { plural: '', kind: '' }, conflict };
    return { names: structuredClone(wanted) };
  }

  /** Writes NamesAccepted, acceptedNames and Established when they changed; returns the CRD as it now is. */
  private async reconcileStatus(crd: CRD): Promise<CRD> {
    const next = structuredClone(crd);
    const now = timeText(this.host.now());
    const { names, conflict } = this.acceptedNames(crd);
    if (names.plural) next.status = { ...(next.status ?? {}), acceptedNames: names };
    setCondition(
      next,
      conflict
        ? { type: 'NamesAccepted', status: 'False', reason: 'NameConflict', message: conflict }
        : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
      now,
    );
    const established = conditionOf(crd, 'Established');
    if (!conflict && established?.status !== 'True') {
      setCondition(
        next,
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
        now,
      );
    } else if (conflict && !established) {
      setCondition(
        next,
        { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
        now,
      );
    }
    if (canonicalJson(next.status) === canonicalJson(crd.status)) return crd;
    const written = await this.writeStatus(crd, (c) => {
      c.status = next.status;
    });
    this.crds.set(crd.metadata?.name ?? '', written);
    return written;
  }

  private async writeStatus(crd: CRD, change: (c: CRD) => void, subresource = 'status'): Promise<CRD> {
    const storage = crdStorage(this.host.installer, subresource) as Updater | undefined;
    if (!storage) throw new Error(`customresourcedefinitions/${subresource} is not served`);
    const r = await storage.update(
      this.ctx(),
      {
        name: crd.metadata?.name ?? '',
        updatedObject: async (_ctx, current) => {
          const c = structuredClone(current ?? crd) as CRD;
          change(c);
          return c;
        },
      },
      undefined,
      undefined,
      { dryRun: false },
    );
    return r.object as CRD;
  }

  // ---- finalizer -----------------------------------------------------------------------------------------

  /** Deletes every custom object of a terminating CRD, then removes its finalizer (model: crd_finalizer.go). */
  private async finalize(crd: CRD): Promise<void> {
    const name = crd.metadata?.name ?? '';
    const served = this.served.get(name);
    // The storage version when it is served (as 1.21 deletes through it): no conversion, so a conversion webhook
    // that is down cannot hold the deletion up.
    const storageName = crd.spec?.versions?.find((v) => v.storage)?.name ?? '';
    const version = served && (served.versions.get(storageName) ?? [...served.versions.values()][0]);
    if (version) {
      const ctx = this.ctx();
      const list = await version.main.list(ctx, {});
      if (list.items.length) {
        if (conditionOf(crd, 'Terminating')?.reason !== 'InstanceDeletionInProgress')
          await this.writeStatus(crd, (c) =>
            setCondition(
              c,
              {
                type: 'Terminating',
                status: 'True',
                reason: 'InstanceDeletionInProgress',
                message: 'CustomResource deletion is in progress',
              },
              timeText(this.host.now()),
            ),
          );
        for (const o of list.items) {
          try {
            await version.main.delete(
              { ...ctx, namespace: o.metadata?.namespace ?? '' },
              o.metadata?.name ?? '',
              undefined,
              {
                dryRun: false,
              },
            );
          } catch {
            // Already gone, or held by its own finalizers: the next pass sees it.
          }
        }
        this.later(name, 500);
        return;
      }
    }
    await this.writeStatus(crd, (c) => {
      setCondition(
        c,
        {
          type: 'Terminating',
          status: 'False',
          reason: 'InstanceDeletionCompleted',
          message: 'removed all instances',
        },
        timeText(this.host.now()),
      );
    });
    // Finalizers are metadata: removed through the main resource.
    const main = this.main();
    await main.update(
      this.ctx(),
      {
        name,
        updatedObject: async (_ctx, current) => {
          const c = structuredClone(current ?? crd) as CRD;
          const m = (c.metadata ??= {});
          m.finalizers = (m.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
          if (!m.finalizers.length) delete m.finalizers;
          return c;
        },
      },
      undefined,
      undefined,
      { dryRun: false },
    );
  }

  // ---- serving -------------------------------------------------------------------------------------------

  /** Installs (or re-installs) the served versions of an established CRD; uninstalls one that is not. */
  private serve(crd: CRD): void {
    const name = crd.metadata?.name ?? '';
    const established = conditionOf(crd, 'Established')?.status === 'True';
    const names = crd.status?.acceptedNames;
    if (!established || !names?.plural) {
      this.unserve(name);
      return;
    }
    const terminating = !!crd.metadata?.deletionTimestamp;
    const fingerprint = canonicalJson([crd.spec, names]);
    const current = this.served.get(name);
    if (current && current.fingerprint === fingerprint) {
      current.terminating = terminating;
      return;
    }
    this.unserve(name);
    // A new schema means objects are decoded and defaulted anew: a storage (and watch cache) per CRD generation,
    // as 1.21's crdHandler builds one per CRD change.
    const schemas = new Map<string, CompiledSchema>();
    for (const v of crd.spec.versions)
      schemas.set(
        `${crd.spec.group}/${v.name}`,
        compileSchema(v.schema?.openAPIV3Schema, crd.spec.preserveUnknownFields === true),
      );
    const storage = this.host.storageFor(crd.spec.group, names.plural, (o) => {
      // Objects are defaulted when decoded from the store, by the schema of the version they were stored in.
      schemas.get(o.apiVersion ?? '')?.applyDefaults(o as Json);
      return o;
    });
    const state: Served = {
      fingerprint,
      storage,
      group: crd.spec.group,
      plural: names.plural,
      versions: new Map(),
      terminating,
    };
    const storageVersion = crd.spec.versions.find((v) => v.storage)?.name ?? '';
    const scaleKind = this.host.scheme.kindFor('autoscaling/v1', 'Scale');
    const base = storage.storage;
    const converter =
      crd.spec.conversion?.strategy === 'Webhook' ? new WebhookConverter(crd, this.client) : NONE_CONVERTER;
    for (const v of crd.spec.versions) {
      if (!v.served) continue;
      const apiVersion = `${crd.spec.group}/${v.name}`;
      const storedApiVersion = `${crd.spec.group}/${storageVersion}`;
      const schema = schemas.get(apiVersion)!;
      // Objects are stored in the storage version and converted (None or Webhook); converted objects are defaulted
      // again by the served version's schema, on a copy (1.21 defaults at decode and after conversion).
      const converting: ObjectStorage = new ConvertingObjectStorage(
        base,
        converter,
        storedApiVersion,
        apiVersion,
        (o) => schema.defaulted(o),
      );
      const version: CustomResourceVersion = buildCustomResourceVersion({
        crd,
        version: v,
        storePrefix: this.host.storePrefix,
        storage: converting,
        schema,
        deleteCollectionWorkers: this.host.deleteCollectionWorkers,
        scaleKind,
        terminating: () => state.terminating,
      });
      state.versions.set(v.name, version);
      const schemaId = definitionName(crd.spec.group, v.name, version.kind.kind);
      const unstructured = {
        schemaId,
        listSchemaId: `${schemaId}List`,
        ...(version.applySchema ? { applySchema: version.applySchema } : {}),
      };
      const k = version.kind;
      this.host.installer.add({ ...this.host.scope(k, k, version.main, ''), unstructured });
      if (version.status) this.host.installer.add({ ...this.host.scope(k, k, version.status, 'status'), unstructured });
      if (version.scale && scaleKind)
        this.host.installer.add({ ...this.host.scope(scaleKind, k, version.scale, 'scale'), unstructured });
    }
    this.served.set(name, state);
    this.generation++;
  }

  private unserve(name: string): void {
    const s = this.served.get(name);
    if (!s) return;
    for (const v of s.versions.keys()) this.host.installer.remove(s.group, v, s.plural);
    s.storage.release();
    this.served.delete(name);
    this.generation++;
  }

  /** The OpenAPI v2 definitions of every served CRD version (what `kubectl explain` reads). */
  openApiDefinitions(): Record<string, Json> {
    const out: Record<string, Json> = {};
    for (const [name, s] of this.served) {
      const crd = this.crds.get(name);
      if (!crd) continue;
      for (const v of crd.spec.versions) {
        const served = s.versions.get(v.name);
        if (!served) continue;
        const kind = served.kind;
        const id = definitionName(kind.group, v.name, kind.kind);
        const gvk = [{ group: kind.group, version: v.name, kind: kind.kind }];
        const schema = v.schema?.openAPIV3Schema ? toOpenAPIV2(v.schema.openAPIV3Schema) : { type: 'object' };
        const properties = { ...((schema.properties as Json | undefined) ?? {}) };
        properties.apiVersion = {
          type: 'string',
          description: 'APIVersion defines the versioned schema of this representation of an object.',
        };
        properties.kind = {
          type: 'string',
          description: 'Kind is a string value representing the REST resource this object represents.',
        };
        properties.metadata = { $ref: '#/definitions/io.platform.meta.v1.ObjectMeta' };
        out[id] = { ...schema, type: 'object', properties, 'x-kubernetes-group-version-kind': gvk };
        out[`${id}List`] = {
          type: 'object',
          required: ['items'],
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { $ref: '#/definitions/io.platform.meta.v1.ListMeta' },
            items: { type: 'array', items: { $ref: `#/definitions/${id}` } },
          },
          'x-kubernetes-group-version-kind': [{ ...gvk[0], kind: kind.listKind }],
        };
      }
    }
    return out;
  }
}
