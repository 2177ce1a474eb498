/**
 * The rate-limited work queue (model: client-go `util/workqueue/queue.go`, `delaying_queue.go`,
 * `rate_limiting_queue.go`, `metrics.go`).
 *
 * Invariants: a key is in the queue at most once (`dirty`); a key being processed (`processing`) is never handed
 * out again until `done(key)`: if it was added meanwhile, it goes back in the queue on `done`. So two workers
 * never sync the same key at once, and no add is lost.
 *
 * Metrics (when a registry is given), labelled `name`: `workqueue_depth`, `workqueue_adds_total`,
 * `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`, `workqueue_retries_total`,
 * `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`.
 */
import { type CounterMetric, type GaugeMetric, type HistogramMetric, type MetricsRegistry } from '@platform/common';

import { type Clock, REAL_CLOCK } from '../util/clock';
import { defaultControllerRateLimiter, type WorkRateLimiter } from './rate-limiters';

/** What `get` returns. */
export type QueueItem<K> = { key: K; shutdown: false } | { shutdown: true };

/** The queue of STYLE.md §5. */
export interface RateLimitingQueue<K> {
  /** Adds a key (no-op when already queued, or after shutdown). */
  add(key: K): void;
  /** Adds a key after `delayMs`. */
  addAfter(key: K, delayMs: number): void;
  /** Adds a key after its rate limiter's delay (a failed sync). */
  addRateLimited(key: K): void;
  /** Clears the key's failure history (a successful sync). */
  forget(key: K): void;
  numRequeues(key: K): number;
  /** Waits for a key; `{shutdown: true}` once shut down and drained. */
  get(): Promise<QueueItem<K>>;
  /** Marks the key processed; re-queues it when it was added while processing. */
  done(key: K): void;
  /** Stops accepting keys; waiting getters get `{shutdown: true}` once the queue is empty. */
  shutDown(): void;
  readonly length: number;
  isShuttingDown(): boolean;
}

interface Metrics {
  depth: GaugeMetric;
  adds: CounterMetric;
  latency: HistogramMetric;
  workDuration: HistogramMetric;
  retries: CounterMetric;
  unfinished: GaugeMetric;
  longest: GaugeMetric;
}

const metricsByRegistry = new WeakMap<MetricsRegistry, Metrics>();

function queueMetrics(r: MetricsRegistry): Metrics {
  let m = metricsByRegistry.get(r);
  if (m) return m;
  const buckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10];
  const labelNames = ['name'];
  m = {
    depth: r.gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames }),
    adds: r.counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames }),
    latency: r.histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames,
      buckets,
    }),
    workDuration: r.histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames,
      buckets,
    }),
    retries: r.counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames,
    }),
    unfinished: r.gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames,
    }),
    longest: r.gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames,
    }),
  };
  metricsByRegistry.set(r, m);
  return m;
}

/** Settings of a queue. */
export interface QueueOptions<K> {
  /** The `name` label of the metrics (the controller's name). */
  name?: string;
  rateLimiter?: WorkRateLimiter<K>;
  clock?: Clock;
  metrics?: MetricsRegistry;
}

