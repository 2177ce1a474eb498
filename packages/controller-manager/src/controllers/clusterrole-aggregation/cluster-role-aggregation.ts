/**
 * The rules of every ClusterRole with an `aggregationRule`, as Kubernetes' clusterrole-aggregation controller keeps
 * them (model: `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`): the rules of the
 * ClusterRoles any of its `clusterRoleSelectors` selects (never itself), taken in the order of those roles' names,
 * each rule once. So a ClusterRole labelled `rbac.authorization.platform/aggregate-to-view: "true"` extends `view`,
 * and through `edit`'s and `admin`'s own selectors those too.
 *
 * Any ClusterRole added, changed or deleted may change what any aggregated role selects, and the dependency graph is
 * not known up front, so every event queues every aggregated role (the set is small); a role whose rules already
 * match is not written. The API server fills `admin`, `edit` and `view` the same way at startup (bootstrap), so the
 * two agree on them.
 */
import {
  type ApiObject,
  type ClusterRole,
  ClusterRoleKind,
  isConflict,
  isNotFound,
  labelSelectorAsSelector,
  type PolicyRule,
} from '@platform/api';
import { runWorkers, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition } from '../../controller';

/** The field manager of the controller's writes. */
export const FIELD_MANAGER = 'clusterrole-aggregation-controller';

/** Attempts at an update that conflicts (a fresh read between them) before the key is requeued with back-off. */
const CONFLICT_ATTEMPTS = 5;

/** The workers, as many as kube-controller-manager runs for this controller. */
const WORKERS = 5;

/** A ClusterRole as the cache and the client hold it. */
export type ClusterRoleObject = ClusterRole & ApiObject;

/** What `syncAggregatedClusterRole` reads: the informer's cache of ClusterRoles, keyed by name. */
export interface ClusterRoleLister {
  get(name: string): ClusterRoleObject | undefined;
  list(): ClusterRoleObject[];
}

/** What `syncAggregatedClusterRole` writes through (a `ResourceClient` of ClusterRoles is one). */
export interface ClusterRoleClient {
  get(name: string, o?: { signal?: AbortSignal }): Promise<ClusterRoleObject>;
  update(role: ClusterRoleObject, o?: { fieldManager?: string; signal?: AbortSignal }): Promise<ClusterRoleObject>;
}

// Go's semantic equality treats a nil list and an empty one as equal; the wire may carry either.
const ruleKey = (r: PolicyRule): string =>
  JSON.stringify([r.verbs ?? [], r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.nonResourceURLs ?? []]);

/** True when both lists hold the same rules in the same order (an absent list is an empty one). */
export function sameRules(a: readonly PolicyRule[] | undefined, b: readonly PolicyRule[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((r, i) => ruleKey(r) === ruleKey(y[i] as PolicyRule));
}

/**
 * The rules `role` should have: those of every ClusterRole in `all` (other than `role`) that one of its selectors
 * selects, in the order of the roles' names, without repeats. Pure: `all` is not mutated and the rules returned are
 * copies. Throws `LabelSelectorParseError` for a selector that does not parse (validation keeps them out).
 */
export function aggregateRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const name = role.metadata?.name;
  const selectors = (role.aggregationRule?.clusterRoleSelectors ?? []).map((s) => labelSelectorAsSelector(s));
  const selected = all
    .filter((r) => r.metadata?.name !== name && selectors.some((s) => s.matches(r.metadata?.labels)))
    .sort((a, b) => compareNames(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const r of selected) {
    for (const rule of r.rules ?? []) {
      const key = ruleKey(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      rules.push(structuredClone(rule));
    }
  }
  return rules;
}

// Byte order, as Go's sort of names (localeCompare would not be).
const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * One sync of the aggregated ClusterRole `name`: gives it the rules `aggregateRules` computes from the cache, when
 * they differ from its own. The update carries the resourceVersion it was computed from; on a conflict the role is
 * read again and the rules recomputed, up to a few times. Resolves true when it wrote. A role that is gone or has no
 * aggregation rule is left alone. Throws what the API answered otherwise (the caller requeues).
 */
export async function syncAggregatedClusterRole(
  name: string,
  lister: ClusterRoleLister,
  client: ClusterRoleClient,
  signal?: AbortSignal,
): Promise<boolean> {
  let role = lister.get(name);
  for (let attempt = 1; ; attempt++) {
    if (!role?.aggregationRule) return false;
    const rules = aggregateRules(role, lister.list());
    if (sameRules(role.rules, rules)) return false;
    // Cached objects are shared with every other reader: change a copy.
    const updated: ClusterRoleObject = { ...structuredClone(role), rules };
    try {
      await client.update(updated, { fieldManager: FIELD_MANAGER, signal });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if (!isConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw err;
    }
    try {
      role = await client.get(name, { signal });
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}

/** Runs the controller until `ctx.signal` aborts. */
export async function runClusterRoleAggregationController(ctx: ControllerContext): Promise<void> {
  const roles = ctx.informers.informerFor(ClusterRoleKind);
  const client = ctx.client.resource(ClusterRoleKind);
  const queue = new WorkQueue<string>({ name: 'clusterrole-aggregation', metrics: ctx.metrics });
  const enqueueAggregated = (): void => {
    for (const r of roles.indexer.list()) if (r.aggregationRule) queue.add(r.metadata?.name ?? '');
  };
  roles.addEventHandler({ onAdd: enqueueAggregated, onUpdate: enqueueAggregated, onDelete: enqueueAggregated });
  const { signal } = ctx;
  signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  if (!(await ctx.informers.waitForCacheSync(signal))) return;
  await runWorkers(
    queue,
    WORKERS,
    async (name) => {
      await syncAggregatedClusterRole(name, roles.indexer, client, signal);
    },
    (name, err) => {
      if (!signal.aborted) ctx.logger.info('Sync failed; requeued', { name, error: String(err) });
    },
  );
}

/** The definition `controllers/index.ts` lists. */
export const clusterRoleAggregationController: ControllerDefinition = {
  name: 'clusterrole-aggregation',
  enabledByDefault: true,
  run: (ctx) => runClusterRoleAggregationController(ctx),
};
