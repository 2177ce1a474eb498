/**
 * A storage that keeps its objects in another version's shape (model: the storage codecs of apiserver, which
 * convert to the storage version on write and from it on read). Used where two groups serve one resource from the
 * same keys, as core/v1 and events.platform/v1 Events do: objects are written converted to the stored shape, and
 * every object read — by get, list, update, delete or watch — is converted back. Selectors (predicates) see the
 * served shape.
 */
import { type ApiObject } from './api-object';
import {
  type ApiObjectList,
  type DeleteOptions,
  type GetOptions,
  type ListOptions,
  type Predicate,
  type Storage,
  type UpdateFn,
  type UpdateOptions,
  type Watch,
  type WatchEvent,
  type WatchOptions,
} from './storage';

/** The two directions of a conversion. */
export interface StorageConversion {
  /** The served shape → the stored one. */
  toStored(obj: ApiObject): ApiObject;
  /** The stored shape → the served one. */
  fromStored(obj: ApiObject): ApiObject;
}

export class ConvertingStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly c: StorageConversion,
  ) {}

  private predicate(p: Predicate | undefined): Predicate | undefined {
    if (!p) return undefined;
    return (obj) => p(this.c.fromStored(obj));
  }

  async create(key: string, obj: ApiObject, opts?: { ttlSeconds?: number }): Promise<ApiObject> {
    return this.c.fromStored(await this.inner.create(key, this.c.toStored(obj), opts));
  }

  async get(key: string, opts?: GetOptions): Promise<ApiObject> {
    return this.c.fromStored(await this.inner.get(key, opts));
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ApiObjectList> {
    const predicate = this.predicate(opts.predicate);
    const r = await this.inner.list(prefix, { ...opts, ...(predicate ? { predicate } : {}) });
    return { ...r, items: r.items.map((o) => this.c.fromStored(o)) };
  }

  async guaranteedUpdate(key: string, tryUpdate: UpdateFn, opts?: UpdateOptions): Promise<ApiObject> {
    const updated = await this.inner.guaranteedUpdate(
      key,
      async (current) => {
        // An absent object (ignoreNotFound) arrives as `{}` and stays so.
        const served = current.metadata ? this.c.fromStored(current) : current;
        return this.c.toStored(await tryUpdate(served));
      },
      opts,
    );
    return this.c.fromStored(updated);
  }

  async delete(key: string, opts: DeleteOptions = {}): Promise<ApiObject> {
    const validate = opts.validateDeletion;
    return this.c.fromStored(
      await this.inner.delete(key, {
        ...opts,
        ...(validate ? { validateDeletion: (current: ApiObject) => validate(this.c.fromStored(current)) } : {}),
      }),
    );
  }

  watch(key: string, opts: WatchOptions = {}): Watch {
    const predicate = this.predicate(opts.predicate);
    const inner = this.inner.watch(key, { ...opts, ...(predicate ? { predicate } : {}) });
    const c = this.c;
    return {
      stop: () => inner.stop(),
      async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
        for await (const e of inner) {
          // A bookmark carries only a resourceVersion: its apiVersion/kind are the served ones.
          yield e.type === 'BOOKMARK' ? e : { type: e.type, object: c.fromStored(e.object) };
        }
      },
    };
  }

  readinessCheck(): Promise<void> {
    return this.inner.readinessCheck();
  }
}
