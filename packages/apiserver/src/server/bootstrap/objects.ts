/**
 * What the bootstrap reconcilers share: the registry stores they write through (the same stores, strategies and
 * validation as API requests, so bootstrap objects are ordinary objects), a request context of the server itself,
 * and create-or-update helpers.
 */
import { type ApiObject, isAlreadyExists, isConflict, isNotFound } from '@platform/api';

import {
  type Creater,
  type GracefulDeleter,
  type Getter,
  type Lister,
  type RequestContext,
  type Updater,
} from '../../registry/rest/rest';

/** A registry store with the verbs the bootstrap uses (every GenericStore has them). */
export type ObjectStore = Getter & Lister & Creater & Updater & GracefulDeleter;

/** Finds the registry store of `group/resource`; undefined when the resource is not served. */
export type StoreLookup = (group: string, resource: string) => ObjectStore | undefined;

/** The context of the server's own requests in `namespace` ('' for cluster-scoped objects). */
export function systemContext(namespace: string, now: () => number): RequestContext {
  return { namespace, now, user: { name: 'system:apiserver', groups: ['system:masters'] } };
}

/** `store(group, resource)`, or an error naming the resource when it is not served. */
export function requireStore(lookup: StoreLookup, group: string, resource: string): ObjectStore {
  const store = lookup(group, resource);
  if (!store) throw new Error(`bootstrap: resource ${group ? `${resource}.${group}` : resource} is not served`);
  return store;
}

/** Reads an object; undefined when it does not exist. */
export async function getOrUndefined(
  store: ObjectStore,
  ctx: RequestContext,
  name: string,
): Promise<ApiObject | undefined> {
  try {
    return await store.get(ctx, name, {});
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Creates `obj`; false (nothing done) when it exists already. */
export async function createIfMissing(store: ObjectStore, ctx: RequestContext, obj: ApiObject): Promise<boolean> {
  try {
    await store.create(ctx, structuredClone(obj), undefined, { dryRun: false });
    return true;
  } catch (err) {
    if (isAlreadyExists(err)) return false;
    throw err;
  }
}

/**
 * Writes the change `change` computes from the current object, when it computes one (undefined: nothing to do).
 * `change` gets a copy it may mutate and is run again on the fresh object after a conflict. Returns the stored
 * object (or undefined when the object is gone or nothing changed).
 */
export async function updateIfNeeded(
  store: ObjectStore,
  ctx: RequestContext,
  name: string,
  change: (current: ApiObject) => ApiObject | undefined,
): Promise<ApiObject | undefined> {
  for (let attempt = 0; ; attempt++) {
    const current = await getOrUndefined(store, ctx, name);
    if (!current) return undefined;
    const wanted = change(structuredClone(current));
    if (!wanted) return undefined;
    try {
      const { object } = await store.update(
        ctx,
        {
          name,
          updatedObject: (_ctx, fresh) => {
            if (!fresh) return Promise.resolve(wanted);
            // The store retries on a stale read: compute the change again on what it found.
            return Promise.resolve(change(fresh) ?? fresh);
          },
        },
        undefined,
        undefined,
        { dryRun: false },
      );
      return object;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      if (isConflict(err) && attempt < 5) continue;
      throw err;
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs `fn` until it succeeds, waiting `intervalMs` between attempts and reporting each failure; gives up (throwing
 * the last error) when `signal` aborts. Post-start hooks use it: the store may not answer in the first moments.
 */
export async function retryUntilDone(
  fn: () => Promise<void>,
  signal: AbortSignal,
  intervalMs: number,
  onError: (err: unknown) => void,
): Promise<void> {
  for (;;) {
    try {
      await fn();
      return;
    } catch (err) {
      if (signal.aborted) throw err;
      onError(err);
    }
    await sleep(intervalMs, signal);
  }
}
