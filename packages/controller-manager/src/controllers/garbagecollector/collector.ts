/**
 * The garbage collector's workers (model: Kubernetes 1.21 `pkg/controller/garbagecollector/garbagecollector.go`):
 *
 * - attemptToDelete(uid): a virtual node is verified (absent → removed from the graph, which wakes its
 *   dependents); an owner deleting in the foreground waits until no dependent blocks it, then loses its
 *   `foregroundDeletion` finalizer; a dependent is classified by its owners, read from the API server:
 *   dangling (absent, or another uid), waiting (deleting in the foreground) or solid. With a solid owner the other
 *   references are removed; without one the dependent is deleted (Foreground when an owner waits for it and it has
 *   dependents of its own, else by its own finalizers: Orphan, Foreground or Background).
 * - attemptToOrphan(uid): the owner's dependents lose their references to it, then it loses its `orphan`
 *   finalizer.
 *
 * Owner references do not name a namespace: a namespaced owner is looked for in its dependent's namespace, so a
 * reference across namespaces is dangling (and reported as `OwnerRefInvalidNamespace`); a cluster-scoped object
 * naming a namespaced owner is reported and left alone, as in 1.21.
 */
import { type ApiObject, isConflict, isNotFound, type Kind, type OwnerReference } from '@platform/api';
import { type Clientset, type EventRecorder, ResourceClient } from '@platform/client';

import {
  type DependencyGraph,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  type GraphNode,
  type Identity,
  identityString,
} from './graph';

/** Thrown when an item should not be retried (a cluster-scoped object naming a namespaced owner). */
export class ForgetItemError extends Error {}

/**
 * A reference to a kind the client does not know: retried (it may be served later), and logged quietly, as 1.21
 * logs its restMappingError at a high verbosity.
 */
export class RestMappingError extends Error {}

/** The result of looking at an item; `requeue` asks for another look later (rate limited). */
export type AttemptResult = 'done' | 'requeue';

const ABSENT_CACHE_SIZE = 500;

export class Collector {
  /** Owners recently found absent (Kubernetes' absentOwnerCache), by `namespace/uid`. */
  private readonly absent = new Map<string, true>();

  constructor(
    private readonly graph: DependencyGraph,
    private readonly client: Clientset,
    private readonly recorder: EventRecorder,
    private readonly signal: AbortSignal,
  ) {}

  private kindOf(apiVersion: string, kind: string): Kind {
    const k = this.client.rest.scheme.kindFor(apiVersion, kind);
    if (!k) throw new RestMappingError(`unable to get REST mapping for ${apiVersion}/${kind}.`);
    return k;
  }

  private clientFor(id: Identity): ResourceClient {
    const k = this.kindOf(id.apiVersion, id.kind);
    if (k.namespaced && !id.namespace)
      throw new ForgetItemError('cluster-scoped objects cannot refer to namespaced owners');
    return new ResourceClient(
      this.client.rest,
      k,
      k.namespaced ? id.namespace : undefined,
      this.client.o.watchTransport,
    );
  }

  /** The object of an identity, or undefined when absent or another object (another uid) has its name. */
  private async getLive(id: Identity): Promise<ApiObject | undefined> {
    try {
      const obj = await this.clientFor(id).get(id.name, { signal: this.signal });
      return obj.metadata?.uid === id.uid ? obj : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private recordInvalidNamespace(dependent: Identity, owner: Identity): void {
    const ref: ApiObject = {
      apiVersion: dependent.apiVersion,
      kind: dependent.kind,
      metadata: { name: dependent.name, namespace: dependent.namespace || undefined, uid: dependent.uid },
    };
    this.recorder.event(
      ref,
      'Warning',
      'OwnerRefInvalidNamespace',
      `ownerRef ${identityString(owner)} does not exist in namespace "${dependent.namespace}"`,
    );
  }

  /** Reports a reference to an owner seen in another namespace (from the graph builder). */
  invalidNamespaceOwnerRef(dependent: GraphNode, owner: Identity): void {
    this.recordInvalidNamespace(dependent.identity, owner);
  }

  async attemptToDelete(uid: string): Promise<AttemptResult> {
    const node = this.graph.get(uid);
    if (!node) return 'done';
    try {
      return await this.attemptToDeleteItem(node);
    } catch (err) {
      if (err instanceof ForgetItemError) return 'done';
      throw err;
    }
  }

  private async attemptToDeleteItem(node: GraphNode): Promise<AttemptResult> {
    if (node.beingDeleted && !node.deletingDependents) return 'done';
    const latest = await this.getLive(node.identity);
    if (!latest) {
      // Absent (or replaced by an object of another uid): as if its delete had been observed.
      this.graph.remove(node.identity.uid);
      return 'done';
    }
    if (!node.observed) return 'requeue'; // it exists: wait until its informer shows it
    if (node.deletingDependents) {
      await this.processDeletingDependents(node);
      return 'done';
    }
    const refs = latest.metadata?.ownerReferences ?? [];
    if (refs.length === 0) return 'done';

    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const r of refs) {
      const state = await this.classify(node, r);
      if (state === 'solid') solid.push(r);
      else if (state === 'dangling') dangling.push(r);
      else waiting.push(r);
    }

    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return 'done';
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.patchOwnerRefs(node.identity, (rs) => rs.filter((r) => !drop.has(r.uid)));
      return 'done';
    }
    if (waiting.length > 0 && node.dependents.size > 0) {
      // An owner waits for this object, which has dependents itself: delete it in the foreground too. If one of
      // its dependents is itself deleting in the foreground, unblock the references first to avoid a cycle.
      if ([...node.dependents].some((d) => d.deletingDependents)) {
        const waitingUids = new Set(waiting.map((r) => r.uid));
        await this.patchOwnerRefs(node.identity, (rs) =>
          rs.map((r) => (waitingUids.has(r.uid) ? { ...r, blockOwnerDeletion: false } : r)),
        );
      }
      await this.deleteObject(node.identity, 'Foreground');
      return 'done';
    }
    const policy = latest.metadata?.finalizers?.includes(FINALIZER_ORPHAN)
      ? 'Orphan'
      : latest.metadata?.finalizers?.includes(FINALIZER_FOREGROUND)
        ? 'Foreground'
        : 'Background';
    await this.deleteObject(node.identity, policy);
    return 'done';
  }

