/**
 * Periodic work around a Store: compaction (`--store-compaction-interval`), the `store` health check (/livez,
 * /readyz), and the polling behind `apiserver_storage_objects{resource}` and
 * `apiserver_storage_db_total_size_in_bytes{endpoint}` (the API server wires them to its metrics registry).
 */
import { type Revision, type Store } from './interface';

/**
 * Compacts like Kubernetes' compactor: at every tick it compacts at the revision it saw at the previous tick, so
 * that at least one interval of history stays available for watches and continue tokens.
 */
export class Compactor {
  private previous: Revision = 0n;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** One step: compact at the previously seen revision, then remember the current one. Returns what it compacted at. */
  async tick(): Promise<Revision | undefined> {
    const current = await this.store.currentRevision();
    const target = this.previous;
    this.previous = current;
    if (target === 0n) return undefined;
    await this.store.compact(target);
    return target;
  }

  /** Ticks every `intervalMs` until `stop()`; 0 disables. Errors go to `onError`, the next tick tries again. */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.tick().catch(this.onError);
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops ticking. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The shape of a health check (`HealthCheck` of @platform/common). */
export interface StoreHealthCheck {
  name: string;
  check(): Promise<void>;
}

/** The `store` health check: the store answers within `timeoutMs` (`--store-healthcheck-timeout`). */
export function storeHealthCheck(stores: () => Promise<Store[]>, timeoutMs: number): StoreHealthCheck {
  return {
    name: 'store',
    async check(): Promise<void> {
      await Promise.all((await stores()).map((s) => s.check(timeoutMs)));
    },
  };
}

/** What `pollStorageMetrics` measures, resource by resource. */
export interface StorageMetricsTarget {
  /** Resources to count: the metric label (e.g. `pods`, `deployments.apps`) and the key prefix. */
  resources: { label: string; prefix: string; store: Store }[];
  /** Stores whose size to report, labelled by their endpoints. */
  stores: { endpoint: string; store: Store }[];
}

/** Sinks for the two gauges (e.g. `gauge.set({ resource }, n)` of prom-client). */
export interface StorageMetricsSink {
  setObjectCount(resource: string, count: number): void;
  setDbSize(endpoint: string, bytes: number): void;
}

/** Reads every count once (apiserver_storage_objects). A failing resource is reported as -1, as Kubernetes does. */
export async function pollObjectCounts(target: StorageMetricsTarget, sink: StorageMetricsSink): Promise<void> {
  await Promise.all(
    target.resources.map(async (r) => {
      sink.setObjectCount(r.label, await r.store.count(r.prefix).catch(() => -1));
    }),
  );
}

/** Reads every database size once (apiserver_storage_db_total_size_in_bytes); failures leave the gauge alone. */
export async function pollDbSizes(target: StorageMetricsTarget, sink: StorageMetricsSink): Promise<void> {
  await Promise.all(
    target.stores.map(async (s) => {
      const size = await s.store.dbSize().catch(() => undefined);
      if (size !== undefined) sink.setDbSize(s.endpoint, size);
    }),
  );
}

/** Polls both on their periods (0 disables one) until the signal aborts. */
export function startStorageMetricsPolling(
  target: StorageMetricsTarget,
  sink: StorageMetricsSink,
  periods: { countMs: number; dbSizeMs: number },
  signal: AbortSignal,
): void {
  const timers: NodeJS.Timeout[] = [];
  if (periods.countMs > 0) timers.push(setInterval(() => void pollObjectCounts(target, sink), periods.countMs));
  if (periods.dbSizeMs > 0) timers.push(setInterval(() => void pollDbSizes(target, sink), periods.dbSizeMs));
  for (const t of timers) t.unref();
  signal.addEventListener('abort', () => timers.forEach(clearInterval), { once: true });
}
