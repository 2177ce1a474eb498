/**
 * How authenticators read the server's own objects (service accounts, their secrets, pods, bootstrap token secrets):
 * from the watch cache first, then from storage when the cache does not have the object yet, as Kubernetes' getter
 * reads its informers with a live fallback.
 */
import { type ApiObject, isNotFound } from '@platform/api';

import { type GenericStore } from '../../registry/generic/store';
import { type RequestContext } from '../../registry/rest/rest';

/** The main store of a served resource (`group`, plural `resource`); undefined when not served. */
export type StoreLookup = (group: string, resource: string) => GenericStore | undefined;

/** Reads one object of the core group; undefined when it does not exist (or the resource is not served). */
export interface ObjectReader {
  get<T extends ApiObject>(resource: string, namespace: string, name: string): Promise<T | undefined>;
}

/** An {@link ObjectReader} over the server's stores. */
export function objectReader(lookup: StoreLookup, now: () => number = Date.now): ObjectReader {
  return {
    async get<T extends ApiObject>(resource: string, namespace: string, name: string): Promise<T | undefined> {
      const store = lookup('', resource);
      if (!store) return undefined;
      const ctx: RequestContext = { namespace, now };
      for (const resourceVersion of ['0', undefined]) {
        try {
          return (await store.get(ctx, name, { ...(resourceVersion ? { resourceVersion } : {}) })) as T;
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      return undefined;
    },
  };
}

/** An object reader over fixed objects (`resource/namespace/name` → object), for tests and tools. */
export function staticObjectReader(objects: Record<string, ApiObject>): ObjectReader {
  return {
    async get<T extends ApiObject>(resource: string, namespace: string, name: string): Promise<T | undefined> {
      return objects[`${resource}/${namespace}/${name}`] as T | undefined;
    },
  };
}
