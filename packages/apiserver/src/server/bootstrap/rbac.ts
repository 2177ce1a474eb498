/**
 * The `rbac/bootstrap-roles` reconciler (model: Kubernetes 1.21 `pkg/registry/rbac/rest/storage_rbac.go`
 * `EnsureRBACPolicy` and `pkg/registry/rbac/reconciliation`): makes the default policy of `rbac-policy.ts` exist.
 *
 * - A missing object is created.
 * - An existing one whose autoupdate annotation is not `"false"` gets what it lacks: missing labels and annotations,
 *   expected rules that its rules do not cover, missing aggregation selectors, missing subjects. Nothing a user added
 *   is removed; a binding whose roleRef differs (which cannot be updated) is deleted and created again with the
 *   union of the subjects.
 * - An object annotated `autoupdate: "false"` is left alone.
 * - The aggregated roles (`admin`, `edit`, `view`) then get the rules of the ClusterRoles their aggregation rules
 *   select, added the same way, so they are usable before the controller manager's aggregation controller runs.
 */
import {
  type ApiObject,
  type ClusterRole,
  type ClusterRoleBinding,
  matchesLabelSelector,
  type PolicyRule,
  RBAC_GROUP,
  type RoleBinding,
  type Subject,
} from '@platform/api';

import {
  createIfMissing,
  getOrUndefined,
  type ObjectStore,
  requireStore,
  type StoreLookup,
  systemContext,
  updateIfNeeded,
} from './objects';
import {
  AUTOUPDATE_ANNOTATION,
  clusterRoleBindings,
  clusterRoles,
  namespaceRoleBindings,
  namespaceRoles,
} from './rbac-policy';

/** What a reconcile pass did, for logs and tests. */
export interface RbacReconcileResult {
  created: string[];
  updated: string[];
  /** Left alone because of `autoupdate: "false"`. */
  skipped: string[];
}

type Meta = { labels?: Record<string, string>; annotations?: Record<string, string> };

function metaOf(o: ApiObject): Meta {
  return (o.metadata ?? {}) as Meta;
}

/** True unless the object opts out of reconciliation. */
function isAutoupdate(o: ApiObject): boolean {
  return metaOf(o).annotations?.[AUTOUPDATE_ANNOTATION] !== 'false';
}

/** Adds the expected labels and annotations that are missing (existing values win). Returns whether it changed. */
function mergeMeta(existing: ApiObject, expected: ApiObject): boolean {
  const m = (existing.metadata ??= {}) as Meta;
  const e = metaOf(expected);
  let changed = false;
  for (const field of ['labels', 'annotations'] as const) {
    for (const [k, v] of Object.entries(e[field] ?? {})) {
      const target = (m[field] ??= {});
      if (!(k in target)) {
        target[k] = v;
        changed = true;
      }
    }
  }
  return changed;
}

/** A rule's identity, whatever the order of its fields. */
const ruleKey = (r: PolicyRule): string =>
  JSON.stringify([r.verbs, r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.nonResourceURLs ?? []]);

const matches = (allowed: readonly string[] | undefined, value: string): boolean =>
  (allowed ?? []).some((a) => a === '*' || a === value);

function urlMatches(allowed: readonly string[] | undefined, url: string): boolean {
  return (allowed ?? []).some((a) => a === '*' || a === url || (a.endsWith('*') && url.startsWith(a.slice(0, -1))));
}

/**
 * True when `rules` together allow everything `want` allows (model: `validation.Covers`): every verb on every
 * group/resource/name (or every verb on every URL) of `want` is allowed by one of `rules`.
 */
export function rulesCover(rules: readonly PolicyRule[], want: PolicyRule): boolean {
  for (const verb of want.verbs) {
    if (want.nonResourceURLs?.length) {
      for (const url of want.nonResourceURLs) {
        if (!rules.some((r) => matches(r.verbs, verb) && urlMatches(r.nonResourceURLs, url))) return false;
      }
      continue;
    }
    const names = want.resourceNames?.length ? want.resourceNames : [undefined];
    for (const group of want.apiGroups ?? []) {
      for (const resource of want.resources ?? []) {
        for (const name of names) {
          const covered = rules.some(
            (r) =>
              matches(r.verbs, verb) &&
              matches(r.apiGroups, group) &&
              matches(r.resources, resource) &&
              (!r.resourceNames?.length || (name !== undefined && r.resourceNames.includes(name))),
          );
          if (!covered) return false;
        }
      }
    }
  }
  return true;
}