  private async classify(node: GraphNode, r: OwnerReference): Promise<'solid' | 'dangling' | 'waiting'> {
    const k = this.kindOf(r.apiVersion, r.kind);
    const ownerId: Identity = {
      apiVersion: r.apiVersion,
      kind: r.kind,
      name: r.name,
      uid: r.uid,
      namespace: k.namespaced ? node.identity.namespace : '',
    };
    if (k.namespaced && !node.identity.namespace) {
      this.recordInvalidNamespace(node.identity, ownerId);
      throw new ForgetItemError('cluster-scoped objects cannot refer to namespaced owners');
    }
    const absentKey = `${ownerId.namespace}/${r.uid}`;
    if (this.absent.has(absentKey)) return 'dangling';
    const owner = await this.getLive(ownerId);
    if (!owner) {
      this.absent.set(absentKey, true);
      if (this.absent.size > ABSENT_CACHE_SIZE) this.absent.delete(this.absent.keys().next().value as string);
      const seen = this.graph.get(r.uid);
      if (seen?.observed && seen.identity.namespace !== ownerId.namespace) {
        this.recordInvalidNamespace(node.identity, ownerId);
      }
      return 'dangling';
    }
    if (owner.metadata?.deletionTimestamp && owner.metadata.finalizers?.includes(FINALIZER_FOREGROUND))
      return 'waiting';
    return 'solid';
  }

  private async processDeletingDependents(node: GraphNode): Promise<void> {
    const blocking = [...node.dependents].filter((d) =>
      d.owners.some((r) => r.uid === node.identity.uid && r.blockOwnerDeletion === true),
    );
    if (blocking.length === 0) {
      await this.removeFinalizer(node.identity, FINALIZER_FOREGROUND);
      return;
    }
    for (const d of blocking) {
      if (!d.deletingDependents) await this.attemptToDeleteQueued(d);
    }
  }

  /** Set by the controller: puts a uid on the attemptToDelete queue. */
  enqueueDelete: (uid: string) => void = () => {};

  private attemptToDeleteQueued(d: GraphNode): Promise<void> {
    this.enqueueDelete(d.identity.uid);
    return Promise.resolve();
  }

  async attemptToOrphan(uid: string): Promise<void> {
    const owner = this.graph.get(uid);
    if (!owner) return;
    const failures: string[] = [];
    let conflict: unknown;
    await Promise.all(
      [...owner.dependents].map(async (d) => {
        try {
          await this.patchOwnerRefs(d.identity, (rs) => rs.filter((r) => r.uid !== uid));
        } catch (err) {
          if (isConflict(err)) conflict ??= err;
          else failures.push(`orphaning ${identityString(d.identity)} failed: ${(err as Error).message}`);
        }
      }),
    );
    if (failures.length > 0) throw new Error(failures.join('; '));
    // Only conflicts (a dependent changed under us): the caller requeues it as such, without reporting an error.
    if (conflict) throw conflict;
    await this.removeFinalizer(owner.identity, FINALIZER_ORPHAN);
  }

  private async deleteObject(id: Identity, propagationPolicy: 'Orphan' | 'Foreground' | 'Background'): Promise<void> {
    try {
      await this.clientFor(id).delete(id.name, {
        preconditions: { uid: id.uid },
        propagationPolicy,
        signal: this.signal,
      });
    } catch (err) {
      if (isNotFound(err)) return;
      if (isConflict(err)) {
        // The uid precondition failed: another object has the name now; this one is gone.
        this.graph.remove(id.uid);
        return;
      }
      throw err;
    }
  }

  /**
   * Rewrites an object's owner references on the version read (a merge patch carrying its resourceVersion, so a
   * concurrent change makes it fail with a conflict and it is read again). Absent objects are left alone.
   */
  private async patchOwnerRefs(id: Identity, change: (refs: OwnerReference[]) => OwnerReference[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const live = await this.getLive(id);
      if (!live) return;
      const refs = live.metadata?.ownerReferences ?? [];
      const next = change(refs);
      if (JSON.stringify(next) === JSON.stringify(refs)) return;
      try {
        await this.clientFor(id).patch(
          id.name,
          'merge',
          { metadata: { ownerReferences: next, resourceVersion: live.metadata?.resourceVersion } },
          { signal: this.signal },
        );
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 4) throw err;
      }
    }
  }

  private async removeFinalizer(id: Identity, finalizer: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const live = await this.getLive(id);
      if (!live || !live.metadata?.finalizers?.includes(finalizer)) return;
      const finalizers = live.metadata.finalizers.filter((f) => f !== finalizer);
      try {
        await this.clientFor(id).patch(
          id.name,
          'merge',
          { metadata: { finalizers, resourceVersion: live.metadata.resourceVersion } },
          { signal: this.signal },
        );
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 4) throw err;
      }
    }
  }
}
