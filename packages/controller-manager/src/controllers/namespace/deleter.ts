/**
 * Empties a terminating namespace (model: Kubernetes 1.21 `pkg/controller/namespace/deletion`): every namespaced
 * resource that discovery lists with `delete` is deleted (deletecollection with Background propagation where
 * served, else one by one), what remains is counted, the deletion conditions are written to the namespace's status,
 * and once nothing remains the `platform` finalizer is removed through `namespaces/<name>/finalize` (the API server
 * then removes the namespace).
 */
import {
  type ApiObject,
  isConflict,
  isNotFound,
  isStatusError,
  type Namespace,
  NamespaceKind,
  type Pod,
} from '@platform/api';
import { type Clientset, ResourceClient } from '@platform/client';

import {
  type DiscoveredResource,
  discoverPreferredResources,
  discoveryFailureMessage,
  groupResourceString,
} from '../util/discovery';

/** The finalizer of `spec.finalizers` this controller owns (Kubernetes' `kubernetes`). */
export const FINALIZER_PLATFORM = 'platform';

/** Assumed time (s) for finalizers of remaining content to run (Kubernetes' `finalizerEstimateSeconds`). */
const FINALIZER_ESTIMATE_SECONDS = 15;

/** Content is still there; the namespace should be looked at again in about `estimate` seconds. */
export class ResourcesRemainingError extends Error {
  constructor(readonly estimate: number) {
    super(`some content remains in the namespace, estimate ${estimate} seconds before it is removed`);
  }
}

type NamespaceCondition = NonNullable<NonNullable<Namespace['status']>['conditions']>[number];

/** The conditions the deleter maintains, in the order Kubernetes writes them. */
const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;
type ConditionType = (typeof CONDITION_TYPES)[number];

const OK: Record<ConditionType, { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: {
    reason: 'ResourcesDiscovered',
    message: 'All resources successfully discovered',
  },
  NamespaceDeletionGroupVersionParsingFailure: {
    reason: 'ParsedGroupVersions',
    message: 'All legacy kube types successfully parsed',
  },
  NamespaceDeletionContentFailure: {
    reason: 'ContentDeleted',
    message: 'All content successfully deleted, may be waiting on finalization',
  },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: {
    reason: 'ContentHasNoFinalizers',
    message: 'All content-preserving finalizers finished',
  },
};

/** What deleting one resource's content left behind. */
interface ResourceOutcome {
  estimate: number;
  remaining: number;
  finalizers: Map<string, number>;
}

/** Deletes namespaces' content; one per controller. */
export class NamespacedResourcesDeleter {
  /** Resources whose deletecollection or list turned out not to be served (405/404), by `verb resource.group`. */
  private readonly unsupported = new Set<string>();

  constructor(
    private readonly client: Clientset,
    private readonly signal: AbortSignal,
    private readonly now: () => number = Date.now,
  ) {}

  private namespaces(): ResourceClient<Namespace> {
    return this.client.resource(NamespaceKind) as unknown as ResourceClient<Namespace>;
  }

