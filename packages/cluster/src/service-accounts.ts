/**
 * The `default` ServiceAccount of every namespace, as Kubernetes' serviceaccount controller keeps it (model:
 * `pkg/controller/serviceaccount/serviceaccounts_controller.go`): created when a namespace appears and again when it
 * is deleted, never in a namespace being terminated. With the default admission plugins (ServiceAccount), a pod is
 * refused until its namespace has one.
 *
 * It belongs to the controller manager; until that daemon joins `platform up`, the launcher runs this one
 * controller itself, over the API like any other client, so that pods can be created in a fresh cluster.
 */
import {
  type ApiObject,
  isAlreadyExists,
  isForbidden,
  isNotFound,
  NamespaceKind,
  ServiceAccountKind,
} from '@platform/api';
import { type Clientset, InformerFactory, isDeletedFinalStateUnknown, WorkQueue } from '@platform/client';

import { runController } from './controller';

/** The ServiceAccount every namespace gets. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/**
 * Runs the controller until `signal` aborts; `onError` hears of failed syncs (they are retried with back-off).
 * Resolves once it has stopped.
 */
export async function runServiceAccountsController(
  clientset: Clientset,
  signal: AbortSignal,
  onError: (namespace: string, err: unknown) => void = () => {},
): Promise<void> {
  const factory = new InformerFactory(clientset);
  const namespaces = factory.informerFor(NamespaceKind);
  const accounts = factory.informerFor(ServiceAccountKind);
  const queue = new WorkQueue<string>({ name: 'serviceaccount' });
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
      await clientset.resource(ServiceAccountKind, name).create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace: name },
      });
    } catch (err) {
      // Already there (the cache lags), the namespace went away, or it is being terminated (NamespaceLifecycle
      // refuses new objects there): nothing to do.
      if (isAlreadyExists(err) || isNotFound(err) || isForbidden(err)) return;
      throw err;
    }
  };

  await runController(factory, queue, signal, 2, sync, onError);
}
