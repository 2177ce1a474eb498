/**
 * Pod and owner helpers shared by the workload controllers (model: `pkg/controller/controller_utils.go` and
 * `pkg/api/v1/pod/util.go`): controller references, active/ready/available pods, the pods a controller creates from
 * its template, slow-start batches, and the 1.21 ranking of pods to delete first.
 */
import { type ApiObject, type OwnerReference, type Pod, type PodTemplateSpec } from '@platform/api';

/** The controller reference of `obj` (the owner reference with `controller: true`), if any. */
export function getControllerOf(obj: ApiObject | undefined): OwnerReference | undefined {
  return obj?.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** A controller reference to `owner`, as the controllers put on what they create (`blockOwnerDeletion` true). */
export function newControllerRef(owner: ApiObject, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** A pod that is neither finished (Succeeded, Failed) nor being deleted. */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

function readyCondition(p: Pod): { status?: string; lastTransitionTime?: string } | undefined {
  return p.status?.conditions?.find((c) => c.type === 'Ready');
}

/** The pod's Ready condition is True. */
export function isPodReady(p: Pod): boolean {
  return readyCondition(p)?.status === 'True';
}

/** Ready for at least `minReadySeconds` at `nowMs`. */
export function isPodAvailable(p: Pod, minReadySeconds: number, nowMs: number): boolean {
  const c = readyCondition(p);
  if (c?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const t = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
  return !Number.isNaN(t) && t + minReadySeconds * 1000 < nowMs;
}

/** Milliseconds until a ready pod becomes available (0 when it already is or never will without a change). */
export function msUntilAvailable(p: Pod, minReadySeconds: number, nowMs: number): number {
  const c = readyCondition(p);
  if (c?.status !== 'True' || minReadySeconds <= 0 || !c.lastTransitionTime) return 0;
  return Math.max(0, Date.parse(c.lastTransitionTime) + minReadySeconds * 1000 - nowMs);
}

/**
 * The pod a controller creates from `template`: its labels, annotations, finalizers and spec, the name generated
 * from `<controller name>-`, and the controller reference.
 */
export function podFromTemplate(
  template: PodTemplateSpec | undefined,
  namespace: string,
  owner: ApiObject,
  ref: OwnerReference,
): Pod {
  const meta = template?.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${owner.metadata?.name ?? ''}-`,
      namespace,
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [ref],
    },
    spec: structuredClone(template?.spec) as Pod['spec'],
  } as Pod;
}

/**
 * Calls `fn` `count` times in batches of 1, 2, 4, … run in parallel (model: `slowStartBatch`), stopping after the
 * first batch that had a failure, so that a controller hitting a quota or a refusing API fails with one call, not
 * with hundreds. Resolves with the number of successes and the first error.
 */
export async function slowStartBatch(
  count: number,
  initialBatchSize: number,
  fn: () => Promise<void>,
): Promise<{ successes: number; error?: unknown }> {
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    let error: unknown;
    for (const r of results) {
      if (r.status === 'fulfilled') successes++;
      else error ??= r.reason;
    }
    if (error !== undefined) return { successes, error };
    remaining -= batch;
  }
  return { successes };
}

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function readyTime(p: Pod): number {
  const c = readyCondition(p);
  return c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : 0;
}

function maxRestarts(p: Pod): number {
  return Math.max(0, ...(p.status?.containerStatuses ?? []).map((s) => s.restartCount ?? 0));
}

function created(p: Pod): number {
  return p.metadata?.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : 0;
}

// "a after b, or a zero": newer (or unset) timestamps come first.
const afterOrZero = (a: number, b: number): boolean => (a === 0 || b === 0 ? a === 0 : a > b);

/**
 * Kubernetes 1.21's order of pods to delete first (`ActivePodsWithRanks`): unscheduled before scheduled; Pending
 * before Unknown before Running; not ready before ready; more related pods on the same node first; ready for less
 * time first; more container restarts first; newer first. `rank` is the count of related active pods on the pod's
 * node. Returns a new array.
 */
export function rankPodsForDeletion(pods: readonly Pod[], related: readonly Pod[]): Pod[] {
  const onNode = new Map<string, number>();
  for (const p of related) {
    if (!isPodActive(p)) continue;
    const n = p.spec?.nodeName ?? '';
    onNode.set(n, (onNode.get(n) ?? 0) + 1);
  }
  const rank = (p: Pod): number => onNode.get(p.spec?.nodeName ?? '') ?? 0;
  const before = (a: Pod, b: Pod): boolean | undefined => {
    const an = a.spec?.nodeName ?? '';
    const bn = b.spec?.nodeName ?? '';
    if (an !== bn && (an === '' || bn === '')) return an === '';
    const ap = PHASE_ORDINAL[a.status?.phase ?? 'Pending'] ?? 0;
    const bp = PHASE_ORDINAL[b.status?.phase ?? 'Pending'] ?? 0;
    if (ap !== bp) return ap < bp;
    const ar = isPodReady(a);
    if (ar !== isPodReady(b)) return !ar;
    if (rank(a) !== rank(b)) return rank(a) > rank(b);
    if (ar) {
      const at = readyTime(a);
      const bt = readyTime(b);
      if (at !== bt) return afterOrZero(at, bt);
    }
    if (maxRestarts(a) !== maxRestarts(b)) return maxRestarts(a) > maxRestarts(b);
    const ac = created(a);
    const bc = created(b);
    if (ac !== bc) return afterOrZero(ac, bc);
    return undefined;
  };
  return [...pods].sort((a, b) => {
    const x = before(a, b);
    if (x === undefined) return 0;
    return x ? -1 : 1;
  });
}

/** Canonical JSON (keys sorted; undefined members left out), for comparing and hashing API objects. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x)).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}
