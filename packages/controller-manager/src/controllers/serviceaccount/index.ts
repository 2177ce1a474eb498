/**
 * The `serviceaccount` controller: the `default` ServiceAccount of every namespace (model:
 * `pkg/controller/serviceaccount/serviceaccounts_controller.go`), created when a namespace appears and again when it
 * is deleted, never in a namespace being terminated. With the ServiceAccount admission plugin, a pod is refused
 * until its namespace has one.
 */
import {
  type ApiObject,
  isAlreadyExists,
  isForbidden,
  isNotFound,
  NamespaceKind,
  ServiceAccountKind,
} from '@platform/api';
import { isDeletedFinalStateUnknown, runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';

/** The ServiceAccount every namespace gets. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/** Runs the controller until `ctx.signal` aborts. */
export async function runServiceAccountsController(ctx: ControllerContext): Promise<void> {
  const namespaces = ctx.informers.informerFor(NamespaceKind);
  const accounts = ctx.informers.informerFor(ServiceAccountKind);
  const queue = new WorkQueue<string>({ name: 'serviceaccount', metrics: ctx.metrics });
  const enqueueNamespace = (o: ApiObject): void => queue.add(o.metadata?.name ?? '');
  namespaces.addEventHandler({ onAdd: enqueueNamespace, onUpdate: (_old, o) => enqueueNamespace(o) });
  accounts.addEventHandler({
    onDelete: (o) => {
      const sa = isDeletedFinalStateUnknown(o) ? o.obj : o;
      if (sa.metadata?.name === DEFAULT_SERVICE_ACCOUNT) queue.add(sa.metadata.namespace ?? '');
    },
  });

  const sync = async (name: string): Promise<void> => {
    const ns = namespaces.indexer.get(name);
    if (!ns || ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') return;
    if (accounts.indexer.get(`${name}/${DEFAULT_SERVICE_ACCOUNT}`)) return;
    try {
      await ctx.client
        .resource(ServiceAccountKind, name)
        .create(
          { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace: name } },
          { signal: ctx.signal },
        );
    } catch (err) {
      // Already there (the cache lags), the namespace went away, or it is being terminated (NamespaceLifecycle
      // refuses new objects there): nothing to do.
      if (isAlreadyExists(err) || isNotFound(err) || isForbidden(err)) return;
      throw err;
    }
  };

  const { signal } = ctx;
  signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  if (!(await ctx.informers.waitForCacheSync(signal))) return;
  await runWorkers(queue, 1, sync, (key, err) => {
    if (!signal.aborted) ctx.logger.info('Sync failed; requeued', { namespace: key, error: String(err) });
  });
}

/** The definition `controllers/index.ts` lists. */
export const serviceAccountController: ControllerDefinition = {
  name: 'serviceaccount',
  enabledByDefault: true,
  serviceAccount: 'service-account-controller',
  run: (ctx) => runServiceAccountsController(ctx),
};
