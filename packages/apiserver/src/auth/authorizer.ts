/**
 * Authorization (model: apiserver `pkg/authorization/authorizer`): an authorizer decides whether a user may do a verb
 * on a resource or a non-resource path. Authorizers form an ordered chain (`--authorization-mode`): the first that
 * allows or denies decides; when every one has no opinion, the request is denied.
 *
 * Authorizers that decide from the server's own objects (RBAC, Node) are connected to the server that uses them with
 * `start(host)`, which the API server calls once, in a post-start hook, before it reports ready.
 */
import { type ApiObject } from '@platform/api';
import { type Logger } from '@platform/common';

import { type RequestInfo } from '../endpoints/request-info';
import { type UserInfo } from '../registry/rest/rest';

/** What a request wants to do (a resource request or a non-resource one). */
export interface Attributes {
  user: UserInfo;
  verb: string;
  /** True for a request on an API resource; false for a non-resource path (`path` then matters). */
  resourceRequest: boolean;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  path: string;
}

export type Decision = 'allow' | 'deny' | 'noOpinion';

export interface AuthorizationResult {
  decision: Decision;
  /** Why (shown to the user in a 403, and in access reviews). */
  reason: string;
  /** An error met while deciding (access reviews report it as `evaluationError`). */
  evaluationError?: string;
}

/** A rule on resources, as SelfSubjectRulesReview lists them. */
export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
}

/** A rule on non-resource URLs, as SelfSubjectRulesReview lists them. */
export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs: string[];
}

/** What a user may do in a namespace, as far as an authorizer can tell. */
export interface RulesResult {
  resourceRules: ResourceRuleInfo[];
  nonResourceRules: NonResourceRuleInfo[];
  /** True when the authorizer cannot list everything it would allow (Node, Webhook). */
  incomplete: boolean;
  /** Problems met while collecting the rules (missing roles); the rules listed still hold. */
  errors: string[];
}

/** Keeps a handler up to date with one resource of the server's own registry. */
export interface ReflectHandler {
  /** The whole current state (the first list, and every list after a broken watch). */
  replace(objects: readonly ApiObject[]): void;
  /** An object was added or changed. */
  upsert(obj: ApiObject): void;
  /** An object was removed. */
  remove(obj: ApiObject): void;
}

/** What the server offers to authorizers that decide from its own objects. */
export interface AuthorizationHost {
  /**
   * Lists, then watches, the resource `group`/`resource` of the server's registry, feeding `handler` until `signal`
   * aborts (a broken watch is listed again). Resolves once the first list has been delivered.
   */
  reflect(group: string, resource: string, handler: ReflectHandler, signal: AbortSignal): Promise<void>;
  /** The RBAC rules of the server's registry (Roles, ClusterRoles and their bindings), kept in memory. */
  readonly rbac: RuleSource;
  readonly log: Logger;
}

/** The RBAC view of the registry an RBAC authorizer decides from (see `auth/authorization/rbac/index.ts`). */
export interface RuleSource {
  /**
   * Visits every rule that applies to `user` in `namespace` ('' = cluster-wide only), with a description of where
   * it came from; stops when `visit` returns false. Missing roles are reported through `onError`.
   */
  visitRulesFor(
    user: UserInfo,
    namespace: string,
    visit: (source: string, rule: PolicyRuleLike) => boolean,
    onError?: (message: string) => void,
  ): void;
  /** Every rule of `user` in `namespace`, and the roles found missing. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRuleLike[]; errors: string[] };
  /**
   * The rules of a binding's role reference (`namespace` '' for a ClusterRoleBinding); throws an Error saying
   * `<resource>.<group> "<name>" not found` for a missing role.
   */
  roleRefRules(ref: { kind?: string; name?: string }, namespace: string): PolicyRuleLike[];
  /**
   * Optional: `decide()` for a request of `user` in `namespace` described by `key`, remembered until the rules
   * change (a decision walks every rule of the user; the same requests come again and again).
   */
  memo?<T>(user: UserInfo, namespace: string, key: string, decide: () => T): T;
}

