/**
 * Pods held at Permit (model: Kubernetes 1.21 `framework/runtime/waiting_pods_map.go`): a pod some Permit plugin
 * answered Wait for stays assumed on its node while its binding cycle waits in {@link WaitingPodsMap.waitOnPermit}.
 * Each waiting plugin must `allow` it before its own time-out; one `reject` (or a time-out) ends the wait with an
 * Unschedulable status. Only the first outcome counts, as the buffered channel of one does in Go.
 */
import { type Pod } from '@platform/api';

import { Status } from './types';

/** A pod waiting at Permit, as plugins see it through the framework handle (Go's `framework.WaitingPod`). */
export interface WaitingPod {
  getPod(): Pod;
  /** The plugins that have not allowed the pod yet. */
  getPendingPlugins(): string[];
  /** The plugin allows the pod; the binding goes on once every waiting plugin has. */
  allow(pluginName: string): void;
  /** The plugin rejects the pod: it is unreserved and goes back to the queue as unschedulable. */
  reject(pluginName: string, msg: string): void;
}

/** The longest a plugin may make a pod wait (1.21 `maxTimeout`). */
export const MAX_PERMIT_TIMEOUT_MS = 15 * 60 * 1000;

/** A duration as Go's `time.Duration` prints it (`500ms`, `1s`, `1m30s`). */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}

class Waiting implements WaitingPod {
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();
  private outcome?: Status | null;
  private resolve?: (s: Status | undefined) => void;

  constructor(
    private readonly pod: Pod,
    waits: ReadonlyMap<string, number>,
  ) {
    for (const [plugin, ms] of waits) {
      const t = setTimeout(
        () => this.reject(plugin, `rejected due to timeout after waiting ${goDuration(ms)} at plugin ${plugin}`),
        ms,
      );
      t.unref?.();
      this.pending.set(plugin, t);
    }
  }

  getPod(): Pod {
    return this.pod;
  }

  getPendingPlugins(): string[] {
    return [...this.pending.keys()];
  }

  allow(pluginName: string): void {
    const t = this.pending.get(pluginName);
    if (t === undefined) return;
    clearTimeout(t);
    this.pending.delete(pluginName);
    if (this.pending.size === 0) this.settle(null);
  }

  reject(pluginName: string, msg: string): void {
    const s = new Status('Unschedulable', [msg]);
    s.plugin = pluginName;
    this.settle(s);
  }

  private settle(s: Status | null): void {
    if (this.outcome !== undefined) return;
    this.outcome = s;
    for (const t of this.pending.values()) clearTimeout(t);
    this.resolve?.(s ?? undefined);
  }

  /** Resolves with undefined once allowed, or the rejection. */
  wait(): Promise<Status | undefined> {
    if (this.outcome !== undefined) return Promise.resolve(this.outcome ?? undefined);
    return new Promise((r) => (this.resolve = r));
  }
}

/** The waiting pods of one profile, by uid. */
export class WaitingPodsMap {
  private readonly pods = new Map<string, Waiting>();

  /** Holds `pod` until each plugin of `waits` (name → time-out in ms) allows it. */
  add(pod: Pod, waits: ReadonlyMap<string, number>): void {
    this.pods.set(pod.metadata?.uid ?? '', new Waiting(pod, waits));
  }

  get(uid: string): WaitingPod | undefined {
    return this.pods.get(uid);
  }

  iterate(callback: (wp: WaitingPod) => void): void {
    for (const wp of [...this.pods.values()]) callback(wp);
  }

  /** Rejects the waiting pod of `uid` (it was deleted); true when there was one. */
  reject(uid: string, msg = 'removed'): boolean {
    const wp = this.pods.get(uid);
    if (!wp) return false;
    wp.reject('', msg);
    return true;
  }

  get size(): number {
    return this.pods.size;
  }

  /**
   * Waits until the pod is allowed (undefined) or rejected (an Unschedulable status with 1.21's message); a pod
   * that is not waiting passes at once. The pod leaves the map either way.
   */
  async waitOnPermit(pod: Pod): Promise<Status | undefined> {
    const uid = pod.metadata?.uid ?? '';
    const wp = this.pods.get(uid);
    if (!wp) return undefined;
    const s = await wp.wait();
    this.pods.delete(uid);
    if (!s) return undefined;
    const out = new Status(s.code, [
      `pod ${JSON.stringify(pod.metadata?.name ?? '')} rejected while waiting on permit: ${s.message()}`,
    ]);
    out.plugin = s.plugin;
    return out;
  }
}
