/**
 * The RBAC index: the server's Roles, ClusterRoles, RoleBindings and ClusterRoleBindings kept in memory, fed by the
 * watches of those four resources, so that an authorization decision never reads the store (model: Kubernetes 1.21
 * `pkg/registry/rbac/validation/rule.go` `DefaultRuleResolver`, which reads informer caches).
 *
 * The rules that apply to one user in one namespace are computed once and cached until any of the four resources
 * changes (every change clears the cache): a decision is then a walk of that user's rules.
 *
 * - ClusterRoleBindings apply in every namespace and to non-resource URLs; RoleBindings only in their namespace, so
 *   a ClusterRole's nonResourceURLs take effect only through a ClusterRoleBinding.
 * - Subjects: `User` by name, `Group` by the user's groups, `ServiceAccount` as the user
 *   `system:serviceaccount:<namespace>:<name>` (a RoleBinding's service account without a namespace is in the
 *   binding's namespace).
 * - A roleRef to a missing role grants nothing and is reported as an error (the decision is then no opinion).
 */
import {
  type ApiObject,
  type ClusterRoleBinding,
  type PolicyRule,
  type RoleBinding,
  type Subject,
} from '@platform/api';

import { type AuthorizationHost, type PolicyRuleLike, type ReflectHandler, type RuleSource } from '../../authorizer';
import { type UserInfo } from '../../../registry/rest/rest';

/** The RBAC API group. */
export const RBAC_GROUP = 'rbac.authorization.platform';

/** The user name of a service account. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

interface RoleRefLike {
  kind?: string;
  name?: string;
  apiGroup?: string;
}

/** One rule with the description of the binding that grants it. */
interface SourcedRule {
  source: string;
  rule: PolicyRule;
}

interface Resolved {
  rules: SourcedRule[];
  errors: string[];
  /** Decisions already taken from these rules (see `memo`). */
  decisions: Map<string, unknown> | undefined;
}

type Binding = (RoleBinding | ClusterRoleBinding) & ApiObject;

