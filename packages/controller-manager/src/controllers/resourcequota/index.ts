/**
 * The resource quota controller (model: Kubernetes 1.21 `pkg/controller/resourcequota`): keeps every
 * ResourceQuota's `status.hard` equal to `spec.hard` and recomputes `status.used` from the informer caches of the
 * objects it counts. A quota is synced when it is created or its spec changes, when an object it counts is deleted
 * or changes its usage (a pod that finishes, a service that changes type: the quota monitor's replenishment), and
 * every `--resource-quota-sync-period`. The API server's ResourceQuota admission charges creates; this controller
 * gives back what deletes free.
 */
import { type ApiObject, isConflict, type Kind, type ResourceQuota, ResourceQuotaKind } from '@platform/api';
import {
  isDeletedFinalStateUnknown,
  metaNamespaceKey,
  runWorkers,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';
import { durationFlag, type FlagDef, intFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { discoverPreferredResources } from '../util/discovery';
import { type GroupResource, quantity, quotaCovers, resourceFor, type Usage, usageOf } from './usage';

/** The values of the resource quota controller's options. */
export interface ResourceQuotaControllerConfig {
  /** `--resource-quota-sync-period` (ms). */
  resourceQuotaSyncPeriodMs: number;
  /** `--concurrent-resource-quota-syncs`. */
  concurrentResourceQuotaSyncs: number;
  /** How often discovery is read again for resources to count (ms); Kubernetes: 30 s. */
  discoveryResyncMs: number;
}

/** `--resource-quota-sync-period`, `--concurrent-resource-quota-syncs`. */
export class ResourceQuotaControllerOptions extends ControllerOptions<ResourceQuotaControllerConfig> {
  resourceQuotaSyncPeriodMs = 5 * 60_000;
  concurrentResourceQuotaSyncs = 5;

  constructor() {
    super('Resource quota controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-resource-quota-syncs',
        'The number of resource quotas that are allowed to sync concurrently. Larger number = more responsive quota management, but more CPU (and network) load',
        this.concurrentResourceQuotaSyncs,
        (v) => (this.concurrentResourceQuotaSyncs = v),
        { type: 'int32' },
      ),
      durationFlag(
        'resource-quota-sync-period',
        'The period for syncing quota usage status in the system',
        this.resourceQuotaSyncPeriodMs,
        (v) => (this.resourceQuotaSyncPeriodMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.concurrentResourceQuotaSyncs < 1
      ? [new Error(`--concurrent-resource-quota-syncs must be at least 1, got ${this.concurrentResourceQuotaSyncs}`)]
      : [];
  }

  values(): ResourceQuotaControllerConfig {
    return {
      resourceQuotaSyncPeriodMs: this.resourceQuotaSyncPeriodMs,
      concurrentResourceQuotaSyncs: this.concurrentResourceQuotaSyncs,
      discoveryResyncMs: 30_000,
    };
  }
}

const grKey = (gr: GroupResource): string => `${gr.resource}.${gr.group}`;

function sameUsage(a: Usage, b: Usage): boolean {
  if (a.size !== b.size) return false;
  for (const [k, q] of a) {
    const o = b.get(k);
    if (!o || o.cmp(q) !== 0) return false;
  }
  return true;
}

function sameResourceList(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    const x = quantity(a?.[k]);
    const y = quantity(b?.[k]);
    if (!x || !y) {
      if (a?.[k] !== b?.[k]) return false;
    } else if (x.cmp(y) !== 0) return false;
  }
  return true;
}

async function run(ctx: ControllerContext, o: ResourceQuotaControllerConfig): Promise<void> {
  const quotas = ctx.informers.informerFor(ResourceQuotaKind);
  const queue = new WorkQueue<string>({ name: 'resourcequota_primary', metrics: ctx.metrics });
  const enqueue = (q: ResourceQuota): void => queue.add(metaNamespaceKey(q));
  quotas.addEventHandler({
    onAdd: enqueue,
    onUpdate: (old, q) => {
      // Only spec changes (or a status that no longer matches the spec) need a recount.
      if (!sameResourceList(old.spec?.hard, q.spec?.hard) || !sameResourceList(q.spec?.hard, q.status?.hard))
        enqueue(q);
    },
  });

  /** Informers of the counted resources, by `resource.group`. */
  const monitors = new Map<
    string,
    { kind: Kind; informer: ReturnType<ControllerContext['informers']['informerFor']> }
  >();

  /** Every quota of `namespace` that counts something of `gr` is synced again (Kubernetes' replenishQuota). */
  const replenish = (gr: GroupResource, namespace: string): void => {
    for (const q of quotas.indexer.byIndex('namespace', namespace)) {
      if (Object.keys(q.spec?.hard ?? {}).some((k) => grKey(resourceFor(k)) === grKey(gr))) enqueue(q);
    }
  };
  const monitor = (gr: GroupResource, kind: Kind): void => {
    const key = grKey(gr);
    if (monitors.has(key)) return;
    const informer = ctx.informers.informerFor(kind);
    informer.addEventHandler({
      onUpdate: (old, obj) => {
        if (!obj.metadata?.namespace) return;
        if (!sameUsage(usageOf(gr, old), usageOf(gr, obj))) replenish(gr, obj.metadata.namespace);
      },
      onDelete: (obj) => {
        const d = isDeletedFinalStateUnknown(obj) ? obj.obj : obj;
        if (d.metadata?.namespace) replenish(gr, d.metadata.namespace);
      },
    });
    monitors.set(key, { kind, informer });
  };
  const syncMonitors = async (): Promise<void> => {
    const found = await discoverPreferredResources(ctx.client.rest, ctx.signal);
    for (const r of found.resources) {
      if (!r.namespaced || !r.schemeKind) continue;
      if (!['create', 'list', 'watch', 'delete'].every((v) => r.verbs.includes(v))) continue;
      monitor({ group: r.group, resource: r.resource }, r.schemeKind);
    }
  };

  /** Recomputes one quota's status; writes it when it differs. */
  const sync = async (key: string): Promise<void> => {
    const cached = quotas.indexer.get(key);
    if (!cached) return;
    const { namespace } = splitMetaNamespaceKey(key);
    const hard = (cached.spec?.hard ?? {}) as Record<string, string>;
    const used: Record<string, string> = { ...((cached.status?.used ?? {}) as Record<string, string>) };
    const byResource = new Map<string, { gr: GroupResource; names: string[] }>();
    for (const name of Object.keys(hard)) {
      const gr = resourceFor(name);
      const entry = byResource.get(grKey(gr)) ?? { gr, names: [] };
      entry.names.push(name);
      byResource.set(grKey(gr), entry);
    }
    for (const { gr, names } of byResource.values()) {
      const m = monitors.get(grKey(gr));
      if (!m) continue; // not a resource this server serves: the usage is left as it is
      const totals: Usage = new Map();
      for (const obj of m.informer.indexer.byIndex('namespace', namespace) as ApiObject[]) {
        if (!quotaCovers(cached, gr, obj)) continue;
        for (const [k, q] of usageOf(gr, obj)) {
          const cur = totals.get(k);
          totals.set(k, cur ? cur.add(q) : q);
        }
      }
      for (const n of names) used[n] = (totals.get(n) ?? quantity('0')!).toString();
    }
    for (const k of Object.keys(used)) if (!(k in hard)) delete used[k];
    const dirty =
      !sameResourceList(hard, cached.status?.hard as Record<string, string> | undefined) ||
      !sameResourceList(used, cached.status?.used as Record<string, string> | undefined);
    if (!dirty) return;
    const next = structuredClone(cached);
    next.status = { hard: { ...hard }, used };
    await ctx.client.resource(ResourceQuotaKind, namespace).updateStatus(next, { signal: ctx.signal });
  };

  const stop = (): void => queue.shutDown();
  ctx.signal.addEventListener('abort', stop, { once: true });
  const timers: NodeJS.Timeout[] = [];
  try {
    for (;;) {
      try {
        await syncMonitors();
        break;
      } catch (err) {
        if (ctx.signal.aborted) return;
        ctx.logger.warn('Resource quota controller discovery failed; retrying', { error: String(err) });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    ctx.startInformers();
    while (!quotas.hasSynced() || ![...monitors.values()].every((m) => m.informer.hasSynced())) {
      if (ctx.signal.aborted) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    timers.push(
      setInterval(() => {
        for (const q of quotas.indexer.list()) enqueue(q);
      }, o.resourceQuotaSyncPeriodMs),
      setInterval(() => {
        syncMonitors()
          .then(() => ctx.startInformers())
          .catch((err: unknown) => {
            if (!ctx.signal.aborted)
              ctx.logger.warn('Resource quota controller discovery failed', { error: String(err) });
          });
      }, o.discoveryResyncMs),
    );
    // Quotas seen before the monitors synced are counted now.
    for (const q of quotas.indexer.list()) enqueue(q);
    await runWorkers(queue, o.concurrentResourceQuotaSyncs, sync, (key, err) => {
      if (ctx.signal.aborted) return;
      if (isConflict(err)) ctx.logger.info('Conflict syncing resource quota; requeued', { quota: key });
      else ctx.logger.error('Error syncing resource quota', { quota: key, error: String(err) });
    });
  } finally {
    for (const t of timers) clearInterval(t);
    stop();
    ctx.signal.removeEventListener('abort', stop);
  }
}

/** The `resourcequota` controller. */
export const resourceQuotaController: ControllerDefinition<ResourceQuotaControllerConfig> = {
  name: 'resourcequota',
  enabledByDefault: true,
  options: () => new ResourceQuotaControllerOptions(),
  run,
};