/** The fields of an RBAC PolicyRule that matching reads. */
export interface PolicyRuleLike {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Authorizer {
  authorize(a: Attributes): Promise<AuthorizationResult>;
  /** The rules of `user` in `namespace` (SelfSubjectRulesReview). Absent: nothing listed, incomplete. */
  rulesFor?(user: UserInfo, namespace: string): RulesResult;
  /** Connects the authorizer to the server that uses it; resolves once it can decide. Called once. */
  start?(host: AuthorizationHost, signal: AbortSignal): Promise<void>;
}

/** The attributes of a request from its request info and user. */
export function attributesOf(info: RequestInfo, user: UserInfo): Attributes {
  return {
    user,
    verb: info.verb,
    resourceRequest: info.isResourceRequest,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
    path: info.path,
  };
}

/** The rules of no one. */
export function noRules(incomplete: boolean): RulesResult {
  return { resourceRules: [], nonResourceRules: [], incomplete, errors: [] };
}

/** `--authorization-mode=AlwaysAllow`. */
export const ALWAYS_ALLOW: Authorizer = {
  authorize: async () => ({ decision: 'allow', reason: '' }),
  rulesFor: () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
    errors: [],
  }),
};

/** `--authorization-mode=AlwaysDeny` (as in Kubernetes: no opinion, so the request is refused unless another allows). */
export const ALWAYS_DENY: Authorizer = {
  authorize: async () => ({ decision: 'noOpinion', reason: 'Everything is forbidden.' }),
  rulesFor: () => noRules(false),
};

/** The group whose members may do anything (Kubernetes' `system:masters`, checked before the configured chain). */
export const PRIVILEGED_GROUP = 'system:masters';

/** Allows every request of a member of one of `groups`; no opinion otherwise. */
export function privilegedGroupsAuthorizer(groups: string[] = [PRIVILEGED_GROUP]): Authorizer {
  return {
    async authorize(a) {
      if (a.user.groups.some((g) => groups.includes(g))) return { decision: 'allow', reason: '' };
      return { decision: 'noOpinion', reason: '' };
    },
    rulesFor(user) {
      return user.groups.some((g) => groups.includes(g)) ? ALWAYS_ALLOW.rulesFor!(user, '') : noRules(false);
    },
  };
}

/** The chain: the first allow or deny decides; reasons of those with no opinion are kept for the 403. */
export function unionAuthorizer(authorizers: Authorizer[]): Authorizer {
  return {
    async authorize(a) {
      const reasons: string[] = [];
      const errors: string[] = [];
      for (const z of authorizers) {
        const r = await z.authorize(a);
        if (r.decision !== 'noOpinion') return r;
        if (r.reason) reasons.push(r.reason);
        if (r.evaluationError) errors.push(r.evaluationError);
      }
      return {
        decision: 'noOpinion',
        reason: reasons.join('\n'),
        ...(errors.length ? { evaluationError: errors.join('; ') } : {}),
      };
    },
    rulesFor(user, namespace) {
      const out = noRules(false);
      for (const z of authorizers) {
        const r = z.rulesFor ? z.rulesFor(user, namespace) : noRules(true);
        out.resourceRules.push(...r.resourceRules);
        out.nonResourceRules.push(...r.nonResourceRules);
        out.incomplete ||= r.incomplete;
        out.errors.push(...r.errors);
      }
      return out;
    },
    async start(host, signal) {
      await Promise.all(authorizers.map((z) => z.start?.(host, signal)));
    },
  };
}

/**
 * The message of a 403, worded as Kubernetes words it: `User "bob" cannot list resource "pods" in API group "" in
 * the namespace "default"`, or `User "bob" cannot get path "/metrics"`.
 */
export function forbiddenMessage(a: Attributes, reason: string): string {
  const who = `User ${JSON.stringify(a.user.name)}`;
  let msg: string;
  if (!a.resourceRequest) {
    msg = `${who} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  } else {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    msg = `${who} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)}`;
    msg += a.namespace ? ` in the namespace ${JSON.stringify(a.namespace)}` : ' at the cluster scope';
  }
  // As Kubernetes: HTML-special characters of the request (a path, a name) are escaped; the reason is not.
  msg = msg.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
  return reason ? `${msg}: ${reason}` : msg;
}
