/**
 * Time, injected: every timer of this package goes through a {@link Clock} so that unit tests drive time by hand
 * ({@link FakeClock}) instead of sleeping.
 */

/** A source of time and timers. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds, or rejects with the signal's reason as soon as `signal` aborts (at once when
   * it already has).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

/** The real clock. */
export const REAL_CLOCK: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(abortReason(signal as AbortSignal));
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

interface Sleeper {
  at: number;
  seq: number;
  resolve: () => void;
}

/**
 * A clock that moves only when told to ({@link advance}). Sleepers wake in order of their wake-up time; `advance`
 * lets promise continuations run between wake-ups so that code which sleeps again in a loop observes each step.
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private sleepers: Sleeper[] = [];

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  /** How many sleepers are waiting. */
  get waiting(): number {
    return this.sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const s: Sleeper = { at: this.t + Math.max(0, ms), seq: this.seq++, resolve };
      this.sleepers.push(s);
      signal?.addEventListener(
        'abort',
        () => {
          this.sleepers = this.sleepers.filter((x) => x !== s);
          reject(abortReason(signal));
        },
        { once: true },
      );
    });
  }

  /** Moves time forward by `ms`, waking every sleeper due on the way, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flushMicrotasks();
      this.sleepers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.sleepers[0];
      if (!next || next.at > end) break;
      this.sleepers.shift();
      this.t = Math.max(this.t, next.at);
      next.resolve();
    }
    this.t = end;
    await flushMicrotasks();
  }
}

/** Lets pending promise continuations run (a few macrotask turns' worth of microtasks). */
export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
