/**
 * A token bucket (model: client-go `util/flowcontrol/throttle.go`, itself golang.org/x/time/rate): `qps` tokens a
 * second refill a bucket of `burst` tokens; each call takes one. Callers that find it empty are given a
 * reservation in the future, so concurrent callers are served in order at exactly `qps` once the burst is spent.
 */
import { type Clock, REAL_CLOCK } from './clock';

/** A rate limiter that callers wait on. */
export interface RateLimiter {
  /** Waits for a token. Rejects (and gives the token back) when `signal` aborts first. */
  wait(signal?: AbortSignal): Promise<void>;
  /** Takes a token when one is available now; never waits. */
  tryAccept(): boolean;
}

/** A token bucket of `burst` tokens refilled at `qps` a second. `qps <= 0` means no limit. */
export class TokenBucket implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = REAL_CLOCK,
  ) {
    if (!Number.isFinite(qps)) throw new RangeError(`token bucket: qps must be a finite number, got ${qps}`);
    if (qps > 0 && (!Number.isInteger(burst) || burst < 1))
      throw new RangeError(`token bucket: burst must be a positive integer when qps > 0, got ${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
      this.last = now;
    }
  }

  /** Reserves one token; returns how long the caller must wait for it (0 when it is there now). */
  reserve(): number {
    if (this.qps <= 0) return 0;
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.qps);
  }

  tryAccept(): boolean {
    if (this.qps <= 0) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  async wait(signal?: AbortSignal): Promise<void> {
    const ms = this.reserve();
    if (ms === 0) return;
    try {
      await this.clock.sleep(ms, signal);
    } catch (err) {
      this.tokens += 1; // the reservation was not used
      throw err;
    }
  }
}
