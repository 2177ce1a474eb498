/**
 * The Deployment arithmetic (model: `pkg/controller/deployment/util/deployment_util.go`): revisions and their
 * annotations, the pod-template hash, max surge and max unavailable, the size of a new ReplicaSet, proportional
 * fractions, and the Progressing/Available conditions.
 */
import { type Deployment, type ReplicaSet } from '@platform/api';

import { canonicalJson } from '../util/pods';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** The longest revision-history annotation kept (Kubernetes' `MaxRevHistoryLengthInChars`). */
export const MAX_REV_HISTORY_LENGTH = 2000;

export const NEW_RS_AVAILABLE_REASON = 'NewReplicaSetAvailable';
export const TIMED_OUT_REASON = 'ProgressDeadlineExceeded';
export const PAUSED_REASON = 'DeploymentPaused';
export const RESUMED_REASON = 'DeploymentResumed';
export const RS_UPDATED_REASON = 'ReplicaSetUpdated';
export const NEW_RS_REASON = 'NewReplicaSetCreated';
export const FOUND_NEW_RS_REASON = 'FoundNewReplicaSet';
export const MIN_AVAILABLE_REASON = 'MinimumReplicasAvailable';
export const MIN_UNAVAILABLE_REASON = 'MinimumReplicasUnavailable';

export type DeploymentStatus = NonNullable<Deployment['status']>;
export type DeploymentCondition = NonNullable<DeploymentStatus['conditions']>[number];

/** Annotations that are the controller's own and are not copied from a Deployment to its ReplicaSets. */
const SKIPPED_ANNOTATIONS = new Set([
  LAST_APPLIED_ANNOTATION,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  ROLLBACK_TO_ANNOTATION,
]);

export const replicasOf = (o: { spec?: { replicas?: number } } | undefined): number => o?.spec?.replicas ?? 0;

/** The revision annotation of `rs` as a number (0 when absent or not a number). */
export function revisionOf(o: { metadata?: { annotations?: Record<string, string> } } | undefined): number {
  const v = Number(o?.metadata?.annotations?.[REVISION_ANNOTATION] ?? '');
  return Number.isSafeInteger(v) ? v : 0;
}

/** The highest revision among `sets`. */
export function maxRevision(sets: readonly ReplicaSet[]): number {
  return sets.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
}

/** Creation time, then name (Kubernetes' `ReplicaSetsByCreationTimestamp`). */
export function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  const at = a.metadata?.creationTimestamp ?? '';
  const bt = b.metadata?.creationTimestamp ?? '';
  if (at !== bt) return at < bt ? -1 : 1;
  const an = a.metadata?.name ?? '';
  const bn = b.metadata?.name ?? '';
  return an < bn ? -1 : an > bn ? 1 : 0;
}

/** Revision, then creation (Kubernetes' `ReplicaSetsByRevision`). */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  const d = revisionOf(a) - revisionOf(b);
  return d !== 0 ? d : byCreation(a, b);
}

function withoutHash(t: unknown): unknown {
  const c = structuredClone(t ?? {}) as { metadata?: { labels?: Record<string, string> } };
  if (c.metadata?.labels) {
    delete c.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    if (Object.keys(c.metadata.labels).length === 0) delete c.metadata.labels;
  }
  if (c.metadata && Object.keys(c.metadata).length === 0) delete c.metadata;
  return c;
}

/** The two pod templates are equal but for the `pod-template-hash` label. */
export function equalIgnoreHash(a: unknown, b: unknown): boolean {
  return canonicalJson(withoutHash(a)) === canonicalJson(withoutHash(b));
}

const SAFE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The `pod-template-hash` of a template: FNV-1a (32 bits) of its canonical JSON and the collision count, written
 * with Kubernetes' safe alphabet (no vowels, so no words).
 */
