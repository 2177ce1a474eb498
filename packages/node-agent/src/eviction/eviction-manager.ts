/**
 * Node-pressure eviction (model: kubelet `eviction/eviction_manager.go`, `helpers.go`): every housekeeping interval
 * the signals are observed (memory.available from /proc/meminfo, nodefs/imagefs available bytes and free inodes of
 * the root directory's filesystem, pid.available), compared with `--eviction-hard` and `--eviction-soft` (the latter
 * must hold for its `--eviction-soft-grace-period`). A threshold met sets the matching pressure condition, which is
 * kept for `--eviction-pressure-transition-period` after the last time it was met, and evicts at most one pod per
 * interval, in 1.21's order: pods whose usage exceeds their requests first, then by priority (lowest first), then by
 * usage above requests (largest first). `--eviction-minimum-reclaim` is added to a threshold once it was met, so
 * eviction goes on until that much more is free.
 */
import { readdirSync, readFileSync, statfsSync } from 'node:fs';

import { type Pod } from '@platform/api';
import { type Logger } from '@platform/common';

import { type AgentValues } from '../cmd/options';
import { sleep } from '../util/sleep';

/** An observed signal: what is available and the capacity it is a share of. */
export interface Observation {
  available: number;
  capacity: number;
}

/** The signals observed once. */
export type Observations = Map<string, Observation>;

function readMeminfo(): Observation {
  const t = readFileSync('/proc/meminfo', 'utf8');
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(t)?.[1] ?? 0) * 1024;
  return { available: kb('MemAvailable'), capacity: kb('MemTotal') };
}

/** Observes the signals on this machine. */
export function observeSignals(rootDir: string): Observations {
  const out: Observations = new Map();
  try {
    out.set('memory.available', readMeminfo());
  } catch {
    // not Linux
  }
  try {
    const s = statfsSync(rootDir);
    const fs = { available: s.bavail * s.bsize, capacity: s.blocks * s.bsize };
    const inodes = { available: s.ffree, capacity: s.files };
    out.set('nodefs.available', fs);
    out.set('imagefs.available', fs);
    out.set('nodefs.inodesFree', inodes);
    out.set('imagefs.inodesFree', inodes);
  } catch {
    // absent
  }
  try {
    const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
    const procs = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
    out.set('pid.available', { available: max - procs, capacity: max });
  } catch {
    // not Linux
  }
  return out;
}

function thresholdValue(q: string, capacity: number): number {
  if (q.endsWith('%')) return (Number(q.slice(0, -1)) / 100) * capacity;
  const m = /^([0-9.]+)([KMGTPE]i?|[kmgtpe]?)$/.exec(q);
  if (!m) return Number(q);
  const units: Record<string, number> = {
    '': 1,
    k: 1e3,
    K: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    E: 1e18,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    Pi: 2 ** 50,
    Ei: 2 ** 60,
    m: 1e-3,
  };
  return Number(m[1]) * (units[m[2]!] ?? 1);
}

const RESOURCE_OF: Record<string, 'memory' | 'disk' | 'pid'> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'disk',
  'nodefs.inodesFree': 'disk',
  'imagefs.available': 'disk',
  'imagefs.inodesFree': 'disk',
  'pid.available': 'pid',
};

/** What the eviction manager needs from the agent. */
export interface EvictionDeps {
  values: AgentValues;
  log: Logger;
  /** Active pods of the node. */
  pods(): Pod[];
  /** Memory usage of a pod in bytes, when known. */
  usage?(pod: Pod): number;
  /** Evicts a pod: kills it with `graceSeconds` and marks it Failed with reason Evicted. */
  evict(pod: Pod, message: string, graceSeconds: number): void;
  observe?(): Observations;
  now?(): number;
}

/** The eviction manager. */
export class EvictionManager {
  private readonly firstSeen = new Map<string, number>();
  private readonly lastMet = new Map<'memory' | 'disk' | 'pid', number>();
  private readonly reclaiming = new Set<string>();

  constructor(private readonly d: EvictionDeps) {}

  private now(): number {
    return (this.d.now ?? Date.now)();
  }

  /** The pressure conditions (with the transition period). */
  pressure(): { memory: boolean; disk: boolean; pid: boolean } {
    const period = this.d.values.evictionPressureTransitionPeriod;
    const on = (r: 'memory' | 'disk' | 'pid'): boolean => {
      const t = this.lastMet.get(r);
      return t !== undefined && this.now() - t < Math.max(period, 1);
    };
    return { memory: on('memory'), disk: on('disk'), pid: on('pid') };
  }

