/**
 * ControllerRevisions, the history of StatefulSets and DaemonSets (model: Kubernetes 1.21
 * `pkg/controller/history/controller_history.go`): a revision is an immutable snapshot (`data`) of the part of
 * the owner's spec that its pods are made from, named `<owner>-<hash of the data and collision count>`, labelled
 * with the owner's template labels and `controller.kubernetes.io/hash`, and controlled by the owner.
 */
import {
  type ApiObject,
  type ControllerRevision,
  ControllerRevisionKind,
  isAlreadyExists,
  type Kind,
  semanticEqual,
} from '@platform/api';
import { type ResourceClient } from '@platform/client';

import { newControllerRef } from './workload-util';

/** The label holding a revision's hash. */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** `rand.SafeEncodeString`: each character mapped into letters and digits that spell no words. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += ALPHANUMS[s.charCodeAt(i) % ALPHANUMS.length];
  return out;
}

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text`. */
export function fnv32a(text: string, h = 0x811c9dc5): number {
  for (const b of Buffer.from(text, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The hash of revision data and a collision count (`HashControllerRevision`). */
export function hashRevision(data: unknown, collisionCount: number | undefined): string {
  let h = fnv32a(JSON.stringify(data));
  if (collisionCount !== undefined && collisionCount !== null) h = fnv32a(String(collisionCount), h);
  return safeEncodeString(String(h));
}

/** A new revision of `owner` (not yet created): its name, labels, owner reference, data and number. */
export function newRevision(
  owner: ApiObject,
  kind: Kind,
  templateLabels: Record<string, string> | undefined,
  data: unknown,
  revision: number,
  collisionCount: number | undefined,
): ControllerRevision {
  const hash = hashRevision(data, collisionCount);
  const prefix = (owner.metadata?.name ?? '').slice(0, 223);
  return {
    apiVersion: ControllerRevisionKind.apiVersion,
    kind: ControllerRevisionKind.kind,
    metadata: {
      name: `${prefix}-${hash}`,
      namespace: owner.metadata?.namespace,
      labels: { ...templateLabels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
      ownerReferences: [newControllerRef(owner, kind)],
    },
    data: data as ControllerRevision['data'],
    revision,
  };
}

/** Revisions sorted by revision number, then name. */
export function sortRevisions(revs: ControllerRevision[]): ControllerRevision[] {
  return [...revs].sort(
    (a, b) => a.revision - b.revision || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}

/** The number the next revision gets: one past the highest. */
export function nextRevisionNumber(revs: readonly ControllerRevision[]): number {
  return revs.reduce((m, r) => Math.max(m, r.revision), 0) + 1;
}

/** Whether two revisions hold the same data. */
export function equalRevisions(a: ControllerRevision, b: ControllerRevision): boolean {
  return semanticEqual(a.data, b.data);
}

/**
 * Makes sure a revision with `data` exists and is the newest (`getStatefulSetRevisions`, `constructHistory`): an
 * equal revision is reused (renumbered as the newest if it is not); otherwise the new revision is created, and a
 * name taken by a different revision bumps the collision count and tries again. Resolves with the update
 * revision, the revisions as they now are, and the collision count to write into the owner's status.
 */
export async function ensureRevision(
  client: ResourceClient<ControllerRevision & ApiObject>,
  owner: ApiObject,
  kind: Kind,
  templateLabels: Record<string, string> | undefined,
  data: unknown,
  existing: ControllerRevision[],
  collisionCount: number,
): Promise<{ update: ControllerRevision; revisions: ControllerRevision[]; collisionCount: number }> {
  let revisions = sortRevisions(existing);
  const next = nextRevisionNumber(revisions);
  const probe = newRevision(owner, kind, templateLabels, data, next, collisionCount);
  const equal = revisions.filter((r) => equalRevisions(r, probe));
  const latest = revisions[revisions.length - 1];
  if (equal.length > 0) {
    const found = equal[equal.length - 1] as ControllerRevision;
    if (latest && found.metadata?.name === latest.metadata?.name) return { update: found, revisions, collisionCount };
    const bumped = await client.update({ ...structuredClone(found), revision: next } as ControllerRevision & ApiObject);
    revisions = revisions.map((r) => (r.metadata?.name === bumped.metadata?.name ? bumped : r));
    return { update: bumped, revisions: sortRevisions(revisions), collisionCount };
  }
  for (let count = collisionCount; ; count++) {
    const rev = newRevision(owner, kind, templateLabels, data, next, count);
    try {
      const created = await client.create(rev as ControllerRevision & ApiObject);
      return { update: created, revisions: sortRevisions([...revisions, created]), collisionCount: count };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const taken = await client.get(rev.metadata?.name ?? '');
      if (equalRevisions(taken, rev) && taken.metadata?.ownerReferences?.some((r) => r.uid === owner.metadata?.uid)) {
        return { update: taken, revisions: sortRevisions([...revisions, taken]), collisionCount: count };
      }
    }
  }
}

/**
 * Deletes the oldest revisions beyond `limit` that no live object uses (`truncateHistory`); `inUse` holds the
 * names of revisions that must stay (the current and update revisions, those of live pods).
 */
export async function truncateHistory(
  client: ResourceClient<ControllerRevision & ApiObject>,
  revisions: ControllerRevision[],
  inUse: Set<string>,
  limit: number,
): Promise<void> {
  const unused = sortRevisions(revisions).filter((r) => !inUse.has(r.metadata?.name ?? ''));
  for (const r of unused.slice(0, Math.max(0, unused.length - limit))) {
    try {
      await client.delete(r.metadata?.name ?? '');
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
    }
  }
}
