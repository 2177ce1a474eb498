/**
 * EventRateLimit (model: Kubernetes 1.21 `plugin/pkg/admission/eventratelimit`): token buckets limit how fast
 * Events are created, per `Server`, `Namespace`, `User` or `SourceAndObject`; a request over the limit gets 429.
 * Configuration (required): `limits: [{ type, qps, burst, cacheSize }]` (cacheSize: how many namespaces, users or
 * sources keep their own bucket, least recently used dropped first; 4096 by default).
 */
import { type Event, tooManyRequests } from '@platform/api';

import { type AdmissionAttributes, type AdmissionPlugin, type Operation, type PluginFactory } from '../interfaces';

export const NAME = 'EventRateLimit';

const LIMIT_TYPES = ['Server', 'Namespace', 'User', 'SourceAndObject'] as const;
type LimitType = (typeof LIMIT_TYPES)[number];

/** One configured limit. */
export interface EventLimit {
  type: LimitType;
  qps: number;
  burst: number;
  cacheSize: number;
}

/** Reads the configuration (throws a clear Error when it is wrong). */
export function parseEventRateLimitConfig(raw: unknown): EventLimit[] {
  if (typeof raw !== 'object' || raw === null) {
    throw new Error(`${NAME}: a configuration with limits is required (--admission-control-config-file)`);
  }
  const limits = (raw as { limits?: unknown }).limits;
  if (!Array.isArray(limits) || limits.length === 0) throw new Error(`${NAME}: limits: at least one limit is required`);
  const seen = new Set<string>();
  return limits.map((l: unknown, i) => {
    const where = `${NAME}: limits[${i}]`;
    const o = (l ?? {}) as Record<string, unknown>;
    if (!LIMIT_TYPES.includes(o.type as LimitType)) {
      throw new Error(`${where}.type: must be one of ${LIMIT_TYPES.join(', ')}, got ${JSON.stringify(o.type)}`);
    }
    if (seen.has(o.type as string)) throw new Error(`${where}.type: ${String(o.type)} is limited twice`);
    seen.add(o.type as string);
    const int = (k: string, min: number, def?: number): number => {
      const v = o[k] ?? def;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
        throw new Error(`${where}.${k}: must be an integer of at least ${min}`);
      }
      return v;
    };
    return {
      type: o.type as LimitType,
      qps: int('qps', 1),
      burst: int('burst', 1),
      cacheSize: o.type === 'Server' ? 1 : int('cacheSize', 1, 4096),
    };
  });
}

/** A token bucket refilled at `qps` up to `burst`, on an injected clock. */
class Bucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }
  tryTake(now: number): boolean {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

class Limiter {
  private readonly buckets = new Map<string, Bucket>();
  constructor(readonly limit: EventLimit) {}

  tryTake(key: string, now: number): boolean {
    let b = this.buckets.get(key);
    if (b) this.buckets.delete(key);
    else b = new Bucket(this.limit.qps, this.limit.burst, now);
    this.buckets.set(key, b); // most recently used last
    while (this.buckets.size > this.limit.cacheSize) {
      const oldest = this.buckets.keys().next().value as string;
      this.buckets.delete(oldest);
    }
    return b.tryTake(now);
  }
}

function keyFor(type: LimitType, a: AdmissionAttributes): string {
  switch (type) {
    case 'Server':
      return '';
    case 'Namespace':
      return a.namespace;
    case 'User':
      return a.user?.name ?? '';
    default: {
      const e = a.object as Event | undefined;
      const src = e?.source ?? {};
      const o = e?.involvedObject ?? {};
      return [src.component, src.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion].map((x) => x ?? '').join('/');
    }
  }
}

/** The EventRateLimit plugin. */
export class EventRateLimitPlugin implements AdmissionPlugin {
  readonly name = NAME;
  private readonly limiters: Limiter[];
  constructor(
    limits: EventLimit[],
    private readonly now: () => number,
  ) {
    this.limiters = limits.map((l) => new Limiter(l));
  }

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.kind.group !== '' || a.kind.kind !== 'Event') return;
    // Limiters are checked in the configured order; the first over its limit refuses the event.
    const now = this.now();
    for (const l of this.limiters) {
      const key = keyFor(l.limit.type, a);
      if (!l.tryTake(key, now)) {
        throw tooManyRequests(`limit reached on type ${l.limit.type} for key ${key}`, 1);
      }
    }
  }
}

export const factory: PluginFactory = (c) => new EventRateLimitPlugin(parseEventRateLimitConfig(c.config), c.now);
