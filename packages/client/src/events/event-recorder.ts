/**
 * The event recorder (model: client-go `tools/record/event.go`, `events_cache.go`): core v1 Events about objects,
 * written asynchronously so that a controller never waits on them.
 *
 * Aggregation: a repeat of the same event (same object, type, reason, message and source) updates the first
 * Event (`count` + 1, `lastTimestamp`) instead of creating another, as long as it is in the recorder's LRU cache
 * (4096 entries) — so a crash-looping pod gives one Event with a count, not thousands. A repeat whose Event was
 * deleted meanwhile (404 on the patch) is created anew.
 *
 * Names: `<object>.<hex>`, the hex being the time in microseconds whose last three digits are a per-recorder
 * sequence (starting at random), so one recorder never repeats a name within a millisecond; a name another
 * recorder took (409 AlreadyExists) is retried with the next one.
 *
 * Rate limit: `--event-qps` / `--event-burst` per recorder, as a token bucket per involved object (client-go's
 * spam filter); events over the limit are dropped (and counted in `dropped`), never queued without bound.
 */
import { type ApiObject, type Event, isAlreadyExists, isNotFound } from '@platform/api';
import { type Logger, NOP_LOGGER } from '@platform/common';

import { type ResourceClient } from '../rest/resource-client';
import { type Clock, REAL_CLOCK } from '../util/clock';
import { TokenBucket } from '../util/token-bucket';

/** `Normal` or `Warning`. */
export type EventType = 'Normal' | 'Warning';

/** Settings of a recorder. */
export interface EventRecorderOptions {
  /** Events across namespaces (the recorder writes each in its object's namespace, `default` for cluster objects). */
  events: ResourceClient<Event & ApiObject>;
  /** `source.component` (`controller-manager`, `scheduler`, `node-agent`). */
  component: string;
  /** `source.host`. */
  host?: string;
  /** `--event-qps` (0 = unlimited) and `--event-burst`. */
  qps?: number;
  burst?: number;
  clock?: Clock;
  logger?: Logger;
}

interface CacheEntry {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
}

const CACHE_SIZE = 4096;
const MAX_BUCKETS = 4096;

function seconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Records Events. `event` never throws and never blocks; `flush` waits for pending writes. */
export class EventRecorder {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly buckets = new Map<string, TokenBucket>();
  private chain: Promise<void> = Promise.resolve();
  private readonly clock: Clock;
  private readonly log: Logger;
  private closed = false;
  /** Events dropped by the rate limit. */
  dropped = 0;
  /** The last three decimal digits of the next name's suffix. */
  private seq = Math.floor(Math.random() * 1000);

  constructor(private readonly o: EventRecorderOptions) {
    this.clock = o.clock ?? REAL_CLOCK;
    this.log = o.logger ?? NOP_LOGGER;
  }

  private allow(objKey: string): boolean {
    const qps = this.o.qps ?? 5;
    if (qps <= 0) return true;
    let b = this.buckets.get(objKey);
    if (!b) {
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value as string);
      b = new TokenBucket(qps, this.o.burst ?? 10, this.clock);
      this.buckets.set(objKey, b);
    }
    return b.tryAccept();
  }

  /** Records an event about `obj`. */
  event(obj: ApiObject, type: EventType, reason: string, message: string): void {
    if (this.closed) return;
    const m = obj.metadata ?? {};
    const ref = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
    };
    const objKey = [ref.kind, ref.namespace, ref.name, ref.uid].join('/');
    if (!this.allow(objKey)) {
      this.dropped++;
      return;
    }
    const key = [objKey, ref.apiVersion, type, reason, message, this.o.component, this.o.host ?? ''].join('\u0000');
    const now = this.clock.now();
    this.chain = this.chain
      .then(() => this.write(key, ref, type, reason, message, now))
      .catch((err: unknown) => {
        this.log.warn('Could not write event', { reason, error: String(err) });
      });
  }

  /** Formats the message (`printf`-like `%s`/`%d`/`%v`) and records it. */
  eventf(obj: ApiObject, type: EventType, reason: string, format: string, ...args: unknown[]): void {
    let i = 0;
    this.event(
      obj,
      type,
      reason,
      format.replace(/%[sdv]/g, () => String(args[i++])),
    );
  }

  private async write(
    key: string,
    ref: Record<string, string | undefined>,
    type: EventType,
    reason: string,
    message: string,
    now: number,
  ): Promise<void> {
    const prior = this.cache.get(key);
    if (prior) {
      this.cache.delete(key);
      this.cache.set(key, prior); // LRU: most recent last
      try {
        await this.o.events.namespace(prior.namespace).patch(prior.name, 'strategic', {
          count: prior.count + 1,
          lastTimestamp: seconds(now),
          message,
        });
        prior.count++;
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.cache.delete(key);
      }
    }
    const namespace = ref.namespace || 'default';
    const ts = seconds(now);
    const event = {
      metadata: { name: '', namespace },
      involvedObject: Object.fromEntries(Object.entries(ref).filter(([, v]) => v !== undefined)),
      reason,
      message,
      type,
      source: { component: this.o.component, ...(this.o.host ? { host: this.o.host } : {}) },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      reportingComponent: this.o.component,
      reportingInstance: this.o.host ?? '',
    } as Event & ApiObject & { metadata: { name: string } };
    let created: Event & ApiObject;
    for (let attempt = 1; ; attempt++) {
      event.metadata.name = `${ref.name ?? 'unknown'}.${(now * 1000 + this.seq).toString(16)}`;
      this.seq = (this.seq + 1) % 1000;
      try {
        created = await this.o.events.create(event);
        break;
      } catch (err) {
        if (!isAlreadyExists(err) || attempt === 3) throw err;
      }
    }
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { name: created.metadata?.name ?? '', namespace, count: 1, firstTimestamp: ts });
  }

  /** Resolves when every event recorded so far has been written (or failed and been logged). */
  flush(): Promise<void> {
    return this.chain;
  }

  /** Stops recording; resolves when pending writes are done. */
  async shutdown(): Promise<void> {
    this.closed = true;
    await this.chain;
  }
}
