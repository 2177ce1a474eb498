/**
 * What the job, cronjob, statefulset and daemonset controllers share (model: Kubernetes 1.21
 * `pkg/controller/controller_utils.go` and `controller_ref_manager.go`): controller references, creation and
 * deletion expectations, pod predicates and the ranking of pods for deletion, pods from templates, slow-start
 * batches, and the worker loop around a sync function.
 */
import {
  type ApiObject,
  isNotFound,
  type Kind,
  type OwnerReference,
  type Pod,
  type PodTemplateSpec,
} from '@platform/api';
import { type RateLimitingQueue, type ResourceClient } from '@platform/client';

import { type ControllerContext } from '../../controller';

/** The controlling owner reference of an object (the one with `controller: true`), if any. */
export function controllerRefOf(o: ApiObject | undefined): OwnerReference | undefined {
  return o?.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** An owner reference marking `owner` (of `kind`) as the controller of a dependent (`NewControllerRef`). */
export function newControllerRef(owner: ApiObject, kind: Kind): OwnerReference {
  return {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Whether `ref` points at `owner` of `kind` (same kind, group and uid). */
export function refersTo(ref: OwnerReference | undefined, owner: ApiObject, kind: Kind): boolean {
  if (!ref || ref.kind !== kind.kind || ref.uid !== owner.metadata?.uid) return false;
  const slash = ref.apiVersion.indexOf('/');
  return (slash < 0 ? '' : ref.apiVersion.slice(0, slash)) === kind.group;
}

/** How long expectations are trusted before a sync goes ahead anyway (`ExpectationsTimeout`). */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

/**
 * Creations and deletions a controller has asked for and not yet seen in its informer (`ControllerExpectations`,
 * with deletions tracked by object key as `UIDTrackingControllerExpectations` does): a sync does not act on a key
 * whose expectations are pending, so it never creates twice before the cache catches up. Expectations older than
 * {@link EXPECTATIONS_TIMEOUT_MS} count as satisfied (a watch event was lost).
 */
export class Expectations {
  private readonly pending = new Map<string, { adds: number; dels: Set<string>; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Replaces the key's expectations (call before issuing the writes): `adds` creations, deletions of `dels`. */
  expect(key: string, adds: number, dels: readonly string[] = []): void {
    this.pending.set(key, { adds, dels: new Set(dels), at: this.now() });
  }

  /** One expected creation was seen, or will not happen (its request failed). */
  creationObserved(key: string): void {
    const e = this.pending.get(key);
    if (e) e.adds--;
  }

  /** The deletion of `objKey` was seen (deletion timestamp set, or gone), or will not happen. */
  deletionObserved(key: string, objKey: string): void {
    this.pending.get(key)?.dels.delete(objKey);
  }

  /** True when nothing is pending for the key (or its expectations expired). */
  satisfied(key: string): boolean {
    const e = this.pending.get(key);
    if (!e) return true;
    return (e.adds <= 0 && e.dels.size === 0) || this.now() - e.at > EXPECTATIONS_TIMEOUT_MS;
  }

  /** Forgets the key (its owner was deleted). */
  delete(key: string): void {
    this.pending.delete(key);
  }
}

/** A pod that is neither finished nor being deleted (`IsPodActive`). */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

/** A pod whose Ready condition is True (`IsPodReady`). */
export function isPodReady(p: Pod): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** When the pod last became ready, or undefined. */
export function podReadyTime(p: Pod): number | undefined {
  const c = p.status?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True');
  return c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : undefined;
}

/** A pod ready for at least `minReadySeconds` at `now` (`IsPodAvailable`). */
export function isPodAvailable(p: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(p)) return false;
  if (minReadySeconds <= 0) return true;
  const t = podReadyTime(p);
  return t !== undefined && t + minReadySeconds * 1000 <= now;
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function restarts(p: Pod): number {
  return (p.status?.containerStatuses ?? []).reduce((n, s) => n + (s.restartCount ?? 0), 0);
}

/**
 * Orders pods so that the first ones are the best to delete (`ActivePods` less): unassigned before assigned,
 * Pending before Unknown before Running, not ready before ready, ready for less time first, more restarts first,
 * newer first.
 */
export function compareForDeletion(a: Pod, b: Pod): number {
  const na = a.spec?.nodeName ? 1 : 0;
  const nb = b.spec?.nodeName ? 1 : 0;
  if (na !== nb) return na - nb;
  const pa = PHASE_RANK[a.status?.phase ?? 'Pending'] ?? 0;
  const pb = PHASE_RANK[b.status?.phase ?? 'Pending'] ?? 0;
  if (pa !== pb) return pa - pb;
  const ra = isPodReady(a) ? 1 : 0;
  const rb = isPodReady(b) ? 1 : 0;
  if (ra !== rb) return ra - rb;
  if (ra && rb) {
    const ta = podReadyTime(a) ?? 0;
    const tb = podReadyTime(b) ?? 0;
    if (ta !== tb) return tb - ta;
  }
  const ca = restarts(a);
  const cb = restarts(b);
  if (ca !== cb) return cb - ca;
  const ka = Date.parse(a.metadata?.creationTimestamp ?? '') || 0;
  const kb = Date.parse(b.metadata?.creationTimestamp ?? '') || 0;
  return kb - ka;
}

/**
 * A pod from a controller's template (`GetPodFromTemplate`): the template's labels, annotations and spec, a
 * `generateName` of `<owner>-` unless `name` is given, and the controller reference.
 */
export function podFromTemplate(
  template: PodTemplateSpec | undefined,
  owner: ApiObject,
  ref: OwnerReference,
  o: { name?: string; generateName?: string } = {},
): Pod {
  const t = structuredClone(template ?? {});
  const meta = t.metadata ?? {};
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: owner.metadata?.namespace,
      ...(o.name ? { name: o.name } : { generateName: o.generateName ?? `${owner.metadata?.name ?? ''}-` }),
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [ref],
    },
    spec: t.spec,
  };
  return pod;
}

/**
 * Runs `fn` `count` times in batches of 1, 2, 4, ... (`slowStartBatch`): a batch starts only when every call of
 * the one before succeeded, so a failing quota or webhook costs one request, not `count`. Resolves with the number
 * of successful calls and the first error.
 */
export async function slowStartBatch(
  count: number,
  initial: number,
  fn: (i: number) => Promise<void>,
): Promise<{ successes: number; error?: unknown }> {
  let done = 0;
  let successes = 0;
  for (let size = Math.min(count, initial); size > 0; size = Math.min(2 * size, count - done)) {
    const results = await Promise.allSettled(Array.from({ length: size }, (_, j) => fn(done + j)));
    done += size;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += results.filter((r) => r.status === 'fulfilled').length;
    if (failed) return { successes, error: failed.reason };
  }
  return { successes };
}

/** The message of an error, for Events and logs. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** What a sync tells the worker loop: forget the key's failures (true, the default) or keep counting them. */
export type SyncResult = boolean | void;

/**
 * Runs `workers` workers on `queue` once every informer `synced` reports true, until `ctx.signal` aborts: a sync
 * that resolves forgets the key's failures (unless it resolves `false`), one that throws re-adds the key rate
 * limited (logged, unless the controller is stopping). Resolves once stopped.
 */
export async function runWorkerLoop(
  ctx: ControllerContext,
  queue: RateLimitingQueue<string>,
  workers: number,
  synced: () => boolean,
  sync: (key: string) => Promise<SyncResult>,
): Promise<void> {
  const { signal } = ctx;
  signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  while (!synced()) {
    if (signal.aborted) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  ctx.logger.info('Caches are synced', { controller: ctx.name });
  const loop = async (): Promise<void> => {
    for (;;) {
      const item = await queue.get();
      if (item.shutdown) return;
      try {
        const forget = await sync(item.key);
        if (forget !== false) queue.forget(item.key);
      } catch (err) {
        if (!signal.aborted) ctx.logger.info('Sync failed; requeued', { key: item.key, error: errorText(err) });
        queue.addRateLimited(item.key);
      } finally {
        queue.done(item.key);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}

/**
 * Claims the objects an owner controls (`ClaimPods` of `controller_ref_manager.go`): those with its controller
 * reference that still match are kept; those that no longer match are released (the reference removed); orphans
 * that match are adopted (the reference added) once `canAdopt` confirms that the owner still exists and is not
 * being deleted (a fresh read, not the cache). Objects being deleted are neither adopted nor released. Resolves
 * with the objects the owner controls, adopted ones as written.
 */
export async function claimObjects<T extends ApiObject>(
  client: ResourceClient<T>,
  owner: ApiObject,
  kind: Kind,
  matches: (o: T) => boolean,
  candidates: readonly T[],
  canAdopt: () => Promise<boolean>,
): Promise<T[]> {
  const claimed: T[] = [];
  let adoptable: Promise<boolean> | undefined;
  for (const o of candidates) {
    const ref = controllerRefOf(o);
    const name = o.metadata?.name ?? '';
    const refs = o.metadata?.ownerReferences ?? [];
    if (ref) {
      if (!refersTo(ref, owner, kind)) continue;
      if (matches(o) || o.metadata?.deletionTimestamp || owner.metadata?.deletionTimestamp) {
        claimed.push(o);
        continue;
      }
      try {
        const rest = refs.filter((r) => r.uid !== owner.metadata?.uid);
        await client.patch(name, 'merge', { metadata: { uid: o.metadata?.uid, ownerReferences: rest } });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      continue;
    }
    if (!matches(o) || o.metadata?.deletionTimestamp || owner.metadata?.deletionTimestamp) continue;
    adoptable ??= canAdopt();
    if (!(await adoptable)) continue;
    try {
      const patched = await client.patch(name, 'merge', {
        metadata: { uid: o.metadata?.uid, ownerReferences: [...refs, newControllerRef(owner, kind)] },
      });
      claimed.push(patched);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return claimed;
}

/** A `canAdopt` for {@link claimObjects}: reads the owner afresh; true if it is the same object, not being deleted. */
export function ownerStillExists(client: ResourceClient, owner: ApiObject): () => Promise<boolean> {
  return async () => {
    try {
      const fresh = await client.get(owner.metadata?.name ?? '');
      return fresh.metadata?.uid === owner.metadata?.uid && !fresh.metadata?.deletionTimestamp;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  };
}
