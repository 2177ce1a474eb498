/**
 * What the API server gives its authorizers: reflectors over its own registry (list, then watch from the list's
 * resource version; a watch that ends or fails is listed again after a short pause) and the RBAC index they feed.
 */
import { type ApiObject } from '@platform/api';
import { type Logger } from '@platform/common';

import { type AuthorizationHost, type ReflectHandler, type RuleSource } from '../authorizer';
import { type Lister, type RequestContext, type Watcher } from '../../registry/rest/rest';

/** Pause before listing again after a watch ended or failed, ms. */
const RELIST_DELAY_MS = 1000;

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The host of a server whose resources are served by `storeOf` (undefined: the resource is not served). */
export function registryAuthorizationHost(
  storeOf: (group: string, resource: string) => (Lister & Watcher) | undefined,
  rbac: RuleSource,
  log: Logger,
  now: () => number = Date.now,
): AuthorizationHost {
  return {
    rbac,
    log,
    reflect(group, resource, handler, signal) {
      const store = storeOf(group, resource);
      if (!store) {
        log.warn('Authorization: a resource it reads is not served; it is treated as empty', { group, resource });
        handler.replace([]);
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        void runReflector(store, handler, signal, now, log, `${resource}${group ? `.${group}` : ''}`, resolve);
      });
    },
  };
}

async function runReflector(
  store: Lister & Watcher,
  handler: ReflectHandler,
  signal: AbortSignal,
  now: () => number,
  log: Logger,
  name: string,
  synced: () => void,
): Promise<void> {
  const ctx: RequestContext = { namespace: '', now, signal };
  while (!signal.aborted) {
    try {
      const list = await store.list(ctx, {});
      handler.replace(list.items);
      synced();
      const events = store.watch(ctx, { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true });
      for await (const e of events) {
        if (signal.aborted) break;
        if (e.type === 'ADDED' || e.type === 'MODIFIED') handler.upsert(e.object as ApiObject);
        else if (e.type === 'DELETED') handler.remove(e.object as ApiObject);
        else if (e.type === 'ERROR') break;
      }
    } catch (err) {
      if (!signal.aborted) log.warn('Authorization reflector failed; listing again', { resource: name, err });
    }
    if (!signal.aborted) await delay(RELIST_DELAY_MS, signal);
  }
  synced();
}
