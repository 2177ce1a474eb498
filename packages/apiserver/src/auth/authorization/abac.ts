/**
 * `--authorization-mode=ABAC` with `--authorization-policy-file` (model: Kubernetes 1.21 `pkg/auth/authorizer/abac`):
 * one JSON `abac.authorization.platform/v1beta1` Policy per line; blank lines and lines starting with `#` are
 * skipped. A request is allowed when some policy matches it:
 *
 * - subject: `user` (name or `*`) and/or `group` (one of the user's groups, or `*`); a policy naming neither matches
 *   no one;
 * - verb: read-only requests (get, list, watch) match every policy; others only policies without `readonly: true`;
 * - a resource request: `namespace`, `resource`, `apiGroup` each equal or `*`;
 * - a non-resource request: `nonResourcePath` equal, `*`, or a prefix ending in `*`.
 *
 * Otherwise: no opinion, "No policy matched.".
 */
import { readFileSync } from 'node:fs';

import {
  type Attributes,
  type AuthorizationResult,
  type Authorizer,
  type NonResourceRuleInfo,
  type ResourceRuleInfo,
  type RulesResult,
} from '../authorizer';
import { type UserInfo } from '../../registry/rest/rest';

/** The apiVersion of a policy line. */
export const ABAC_API_VERSION = 'abac.authorization.platform/v1beta1';

/** The spec of one policy. */
export interface PolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const SPEC_FIELDS: Record<keyof PolicySpec, 'string' | 'boolean'> = {
  user: 'string',
  group: 'string',
  readonly: 'boolean',
  apiGroup: 'string',
  resource: 'string',
  namespace: 'string',
  nonResourcePath: 'string',
};

/** Parses a policy file's text; throws an Error naming the line of the first bad policy. */
export function parsePolicies(text: string, source = 'policy file'): PolicySpec[] {
  const out: PolicySpec[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${source}, line ${i + 1}`;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (err) {
      throw new Error(`${where}: not a JSON object: ${(err as Error).message}`);
    }
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new Error(`${where}: not a JSON object`);
    const p = obj as Record<string, unknown>;
    if (p.apiVersion !== ABAC_API_VERSION || p.kind !== 'Policy') {
      throw new Error(
        `${where}: unsupported policy: apiVersion must be ${JSON.stringify(ABAC_API_VERSION)} and kind "Policy", got ${JSON.stringify(p.apiVersion ?? '')} ${JSON.stringify(p.kind ?? '')}`,
      );
    }
    const spec = p.spec;
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new Error(`${where}: spec must be an object`);
    const s = spec as Record<string, unknown>;
    const policy: PolicySpec = {
      user: '',
      group: '',
      readonly: false,
      apiGroup: '',
      resource: '',
      namespace: '',
      nonResourcePath: '',
    };
    for (const [k, v] of Object.entries(s)) {
      const type = SPEC_FIELDS[k as keyof PolicySpec];
      if (!type) throw new Error(`${where}: unknown field spec.${k}`);
      if (typeof v !== type) throw new Error(`${where}: spec.${k} must be a ${type}`);
      (policy as unknown as Record<string, unknown>)[k] = v;
    }
    out.push(policy);
  });
  return out;
}

function subjectMatches(p: PolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else if (p.user === user.name) matched = true;
    else return false;
  }
  if (p.group) {
    if (p.group === '*') matched = true;
    else if (user.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

const READ_ONLY = new Set(['get', 'list', 'watch']);

function matches(p: PolicySpec, a: Attributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (!READ_ONLY.has(a.verb) && p.readonly) return false;
  if (a.resourceRequest) {
    return (
      (p.namespace === '*' || p.namespace === a.namespace) &&
      (p.resource === '*' || p.resource === a.resource) &&
      (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
    );
  }
  const np = p.nonResourcePath;
  return np === '*' || np === a.path || (np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, '')));
}

/** The ABAC authorizer over parsed policies. */
export class AbacAuthorizer implements Authorizer {
  constructor(readonly policies: readonly PolicySpec[]) {}

  /** Reads and parses `--authorization-policy-file`. */
  static fromFile(path: string): AbacAuthorizer {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(`--authorization-policy-file: cannot read ${path}: ${(err as Error).message}`);
    }
    return new AbacAuthorizer(parsePolicies(text, `--authorization-policy-file ${path}`));
  }

  async authorize(a: Attributes): Promise<AuthorizationResult> {
    for (const p of this.policies) if (matches(p, a)) return { decision: 'allow', reason: '' };
    return { decision: 'noOpinion', reason: 'No policy matched.' };
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    const resourceRules: ResourceRuleInfo[] = [];
    const nonResourceRules: NonResourceRuleInfo[] = [];
    for (const p of this.policies) {
      if (!subjectMatches(p, user)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource && (p.namespace === '*' || p.namespace === namespace)) {
        resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource], resourceNames: [] });
      }
      if (p.nonResourcePath) nonResourceRules.push({ verbs, nonResourceURLs: [p.nonResourcePath] });
    }
    return { resourceRules, nonResourceRules, incomplete: false, errors: [] };
  }
}
