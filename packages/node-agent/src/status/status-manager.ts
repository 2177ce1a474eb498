/**
 * Pod status: computing it from what the runtime reports (model: kubelet `kubelet_pods.go` `generateAPIPodStatus`,
 * `getPhase`, `status/generate.go`) and writing it (model: `status/status_manager.go`). A status is written through
 * `pods/status` only when something a user would see changed: the manager keeps the last status written per pod and
 * compares; transition times are carried over from the previous status when a condition did not change. Writes are
 * coalesced per pod (only the newest status of a pod is sent) and run in one loop, so a burst of container events
 * costs one write a pod. Static pods write to their mirror pod (by name).
 */
import { type ApiObject, isConflict, isNotFound, type Pod, type PodCondition, PodKind } from '@platform/api';
import { type Clientset } from '@platform/client';
import { type Logger, NOP_LOGGER } from '@platform/common';

/** The status of a pod (core/v1 PodStatus). */
export type PodStatus = NonNullable<Pod['status']>;

/** Conditions the node agent owns; others (PodScheduled set by the scheduler, custom readiness gates) are kept. */
const OWNED = new Set(['Initialized', 'ContainersReady', 'Ready']);

function nowRfc3339(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Copies lastTransitionTime from `old` for conditions whose status did not change; sets it now for the others. */
export function carryTransitionTimes(next: PodCondition[], old: PodCondition[] | undefined): PodCondition[] {
  return next.map((c) => {
    const prev = old?.find((o) => o.type === c.type);
    const keep = prev && prev.status === c.status && prev.lastTransitionTime;
    return { ...c, lastTransitionTime: keep ? prev.lastTransitionTime : nowRfc3339() };
  });
}

/** Merges the agent's conditions into the API pod's conditions (the others are kept as they are). */
export function mergeConditions(apiConditions: PodCondition[] | undefined, own: PodCondition[]): PodCondition[] {
  const out = (apiConditions ?? []).filter((c) => !OWNED.has(c.type) && !own.some((o) => o.type === c.type));
  return [...own, ...out].sort((a, b) => ORDER.indexOf(a.type) - ORDER.indexOf(b.type));
}
const ORDER = ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];

function comparable(s: PodStatus): string {
  const strip = (c: PodCondition): PodCondition => {
    const { lastProbeTime: _p, lastTransitionTime: _t, ...rest } = c;
    return rest as PodCondition;
  };
  return JSON.stringify({ ...s, conditions: (s.conditions ?? []).map(strip) });
}

interface Entry {
  namespace: string;
  name: string;
  uid: string;
  /** The API object is a mirror pod: its uid differs. */
  isStatic: boolean;
  status: PodStatus;
  key: string;
  writtenKey?: string;
  deleteRequested?: boolean;
}

/** Keeps and writes pod statuses. */
export class StatusManager {
  private readonly entries = new Map<string, Entry>();
  private readonly dirty = new Set<string>();
  private wake?: () => void;
  /** Writes sent (for tests and the benchmark). */
  writes = 0;

  constructor(
    private readonly clientset: Clientset | undefined,
    private readonly log: Logger = NOP_LOGGER,
  ) {}

  /** The last status set for the pod. */
  get(uid: string): PodStatus | undefined {
    return this.entries.get(uid)?.status;
  }

  /**
   * Sets the status of a pod. `pod` is the pod as the sources know it (its status is the API's). Nothing is written
   * when the status is the same as the last one set.
   */
  set(pod: Pod, status: PodStatus, isStatic: boolean): void {
    const m = pod.metadata ?? {};
    const uid = m.uid ?? '';
    const old = this.entries.get(uid);
    const base = old?.status ?? pod.status;
    const merged: PodStatus = {
      ...status,
      conditions: carryTransitionTimes(
        mergeConditions(pod.status?.conditions, status.conditions ?? []),
        base?.conditions,
      ),
      ...(base?.startTime && status.startTime ? { startTime: base.startTime } : {}),
    };
    const key = comparable(merged);
    if (old && old.key === key) return;
    if (!old && !isStatic && comparable({ ...(pod.status ?? {}) }) === key) {
      this.entries.set(uid, {
        namespace: m.namespace ?? '',
        name: m.name ?? '',
        uid,
        isStatic,
        status: merged,
        key,
        writtenKey: key,
      });
      return;
    }
    this.entries.set(uid, {
      namespace: m.namespace ?? '',
      name: m.name ?? '',
      uid,
      isStatic,
      status: merged,
      key,
      writtenKey: old?.writtenKey,
      deleteRequested: old?.deleteRequested,
    });
    this.dirty.add(uid);
    this.wake?.();
  }

  /** Asks for the pod's final deletion (grace 0) once its status is written: all its containers have stopped. */
  requestDeletion(uid: string): void {
    const e = this.entries.get(uid);
    if (!e || e.deleteRequested || e.isStatic) return;
    e.deleteRequested = true;
    this.dirty.add(uid);
    this.wake?.();
  }

  /** Writes the pod's status again (its mirror pod was recreated). */
  resend(uid: string): void {
    const e = this.entries.get(uid);
    if (!e) return;
    e.writtenKey = undefined;
    this.dirty.add(uid);
    this.wake?.();
  }

  /** Forgets a pod that is gone from every source. */
  forget(uid: string): void {
    this.entries.delete(uid);
    this.dirty.delete(uid);
  }

  /** Writes dirty statuses until `signal` aborts; at most `concurrency` writes at once. */
  async run(signal: AbortSignal, concurrency = 4): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    signal.addEventListener('abort', () => this.wake?.(), { once: true });
    while (!signal.aborted) {
      if (this.dirty.size === 0 || inFlight.size >= concurrency) {
        await new Promise<void>((r) => {
          this.wake = r;
          if (inFlight.size > 0 && this.dirty.size > 0) void Promise.race(inFlight).then(() => r());
        });
        this.wake = undefined;
        continue;
      }
      const uid = this.dirty.values().next().value as string;
      this.dirty.delete(uid);
      const p = this.sync(uid).finally(() => inFlight.delete(p));
      inFlight.add(p);
      void p.then(() => this.wake?.());
    }
    await Promise.allSettled(inFlight);
  }

  private async sync(uid: string): Promise<void> {
    const e = this.entries.get(uid);
    if (!e || !this.clientset) return;
    const pods = this.clientset.resource(PodKind, e.namespace);
    const key = e.key;
    try {
      if (e.writtenKey !== key) {
        await pods.patch(e.name, 'merge', { status: e.status }, { subresource: 'status' });
        this.writes++;
        e.writtenKey = key;
      }
      if (e.deleteRequested && e.writtenKey === e.key) {
        await pods.delete(e.name, { gracePeriodSeconds: 0, preconditions: { uid } } as never);
        this.writes++;
      }
    } catch (err) {
      // A pod that is gone needs no status; a static pod's mirror may not exist yet: retried below.
      if (isNotFound(err) && !e.isStatic) return;
      if (isConflict(err) && e.deleteRequested) return;
      this.log.info('Failed to update pod status; will retry', { pod: `${e.namespace}/${e.name}`, err: String(err) });
      setTimeout(() => {
        if (this.entries.get(uid) === e && e.writtenKey !== e.key) {
          this.dirty.add(uid);
          this.wake?.();
        }
      }, 1000).unref();
    }
  }
}

/** Writes one status without the manager (mirror pods of static pods use the manager too). */
export function statusPatch(status: PodStatus): ApiObject {
  return { status } as unknown as ApiObject;
}
