/**
 * The scheduling queue (model: Kubernetes 1.21 `internal/queue/scheduling_queue.go`). Three parts:
 * - `activeQ`, a heap ordered by the profile's QueueSort plugin, from which the scheduler pops;
 * - `backoffQ`, pods that failed and wait out their back-off (initial × 2^(attempts−1), capped), by expiry;
 * - the unschedulable pool, pods that no node fits; a cluster event that can make them fit (a node added or
 *   changed, a pod deleted, a PVC/PV/Service change) moves them back, and so does 60 s without one.
 * It also keeps the nominator: the pods preemption nominated to a node, which the filters count as present.
 * The clock is injected; `flushBackoffCompleted` and `flushUnschedulableLeftover` are called by the scheduler's
 * timers (every 1 s and 30 s) and by tests directly.
 */
import { type Pod } from '@platform/api';
import { type Clock, REAL_CLOCK } from '@platform/client';

import { podInfoOf, podKey, termMatches } from '../framework/node-info';
import { type ClusterEvent, type QueuedPodInfo } from '../framework/types';
import { Heap } from './heap';

/** Settings of the queue. */
export interface QueueOptions {
  less: (a: QueuedPodInfo, b: QueuedPodInfo) => boolean;
  clock?: Clock;
  /** podInitialBackoffSeconds (ms). */
  initialBackoffMs?: number;
  /** podMaxBackoffSeconds (ms). */
  maxBackoffMs?: number;
  /** How long a pod may stay unschedulable before it is retried anyway (ms). */
  unschedulableTimeoutMs?: number;
  /** For each plugin, the events that can make the pods it rejected schedulable; absent plugins move on any. */
  pluginEvents?: Map<string, Set<ClusterEvent>>;
  /** Called when the number of pods in each part changes. */
  onChange?: (counts: { active: number; backoff: number; unschedulable: number }) => void;
}

function isPodUpdated(old: Pod, pod: Pod): boolean {
  const strip = (p: Pod): unknown => ({
    ...p,
    metadata: { ...p.metadata, resourceVersion: undefined, generation: undefined, managedFields: undefined },
    status: undefined,
  });
  return JSON.stringify(strip(old)) !== JSON.stringify(strip(pod));
}

/** The queue of pods to schedule. */
export class SchedulingQueue {
  private readonly active: Heap<QueuedPodInfo>;
  private readonly backoff: Heap<QueuedPodInfo>;
  private readonly unschedulable = new Map<string, QueuedPodInfo>();
  private readonly clock: Clock;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly unschedulableTimeoutMs: number;
  private waiters: ((p: QueuedPodInfo | undefined) => void)[] = [];
  private closed = false;
  /** Incremented by every pop. */
  schedulingCycle = 0;
  /** The cycle at the last move request: pods failing in an earlier cycle go to backoff, not unschedulable. */
  private moveRequestCycle = -1;
  /** node → pods nominated to it; pod key → node. */
  private readonly nominated = new Map<string, Pod[]>();
  private readonly nominatedNodeOf = new Map<string, string>();

  constructor(private readonly o: QueueOptions) {
    this.clock = o.clock ?? REAL_CLOCK;
    this.initialBackoffMs = o.initialBackoffMs ?? 1000;
    this.maxBackoffMs = o.maxBackoffMs ?? 10_000;
    this.unschedulableTimeoutMs = o.unschedulableTimeoutMs ?? 60_000;
    const key = (p: QueuedPodInfo): string => podKey(p.pod);
    this.active = new Heap(key, o.less);
    this.backoff = new Heap(key, (a, b) => this.backoffExpiry(a) < this.backoffExpiry(b));
  }

  /** Pods in each part. */
  counts(): { active: number; backoff: number; unschedulable: number } {
    return { active: this.active.length, backoff: this.backoff.length, unschedulable: this.unschedulable.size };
  }

  private changed(): void {
    this.o.onChange?.(this.counts());
  }

