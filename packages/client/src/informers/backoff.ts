/**
 * Exponential back-off with jitter (model: apimachinery `wait.Backoff` as the reflector uses it: 800 ms initial,
 * factor 2, 30 s cap, jitter 1.0, reset after 2 minutes without failures).
 */
import { type Clock, REAL_CLOCK } from '../util/clock';

/** Settings of a {@link Backoff}. */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** The delay is multiplied by 1 + jitter × random(). */
  jitter?: number;
  /** A failure after this long without one starts again at the initial delay. */
  resetAfterMs?: number;
  clock?: Clock;
  random?: () => number;
}

/** Delays between retries that grow on each failure. Not shared between loops. */
export class Backoff {
  private attempt = 0;
  private lastFailure = -Infinity;
  private readonly o: Required<BackoffOptions>;

  constructor(o: BackoffOptions = {}) {
    this.o = {
      initialMs: o.initialMs ?? 800,
      maxMs: o.maxMs ?? 30_000,
      factor: o.factor ?? 2,
      jitter: o.jitter ?? 1,
      resetAfterMs: o.resetAfterMs ?? 120_000,
      clock: o.clock ?? REAL_CLOCK,
      random: o.random ?? Math.random,
    };
  }

  /** The delay before the next retry, recording one more failure. */
  next(): number {
    const now = this.o.clock.now();
    if (now - this.lastFailure > this.o.resetAfterMs) this.attempt = 0;
    this.lastFailure = now;
    const base = Math.min(this.o.maxMs, this.o.initialMs * this.o.factor ** this.attempt);
    this.attempt++;
    return Math.round(base * (1 + this.o.jitter * this.o.random()));
  }

  /** Forgets the failures (after a success). */
  reset(): void {
    this.attempt = 0;
  }
}