/** The rate-limited work queue. */
export class WorkQueue<K> implements RateLimitingQueue<K> {
  private readonly queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly addedAt = new Map<K, number>();
  private readonly startedAt = new Map<K, number>();
  private readonly waiting = new Map<K, { at: number; ac: AbortController }>();
  private readonly getters: ((i: QueueItem<K>) => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly limiter: WorkRateLimiter<K>;
  private readonly m?: Metrics;
  private readonly labels: { name: string };

  constructor(o: QueueOptions<K> = {}) {
    this.clock = o.clock ?? REAL_CLOCK;
    this.limiter = o.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
    this.labels = { name: o.name ?? '' };
    if (o.metrics && o.name) this.m = queueMetrics(o.metrics);
  }

  get length(): number {
    return this.queue.length;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.m?.adds.inc(this.labels);
    this.dirty.add(key);
    if (this.processing.has(key)) return; // goes back in on done()
    this.push(key);
  }

  private push(key: K): void {
    this.addedAt.set(key, this.clock.now());
    const getter = this.getters.shift();
    if (getter) {
      this.handOut(key, getter);
      return;
    }
    this.queue.push(key);
    this.m?.depth.set(this.labels, this.queue.length);
  }

  private handOut(key: K, getter: (i: QueueItem<K>) => void): void {
    const now = this.clock.now();
    this.m?.latency.observe(this.labels, (now - (this.addedAt.get(key) ?? now)) / 1000);
    this.addedAt.delete(key);
    this.dirty.delete(key);
    this.processing.add(key);
    this.startedAt.set(key, now);
    getter({ key, shutdown: false });
  }

  get(): Promise<QueueItem<K>> {
    return new Promise((resolve) => {
      const key = this.queue.shift();
      if (key !== undefined) {
        this.m?.depth.set(this.labels, this.queue.length);
        this.handOut(key, resolve);
        return;
      }
      if (this.shuttingDown) return resolve({ shutdown: true });
      this.getters.push(resolve);
    });
  }

  done(key: K): void {
    const started = this.startedAt.get(key);
    if (started !== undefined) this.m?.workDuration.observe(this.labels, (this.clock.now() - started) / 1000);
    this.startedAt.delete(key);
    this.processing.delete(key);
    if (this.dirty.has(key)) this.push(key);
    else if (this.shuttingDown && this.processing.size === 0 && this.queue.length === 0) this.releaseGetters();
  }

  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing && existing.at <= at) return; // an earlier wake-up is already planned
    existing?.ac.abort();
    const ac = new AbortController();
    this.waiting.set(key, { at, ac });
    this.clock.sleep(delayMs, ac.signal).then(
      () => {
        this.waiting.delete(key);
        this.add(key);
      },
      () => {},
    );
  }

  addRateLimited(key: K): void {
    this.m?.retries.inc(this.labels);
    this.addAfter(key, this.limiter.when(key));
  }

  forget(key: K): void {
    this.limiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const w of this.waiting.values()) w.ac.abort();
    this.waiting.clear();
    if (this.queue.length === 0) this.releaseGetters();
  }

  private releaseGetters(): void {
    for (const g of this.getters.splice(0)) g({ shutdown: true });
  }

  /**
   * Keeps the unfinished-work gauges current: updates them every `intervalMs` (500 ms, as client-go) until
   * `signal` aborts.
   */
  async updateMetricsUntil(signal: AbortSignal, intervalMs = 500): Promise<void> {
    while (!signal.aborted) {
      this.updateUnfinishedWork();
      try {
        await this.clock.sleep(intervalMs, signal);
      } catch {
        return;
      }
    }
  }

  /** Updates the unfinished-work gauges (call from a metrics scrape or a periodic loop). */
  updateUnfinishedWork(): void {
    if (!this.m) return;
    const now = this.clock.now();
    let total = 0;
    let longest = 0;
    for (const t of this.startedAt.values()) {
      total += (now - t) / 1000;
      longest = Math.max(longest, (now - t) / 1000);
    }
    this.m.unfinished.set(this.labels, total);
    this.m.longest.set(this.labels, longest);
  }
}

/**
 * Runs `workers` loops that take keys and call `sync`: success forgets the key, an error re-adds it rate-limited
 * (logged through `onError`). Resolves when the queue is shut down and every loop has finished its key.
 */
export async function runWorkers<K>(
  queue: RateLimitingQueue<K>,
  workers: number,
  sync: (key: K) => Promise<void>,
  onError: (key: K, err: unknown) => void = () => {},
): Promise<void> {
  const loop = async (): Promise<void> => {
    for (;;) {
      const item = await queue.get();
      if (item.shutdown) return;
      try {
        await sync(item.key);
        queue.forget(item.key);
      } catch (err) {
        onError(item.key, err);
        queue.addRateLimited(item.key);
      } finally {
        queue.done(item.key);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}
