/**
 * Conversion of custom objects between the versions of a CRD (model: 1.21's `pkg/apiserver/conversion`):
 * `None` only rewrites `apiVersion`; `Webhook` sends a ConversionReview (v1 or v1beta1, the first of the CRD's
 * `conversionReviewVersions` this server speaks) to the webhook's URL or service, with its CA bundle, and takes the
 * converted objects back (only labels and annotations of their metadata may change). A failure is a 500 naming the
 * kind and carrying the webhook's message. The group of the review is `apiextensions.platform`; answers in
 * Kubernetes' spelling (`apiextensions.k8s.io`) are read too.
 */
import { randomUUID } from 'node:crypto';

import { type ApiObject, type CustomResourceDefinition, StatusError } from '@platform/api';

import { type InternalClient } from '../admission/internal-client';
import { postJson, resolveTarget } from '../admission/webhook/client';
import {
  type ObjectStorage,
  type StorageList,
  type StorageListOptions,
  type StorageWatch,
  type StorageWatchEvent,
} from '../registry/generic/storage-interface';

/** Converts objects to one apiVersion. */
export interface Converter {
  convert(objects: ApiObject[], apiVersion: string): Promise<ApiObject[]>;
}

/**
 * `None`: the objects are the same in every version; only apiVersion changes. Objects already in `apiVersion` are
 * handed back as they are (they may be the watch cache's, frozen and shared), and so is the array when all are.
 */
export const NONE_CONVERTER: Converter = {
  convert: async (objects, apiVersion) =>
    objects.every((o) => o.apiVersion === apiVersion)
      ? objects
      : objects.map((o) => (o.apiVersion === apiVersion ? o : { ...o, apiVersion })),
};

/** The time a conversion webhook has to answer (1.21's fixed 30 s). */
export const CONVERSION_TIMEOUT_MS = 30_000;

function internalError(message: string): StatusError {
  return new StatusError({
    code: 500,
    reason: 'InternalError',
    message: `Internal error occurred: ${message}`,
    details: {},
  });
}

type Review = {
  apiVersion?: string;
  kind?: string;
  response?: {
    uid?: string;
    convertedObjects?: ApiObject[];
    result?: { status?: string; message?: string };
  };
};

/** Calls a CRD's conversion webhook. */
export class WebhookConverter implements Converter {
  constructor(
    private readonly crd: CustomResourceDefinition,
    private readonly client: InternalClient,
    private readonly timeoutMs = CONVERSION_TIMEOUT_MS,
  ) {}

  private reviewVersion(): string {
    const versions = this.crd.spec.conversion?.webhook?.conversionReviewVersions ?? [];
    return versions.find((v) => v === 'v1' || v === 'v1beta1') ?? 'v1';
  }

  async convert(objects: ApiObject[], apiVersion: string): Promise<ApiObject[]> {
    const todo = objects.filter((o) => o.apiVersion !== apiVersion);
    if (!todo.length) return objects;
    const kind = this.crd.status?.acceptedNames?.kind ?? this.crd.spec.names.kind;
    const gvk = `${apiVersion}, Kind=${kind}`;
    const clientConfig = this.crd.spec.conversion?.webhook?.clientConfig;
    if (!clientConfig) throw internalError(`conversion webhook for ${gvk} failed: no webhook client configuration`);
    const uid = randomUUID();
    const version = this.reviewVersion();
    let answer: Review;
    try {
      const target = await resolveTarget(clientConfig as never, this.client);
      answer = (await postJson(
        target,
        {
          apiVersion: `apiextensions.platform/${version}`,
          kind: 'ConversionReview',
          request: { uid, desiredAPIVersion: apiVersion, objects: todo },
        },
        { timeoutMs: this.timeoutMs },
      )) as Review;
    } catch (err) {
      throw internalError(`conversion webhook for ${gvk} failed: ${(err as Error).message}`);
    }
    const r = answer?.response;
    if (!r) throw internalError(`conversion webhook for ${gvk} failed: no response provided`);
    if (r.uid !== uid)
      throw internalError(`conversion webhook for ${gvk} failed: expected response uid ${uid}, got ${String(r.uid)}`);
    if (r.result?.status !== 'Success')
      throw internalError(`conversion webhook for ${gvk} returned failure: ${r.result?.message ?? ''}`);
    const converted = r.convertedObjects ?? [];
    if (converted.length !== todo.length)
      throw internalError(
        `conversion webhook for ${gvk} returned ${converted.length} objects, expected ${todo.length}`,
      );
    const byOriginal = new Map<ApiObject, ApiObject>();
    todo.forEach((original, i) => {
      const c = converted[i] as ApiObject;
      if (c?.apiVersion !== apiVersion)
        throw internalError(
          `conversion webhook for ${gvk} returned invalid object: wrong apiVersion ${String(c?.apiVersion)}`,
        );
      if (c.kind !== original.kind)
        throw internalError(`conversion webhook for ${gvk} returned invalid object: wrong kind ${String(c.kind)}`);
      // Only labels and annotations may change; the rest of the metadata is the original's.
      const meta = { ...(original.metadata ?? {}) };
      if (c.metadata?.labels) meta.labels = c.metadata.labels;
      else delete meta.labels;
      if (c.metadata?.annotations) meta.annotations = c.metadata.annotations;
      else delete meta.annotations;
      byOriginal.set(original, { ...c, metadata: meta });
    });
    return objects.map((o) => byOriginal.get(o) ?? o);
  }
}

