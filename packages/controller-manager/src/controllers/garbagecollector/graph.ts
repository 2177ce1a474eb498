/**
 * The dependency graph of the garbage collector (model: Kubernetes 1.21 `pkg/controller/garbagecollector/graph.go`
 * and `graph_builder.go`): one node per object uid, with its owner references and the nodes that name it as an
 * owner. Owners that have not been observed (yet) are "virtual" nodes, to be verified against the API server.
 * Informer events change the graph synchronously (JavaScript runs one handler at a time, so no graph lock is
 * needed) and put the uids that need work on two queues: attemptToDelete and attemptToOrphan.
 */
import { type ApiObject, type OwnerReference } from '@platform/api';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** Who an object is. A virtual node's namespace is that of the dependent that named it. */
export interface Identity {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

/** `[v1/Pod, namespace: ns, name: p, uid: u]`, as Kubernetes prints an objectReference. */
export function identityString(i: Identity): string {
  return `[${i.apiVersion}/${i.kind}, namespace: ${i.namespace}, name: ${i.name}, uid: ${i.uid}]`;
}

export class GraphNode {
  owners: OwnerReference[] = [];
  readonly dependents = new Set<GraphNode>();
  /** False for a virtual node: named as an owner, never seen through an informer. */
  observed = false;
  beingDeleted = false;
  /** Being deleted with the foregroundDeletion finalizer: waits for its blocking dependents. */
  deletingDependents = false;

  constructor(public identity: Identity) {}
}

/** Where the graph sends work. */
export interface GraphSinks {
  attemptToDelete(uid: string): void;
  attemptToOrphan(uid: string): void;
  /** A dependent names an owner that was seen in another namespace (`OwnerRefInvalidNamespace`). */
  invalidNamespaceOwnerRef(dependent: GraphNode, owner: Identity): void;
}

function hasFinalizer(obj: ApiObject | undefined, f: string): boolean {
  return !!obj?.metadata?.finalizers?.includes(f);
}

function deletingWith(obj: ApiObject | undefined, f: string): boolean {
  return !!obj?.metadata?.deletionTimestamp && hasFinalizer(obj, f);
}

/** The graph of every object of the monitored resources. */
export class DependencyGraph {
  readonly nodes = new Map<string, GraphNode>();

  constructor(
    private readonly sinks: GraphSinks,
    /** Whether a kind (by apiVersion and kind name) is namespaced; undefined when unknown. */
    private readonly namespaced: (apiVersion: string, kind: string) => boolean | undefined,
  ) {}

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  /** An object was added or changed (`old` is the previous state, undefined for an add). */
  upsert(obj: ApiObject, identity: Identity, old: ApiObject | undefined): void {
    const owners = obj.metadata?.ownerReferences ?? [];
    let node = this.nodes.get(identity.uid);
    if (!node) {
      node = new GraphNode(identity);
      node.observed = true;
      node.owners = owners;
      node.beingDeleted = !!obj.metadata?.deletionTimestamp;
      this.nodes.set(identity.uid, node);
      this.addToOwners(node, owners);
      this.processTransitions(undefined, obj, node);
      return;
    }
    if (!node.observed) {
      // A virtual node comes to life. If it was named under another namespace or kind, its dependents are
      // looked at again, as their references may be wrong.
      const before = node.identity;
      node.observed = true;
      node.identity = identity;
      if (before.namespace !== identity.namespace || before.kind !== identity.kind) {
        for (const d of node.dependents) this.sinks.attemptToDelete(d.identity.uid);
      }
    }
    const oldOwners = node.owners;
    const added = owners.filter((r) => !oldOwners.some((o) => o.uid === r.uid));
    const removed = oldOwners.filter((o) => !owners.some((r) => r.uid === o.uid));
    const changed = owners.filter((r) => {
      const o = oldOwners.find((x) => x.uid === r.uid);
      return o !== undefined && !!o.blockOwnerDeletion !== !!r.blockOwnerDeletion;
    });
    node.owners = owners;
    if (added.length > 0) this.addToOwners(node, added);
    for (const r of removed) {
      const owner = this.nodes.get(r.uid);
      if (!owner) continue;
      owner.dependents.delete(node);
      // An owner waiting for its dependents may now be free to go.
      if (owner.deletingDependents) this.sinks.attemptToDelete(owner.identity.uid);
    }
    for (const r of changed) {
      const owner = this.nodes.get(r.uid);
      if (owner?.deletingDependents && !r.blockOwnerDeletion) this.sinks.attemptToDelete(owner.identity.uid);
    }
    if (obj.metadata?.deletionTimestamp) node.beingDeleted = true;
    this.processTransitions(old, obj, node);
  }

  /** An object is gone (an informer delete, or found absent when verified). */
  remove(uid: string): void {
    const node = this.nodes.get(uid);
    if (!node) return;
    this.nodes.delete(uid);
    for (const r of node.owners) {
      const owner = this.nodes.get(r.uid);
      if (!owner) continue;
      owner.dependents.delete(node);
      if (owner.deletingDependents) this.sinks.attemptToDelete(owner.identity.uid);
    }
    for (const d of node.dependents) this.sinks.attemptToDelete(d.identity.uid);
  }

  private addToOwners(node: GraphNode, refs: OwnerReference[]): void {
    for (const r of refs) {
      let owner = this.nodes.get(r.uid);
      if (!owner) {
        owner = new GraphNode({
          apiVersion: r.apiVersion,
          kind: r.kind,
          name: r.name,
          uid: r.uid,
          namespace: node.identity.namespace,
        });
        this.nodes.set(r.uid, owner);
        owner.dependents.add(node);
        // Verify that the owner exists.
        this.sinks.attemptToDelete(r.uid);
        continue;
      }
      owner.dependents.add(node);
      if (owner.observed) {
        const ownerNamespaced = this.namespaced(r.apiVersion, r.kind);
        const wrongNamespace =
          ownerNamespaced === true
            ? owner.identity.namespace !== node.identity.namespace
            : ownerNamespaced === false && owner.identity.namespace !== '';
        if (wrongNamespace) {
          this.sinks.invalidNamespaceOwnerRef(node, { ...owner.identity, namespace: node.identity.namespace });
          this.sinks.attemptToDelete(node.identity.uid);
        }
      }
    }
  }

  private processTransitions(old: ApiObject | undefined, obj: ApiObject, node: GraphNode): void {
    if (deletingWith(obj, FINALIZER_ORPHAN) && !deletingWith(old, FINALIZER_ORPHAN)) {
      this.sinks.attemptToOrphan(node.identity.uid);
      return;
    }
    if (deletingWith(obj, FINALIZER_FOREGROUND) && !deletingWith(old, FINALIZER_FOREGROUND)) {
      node.deletingDependents = true;
      for (const d of node.dependents) this.sinks.attemptToDelete(d.identity.uid);
      this.sinks.attemptToDelete(node.identity.uid);
    }
  }
}
