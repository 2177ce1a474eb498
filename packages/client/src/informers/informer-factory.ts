/**
 * The shared informer factory (model: client-go `informers/factory.go`): one informer per resource per process,
 * however many controllers ask for it, each with a resync period drawn at random between `--min-resync-period`
 * and twice it (as kube-controller-manager's `ResyncPeriod`).
 */
import { type ApiObject, type Kind } from '@platform/api';
import { type Logger, NOP_LOGGER } from '@platform/common';
import { type Static, type TObject } from '@sinclair/typebox';

import { type Clientset, type ListOptions } from '../rest/resource-client';
import { type Clock, REAL_CLOCK } from '../util/clock';
import { type ListerWatcher, SharedIndexInformer } from './shared-informer';
import { LABEL_INDEX, labelIndexFunc, NAMESPACE_INDEX, namespaceIndexFunc } from './store';

/** Settings of a factory. */
export interface InformerFactoryOptions {
  /** `--min-resync-period` (ms); 0 disables resync. */
  minResyncPeriodMs?: number;
  /** Only this namespace (all when undefined). */
  namespace?: string;
  /** Selectors applied to every list and watch (the node agent's `spec.nodeName=<node>`), per resource plural. */
  tweakListOptions?: (kind: Kind) => Pick<ListOptions, 'labelSelector' | 'fieldSelector'>;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
}

/** Hands out shared informers and runs them. */
export class InformerFactory {
  private readonly informers = new Map<string, SharedIndexInformer<ApiObject>>();
  private readonly running = new Set<string>();
  private readonly runs: Promise<void>[] = [];

  constructor(
    readonly clientset: Clientset,
    private readonly o: InformerFactoryOptions = {},
  ) {}

  /** A resync period between the minimum and twice it. */
  resyncPeriod(): number {
    const min = this.o.minResyncPeriodMs ?? 0;
    return min > 0 ? Math.floor(min * (1 + (this.o.random ?? Math.random)())) : 0;
  }

  /** The informer of a kind (created on first use, with the namespace and label indexes). */
  informerFor<S extends TObject>(kind: Kind<S>): SharedIndexInformer<Static<S> & ApiObject> {
    const id = `${kind.apiVersion}/${kind.plural}`;
    let inf = this.informers.get(id);
    if (!inf) {
      const client = this.clientset.resource(kind, kind.namespaced ? this.o.namespace : undefined);
      const tweak = this.o.tweakListOptions?.(kind as unknown as Kind) ?? {};
      const lw: ListerWatcher<ApiObject> = {
        // A list's items come without apiVersion and kind (as Kubernetes sends them); the cache gives them back,
        // so that what a controller reads from it can be referred to (an Event's involvedObject, an owner).
        list: async (o) => {
          const l = await client.list({ ...o, ...tweak });
          for (const item of l.items) {
            item.apiVersion ??= kind.apiVersion;
            item.kind ??= kind.kind;
          }
          return l;
        },
        watch: (o) => client.watch({ ...o, ...tweak }),
      };
      inf = new SharedIndexInformer<ApiObject>(lw, {
        resyncPeriodMs: this.resyncPeriod(),
        clock: this.o.clock ?? REAL_CLOCK,
        logger: (this.o.logger ?? NOP_LOGGER).child('informer', { resource: id }),
        random: this.o.random,
      });
      inf.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc, [LABEL_INDEX]: labelIndexFunc });
      this.informers.set(id, inf);
    }
    return inf as unknown as SharedIndexInformer<Static<S> & ApiObject>;
  }

  /** Starts every informer asked for so far and not yet running; they stop when `signal` aborts. */
  start(signal: AbortSignal): void {
    for (const [id, inf] of this.informers) {
      if (this.running.has(id)) continue;
      this.running.add(id);
      this.runs.push(inf.run(signal));
    }
  }

  /** Resolves true once every started informer has synced; false when `signal` aborts first. */
  async waitForCacheSync(signal: AbortSignal, pollMs = 50): Promise<boolean> {
    const clock = this.o.clock ?? REAL_CLOCK;
    while (![...this.informers.values()].every((i) => i.hasSynced())) {
      if (signal.aborted) return false;
      try {
        await clock.sleep(pollMs, signal);
      } catch {
        return false;
      }
    }
    return true;
  }

  /** Resolves when every started informer has stopped. */
  async shutdown(): Promise<void> {
    await Promise.all(this.runs);
  }
}