  private newInfo(pod: Pod): QueuedPodInfo {
    const now = this.clock.now();
    return { pod, timestamp: now, attempts: 0, initialAttemptTimestamp: now, unschedulablePlugins: new Set() };
  }

  /** How long a pod backs off after `attempts` attempts (ms). */
  backoffDuration(attempts: number): number {
    let d = this.initialBackoffMs;
    for (let i = 1; i < attempts; i++) {
      d *= 2;
      if (d >= this.maxBackoffMs) return this.maxBackoffMs;
    }
    return Math.min(d, this.maxBackoffMs);
  }

  private backoffExpiry(p: QueuedPodInfo): number {
    return p.timestamp + this.backoffDuration(p.attempts);
  }

  private isBackingOff(p: QueuedPodInfo): boolean {
    return this.backoffExpiry(p) > this.clock.now();
  }

  private pushActive(p: QueuedPodInfo): void {
    const w = this.waiters.shift();
    if (w) {
      p.attempts++;
      this.schedulingCycle++;
      w(p);
      return;
    }
    this.active.addOrUpdate(p);
  }

  /** A new pending pod. */
  add(pod: Pod): void {
    const key = podKey(pod);
    this.unschedulable.delete(key);
    this.backoff.delete(key);
    if (this.active.has(key)) this.active.addOrUpdate({ ...(this.active.get(key) as QueuedPodInfo), pod });
    else this.pushActive(this.newInfo(pod));
    if (pod.status?.nominatedNodeName) this.addNominated(pod, pod.status.nominatedNodeName);
    this.changed();
  }

  /** A pending pod changed. */
  update(old: Pod, pod: Pod): void {
    const key = podKey(pod);
    this.updateNominated(pod);
    const a = this.active.get(key);
    if (a) {
      this.active.addOrUpdate({ ...a, pod });
      return;
    }
    const b = this.backoff.get(key);
    if (b) {
      this.backoff.addOrUpdate({ ...b, pod });
      return;
    }
    const u = this.unschedulable.get(key);
    if (u) {
      const p = { ...u, pod };
      if (isPodUpdated(old, pod)) {
        this.unschedulable.delete(key);
        if (this.isBackingOff(p)) this.backoff.addOrUpdate(p);
        else this.pushActive(p);
        this.changed();
      } else this.unschedulable.set(key, p);
      return;
    }
    // Not queued (being scheduled right now, or unknown): treat as new.
    this.pushActive(this.newInfo(pod));
    this.changed();
  }

  /** A pending pod was deleted (or bound by someone else). */
  delete(pod: Pod): void {
    const key = podKey(pod);
    this.deleteNominated(pod);
    this.active.delete(key);
    this.backoff.delete(key);
    this.unschedulable.delete(key);
    this.changed();
  }

  /** Whether the pod is in any part of the queue. */
  has(pod: Pod): boolean {
    const key = podKey(pod);
    return this.active.has(key) || this.backoff.has(key) || this.unschedulable.has(key);
  }

  /**
   * A pod that failed in cycle `cycle` comes back: to backoff when a move request came after that cycle began
   * (something changed while it was being scheduled), else to the unschedulable pool.
   */
  addUnschedulableIfNotPresent(p: QueuedPodInfo, cycle: number): void {
    if (this.closed || this.has(p.pod)) return;
    p.timestamp = this.clock.now();
    if (this.moveRequestCycle >= cycle) this.backoff.addOrUpdate(p);
    else this.unschedulable.set(podKey(p.pod), p);
    if (p.pod.status?.nominatedNodeName) this.addNominated(p.pod, p.pod.status.nominatedNodeName);
    this.changed();
  }

