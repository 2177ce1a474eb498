/**
 * The registry as admission plugins reach it: reads and writes of the server's own stores, without admission and
 * without HTTP (Kubernetes' plugins use informers and a loopback client; here the stores are in the process).
 */
import { type ApiObject, isStatusError, type Scheme } from '@platform/api';

import { type RequestScope } from '../endpoints/handlers/scope';
import { capabilities, type RequestContext } from '../registry/rest/rest';

/** A group and resource (`''` is the core group). */
export interface GroupResource {
  group: string;
  resource: string;
}

/** Reads and writes of stored objects. Errors are StatusErrors, as the registry throws them. */
export interface InternalClient {
  /** Whether the resource is served. */
  has(gr: GroupResource): boolean;
  /**
   * The object, or undefined when it does not exist; `cached`: from the watch cache, falling back to the store
   * when the cache does not have it (an object created a moment ago), as Kubernetes' plugins do with their listers.
   */
  get(gr: GroupResource, namespace: string, name: string, o?: { cached?: boolean }): Promise<ApiObject | undefined>;
  /**
   * Every object of a namespace ('' for all namespaces, or a cluster-scoped resource); `cached`: from the watch
   * cache (cheap, possibly a moment behind the store).
   */
  list(gr: GroupResource, namespace: string, o?: { cached?: boolean }): Promise<ApiObject[]>;
  create(gr: GroupResource, namespace: string, obj: ApiObject): Promise<ApiObject>;
  /**
   * Replaces an object (of `subresource`, e.g. `status`); with `metadata.resourceVersion` set this is a
   * compare-and-swap that fails with 409 Conflict when the stored object changed.
   */
  update(gr: GroupResource, namespace: string, obj: ApiObject, subresource?: string): Promise<ApiObject>;
}

/** Finds the scope serving a resource (any served version). */
export type ScopeLookup = (
  group: string,
  version: string,
  resource: string,
  subresource: string,
) => RequestScope | undefined;

/** An internal client over the installer's scopes. */
export class RegistryClient implements InternalClient {
  constructor(
    private readonly scheme: Scheme,
    private readonly lookup: ScopeLookup,
    private readonly now: () => number,
  ) {}

  private scope(gr: GroupResource, subresource = ''): RequestScope | undefined {
    for (const kind of this.scheme.kinds()) {
      if (kind.group !== gr.group || kind.plural !== gr.resource) continue;
      const s = this.lookup(gr.group, kind.version, gr.resource, subresource);
      if (s) return s;
    }
    return undefined;
  }

  private must(gr: GroupResource, subresource = ''): RequestScope {
    const s = this.scope(gr, subresource);
    if (!s) throw new Error(`resource ${gr.resource}${gr.group ? `.${gr.group}` : ''} is not served`);
    return s;
  }

  private ctx(namespace: string): RequestContext {
    return { namespace, now: this.now };
  }

  has(gr: GroupResource): boolean {
    return this.scope(gr) !== undefined;
  }

  async get(
    gr: GroupResource,
    namespace: string,
    name: string,
    o: { cached?: boolean } = {},
  ): Promise<ApiObject | undefined> {
    const s = this.must(gr).storage;
    if (!capabilities.getter(s)) throw new Error(`${gr.resource} cannot be read`);
    const read = async (resourceVersion?: string): Promise<ApiObject | undefined> => {
      try {
        return await s.get(this.ctx(namespace), name, resourceVersion ? { resourceVersion } : {});
      } catch (err) {
        if (isStatusError(err) && err.code === 404) return undefined;
        throw err;
      }
    };
    return (o.cached ? await read('0') : undefined) ?? read();
  }

  async list(gr: GroupResource, namespace: string, o: { cached?: boolean } = {}): Promise<ApiObject[]> {
    const s = this.must(gr).storage;
    if (!capabilities.lister(s)) throw new Error(`${gr.resource} cannot be listed`);
    return (await s.list(this.ctx(namespace), o.cached ? { resourceVersion: '0' } : {})).items;
  }

  async create(gr: GroupResource, namespace: string, obj: ApiObject): Promise<ApiObject> {
    const s = this.must(gr).storage;
    if (!capabilities.creater(s)) throw new Error(`${gr.resource} cannot be created`);
    return s.create(this.ctx(namespace), obj, undefined, { dryRun: false });
  }

  async update(gr: GroupResource, namespace: string, obj: ApiObject, subresource = ''): Promise<ApiObject> {
    const s = this.must(gr, subresource).storage;
    if (!capabilities.updater(s)) throw new Error(`${gr.resource}/${subresource} cannot be updated`);
    const name = obj.metadata?.name ?? '';
    const r = await s.update(
      this.ctx(namespace),
      { name, updatedObject: async () => structuredClone(obj) },
      undefined,
      undefined,
      { dryRun: false },
    );
    return r.object;
  }
}
