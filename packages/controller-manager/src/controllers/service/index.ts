/**
 * The service controller (model: Kubernetes 1.21 `pkg/controller/service`). Kubernetes' controller provisions the
 * load balancers of `type: LoadBalancer` Services through a cloud provider, and is not started without one. The
 * platform has no cloud: this controller runs so that such a Service does not wait silently. Each LoadBalancer
 * Service without an ingress gets one Warning Event (reason `SyncLoadBalancerFailed`, once per Service UID while
 * the controller runs) saying no cloud provider is configured, and stays pending (`status.loadBalancer` empty).
 * A Service that stops being a LoadBalancer, or is deleted, is forgotten. `--concurrent-service-syncs` Services
 * are looked at at once.
 */
import { type Service, ServiceKind } from '@platform/api';
import { metaNamespaceKey, runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { ConcurrentSyncsOptions } from '../util/options';
import { waitForSynced } from '../util/wait-synced';

/** The Event's reason (Kubernetes' service controller's for a failed load balancer sync). */
export const NO_CLOUD_REASON = 'SyncLoadBalancerFailed';
/** The Event's message. */
export const NO_CLOUD_MESSAGE =
  'Error syncing load balancer: no cloud provider is configured (--cloud-provider), so no load balancer can be provisioned; the Service stays pending';

function wantsLoadBalancer(s: Service): boolean {
  return s.spec?.type === 'LoadBalancer' && !s.metadata?.deletionTimestamp && !s.status?.loadBalancer?.ingress?.length;
}

async function run(ctx: ControllerContext, o: { workers: number }): Promise<void> {
  const services = ctx.informers.informerFor(ServiceKind);
  const queue = new WorkQueue<string>({ name: 'service', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  /** Services told about, by key: their UID. */
  const told = new Map<string, string>();
  services.addEventHandler({
    onAdd: (s) => queue.add(metaNamespaceKey(s)),
    onUpdate: (_old, s) => queue.add(metaNamespaceKey(s)),
    onDelete: (s) => queue.add(metaNamespaceKey(unwrapTombstone(s))),
  });
  const sync = async (key: string): Promise<void> => {
    const s = services.indexer.get(key);
    if (!s || !wantsLoadBalancer(s)) {
      told.delete(key);
      return;
    }
    const uid = s.metadata?.uid ?? '';
    if (told.get(key) === uid) return;
    told.set(key, uid);
    ctx.logger.info('Service of type LoadBalancer stays pending: no cloud provider', { service: key });
    ctx.recorder.event(s, 'Warning', NO_CLOUD_REASON, NO_CLOUD_MESSAGE);
    await Promise.resolve();
  };
  if (!(await waitForSynced(ctx.signal, [services]))) return;
  await runWorkers(queue, o.workers, sync);
}

/** The `service` controller. */
export const serviceController: ControllerDefinition<{ workers: number }> = {
  name: 'service',
  enabledByDefault: true,
  serviceAccount: 'service-controller',
  options: () => new ConcurrentSyncsOptions('Service controller', 'concurrent-service-syncs', 1, 'services'),
  run,
};
