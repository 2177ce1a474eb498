/**
 * RBAC privilege-escalation prevention (model: Kubernetes 1.21 `pkg/registry/rbac/<kind>/policybased/storage.go`,
 * `pkg/registry/rbac/escalation_check.go` and `pkg/registry/rbac/validation/rule.go` `ConfirmNoEscalation`).
 *
 * - Creating or changing the rules of a Role or ClusterRole is allowed when the user is in `system:masters`, has the
 *   `escalate` verb on that role, or already holds every rule it grants (in the role's namespace; a ClusterRole:
 *   cluster-wide). An aggregation rule needs full authority (cluster-admin), since it may gather any rule.
 * - Creating or changing a binding is allowed when the user is in `system:masters`, has the `bind` verb on the role
 *   it references (resourceNames honoured; checked in the binding's namespace), or already holds every rule of that
 *   role. A binding to a role that does not exist then answers 404.
 * - Otherwise: 403 naming the rules the user does not hold.
 *
 * Calls without a user (the server's own writes, such as bootstrap objects) are not checked.
 */
import {
  type ApiObject,
  type ClusterRole,
  forbidden,
  notFound,
  type PolicyRule,
  type RoleBinding,
  semanticEqual,
} from '@platform/api';

import { type Authorizer, PRIVILEGED_GROUP, type RuleSource } from '../../auth/authorizer';
import { compactRules, compactString, covers } from '../../auth/authorization/rbac/rules';
import { GenericStore, type StoreDefinition } from '../generic/store';
import {
  type RequestContext,
  type UpdatedObjectInfo,
  type UserInfo,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../rest/rest';

/** The RBAC API group. */
const RBAC_GROUP = 'rbac.authorization.platform';

/** What the checks need from the server: the authorizer chain, the RBAC rules, and fresh reads of roles. */
export interface EscalationContext {
  /** The server's authorizer chain (asked about `escalate` and `bind`). */
  authorizer(): Authorizer;
  /** The RBAC rules the user holds. */
  rules(): RuleSource;
  /** The rules of a role reference, read from storage (throws the 404 of a missing role). */
  roleRefRules(ref: { kind?: string; name?: string }, namespace: string): Promise<PolicyRule[]>;
}

/**
 * The context of a server: `authorizer` and `rules` as installed, and roles read from their stores (`definitionOf`
 * gives a resource's store definition).
 */
export function escalationContext(
  authorizer: Authorizer,
  rules: RuleSource,
  definitionOf: (group: string, resource: string) => StoreDefinition | undefined,
): EscalationContext {
  const stores = new Map<string, GenericStore>();
  const storeOf = (resource: string): GenericStore | undefined => {
    let s = stores.get(resource);
    if (!s) {
      const def = definitionOf(RBAC_GROUP, resource);
      if (!def) return undefined;
      s = new GenericStore(def);
      stores.set(resource, s);
    }
    return s;
  };
  return {
    authorizer: () => authorizer,
    rules: () => rules,
    async roleRefRules(ref, namespace) {
      const resource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
      const store = storeOf(resource);
      if (!store) throw notFound({ group: RBAC_GROUP, resource }, ref.name ?? '');
      const ctx: RequestContext = { namespace: resource === 'roles' ? namespace : '', now: Date.now };
      const role = (await store.get(ctx, ref.name ?? '', {})) as ClusterRole;
      return role.rules ?? [];
    },
  };
}

/** Everything, as a rule list (what an aggregation rule may gather). */
const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** Go's `%q` of a string list. */
function quotedList(v: string[]): string {
  return `[${v.map((x) => JSON.stringify(x)).join(' ')}]`;
}

function isPrivileged(user: UserInfo | undefined): boolean {
  return user === undefined || user.groups.includes(PRIVILEGED_GROUP);
}

async function allowedTo(
  c: EscalationContext,
  user: UserInfo,
  verb: string,
  resource: string,
  name: string,
  namespace: string,
): Promise<boolean> {
  const r = await c.authorizer().authorize({
    user,
    verb,
    resourceRequest: true,
    namespace,
    apiGroup: RBAC_GROUP,
    apiVersion: '*',
    resource,
    subresource: '',
    name,
    path: '',
  });
  return r.decision === 'allow';
}

/** The reason the user may not grant `rules` in `namespace`, or undefined when they hold them all. */
function escalationProblem(
  c: EscalationContext,
  user: UserInfo,
  namespace: string,
  rules: PolicyRule[],
): string | undefined {
  const owner = c.rules().rulesFor(user, namespace);
  const { covered, missing } = covers(owner.rules, rules);
  if (covered) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.name)} (groups=${quotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (owner.errors.length) msg += `; resolution errors: [${owner.errors.join(', ')}]`;
  return msg;
}

/** Checks a Role (`resource` roles) or ClusterRole before it is stored. */
async function confirmRole(c: EscalationContext, ctx: RequestContext, resource: string, obj: ApiObject): Promise<void> {
  const user = ctx.user;
  if (isPrivileged(user)) return;
  const name = obj.metadata?.name || obj.metadata?.generateName || '';
  const namespace = resource === 'roles' ? (obj.metadata?.namespace ?? ctx.namespace) : '';
  if (await allowedTo(c, user!, 'escalate', resource, name, namespace)) return;
  const gr = { group: RBAC_GROUP, resource };
  if (resource === 'clusterroles' && (obj as ClusterRole).aggregationRule) {
    if (escalationProblem(c, user!, '', FULL_AUTHORITY) !== undefined)
      throw forbidden(gr, name, 'must have cluster-admin privileges to use the aggregationRule');
  }
  const problem = escalationProblem(c, user!, namespace, (obj as ClusterRole).rules ?? []);
  if (problem !== undefined) throw forbidden(gr, name, problem);
}

/** Checks a RoleBinding (`resource` rolebindings) or ClusterRoleBinding before it is stored. */
async function confirmBinding(
  c: EscalationContext,
  ctx: RequestContext,
  resource: string,
  obj: ApiObject,
): Promise<void> {
  const user = ctx.user;
  if (isPrivileged(user)) return;
  const b = obj as RoleBinding;
  const name = obj.metadata?.name ?? '';
  const namespace = resource === 'rolebindings' ? (obj.metadata?.namespace ?? ctx.namespace) : '';
  const ref = b.roleRef ?? {};
  const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : ref.kind === 'Role' ? 'roles' : undefined;
  // A malformed reference grants nothing; validation refuses it (422) right after.
  if (!refResource || !ref.name) return;
  if (await allowedTo(c, user!, 'bind', refResource, ref.name, namespace)) return;
  const rules = await c.roleRefRules(ref, namespace);
  const problem = escalationProblem(c, user!, namespace, rules);
  if (problem !== undefined) throw forbidden({ group: RBAC_GROUP, resource }, name, problem);
}

/** Whether an update changes nothing that grants permissions (labels, finalizers, owners...). */
function grantsUnchanged(resource: string, obj: ApiObject, old: ApiObject): boolean {
  const o = obj as Record<string, unknown>;
  const p = old as Record<string, unknown>;
  if (resource === 'roles' || resource === 'clusterroles')
    return semanticEqual(o.rules ?? [], p.rules ?? []) && semanticEqual(o.aggregationRule, p.aggregationRule);
  return semanticEqual(o.roleRef, p.roleRef) && semanticEqual(o.subjects ?? [], p.subjects ?? []);
}

/**
 * The store of one RBAC resource (`roles`, `clusterroles`, `rolebindings`, `clusterrolebindings`): the generic
 * store with the escalation checks before create and update (see the module comment).
 */
export class PolicyBasedStore extends GenericStore {
  private readonly confirm: (ctx: RequestContext, obj: ApiObject) => Promise<void>;

  constructor(
    definition: StoreDefinition,
    private readonly resource: string,
    c: EscalationContext,
  ) {
    super(definition);
    const isRole = resource === 'roles' || resource === 'clusterroles';
    this.confirm = (ctx, obj) => (isRole ? confirmRole(c, ctx, resource, obj) : confirmBinding(c, ctx, resource, obj));
  }

  override async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject> {
    await this.confirm(ctx, obj);
    return super.create(ctx, obj, validate, o);
  }

  override update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    const checked: UpdatedObjectInfo = {
      name: info.name,
      updatedObject: async (c, current) => {
        const obj = await info.updatedObject(c, current);
        if (!current || !grantsUnchanged(this.resource, obj, current)) await this.confirm(ctx, obj);
        return obj;
      },
    };
    return super.update(ctx, checked, validateCreate, validateUpdate, o);
  }
}
