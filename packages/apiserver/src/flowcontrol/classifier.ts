/**
 * Which FlowSchema a request matches (model: Kubernetes 1.21 `apiserver/pkg/util/flowcontrol/rule_matching.go`):
 * schemas are tried by ascending matching precedence (then name); the first whose rules match wins. A rule
 * matches when one of its subjects is the requester and one of its resource (or non-resource) rules is the request.
 */
import {
  type FlowSchema,
  type FlowSubject,
  type NonResourcePolicyRule,
  type PolicyRulesWithSubjects,
  type ResourcePolicyRule,
} from '@platform/api';

import { type RequestInfo } from '../endpoints/request-info';
import { type UserInfo } from '../registry/rest/rest';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** Orders schemas as they are tried: ascending matching precedence, then name. */
export function byPrecedence(a: FlowSchema, b: FlowSchema): number {
  const d = (a.spec?.matchingPrecedence ?? 1000) - (b.spec?.matchingPrecedence ?? 1000);
  if (d !== 0) return d;
  const an = a.metadata?.name ?? '';
  const bn = b.metadata?.name ?? '';
  return an < bn ? -1 : an > bn ? 1 : 0;
}

/** Whether `fs` matches a request of `user` described by `info`. */
export function matchesFlowSchema(fs: FlowSchema, user: UserInfo, info: RequestInfo): boolean {
  return (fs.spec?.rules ?? []).some((rule) => matchesRule(rule, user, info));
}

function matchesRule(rule: PolicyRulesWithSubjects, user: UserInfo, info: RequestInfo): boolean {
  if (!(rule.subjects ?? []).some((s) => matchesSubject(s, user))) return false;
  if (info.isResourceRequest) return (rule.resourceRules ?? []).some((r) => matchesResourceRule(r, info));
  return (rule.nonResourceRules ?? []).some((r) => matchesNonResourceRule(r, info));
}

function matchesSubject(s: FlowSubject, user: UserInfo): boolean {
  switch (s.kind) {
    case 'User':
      return s.user?.name === '*' || s.user?.name === user.name;
    case 'Group': {
      const name = s.group?.name;
      return name === '*' || (name !== undefined && user.groups.includes(name));
    }
    case 'ServiceAccount': {
      const sa = s.serviceAccount;
      if (!sa || !user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
      const [namespace, name, ...rest] = user.name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
      if (rest.length > 0 || namespace !== sa.namespace) return false;
      return sa.name === '*' || sa.name === name;
    }
    default:
      return false;
  }
}

const containsOrAll = (values: readonly string[] | undefined, v: string): boolean =>
  (values ?? []).some((x) => x === '*' || x === v);

function matchesResourceRule(r: ResourcePolicyRule, info: RequestInfo): boolean {
  if (!containsOrAll(r.verbs, info.verb) || !containsOrAll(r.apiGroups, info.apiGroup)) return false;
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  if (!containsOrAll(r.resources, resource)) return false;
  if (!info.namespace) return r.clusterScope === true;
  return containsOrAll(r.namespaces, info.namespace);
}

function matchesNonResourceRule(r: NonResourcePolicyRule, info: RequestInfo): boolean {
  if (!containsOrAll(r.verbs, info.verb)) return false;
  return (r.nonResourceURLs ?? []).some((url) => {
    if (url === '*' || url === info.path) return true;
    // `/prefix/*` matches `/prefix` and everything under it.
    if (!url.endsWith('/*')) return false;
    const prefix = url.slice(0, -1);
    return info.path.startsWith(prefix) || info.path === prefix.slice(0, -1);
  });
}

/** The flow distinguisher of a request under `fs` (ByUser: the user name; ByNamespace: the namespace). */
export function distinguisherOf(fs: FlowSchema, user: UserInfo, info: RequestInfo): string {
  switch (fs.spec?.distinguisherMethod?.type) {
    case 'ByUser':
      return user.name;
    case 'ByNamespace':
      return info.namespace;
    default:
      return '';
  }
}
