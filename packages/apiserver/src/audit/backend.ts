/**
 * Audit backends (model: apiserver `pkg/audit/types.go` and `plugin/pkg/audit/{buffered,truncate}`): where events
 * go, and the wrappers every sink gets from its options.
 *
 * - A sink (log file, webhook) stores a list of events and says whether it could.
 * - {@link modeBackend}: `batch` queues events in a bounded buffer and returns at once (a full buffer drops the
 *   event with an error in the log); a worker sends batches of up to `maxBatchSize` events, waiting up to
 *   `maxBatchWaitMs` to fill one, throttled to `throttleQPS` batches per second with `throttleBurst`. `blocking`
 *   waits for the sink and logs a failure; `blocking-strict` waits and reports the failure to the caller, which
 *   fails the request when that happens at RequestReceived.
 * - {@link truncatingBackend}: an event larger than `maxEventSize` bytes loses its request and response objects
 *   (and gets the `audit.platform/truncated` annotation), and is dropped if still too large; batches are split so
 *   that each stays under `maxBatchSize` bytes.
 */
import { type Logger } from '@platform/common';

import { TRUNCATED_ANNOTATION, type AuditEvent } from './types';

/** Something that stores audit events. */
export interface AuditBackend {
  /**
   * Stores (or queues) events. Resolves true when they were stored (or queued), false when they were lost; never
   * rejects. The events must not be changed afterwards.
   */
  processEvents(events: AuditEvent[]): boolean | Promise<boolean>;
  /**
   * Stores several batches at once, in order, as `processEvents` would one after the other (optional: a sink whose
   * batches cost nothing apart, like the log file, takes them in one write).
   */
  processBatches?(batches: AuditEvent[][]): boolean | Promise<boolean>;
  /** True when `processEvents` never returns a promise (it queues): nothing in a request waits for the sink. */
  readonly synchronous?: boolean;
  /** Stops accepting events and stores what is queued. */
  shutdown(): Promise<void>;
}

/** `--audit-*-mode`. */
export type AuditMode = 'batch' | 'blocking' | 'blocking-strict';
export const AUDIT_MODES: readonly AuditMode[] = ['batch', 'blocking', 'blocking-strict'];

/** The batch options of a sink (used in batch mode only). */
export interface BatchConfig {
  bufferSize: number;
  maxBatchSize: number;
  /** 0: send what is queued without waiting for more. */
  maxBatchWaitMs: number;
  throttleEnable: boolean;
  throttleQPS: number;
  throttleBurst: number;
}

/** The truncation options of a sink. */
export interface TruncateConfig {
  enabled: boolean;
  /** Bytes of JSON per batch. */
  maxBatchSize: number;
  /** Bytes of JSON per event. */
  maxEventSize: number;
}

/** A sink that cannot fail (for tests and benchmarks) and the union of several sinks. */
export function unionBackend(backends: AuditBackend[]): AuditBackend {
  if (backends.length === 1) return backends[0]!;
  return {
    synchronous: backends.every((b) => b.synchronous === true),
    processEvents(events) {
      const results = backends.map((b) => b.processEvents(events));
      if (results.every((r) => typeof r === 'boolean')) return results.every((r) => r);
      return Promise.all(results).then((rs) => rs.every((r) => r));
    },
    async shutdown() {
      await Promise.all(backends.map((b) => b.shutdown()));
    },
  };
}

/** A token bucket for batches: `take()` resolves when a token is free. */
class Throttle {
  private tokens: number;
  private last = performance.now();

  constructor(
    private readonly qps: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  async take(signal: AbortSignal): Promise<void> {
    for (;;) {
      const now = performance.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
      if (this.tokens >= 1 || signal.aborted) {
        this.tokens--;
        return;
      }
      await new Promise<void>((r) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          r();
        };
        const timer = setTimeout(done, Math.ceil(((1 - this.tokens) / this.qps) * 1000));
        signal.addEventListener('abort', done);
      });
    }
  }
}

/** How often a full buffer is reported (it can be hit thousands of times a second). */
const DROP_LOG_INTERVAL_MS = 10_000;

/** The batch mode: a bounded buffer and a worker that sends batches to the sink. */
class BufferedBackend implements AuditBackend {
  readonly synchronous = true;
  private queue: AuditEvent[] = [];
  /** A wake-up of the worker is scheduled (once per turn of the event loop, not once per event). */
  private wakeScheduled = false;
  private head = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  private wake: (() => void) | undefined;
  private readonly stopping = new AbortController();
  private readonly worker: Promise<void>;
  private readonly throttle: Throttle | undefined;
  private dropped = 0;
  private lastDropLog = 0;

  constructor(
    private readonly name: string,
    private readonly sink: AuditBackend,
    private readonly c: BatchConfig,
    private readonly log: Logger,
  ) {
    this.throttle = c.throttleEnable ? new Throttle(c.throttleQPS, c.throttleBurst) : undefined;
    this.worker = this.run();
  }

  private get length(): number {
    return this.queue.length - this.head;
  }

  processEvents(events: AuditEvent[]): boolean {
    if (this.stopping.signal.aborted) return false;
    for (const ev of events) {
      if (this.length >= this.c.bufferSize) {
        this.dropped++;
        const now = Date.now();
        if (now - this.lastDropLog >= DROP_LOG_INTERVAL_MS) {
          this.lastDropLog = now;
          this.log.error('Audit buffer queue blocked: events dropped', { backend: this.name, dropped: this.dropped });
        }
        continue;
      }
      this.queue.push(ev);
    }
    // The events of one turn of the event loop (many requests under load) go out together.
    if (!this.wakeScheduled) {
      this.wakeScheduled = true;
      setImmediate(this.wakeUp);
    }
    return true;
  }

