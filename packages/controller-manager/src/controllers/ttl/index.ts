/**
 * The TTL controller (model: Kubernetes 1.21 `pkg/controller/ttl/ttl_controller.go`). It sets the annotation
 * `node.alpha.kubernetes.io/ttl` on every Node to how long (seconds) node agents may cache the Secrets and
 * ConfigMaps they mount, by cluster size: 0 up to 100 nodes, then 15, 30, 60, 300 and 600 s. The steps overlap
 * (Kubernetes' `ttlBoundaries`), so a cluster whose size wavers around a boundary does not flip every Node: the
 * TTL goes up once the size passes a step's maximum and down once it falls below its minimum. Nodes are patched
 * only when their annotation differs. Five workers (Kubernetes' fixed count); no options.
 */
import { type Node, NodeKind, isNotFound } from '@platform/api';
import { metaNamespaceKey, runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';
import { waitForSynced } from '../util/wait-synced';

/** Kubernetes' `v1.ObjectTTLAnnotationKey`. */
export const TTL_ANNOTATION = 'node.alpha.kubernetes.io/ttl';

/** Kubernetes' `ttlBoundaries`: each step's cluster sizes and TTL. */
export const TTL_BOUNDARIES: readonly { sizeMin: number; sizeMax: number; ttlSeconds: number }[] = [
  { sizeMin: 0, sizeMax: 100, ttlSeconds: 0 },
  { sizeMin: 90, sizeMax: 500, ttlSeconds: 15 },
  { sizeMin: 450, sizeMax: 1000, ttlSeconds: 30 },
  { sizeMin: 900, sizeMax: 2000, ttlSeconds: 60 },
  { sizeMin: 1800, sizeMax: 10000, ttlSeconds: 300 },
  { sizeMin: 9000, sizeMax: 2 ** 31 - 1, ttlSeconds: 600 },
];

/** The values of the TTL controller (no flags; tests may change the boundaries). */
export interface TTLControllerConfig {
  boundaries: readonly { sizeMin: number; sizeMax: number; ttlSeconds: number }[];
}

async function run(ctx: ControllerContext, o: TTLControllerConfig): Promise<void> {
  const nodes = ctx.informers.informerFor(NodeKind);
  const queue = new WorkQueue<string>({ name: 'ttlcontroller', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  const b = o.boundaries;
  let count = 0;
  let step = 0;
  let desired = b[0]!.ttlSeconds;
  const enqueueAll = (): void => {
    for (const n of nodes.indexer.list()) queue.add(metaNamespaceKey(n));
  };
  nodes.addEventHandler({
    onAdd: (n) => {
      count++;
      if (step < b.length - 1 && count > b[step]!.sizeMax) {
        step++;
        desired = b[step]!.ttlSeconds;
        enqueueAll();
      }
      queue.add(metaNamespaceKey(n));
    },
    onUpdate: (_old, n) => queue.add(metaNamespaceKey(n)),
    onDelete: () => {
      count--;
      if (step > 0 && count < b[step]!.sizeMin) {
        step--;
        desired = b[step]!.ttlSeconds;
        enqueueAll();
      }
    },
  });
  const sync = async (key: string): Promise<void> => {
    const n: Node | undefined = nodes.indexer.get(key);
    if (!n) return;
    const want = String(desired);
    if (n.metadata?.annotations?.[TTL_ANNOTATION] === want) return;
    try {
      await ctx.client
        .resource(NodeKind)
        .patch(key, 'merge', { metadata: { annotations: { [TTL_ANNOTATION]: want } } }, { signal: ctx.signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };
  if (!(await waitForSynced(ctx.signal, [nodes]))) return;
  await runWorkers(queue, 5, sync, (key, err) => {
    if (!ctx.signal.aborted)
      ctx.logger.info('Failed to set the TTL annotation, retrying', { node: key, error: String(err) });
  });
}

/** The `ttl` controller. */
export const ttlController: ControllerDefinition<TTLControllerConfig> = {
  name: 'ttl',
  enabledByDefault: true,
  serviceAccount: 'ttl-controller',
  run: (ctx, o) => run(ctx, { boundaries: o?.boundaries ?? TTL_BOUNDARIES }),
};