  /** The next pod to schedule; waits for one. Resolves undefined once the queue is closed. */
  pop(): Promise<QueuedPodInfo | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const p = this.active.pop();
    if (p) {
      p.attempts++;
      this.schedulingCycle++;
      this.changed();
      return Promise.resolve(p);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The next pod when one is ready now (no waiting). */
  tryPop(): QueuedPodInfo | undefined {
    if (this.closed) return undefined;
    const p = this.active.pop();
    if (p) {
      p.attempts++;
      this.schedulingCycle++;
      this.changed();
    }
    return p;
  }

  /** Moves the pods whose back-off is over to the active queue. */
  flushBackoffCompleted(): void {
    const now = this.clock.now();
    let moved = false;
    for (;;) {
      const p = this.backoff.peek();
      if (!p || this.backoffExpiry(p) > now) break;
      this.backoff.pop();
      this.pushActive(p);
      moved = true;
    }
    if (moved) this.changed();
  }

  /** Retries the pods unschedulable for longer than the time-out (60 s). */
  flushUnschedulableLeftover(): void {
    const now = this.clock.now();
    const stale = [...this.unschedulable.values()].filter((p) => now - p.timestamp > this.unschedulableTimeoutMs);
    if (stale.length) this.movePods(stale, 'UnschedulableTimeout', true);
  }

  private podMatchesEvent(p: QueuedPodInfo, event: ClusterEvent): boolean {
    if (event === 'UnschedulableTimeout' || p.unschedulablePlugins.size === 0 || !this.o.pluginEvents) return true;
    for (const pl of p.unschedulablePlugins) {
      const evs = this.o.pluginEvents.get(pl);
      if (!evs || evs.has(event)) return true;
    }
    return false;
  }

  private movePods(pods: QueuedPodInfo[], event: ClusterEvent, force = false): void {
    for (const p of pods) {
      if (!force && !this.podMatchesEvent(p, event)) continue;
      this.unschedulable.delete(podKey(p.pod));
      if (this.isBackingOff(p)) this.backoff.addOrUpdate(p);
      else this.pushActive(p);
    }
    this.moveRequestCycle = this.schedulingCycle;
    this.changed();
  }

  /** A cluster event: the unschedulable pods it may help go back to the active (or backoff) queue. */
  moveAllToActiveOrBackoff(event: ClusterEvent): void {
    this.movePods([...this.unschedulable.values()], event);
  }

  /** A pod was bound: the unschedulable pods whose required affinity terms it matches may fit now. */
  assignedPodAdded(pod: Pod, event: ClusterEvent = 'AssignedPodAdd'): void {
    const matching: QueuedPodInfo[] = [];
    for (const p of this.unschedulable.values()) {
      const pi = podInfoOf(p.pod);
      if (pi.requiredAffinityTerms.some((t) => termMatches(t, pod))) matching.push(p);
    }
    if (matching.length) this.movePods(matching, event, true);
    else this.moveRequestCycle = this.schedulingCycle;
  }

  // ---- nominator ----

  private addNominated(pod: Pod, nodeName: string): void {
    this.deleteNominated(pod);
    if (!nodeName) return;
    const key = podKey(pod);
    this.nominatedNodeOf.set(key, nodeName);
    const l = this.nominated.get(nodeName) ?? [];
    l.push(pod);
    this.nominated.set(nodeName, l);
  }

  private deleteNominated(pod: Pod): void {
    const key = podKey(pod);
    const node = this.nominatedNodeOf.get(key);
    if (node === undefined) return;
    this.nominatedNodeOf.delete(key);
    const l = (this.nominated.get(node) ?? []).filter((p) => podKey(p) !== key);
    if (l.length) this.nominated.set(node, l);
    else this.nominated.delete(node);
  }

  private updateNominated(pod: Pod): void {
    const key = podKey(pod);
    const node = pod.status?.nominatedNodeName || this.nominatedNodeOf.get(key) || '';
    this.addNominated(pod, node);
  }

  /** Records that preemption nominated `pod` to `nodeName` (empty clears). */
  nominate(pod: Pod, nodeName: string): void {
    this.addNominated(pod, nodeName);
  }

  /** The pods nominated to a node. */
  nominatedPodsForNode(nodeName: string): readonly Pod[] {
    return this.nominated.get(nodeName) ?? [];
  }

  /** Wakes every waiting pop with undefined; later adds are ignored. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters) w(undefined);
    this.waiters = [];
  }
}
