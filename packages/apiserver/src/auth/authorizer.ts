/**
 * Authorization (model: apiserver `pkg/authorization/authorizer`): an authorizer decides whether a user may do a verb
 * on a resource or a non-resource path. Authorizers form an ordered chain (`--authorization-mode`): the first that
 * allows or denies decides; when every one has no opinion, the request is denied.
 */
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
}

export interface Authorizer {
  authorize(a: Attributes): Promise<AuthorizationResult>;
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

/** `--authorization-mode=AlwaysAllow`. */
export const ALWAYS_ALLOW: Authorizer = { authorize: async () => ({ decision: 'allow', reason: '' }) };

/** `--authorization-mode=AlwaysDeny`. */
export const ALWAYS_DENY: Authorizer = {
  authorize: async () => ({ decision: 'noOpinion', reason: 'Everything is forbidden.' }),
};

/** The chain: the first allow or deny decides; reasons of those with no opinion are kept for the 403. */
export function unionAuthorizer(authorizers: Authorizer[]): Authorizer {
  return {
    async authorize(a) {
      const reasons: string[] = [];
      for (const z of authorizers) {
        const r = await z.authorize(a);
        if (r.decision !== 'noOpinion') return r;
        if (r.reason) reasons.push(r.reason);
      }
      return { decision: 'noOpinion', reason: reasons.join(', ') };
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
  return reason ? `${msg}: ${reason}` : msg;
}