/**
 * A storage whose objects are kept in the storage version and served in another, through a converter (which may
 * call out, so every conversion is asynchronous). `served` is called on every object a conversion built (defaults
 * of the served version); it must not change its argument, whose nested values may be the watch cache's (frozen,
 * shared). An object already in the served version is handed out as storage gave it: storage defaulted it when it
 * decoded it, by the schema of its version (as 1.21 defaults at decode, then after conversion), so a list of
 * unconverted objects is the cache's own array, and its encoding is made once for every such list.
 */
export class ConvertingObjectStorage implements ObjectStorage {
  constructor(
    private readonly inner: ObjectStorage,
    private readonly converter: Converter,
    private readonly storedVersion: string,
    private readonly servedVersion: string,
    private readonly served: (o: ApiObject) => ApiObject,
  ) {}

  /**
   * Frozen item arrays (the watch cache's whole lists, handed to every list until the next event) found to need no
   * conversion to the served version: the lists after the first hand them on without a look at their items.
   */
  private readonly unconverted = new WeakSet<readonly ApiObject[]>();

  private async toStored(o: ApiObject): Promise<ApiObject> {
    return (await this.converter.convert([o], this.storedVersion))[0] as ApiObject;
  }

  private async fromStored(o: ApiObject): Promise<ApiObject> {
    const c = (await this.converter.convert([o], this.servedVersion))[0] as ApiObject;
    return c === o ? o : this.served(c);
  }

  async create(key: string, obj: ApiObject, o?: { ttlSeconds?: number }): Promise<ApiObject> {
    return this.fromStored(await this.inner.create(key, await this.toStored(obj), o));
  }

  async get(key: string, o?: { resourceVersion?: string }): Promise<ApiObject> {
    return this.fromStored(await this.inner.get(key, o));
  }

  async list(prefix: string, o?: StorageListOptions): Promise<StorageList> {
    const r = await this.inner.list(prefix, o);
    if (this.unconverted.has(r.items)) return r;
    const items = await this.converter.convert(r.items, this.servedVersion);
    if (items === r.items) {
      if (Object.isFrozen(r.items)) this.unconverted.add(r.items);
      return r;
    }
    return { ...r, items: items.map((x, i) => (x === r.items[i] ? x : this.served(x))) };
  }

  async guaranteedUpdate(
    key: string,
    tryUpdate: (current: ApiObject) => ApiObject | Promise<ApiObject>,
    o?: Parameters<ObjectStorage['guaranteedUpdate']>[2],
  ): Promise<ApiObject> {
    const updated = await this.inner.guaranteedUpdate(
      key,
      async (current) => {
        // An absent object (ignoreNotFound) arrives as `{}` and stays so.
        const served = current.metadata ? await this.fromStored(current) : current;
        const next = await tryUpdate(served);
        // Unchanged: hand back the stored object itself, so storage sees no change and writes nothing.
        if (next === served) return current;
        return this.toStored(next);
      },
      o,
    );
    return this.fromStored(updated);
  }

  async delete(key: string, o?: Parameters<ObjectStorage['delete']>[1]): Promise<ApiObject> {
    return this.fromStored(await this.inner.delete(key, o));
  }

  watch(key: string, o?: Parameters<ObjectStorage['watch']>[1]): StorageWatch {
    const inner = this.inner.watch(key, o);
    const fromStored = (x: ApiObject): Promise<ApiObject> => this.fromStored(x);
    return {
      stop: () => inner.stop(),
      async *[Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
        for await (const e of inner) {
          yield e.type === 'BOOKMARK' ? e : { type: e.type, object: await fromStored(e.object) };
        }
      },
    };
  }
}
