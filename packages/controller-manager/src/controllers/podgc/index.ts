/**
 * The pod garbage collector (model: Kubernetes 1.21 `pkg/controller/podgc/gc_controller.go`). Every 20 s it
 * force-deletes (grace period 0):
 *
 * - the oldest finished pods (Succeeded or Failed) beyond `--terminated-pod-gc-threshold` (0 or less: never);
 * - pods bound to a node that no longer exists: a node missing from the cache is quarantined for 40 s and then
 *   looked up on the API server, so a node that is only slow to appear in the cache is not taken for deleted;
 * - pods being deleted that were never scheduled.
 */
import { isNotFound, NodeKind, type Pod, PodKind } from '@platform/api';
import { type FlagDef, INT32, intFlag } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { waitForSynced } from '../util/wait-synced';

/** The values of the pod garbage collector's options. */
export interface PodGCControllerConfig {
  /** `--terminated-pod-gc-threshold`. */
  terminatedPodGCThreshold: number;
  /** The period of the collection (ms); Kubernetes' `gcCheckPeriod`, 20 s. */
  gcCheckPeriodMs: number;
  /** How long a node missing from the cache waits before it is looked up (ms); Kubernetes' `quarantineTime`, 40 s. */
  quarantineMs: number;
}

/** `--terminated-pod-gc-threshold`. */
export class PodGCControllerOptions extends ControllerOptions<PodGCControllerConfig> {
  terminatedPodGCThreshold = 12500;

  constructor() {
    super('Pod garbage collector controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'terminated-pod-gc-threshold',
        'Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.',
        this.terminatedPodGCThreshold,
        (v) => (this.terminatedPodGCThreshold = v),
        { range: INT32, type: 'int32' },
      ),
    ];
  }

  values(): PodGCControllerConfig {
    return { terminatedPodGCThreshold: this.terminatedPodGCThreshold, gcCheckPeriodMs: 20_000, quarantineMs: 40_000 };
  }
}

function isTerminated(p: Pod): boolean {
  return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
}

async function run(ctx: ControllerContext, o: PodGCControllerConfig): Promise<void> {
  const pods = ctx.informers.informerFor(PodKind);
  const nodes = ctx.informers.informerFor(NodeKind);
  /** Nodes missing from the cache, by name: when they were first missed. */
  const quarantined = new Map<string, number>();

  const forceDelete = async (p: Pod): Promise<void> => {
    const ns = p.metadata?.namespace ?? '';
    const name = p.metadata?.name ?? '';
    try {
      await ctx.client
        .resource(PodKind, ns)
        .delete(name, { gracePeriodSeconds: 0, preconditions: { uid: p.metadata?.uid }, signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err) || ctx.signal.aborted) return;
      ctx.logger.error('Failed to delete pod', { pod: `${ns}/${name}`, error: String(err) });
    }
  };

  const gcTerminated = async (all: Pod[]): Promise<void> => {
    if (o.terminatedPodGCThreshold <= 0) return;
    const terminated = all.filter(isTerminated);
    const excess = terminated.length - o.terminatedPodGCThreshold;
    if (excess <= 0) return;
    terminated.sort((a, b) => (a.metadata?.creationTimestamp ?? '').localeCompare(b.metadata?.creationTimestamp ?? ''));
    ctx.logger.info('Garbage collecting terminated pods', { count: excess });
    await Promise.all(terminated.slice(0, excess).map(forceDelete));
  };

  const gcOrphaned = async (all: Pod[]): Promise<void> => {
    const now = Date.now();
    const missing = new Set<string>();
    for (const p of all) {
      const node = p.spec?.nodeName;
      if (!node || nodes.indexer.get(node)) continue;
      missing.add(node);
      if (!quarantined.has(node)) quarantined.set(node, now);
    }
    for (const n of [...quarantined.keys()]) if (!missing.has(n)) quarantined.delete(n);
    const deleted = new Set<string>();
    for (const [node, since] of quarantined) {
      if (now - since < o.quarantineMs) continue;
      try {
        await ctx.client.resource(NodeKind).get(node, { signal: ctx.signal });
        quarantined.delete(node); // it exists after all
      } catch (err) {
        if (isNotFound(err)) deleted.add(node);
        else if (!ctx.signal.aborted) ctx.logger.error('Error while getting node', { node, error: String(err) });
      }
    }
    const orphans = all.filter((p) => p.spec?.nodeName && deleted.has(p.spec.nodeName));
    for (const p of orphans)
      ctx.logger.info('Found orphaned Pod assigned to the Node, deleting.', {
        pod: `${p.metadata?.namespace}/${p.metadata?.name}`,
        node: p.spec?.nodeName,
      });
    await Promise.all(orphans.map(forceDelete));
  };

  const gcUnscheduledTerminating = async (all: Pod[]): Promise<void> => {
    const victims = all.filter((p) => p.metadata?.deletionTimestamp && !p.spec?.nodeName);
    await Promise.all(victims.map(forceDelete));
  };

  if (!(await waitForSynced(ctx.signal, [pods, nodes]))) return;
  while (!ctx.signal.aborted) {
    const all = pods.indexer.list();
    await gcTerminated(all);
    await gcOrphaned(all);
    await gcUnscheduledTerminating(all);
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, o.gcCheckPeriodMs);
      function done(): void {
        clearTimeout(t);
        ctx.signal.removeEventListener('abort', done);
        resolve();
      }
      ctx.signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** The `podgc` controller. */
export const podGCController: ControllerDefinition<PodGCControllerConfig> = {
  name: 'podgc',
  enabledByDefault: true,
  serviceAccount: 'pod-garbage-collector',
  options: () => new PodGCControllerOptions(),
  run,
};