  /**
   * Runs one pass over a namespace. Resolves when the namespace is finalized (or gone, or not terminating);
   * throws {@link ResourcesRemainingError} when content is still being removed, or another error on failure.
   */
  async delete(name: string): Promise<void> {
    let ns: Namespace;
    try {
      ns = await this.namespaces().get(name, { signal: this.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!ns.metadata?.deletionTimestamp) return;
    const updated = await this.retryOnConflict(ns, (n) => this.ensureTerminating(n));
    if (!updated) return;
    ns = updated;
    if (!ns.metadata?.deletionTimestamp) return;
    if (!(ns.spec?.finalizers ?? []).includes(FINALIZER_PLATFORM)) return;

    const estimate = await this.deleteAllContent(ns);
    if (estimate > 0) throw new ResourcesRemainingError(estimate);
    await this.retryOnConflict(ns, (n) => this.finalize(n));
  }

  /** Calls `fn`, re-reading the namespace after a conflict; undefined when the namespace is gone. */
  private async retryOnConflict(
    ns: Namespace,
    fn: (ns: Namespace) => Promise<Namespace>,
  ): Promise<Namespace | undefined> {
    let latest = ns;
    for (;;) {
      try {
        return await fn(latest);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        if (!isConflict(err)) throw err;
      }
      const prev = latest;
      try {
        latest = await this.namespaces().get(prev.metadata?.name ?? '', { signal: this.signal });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
      if (latest.metadata?.uid !== prev.metadata?.uid) throw new Error('namespace uid has changed across retries');
    }
  }

  private async ensureTerminating(ns: Namespace): Promise<Namespace> {
    if (!ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') return ns;
    const next = structuredClone(ns);
    next.status = { ...next.status, phase: 'Terminating' };
    return this.namespaces().updateStatus(next, { signal: this.signal });
  }

  private async finalize(ns: Namespace): Promise<Namespace> {
    const finalizers = [...new Set((ns.spec?.finalizers ?? []).filter((f) => f !== FINALIZER_PLATFORM))].sort();
    const next = structuredClone(ns);
    next.spec = { ...next.spec, finalizers };
    return this.namespaces().updateSubresource<Namespace>(ns.metadata?.name ?? '', 'finalize', next, {
      signal: this.signal,
    });
  }

  /**
   * Deletes every namespaced resource of `ns`, writes the conditions, and returns the estimated seconds until
   * the remaining content is gone (0: nothing remains). Throws when some content could not be deleted.
   */
  private async deleteAllContent(ns: Namespace): Promise<number> {
    const name = ns.metadata?.name ?? '';
    const deletedAt = Date.parse(ns.metadata?.deletionTimestamp ?? '') || this.now();
    const errors: string[] = [];
    const conditions = new Map<ConditionType, NamespaceCondition>();
    const condition = (type: ConditionType, reason: string, message: string): void => {
      conditions.set(type, { type, status: 'True', reason, message, lastTransitionTime: nowTime(this.now) });
    };

    let resources: DiscoveredResource[] = [];
    let discoveryError: unknown;
    try {
      const found = await discoverPreferredResources(this.client.rest, this.signal);
      resources = found.resources;
      if (found.failed.length > 0) {
        discoveryError = new Error(discoveryFailureMessage(found.failed));
        condition(
          'NamespaceDeletionDiscoveryFailure',
          'DiscoveryFailed',
          `Discovery failed for some groups, ${found.failed.length} failing: ${discoveryFailureMessage(found.failed)}`,
        );
      }
    } catch (err) {
      discoveryError = err;
      condition('NamespaceDeletionDiscoveryFailure', 'DiscoveryFailed', (err as Error).message);
    }

    let estimate = 0;
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const contentErrors: string[] = [];
    const deletable = resources.filter((r) => r.namespaced && r.verbs.includes('delete'));
    for (const r of deletable) {
      try {
        const out = await this.deleteAllContentFor(r, name, deletedAt);
        estimate = Math.max(estimate, out.estimate);
        if (out.remaining > 0) remaining.set(groupResourceString(r), out.remaining);
        for (const [f, n] of out.finalizers) finalizers.set(f, (finalizers.get(f) ?? 0) + n);
      } catch (err) {
        if (this.signal.aborted) throw err;
        const e = err as Error & { outcome?: ResourceOutcome };
        contentErrors.push(e.message);
        if (e.outcome) {
          estimate = Math.max(estimate, e.outcome.estimate);
          if (e.outcome.remaining > 0) remaining.set(groupResourceString(r), e.outcome.remaining);
        }
      }
    }
    if (remaining.size > 0) {
      const items = [...remaining].map(([gr, n]) => `${gr} has ${n} resource instances`).sort();
      condition(
        'NamespaceContentRemaining',
        'SomeResourcesRemain',
        `Some resources are remaining: ${items.join(', ')}`,
      );
    }
    if (finalizers.size > 0) {
      const items = [...finalizers].map(([f, n]) => `${f} in ${n} resource instances`).sort();
      condition(
        'NamespaceFinalizersRemaining',
        'SomeFinalizersRemain',
        `Some content in the namespace has finalizers remaining: ${items.join(', ')}`,
      );
    }
    if (contentErrors.length > 0) {
      const msgs = [...contentErrors].sort();
      condition(
        'NamespaceDeletionContentFailure',
        'ContentDeletionFailed',
        `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}`,
      );
    }

    try {
      await this.writeConditions(ns, conditions);
    } catch (err) {
      if (!isNotFound(err)) errors.push((err as Error).message);
    }
    if (discoveryError) errors.unshift((discoveryError as Error).message);
    errors.push(...contentErrors);
    if (errors.length > 0) throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
    return estimate;
  }

  /** Writes the deletion conditions when they differ from the namespace's (on the freshest copy, retrying conflicts). */
  private async writeConditions(ns: Namespace, fresh: Map<ConditionType, NamespaceCondition>): Promise<void> {
    await this.retryOnConflict(ns, async (current) => {
      const next = structuredClone(current);
      const status = (next.status ??= {});
      const list = (status.conditions ??= []);
      let changed = false;
      for (const type of CONDITION_TYPES) {
        const want: NamespaceCondition = fresh.get(type) ?? {
          type,
          status: 'False',
          reason: OK[type].reason,
          message: OK[type].message,
          lastTransitionTime: nowTime(this.now),
        };
        const old = list.find((c) => c.type === type);
        if (!old) {
          list.push(want);
          changed = true;
        } else if (old.status !== want.status || old.reason !== want.reason || old.message !== want.message) {
          if (old.status !== want.status) old.lastTransitionTime = want.lastTransitionTime;
          old.status = want.status;
          old.reason = want.reason;
          old.message = want.message;
          changed = true;
        }
      }
      if (!changed) return current;
      return this.namespaces().updateStatus(next, { signal: this.signal });
    });
  }

  private clientFor(r: DiscoveredResource, namespace: string): ResourceClient | undefined {
    if (!r.schemeKind) return undefined;
    return new ResourceClient(this.client.rest, r.schemeKind, namespace, this.client.o.watchTransport);
  }

  /** Deletes one resource's content in a namespace; see Kubernetes' `deleteAllContentForGroupVersionResource`. */
  private async deleteAllContentFor(r: DiscoveredResource, ns: string, deletedAt: number): Promise<ResourceOutcome> {
    const client = this.clientFor(r, ns);
    const none: ResourceOutcome = { estimate: 0, remaining: 0, finalizers: new Map() };
    if (!client) return none; // a resource this client cannot decode; nothing to do with it here
    let estimate = 0;
    if (r.group === '' && r.resource === 'pods') estimate = await this.estimatePods(client, deletedAt);

    const fail = (err: unknown, outcome: ResourceOutcome): never => {
      const e = err instanceof Error ? err : new Error(String(err));
      (e as Error & { outcome?: ResourceOutcome }).outcome = outcome;
      throw e;
    };
    const gr = groupResourceString(r);
    const dcKey = `deletecollection ${gr}`;
    let collectionDeleted = false;
    if (r.verbs.includes('deletecollection') && !this.unsupported.has(dcKey)) {
      try {
        await client.deleteCollection({ propagationPolicy: 'Background', signal: this.signal });
        collectionDeleted = true;
      } catch (err) {
        if (notServed(err)) this.unsupported.add(dcKey);
        else fail(err, { ...none, estimate });
      }
    }
    const listKey = `list ${gr}`;
    const canList = r.verbs.includes('list') && !this.unsupported.has(listKey);
    const list = async (): Promise<ApiObject[] | undefined> => {
      if (!canList) return undefined;
      try {
        return (await client.list({ signal: this.signal })).items;
      } catch (err) {
        if (notServed(err)) {
          this.unsupported.add(listKey);
          return undefined;
        }
        return fail(err, { ...none, estimate });
      }
    };
    if (!collectionDeleted) {
      for (const item of (await list()) ?? []) {
        const itemName = item.metadata?.name;
        if (!itemName) continue;
        try {
          await client.delete(itemName, {
            propagationPolicy: 'Background',
            preconditions: { uid: item.metadata?.uid },
            signal: this.signal,
          });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) fail(err, { ...none, estimate });
        }
      }
    }
    const items = await list();
    if (!items || items.length === 0) return { ...none, estimate: items ? 0 : estimate };
    const finalizers = new Map<string, number>();
    for (const item of items)
      for (const f of item.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    const outcome: ResourceOutcome = { estimate, remaining: items.length, finalizers };
    if (estimate !== 0) return outcome;
    if (finalizers.size > 0) return { ...outcome, estimate: FINALIZER_ESTIMATE_SECONDS };
    return fail(new Error(`unexpected items still remain in namespace: ${ns} for gvr: ${gvrString(r)}`), outcome);
  }

  /** The longest grace period of the namespace's pods that have not finished (seconds). */
  private async estimatePods(client: ResourceClient, deletedAt: number): Promise<number> {
    let estimate = 0;
    const pods = (await client.list({ signal: this.signal })).items as Pod[];
    for (const pod of pods) {
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const grace = pod.spec?.terminationGracePeriodSeconds;
      if (grace === undefined || grace === null) continue;
      if (grace > estimate) estimate = grace;
    }
    // Once the namespace has been terminating for longer than that, no more waiting is owed to the pods.
    return this.now() - deletedAt >= estimate * 1000 ? 0 : estimate;
  }
}

function notServed(err: unknown): boolean {
  return isStatusError(err) && (err.status.code === 405 || err.status.code === 404);
}

/** `/v1, Resource=pods`, as Go prints a GroupVersionResource. */
function gvrString(r: DiscoveredResource): string {
  return `${r.group}/${r.version}, Resource=${r.resource}`;
}

function nowTime(now: () => number): string {
  return new Date(Math.floor(now() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