function key(obj: ApiObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

/** A map of one resource's objects, kept by a reflector; `onChange` runs after every change. */
class ObjectMap<T extends ApiObject> implements ReflectHandler {
  readonly items = new Map<string, T>();

  constructor(private readonly onChange: () => void) {}

  replace(objects: readonly ApiObject[]): void {
    this.items.clear();
    for (const o of objects) this.items.set(key(o), o as T);
    this.onChange();
  }

  upsert(obj: ApiObject): void {
    this.items.set(key(obj), obj as T);
    this.onChange();
  }

  remove(obj: ApiObject): void {
    this.items.delete(key(obj));
    this.onChange();
  }
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/** The subject of `b` that `user` is, if any. */
function appliesTo(user: UserInfo, b: Binding, bindingNamespace: string): Subject | undefined {
  for (const s of b.subjects ?? []) {
    switch (s.kind) {
      case 'User':
        if (s.name === user.name) return s;
        break;
      case 'Group':
        if (user.groups.includes(s.name)) return s;
        break;
      case 'ServiceAccount':
        if (serviceAccountUsername(s.namespace || bindingNamespace, s.name) === user.name) return s;
        break;
      default:
    }
  }
  return undefined;
}

/** Bound on the per-user cache (cleared when full; users are few, namespaces may be many). */
const MAX_CACHED = 10_000;
/** Bound on the remembered decisions of one user in one namespace. */
const MAX_DECISIONS = 4096;

/** See the module comment. */
export class RbacIndex implements RuleSource {
  private readonly cache = new Map<string, Resolved>();
  private readonly clear = (): void => this.cache.clear();
  readonly clusterRoles = new ObjectMap<ApiObject & { rules?: PolicyRule[] }>(this.clear);
  readonly roles = new ObjectMap<ApiObject & { rules?: PolicyRule[] }>(this.clear);
  readonly clusterRoleBindings = new ObjectMap<Binding>(this.clear);
  readonly roleBindings = new ObjectMap<Binding>(this.clear);

  /** Starts the four reflectors; resolves once each has delivered its first list. */
  async start(host: Pick<AuthorizationHost, 'reflect'>, signal: AbortSignal): Promise<void> {
    await Promise.all([
      host.reflect(RBAC_GROUP, 'clusterroles', this.clusterRoles, signal),
      host.reflect(RBAC_GROUP, 'roles', this.roles, signal),
      host.reflect(RBAC_GROUP, 'clusterrolebindings', this.clusterRoleBindings, signal),
      host.reflect(RBAC_GROUP, 'rolebindings', this.roleBindings, signal),
    ]);
  }

  /**
   * The rules of a role reference from a binding in `namespace` ('' for a ClusterRoleBinding); throws a message
   * `<resource>.<group> "<name>" not found` when the role does not exist.
   */
  roleRefRules(ref: RoleRefLike, namespace: string): PolicyRule[] {
    if (ref.kind === 'ClusterRole') {
      const r = this.clusterRoles.items.get(ref.name ?? '');
      if (!r) throw new Error(`clusterroles.${RBAC_GROUP} ${JSON.stringify(ref.name ?? '')} not found`);
      return r.rules ?? [];
    }
    if (ref.kind === 'Role') {
      const r = this.roles.items.get(`${namespace}/${ref.name ?? ''}`);
      if (!r) throw new Error(`roles.${RBAC_GROUP} ${JSON.stringify(ref.name ?? '')} not found`);
      return r.rules ?? [];
    }
    throw new Error(`unsupported role reference kind: ${JSON.stringify(ref.kind ?? '')}`);
  }

  private resolve(user: UserInfo, namespace: string): Resolved {
    const cacheKey = `${namespace}\0${user.name}\0${user.groups.join('\0')}`;
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;
    const out: Resolved = { rules: [], errors: [], decisions: undefined };
    const collect = (b: Binding, bindingNamespace: string, describe: (s: Subject) => string): void => {
      const subject = appliesTo(user, b, bindingNamespace);
      if (!subject) return;
      let rules: PolicyRule[];
      try {
        rules = this.roleRefRules(b.roleRef, bindingNamespace);
      } catch (err) {
        out.errors.push((err as Error).message);
        return;
      }
      const source = describe(subject);
      for (const rule of rules) out.rules.push({ source, rule });
    };
    for (const b of this.clusterRoleBindings.items.values()) {
      collect(
        b,
        '',
        (s) =>
          `ClusterRoleBinding ${JSON.stringify(b.metadata?.name ?? '')} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(s, '')}`,
      );
    }
    if (namespace) {
      for (const b of this.roleBindings.items.values()) {
        if (b.metadata?.namespace !== namespace) continue;
        collect(
          b,
          namespace,
          (s) =>
            `RoleBinding ${JSON.stringify(`${b.metadata?.name ?? ''}/${namespace}`)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(s, namespace)}`,
        );
      }
    }
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(cacheKey, out);
    return out;
  }

  memo<T>(user: UserInfo, namespace: string, key: string, decide: () => T): T {
    const r = this.resolve(user, namespace);
    const decisions = (r.decisions ??= new Map());
    if (decisions.has(key)) return decisions.get(key) as T;
    const d = decide();
    if (typeof d === 'object' && d !== null) Object.freeze(d);
    // Names make the keys many: the memo of one user and namespace stays bounded.
    if (decisions.size >= MAX_DECISIONS) decisions.clear();
    decisions.set(key, d);
    return d;
  }

  visitRulesFor(
    user: UserInfo,
    namespace: string,
    visit: (source: string, rule: PolicyRuleLike) => boolean,
    onError?: (message: string) => void,
  ): void {
    const r = this.resolve(user, namespace);
    if (onError) for (const e of r.errors) onError(e);
    for (const s of r.rules) if (!visit(s.source, s.rule)) return;
  }

  /** Every rule of `user` in `namespace` (escalation checks, rules reviews), and the roles that were missing. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const r = this.resolve(user, namespace);
    return { rules: r.rules.map((s) => s.rule), errors: [...r.errors] };
  }
}
