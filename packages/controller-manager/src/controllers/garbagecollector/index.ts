/**
 * The garbage collector (model: Kubernetes 1.21 `pkg/controller/garbagecollector`): an informer on every resource
 * that discovery lists with list, watch and delete (Events excepted), found again every 30 s so that resources
 * served later are watched too; the ownerReferences graph built from them ({@link DependencyGraph}); and
 * `--concurrent-gc-syncs` workers on each of the attemptToDelete and attemptToOrphan queues ({@link Collector}).
 * `--enable-garbage-collector=false` leaves it idle.
 */
import { type ApiObject, isConflict, type Kind } from '@platform/api';
import { isDeletedFinalStateUnknown, runWorkers, WorkQueue } from '@platform/client';
import { boolFlag, type FlagDef, intFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { discoverPreferredResources } from '../util/discovery';
import { Collector, RestMappingError } from './collector';
import { DependencyGraph, type Identity } from './graph';

/** The values of the garbage collector's options. */
export interface GarbageCollectorConfig {
  /** `--enable-garbage-collector`. */
  enableGarbageCollector: boolean;
  /** `--concurrent-gc-syncs`. */
  concurrentGCSyncs: number;
  /** How often discovery is read again for new resources (ms); Kubernetes: 30 s. */
  resourceResyncMs: number;
}

/** `--enable-garbage-collector`, `--concurrent-gc-syncs`. */
export class GarbageCollectorOptions extends ControllerOptions<GarbageCollectorConfig> {
  enableGarbageCollector = true;
  concurrentGCSyncs = 20;

  constructor() {
    super('Garbage collector controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-gc-syncs',
        'The number of garbage collector workers that are allowed to sync concurrently.',
        this.concurrentGCSyncs,
        (v) => (this.concurrentGCSyncs = v),
        { type: 'int32' },
      ),
      boolFlag(
        'enable-garbage-collector',
        'Enables the generic garbage collector. MUST be synced with the corresponding flag of the platform-apiserver.',
        this.enableGarbageCollector,
        (v) => (this.enableGarbageCollector = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.concurrentGCSyncs < 1
      ? [new Error(`--concurrent-gc-syncs must be at least 1, got ${this.concurrentGCSyncs}`)]
      : [];
  }

  values(): GarbageCollectorConfig {
    return {
      enableGarbageCollector: this.enableGarbageCollector,
      concurrentGCSyncs: this.concurrentGCSyncs,
      resourceResyncMs: 30_000,
    };
  }
}

/** Resources the collector never watches (as Kubernetes' `DefaultIgnoredResources`). */
const IGNORED = new Set(['/events', 'events.platform/events']);

/** Not a failure: the item is looked at again later (rate limited), e.g. an owner not yet seen by its informer. */
class RequeueError extends Error {}

function identityOf(kind: Kind, obj: ApiObject): Identity {
  return {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    namespace: obj.metadata?.namespace ?? '',
    name: obj.metadata?.name ?? '',
    uid: obj.metadata?.uid ?? '',
  };
}

async function run(ctx: ControllerContext, o: GarbageCollectorConfig): Promise<void> {
  if (!o.enableGarbageCollector) {
    ctx.logger.info('Garbage collector is disabled (--enable-garbage-collector=false)');
    if (!ctx.signal.aborted) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    return;
  }
  const toDelete = new WorkQueue<string>({ name: 'garbage_collector_attempt_to_delete', metrics: ctx.metrics });
  const toOrphan = new WorkQueue<string>({ name: 'garbage_collector_attempt_to_orphan', metrics: ctx.metrics });
  const scheme = ctx.client.rest.scheme;
  let collector: Collector | undefined = undefined;
  const graph = new DependencyGraph(
    {
      attemptToDelete: (uid) => toDelete.add(uid),
      attemptToOrphan: (uid) => toOrphan.add(uid),
      invalidNamespaceOwnerRef: (dependent, owner) => collector?.invalidNamespaceOwnerRef(dependent, owner),
    },
    (apiVersion, kind) => scheme.kindFor(apiVersion, kind)?.namespaced,
  );
  collector = new Collector(graph, ctx.client, ctx.recorder, ctx.signal);
  collector.enqueueDelete = (uid) => toDelete.add(uid);

  const monitors = new Map<string, { hasSynced(): boolean }>();
  const monitor = (kind: Kind): void => {
    const id = `${kind.apiVersion}/${kind.plural}`;
    if (monitors.has(id)) return;
    const informer = ctx.informers.informerFor(kind);
    informer.addEventHandler({
      onAdd: (obj) => graph.upsert(obj, identityOf(kind, obj), undefined),
      onUpdate: (old, obj) => graph.upsert(obj, identityOf(kind, obj), old),
      onDelete: (obj) => {
        const o = isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
        if (o.metadata?.uid) graph.remove(o.metadata.uid);
      },
    });
    monitors.set(id, informer);
  };
  const syncMonitors = async (): Promise<void> => {
    const found = await discoverPreferredResources(ctx.client.rest, ctx.signal);
    for (const f of found.failed) ctx.logger.warn('Discovery failed for a group version', { ...f });
    for (const r of found.resources) {
      if (IGNORED.has(`${r.group}/${r.resource}`)) continue;
      if (!['list', 'watch', 'delete'].every((v) => r.verbs.includes(v))) continue;
      if (r.schemeKind) monitor(r.schemeKind);
    }
  };

  const stop = (): void => {
    toDelete.shutDown();
    toOrphan.shutDown();
  };
  ctx.signal.addEventListener('abort', stop, { once: true });
  let resync: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      try {
        await syncMonitors();
        break;
      } catch (err) {
        if (ctx.signal.aborted) return;
        ctx.logger.warn('Garbage collector discovery failed; retrying', { error: String(err) });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    ctx.startInformers();
    // Wait for every monitor's cache before acting on the graph (an owner not yet listed is not absent).
    while (![...monitors.values()].every((m) => m.hasSynced())) {
      if (ctx.signal.aborted) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    ctx.setHealth(undefined);
    resync = setInterval(() => {
      syncMonitors()
        .then(() => ctx.startInformers())
        .catch((err: unknown) => {
          if (!ctx.signal.aborted) ctx.logger.warn('Garbage collector discovery failed', { error: String(err) });
        });
    }, o.resourceResyncMs);
    const onError = (what: string) => (uid: string, err: unknown) => {
      if (ctx.signal.aborted || err instanceof RequeueError) return;
      const node = graph.get(uid);
      const fields = { item: node ? JSON.stringify(node.identity) : uid, error: String(err) };
      if (err instanceof RestMappingError) ctx.logger.debug(`Error syncing item (${what})`, fields);
      else if (isConflict(err)) ctx.logger.info(`Conflict ${what}; requeued`, fields);
      else ctx.logger.error(`Error syncing item (${what})`, fields);
    };
    await Promise.all([
      runWorkers(
        toDelete,
        o.concurrentGCSyncs,
        async (uid) => {
          if ((await collector.attemptToDelete(uid)) === 'requeue') throw new RequeueError(uid);
        },
        onError('attempting to delete'),
      ),
      runWorkers(toOrphan, o.concurrentGCSyncs, (uid) => collector.attemptToOrphan(uid), onError('orphaning')),
    ]);
  } finally {
    if (resync) clearInterval(resync);
    stop();
    ctx.signal.removeEventListener('abort', stop);
  }
}

/** The `garbagecollector` controller. */
export const garbageCollectorController: ControllerDefinition<GarbageCollectorConfig> = {
  name: 'garbagecollector',
  enabledByDefault: true,
  serviceAccount: 'generic-garbage-collector',
  options: () => new GarbageCollectorOptions(),
  run,
};