  private readonly wakeUp = (): void => {
    this.wakeScheduled = false;
    this.wake?.();
  };

  /**
   * Takes up to `n` events off the queue. The queue lets go of what it hands out at once: events it kept after
   * taking them would live on (through young-generation collections into the old generation) with everything they
   * hold, which cost more garbage collection than the rest of auditing.
   */
  private take(n: number): AuditEvent[] {
    const end = Math.min(this.head + n, this.queue.length);
    const batch = this.queue.slice(this.head, end);
    if (end === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      return batch;
    }
    (this.queue as (AuditEvent | undefined)[]).fill(undefined, this.head, end);
    this.head = end;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return batch;
  }

  private sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        if (timer) clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      this.wake = done;
    });
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted || this.length > 0) {
      if (this.length === 0) {
        await this.sleep(undefined);
        continue;
      }
      // Fill the batch: up to the size, waiting at most maxBatchWait from the first event.
      if (this.length < this.c.maxBatchSize && this.c.maxBatchWaitMs > 0 && !signal.aborted) {
        const until = performance.now() + this.c.maxBatchWaitMs;
        while (this.length < this.c.maxBatchSize && !signal.aborted) {
          const left = until - performance.now();
          if (left <= 0) break;
          await this.sleep(left);
        }
      }
      // Everything queued goes out now, in batches of at most the maximum size. Batches go out concurrently (a slow
      // webhook does not hold the queue), as Kubernetes sends them.
      if (!this.throttle && this.sink.processBatches && !(this.c.maxBatchWaitMs > 0)) {
        // A sink that takes several batches at once (the log file): everything queued in one call.
        const batches: AuditEvent[][] = [];
        while (this.length > 0) batches.push(this.take(this.c.maxBatchSize));
        this.send(this.sink.processBatches(batches));
        continue;
      }
      while (this.length > 0) {
        const batch = this.take(this.c.maxBatchSize);
        if (this.throttle) await this.throttle.take(signal);
        this.send(this.sink.processEvents(batch));
        if (this.c.maxBatchWaitMs > 0 && this.length < this.c.maxBatchSize && !signal.aborted) break;
      }
    }
  }

  /** Tracks a delivery until it settles (shutdown waits for them). */
  private send(r: boolean | Promise<boolean>): void {
    if (typeof r === 'boolean') return;
    const p = r.catch(() => false);
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  async shutdown(): Promise<void> {
    this.stopping.abort();
    this.wake?.();
    await this.worker;
    await Promise.all(this.inflight);
    await this.sink.shutdown();
  }
}

/** Blocking modes: the sink is called in the request; `blocking` logs failures instead of reporting them. */
function blockingBackend(name: string, sink: AuditBackend, strict: boolean, log: Logger): AuditBackend {
  if (strict) return sink;
  return {
    processEvents(events) {
      const r = sink.processEvents(events);
      const report = (ok: boolean): true => {
        if (!ok) log.error('Audit events could not be stored', { backend: name, events: events.length });
        return true;
      };
      return typeof r === 'boolean' ? report(r) : r.then(report);
    },
    shutdown: () => sink.shutdown(),
  };
}

/** Wraps a sink in its mode. */
export function modeBackend(
  name: string,
  sink: AuditBackend,
  mode: AuditMode,
  batch: BatchConfig,
  log: Logger,
): AuditBackend {
  if (mode === 'batch') return new BufferedBackend(name, sink, batch, log);
  return blockingBackend(name, sink, mode === 'blocking-strict', log);
}

/** The size of an event as JSON, in bytes. */
function sizeOf(ev: AuditEvent): number {
  return Buffer.byteLength(JSON.stringify(ev));
}

/** Truncation in front of a sink (or of its mode wrapper). */
export function truncatingBackend(name: string, inner: AuditBackend, c: TruncateConfig, log: Logger): AuditBackend {
  if (!c.enabled) return inner;
  return {
    processEvents(events) {
      const batches: AuditEvent[][] = [];
      let current: AuditEvent[] = [];
      let currentSize = 0;
      for (let ev of events) {
        let size = sizeOf(ev);
        if (size > c.maxEventSize) {
          const { requestObject: _q, responseObject: _r, ...rest } = ev;
          ev = { ...rest, annotations: { ...ev.annotations, [TRUNCATED_ANNOTATION]: 'true' } };
          size = sizeOf(ev);
          if (size > c.maxEventSize) {
            log.error('Audit event dropped: larger than the maximum event size even without its objects', {
              backend: name,
              auditID: ev.auditID,
              size,
              maxEventSize: c.maxEventSize,
            });
            continue;
          }
        }
        if (current.length > 0 && currentSize + size > c.maxBatchSize) {
          batches.push(current);
          current = [];
          currentSize = 0;
        }
        current.push(ev);
        currentSize += size;
      }
      if (current.length > 0) batches.push(current);
      const results = batches.map((b) => inner.processEvents(b));
      if (results.every((r) => typeof r === 'boolean')) return results.every((r) => r);
      return Promise.all(results).then((rs) => rs.every((r) => r));
    },
    shutdown: () => inner.shutdown(),
  };
}
