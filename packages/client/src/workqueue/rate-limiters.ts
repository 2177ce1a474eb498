/**
 * Rate limiters of the work queue (model: client-go `util/workqueue/default_rate_limiters.go`): how long a key
 * waits before it is retried.
 */
import { type Clock, REAL_CLOCK } from '../util/clock';
import { TokenBucket } from '../util/token-bucket';

/** Decides the delay of each retry of an item. */
export interface WorkRateLimiter<K> {
  /** The delay before the item's next try (records one more failure). */
  when(item: K): number;
  /** Forgets the item's failures. */
  forget(item: K): void;
  /** How many times the item failed since it was last forgotten. */
  numRequeues(item: K): number;
}

/** Per-item exponential back-off: base × 2^failures, at most max (5 ms → 1000 s by default). */
export class ItemExponentialFailureRateLimiter<K> implements WorkRateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {}

  when(item: K): number {
    const n = this.failures.get(item) ?? 0;
    this.failures.set(item, n + 1);
    return Math.min(this.maxMs, this.baseMs * 2 ** n);
  }

  forget(item: K): void {
    this.failures.delete(item);
  }

  numRequeues(item: K): number {
    return this.failures.get(item) ?? 0;
  }
}

/** An overall token bucket: every retry of every item takes a token (10/s, burst 100 by default). */
export class BucketRateLimiter<K> implements WorkRateLimiter<K> {
  private readonly bucket: TokenBucket;

  constructor(qps = 10, burst = 100, clock: Clock = REAL_CLOCK) {
    this.bucket = new TokenBucket(qps, burst, clock);
  }

  when(_item: K): number {
    return this.bucket.reserve();
  }

  forget(_item: K): void {}

  numRequeues(_item: K): number {
    return 0;
  }
}

/** The maximum of several limiters' delays. */
export class MaxOfRateLimiter<K> implements WorkRateLimiter<K> {
  private readonly limiters: WorkRateLimiter<K>[];

  constructor(...limiters: WorkRateLimiter<K>[]) {
    this.limiters = limiters;
  }

  when(item: K): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(item)));
  }

  forget(item: K): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: K): number {
    return Math.max(0, ...this.limiters.map((l) => l.numRequeues(item)));
  }
}

/** client-go's default: max(per-item exponential 5 ms → 1000 s, token bucket 10/s burst 100). */
export function defaultControllerRateLimiter<K>(clock: Clock = REAL_CLOCK): WorkRateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>(5, 1_000_000),
    new BucketRateLimiter<K>(10, 100, clock),
  );
}