export function computeHash(template: unknown, collisionCount: number | undefined): string {
  let h = 0x811c9dc5;
  const feed = (s: string): void => {
    for (const byte of Buffer.from(s, 'utf8')) {
      h ^= byte;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  };
  feed(canonicalJson(template));
  if (collisionCount !== undefined) feed(String(collisionCount));
  return [...String(h >>> 0)].map((c) => SAFE_CHARS[c.charCodeAt(0) % SAFE_CHARS.length]).join('');
}

/** Kubernetes' `GetScaledValueFromIntOrPercent`. */
export function scaledValue(v: number | string | undefined, total: number, roundUp: boolean, dflt: string): number {
  const x = v ?? dflt;
  if (typeof x === 'number') return x;
  const m = /^(\d+)%$/.exec(x);
  if (!m) {
    const n = Number(x);
    if (Number.isInteger(n)) return n;
    throw new Error(`invalid value for IntOrString: invalid value ${JSON.stringify(x)}`);
  }
  const f = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(f) : Math.floor(f);
}

const isRolling = (d: Deployment): boolean => (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

/** Max surge and max unavailable for `desired` replicas (never both 0: then one may be unavailable). */
export function resolveFenceposts(d: Deployment, desired: number): { surge: number; unavailable: number } {
  const ru = d.spec?.strategy?.rollingUpdate;
  const surge = scaledValue(ru?.maxSurge, desired, true, '25%');
  let unavailable = scaledValue(ru?.maxUnavailable, desired, false, '25%');
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function maxSurge(d: Deployment): number {
  return isRolling(d) ? resolveFenceposts(d, replicasOf(d)).surge : 0;
}

export function maxUnavailable(d: Deployment): number {
  const r = replicasOf(d);
  if (!isRolling(d) || r === 0) return 0;
  return Math.min(resolveFenceposts(d, r).unavailable, r);
}

export const sumReplicas = (sets: readonly (ReplicaSet | undefined)[]): number =>
  sets.reduce((n, rs) => n + replicasOf(rs), 0);
export const sumStatusReplicas = (sets: readonly (ReplicaSet | undefined)[]): number =>
  sets.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
export const sumReady = (sets: readonly (ReplicaSet | undefined)[]): number =>
  sets.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
export const sumAvailable = (sets: readonly (ReplicaSet | undefined)[]): number =>
  sets.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);

/** The replicas the new ReplicaSet should have now (Kubernetes' `NewRSNewReplicas`). */
export function newRSNewReplicas(d: Deployment, all: readonly ReplicaSet[], newRS: ReplicaSet): number {
  if (!isRolling(d)) return replicasOf(d);
  const current = sumReplicas(all);
  const maxTotal = replicasOf(d) + maxSurge(d);
  if (current >= maxTotal) return replicasOf(newRS);
  const up = Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + up;
}

/**
 * Copies the Deployment's annotations to the ReplicaSet, sets its revision (keeping the previous one in the
 * revision history) and, for a new ReplicaSet, the desired/max replicas annotations. Mutates `rs`; true when an
 * annotation changed.
 */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet,
  newRevision: string,
  exists: boolean,
): boolean {
  rs.metadata ??= {};
  const ann = (rs.metadata.annotations ??= {});
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) {
    if (SKIPPED_ANNOTATIONS.has(k) || ann[k] === v) continue;
    ann[k] = v;
    changed = true;
  }
  const oldRevision = ann[REVISION_ANNOTATION] ?? '';
  const oldN = oldRevision === '' ? 0 : Number(oldRevision);
  if (!(oldN >= Number(newRevision))) {
    ann[REVISION_ANNOTATION] = newRevision;
    changed = true;
    if (oldRevision !== '') {
      let history = ann[REVISION_HISTORY_ANNOTATION]
        ? `${ann[REVISION_HISTORY_ANNOTATION]},${oldRevision}`
        : oldRevision;
      while (history.length > MAX_REV_HISTORY_LENGTH && history.includes(','))
        history = history.slice(history.indexOf(',') + 1);
      ann[REVISION_HISTORY_ANNOTATION] = history;
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** Sets the desired/max replicas annotations; true when one changed. Mutates `rs`. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  rs.metadata ??= {};
  const ann = (rs.metadata.annotations ??= {});
  let changed = false;
  if (ann[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    ann[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    changed = true;
  }
  if (ann[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    ann[MAX_REPLICAS_ANNOTATION] = String(max);
    changed = true;
  }
  return changed;
}

/** True when the annotations would change (without changing them). */
export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const ann = rs.metadata?.annotations ?? {};
  return ann[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || ann[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** The new ReplicaSet is at full size and fully available (Kubernetes' `IsSaturated`). */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = Number(rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION] ?? NaN);
  return (
    desired === replicasOf(d) &&
    replicasOf(rs) === replicasOf(d) &&
    (rs.status?.availableReplicas ?? 0) === replicasOf(d)
  );
}

/** How many replicas `rs` gains (or loses) in a proportional scaling (Kubernetes' `GetProportion`). */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

function replicaSetFraction(rs: ReplicaSet, d: Deployment): number {
  if (replicasOf(d) === 0) return -replicasOf(rs);
  const deploymentReplicas = replicasOf(d) + maxSurge(d);
  const annotated = Number(rs.metadata?.annotations?.[MAX_REPLICAS_ANNOTATION] ?? NaN);
  const base = Number.isInteger(annotated) ? annotated : (d.status?.replicas ?? 0);
  if (base === 0) return 0;
  const size = (replicasOf(rs) * deploymentReplicas) / base;
  return roundHalfAway(size) - replicasOf(rs);
}

const roundHalfAway = (x: number): number => (x < 0 ? -Math.round(-x) : Math.round(x));

/** RFC 3339 with seconds, as the API writes times. */
export function nowTime(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

export function getCondition(s: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined {
  return s?.conditions?.find((c) => c.type === type);
}

export function newCondition(
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  message: string,
): DeploymentCondition {
  const t = nowTime();
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

/** Sets a condition (Kubernetes' `SetDeploymentCondition`): unchanged status and reason leave it as it is. */
export function setCondition(s: DeploymentStatus, c: DeploymentCondition): void {
  const cur = getCondition(s, c.type);
  if (cur && cur.status === c.status && cur.reason === c.reason) return;
  if (cur && cur.status === c.status) c.lastTransitionTime = cur.lastTransitionTime;
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), c];
}

export function removeCondition(s: DeploymentStatus, type: string): void {
  if (s.conditions) s.conditions = s.conditions.filter((x) => x.type !== type);
}

export const hasProgressDeadline = (d: Deployment): boolean =>
  d.spec?.progressDeadlineSeconds !== undefined && d.spec.progressDeadlineSeconds !== 2147483647;

/** Every replica updated and available, and the latest generation observed. */
export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const r = replicasOf(d);
  return (
    (s.updatedReplicas ?? 0) === r &&
    (s.replicas ?? 0) === r &&
    (s.availableReplicas ?? 0) === r &&
    (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/** The new status shows progress over the Deployment's current one. */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (
    (s.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (s.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (s.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** The Progressing condition was last updated longer than `progressDeadlineSeconds` ago. */
export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, now = Date.now()): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, 'Progressing');
  if (!c) return false;
  if (c.reason === NEW_RS_AVAILABLE_REASON) return false;
  if (c.reason === TIMED_OUT_REASON) return true;
  const from = Date.parse(c.lastUpdateTime ?? '');
  return !Number.isNaN(from) && from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 < now;
}