/** Adds to `role.rules` each of `want` its rules do not cover. Returns whether it changed. */
function addUncoveredRules(role: { rules?: PolicyRule[] }, want: readonly PolicyRule[]): boolean {
  const rules = (role.rules ??= []);
  let changed = false;
  for (const w of want) {
    if (!rulesCover(rules, w)) {
      rules.push(structuredClone(w));
      changed = true;
    }
  }
  return changed;
}

/** The reconciled form of an existing role, or undefined when it already has everything. */
function reconcileRole(existing: ApiObject, expected: ClusterRole): ApiObject | undefined {
  if (!isAutoupdate(existing)) return undefined;
  const role = existing as ClusterRole;
  let changed = mergeMeta(role, expected);
  if (expected.aggregationRule) {
    const selectors = (role.aggregationRule ??= {}).clusterRoleSelectors ?? [];
    for (const s of expected.aggregationRule.clusterRoleSelectors ?? []) {
      if (!selectors.some((x) => JSON.stringify(x) === JSON.stringify(s))) {
        selectors.push(structuredClone(s));
        changed = true;
      }
    }
    role.aggregationRule.clusterRoleSelectors = selectors;
  } else if (addUncoveredRules(role, expected.rules ?? [])) {
    changed = true;
  }
  return changed ? role : undefined;
}

const sameSubject = (a: Subject, b: Subject): boolean =>
  a.kind === b.kind &&
  (a.apiGroup ?? '') === (b.apiGroup ?? '') &&
  a.name === b.name &&
  (a.namespace ?? '') === (b.namespace ?? '');

/** The reconciled form of an existing binding (same roleRef), or undefined when it has everything. */
function reconcileBinding(existing: ApiObject, expected: RoleBinding | ClusterRoleBinding): ApiObject | undefined {
  if (!isAutoupdate(existing)) return undefined;
  const binding = existing as RoleBinding;
  let changed = mergeMeta(binding, expected);
  const subjects = (binding.subjects ??= []);
  for (const s of expected.subjects ?? []) {
    if (!subjects.some((x) => sameSubject(x, s))) {
      subjects.push(structuredClone(s));
      changed = true;
    }
  }
  return changed ? binding : undefined;
}

const sameRoleRef = (a: RoleBinding['roleRef'], b: RoleBinding['roleRef']): boolean =>
  a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name;

/** The stores the RBAC bootstrap writes through. */
export interface RbacStores {
  clusterRoles: ObjectStore;
  clusterRoleBindings: ObjectStore;
  roles: ObjectStore;
  roleBindings: ObjectStore;
  namespaces: ObjectStore;
}

/** The RBAC stores of a server. */
export function rbacStores(lookup: StoreLookup): RbacStores {
  return {
    clusterRoles: requireStore(lookup, RBAC_GROUP, 'clusterroles'),
    clusterRoleBindings: requireStore(lookup, RBAC_GROUP, 'clusterrolebindings'),
    roles: requireStore(lookup, RBAC_GROUP, 'roles'),
    roleBindings: requireStore(lookup, RBAC_GROUP, 'rolebindings'),
    namespaces: requireStore(lookup, '', 'namespaces'),
  };
}

/** The reconciler of the default RBAC policy. */
export class RbacBootstrap {
  constructor(
    private readonly stores: RbacStores,
    private readonly now: () => number,
  ) {}