  /** One round: observe, decide, evict at most one pod. Returns the signals whose thresholds were met. */
  synchronize(): string[] {
    const v = this.d.values;
    const obs = (this.d.observe ?? (() => observeSignals(v.rootDir)))();
    const met: Array<{ signal: string; hard: boolean }> = [];
    const check = (signal: string, q: string): boolean => {
      const o = obs.get(signal);
      if (!o) return false;
      let threshold = thresholdValue(q, o.capacity);
      const reclaim = v.evictionMinimumReclaim.get(signal);
      if (reclaim && this.reclaiming.has(signal)) threshold += thresholdValue(reclaim, o.capacity);
      return o.available < threshold;
    };
    for (const [signal, q] of v.evictionHard) if (check(signal, q)) met.push({ signal, hard: true });
    for (const [signal, q] of v.evictionSoft) {
      if (!check(signal, q)) {
        this.firstSeen.delete(signal);
        continue;
      }
      const since = this.firstSeen.get(signal) ?? this.now();
      this.firstSeen.set(signal, since);
      const grace = v.evictionSoftGracePeriod.get(signal);
      const graceMs = grace ? parseGo(grace) : 0;
      if (this.now() - since >= graceMs) met.push({ signal, hard: false });
    }
    this.reclaiming.clear();
    for (const m of met) {
      this.reclaiming.add(m.signal);
      const r = RESOURCE_OF[m.signal];
      if (r) this.lastMet.set(r, this.now());
    }
    if (met.length === 0) return [];
    const first = met.find((m) => m.hard) ?? met[0]!;
    const resource = RESOURCE_OF[first.signal] ?? 'memory';
    const victim = rankForEviction(this.d.pods(), resource, this.d.usage)[0];
    if (victim) {
      const grace = first.hard
        ? 0
        : v.evictionMaxPodGracePeriod < 0
          ? (victim.spec?.terminationGracePeriodSeconds ?? 30)
          : Math.min(v.evictionMaxPodGracePeriod, victim.spec?.terminationGracePeriodSeconds ?? 30);
      const what = resource === 'disk' ? 'ephemeral-storage' : resource === 'pid' ? 'pids' : 'memory';
      const message = `The node was low on resource: ${what}. Threshold quantity: ${first.signal}.`;
      this.d.log.info('Evicting pod', {
        pod: `${victim.metadata?.namespace}/${victim.metadata?.name}`,
        signal: first.signal,
      });
      this.d.evict(victim, message, grace);
    }
    return met.map((m) => m.signal);
  }

  /** Runs every `--housekeeping-interval` until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        this.synchronize();
      } catch (err) {
        this.d.log.info('Eviction round failed', { err: String(err) });
      }
      await sleep(this.d.values.housekeepingInterval, signal);
    }
  }
}

function parseGo(d: string): number {
  let ms = 0;
  for (const m of d.matchAll(/([0-9.]+)(ms|s|m|h)/g))
    ms += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return ms;
}

function requestOf(pod: Pod, resource: string): number {
  let total = 0;
  for (const c of pod.spec?.containers ?? []) {
    const q = (c.resources?.requests as Record<string, string> | undefined)?.[resource];
    if (q) total += thresholdValue(q, 0);
  }
  return total;
}

/** Pods in 1.21's eviction order for a starved resource (first = evicted first). Static pods are never evicted. */
export function rankForEviction(pods: Pod[], resource: 'memory' | 'disk' | 'pid', usage?: (p: Pod) => number): Pod[] {
  const res = resource === 'disk' ? 'ephemeral-storage' : 'memory';
  const candidates = pods.filter((p) => {
    const src = p.metadata?.annotations?.['kubernetes.io/config.source'];
    return src !== 'file' && src !== 'http' && (p.spec?.priority ?? 0) < 2_000_000_000;
  });
  const info = candidates.map((p) => {
    const used = usage?.(p) ?? 0;
    const req = requestOf(p, res);
    return { p, exceeds: used > req, priority: p.spec?.priority ?? 0, above: used - req };
  });
  info.sort((a, b) => {
    if (a.exceeds !== b.exceeds) return a.exceeds ? -1 : 1;
    if (a.priority !== b.priority) return a.priority - b.priority;
    return b.above - a.above;
  });
  return info.map((i) => i.p);
}