  /** One reconcile pass over the whole policy (idempotent). Throws on the first write that fails. */
  async reconcile(): Promise<RbacReconcileResult> {
    const result: RbacReconcileResult = { created: [], updated: [], skipped: [] };
    const cluster = systemContext('', this.now);
    for (const role of clusterRoles()) {
      await this.ensureRole(this.stores.clusterRoles, cluster, role, `clusterrole/${role.metadata!.name!}`, result);
    }
    for (const b of clusterRoleBindings()) {
      await this.ensureBinding(
        this.stores.clusterRoleBindings,
        cluster,
        b,
        `clusterrolebinding/${b.metadata!.name!}`,
        result,
      );
    }
    const namespaces = new Set([...namespaceRoles(), ...namespaceRoleBindings()].map((o) => o.metadata!.namespace!));
    for (const ns of namespaces) {
      await createIfMissing(this.stores.namespaces, cluster, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns },
      });
    }
    for (const role of namespaceRoles()) {
      const ns = role.metadata!.namespace!;
      await this.ensureRole(
        this.stores.roles,
        systemContext(ns, this.now),
        role,
        `role/${ns}/${role.metadata!.name!}`,
        result,
      );
    }
    for (const b of namespaceRoleBindings()) {
      const ns = b.metadata!.namespace!;
      await this.ensureBinding(
        this.stores.roleBindings,
        systemContext(ns, this.now),
        b,
        `rolebinding/${ns}/${b.metadata!.name!}`,
        result,
      );
    }
    await this.fillAggregatedRoles(result);
    return result;
  }

  private async ensureRole(
    store: ObjectStore,
    ctx: ReturnType<typeof systemContext>,
    expected: ClusterRole,
    label: string,
    result: RbacReconcileResult,
  ): Promise<void> {
    const name = expected.metadata!.name!;
    const existing = await getOrUndefined(store, ctx, name);
    if (!existing) {
      if (await createIfMissing(store, ctx, expected)) {
        result.created.push(label);
        return;
      }
    } else if (!isAutoupdate(existing)) {
      result.skipped.push(label);
      return;
    }
    if (await updateIfNeeded(store, ctx, name, (current) => reconcileRole(current, expected)))
      result.updated.push(label);
  }

  private async ensureBinding(
    store: ObjectStore,
    ctx: ReturnType<typeof systemContext>,
    expected: RoleBinding | ClusterRoleBinding,
    label: string,
    result: RbacReconcileResult,
  ): Promise<void> {
    const name = expected.metadata!.name!;
    const existing = (await getOrUndefined(store, ctx, name)) as RoleBinding | undefined;
    if (!existing) {
      if (await createIfMissing(store, ctx, expected)) {
        result.created.push(label);
        return;
      }
    } else if (!isAutoupdate(existing)) {
      result.skipped.push(label);
      return;
    } else if (!sameRoleRef(existing.roleRef, expected.roleRef)) {
      // roleRef is immutable: replace the binding, keeping every subject it had.
      const replacement = structuredClone(expected);
      replacement.subjects = [...(existing.subjects ?? [])];
      for (const s of expected.subjects ?? []) {
        if (!replacement.subjects.some((x) => sameSubject(x, s))) replacement.subjects.push(s);
      }
      mergeMeta(replacement, existing);
      await store.delete(ctx, name, undefined, {
        dryRun: false,
        preconditions: { resourceVersion: existing.metadata!.resourceVersion! },
      });
      await createIfMissing(store, ctx, replacement);
      result.updated.push(label);
      return;
    }
    if (await updateIfNeeded(store, ctx, name, (current) => reconcileBinding(current, expected)))
      result.updated.push(label);
  }

  /**
   * Adds to each bootstrap role with an aggregation rule the rules of the ClusterRoles it selects. `view` goes
   * before `edit` (which aggregates `view`), and `edit` before `admin`.
   */
  private async fillAggregatedRoles(result: RbacReconcileResult): Promise<void> {
    const ctx = systemContext('', this.now);
    const aggregated = clusterRoles()
      .filter((r) => r.aggregationRule)
      .map((r) => r.metadata!.name!);
    const order = ['view', 'edit', 'admin'].filter((n) => aggregated.includes(n));
    for (const name of [...order, ...aggregated.filter((n) => !order.includes(n))]) {
      const all = (await this.stores.clusterRoles.list(ctx, {})).items as ClusterRole[];
      const role = all.find((r) => r.metadata?.name === name);
      if (!role?.aggregationRule || !isAutoupdate(role)) continue;
      const selectors = role.aggregationRule.clusterRoleSelectors ?? [];
      const want: PolicyRule[] = [];
      for (const other of all) {
        if (other.metadata?.name === name) continue;
        if (selectors.some((s) => matchesLabelSelector(s, other.metadata?.labels))) want.push(...(other.rules ?? []));
      }
      const updated = await updateIfNeeded(this.stores.clusterRoles, ctx, name, (current) => {
        const c = current as ClusterRole;
        const rules = (c.rules ??= []);
        let changed = false;
        for (const w of want) {
          if (!rules.some((r) => ruleKey(r) === ruleKey(w))) {
            rules.push(structuredClone(w));
            changed = true;
          }
        }
        return changed ? c : undefined;
      });
      if (updated && !result.updated.includes(`clusterrole/${name}`)) result.updated.push(`clusterrole/${name}`);
    }
  }
}
