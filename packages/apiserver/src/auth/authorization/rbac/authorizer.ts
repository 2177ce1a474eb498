/**
 * `--authorization-mode=RBAC` (model: Kubernetes 1.21 `plugin/pkg/auth/authorizer/rbac/rbac.go`): allows a request
 * when a rule of a role bound to the user allows it, and otherwise has no opinion (RBAC never denies). The rules come
 * from the server's in-memory RBAC index (see `index.ts`), connected by `start`.
 */
import {
  type Attributes,
  type AuthorizationResult,
  type Authorizer,
  type NonResourceRuleInfo,
  noRules,
  type ResourceRuleInfo,
  type RuleSource,
  type RulesResult,
} from '../../authorizer';
import { type UserInfo } from '../../../registry/rest/rest';
import { ruleAllows } from './rules';

/** Kubernetes' aggregate of several errors: one as it is, several in brackets. */
function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

/** The RBAC authorizer; decides from `source` (given now, or by `start` from the server). */
export class RbacAuthorizer implements Authorizer {
  constructor(private source?: RuleSource) {}

  async start(host: { rbac: RuleSource }): Promise<void> {
    this.source ??= host.rbac;
  }

  async authorize(a: Attributes): Promise<AuthorizationResult> {
    return this.decide(a);
  }

  /** The decision, synchronously (the request path awaits it once). */
  decide(a: Attributes): AuthorizationResult {
    const source = this.source;
    if (!source) return { decision: 'noOpinion', reason: 'RBAC: the RBAC authorizer is not started' };
    if (!source.memo) return this.walk(source, a);
    const key = a.resourceRequest
      ? `${a.verb}\0${a.apiGroup}\0${a.resource}\0${a.subresource}\0${a.name}`
      : `${a.verb}\0\0${a.path}`;
    return source.memo(a.user, a.namespace, key, () => this.walk(source, a));
  }

  /** The decision from the user's rules, one by one. */
  private walk(source: RuleSource, a: Attributes): AuthorizationResult {
    let allowedBy: string | undefined;
    const errors: string[] = [];
    source.visitRulesFor(
      a.user,
      a.namespace,
      (from, rule) => {
        if (!ruleAllows(a, rule)) return true;
        allowedBy = from;
        return false;
      },
      (e) => errors.push(e),
    );
    if (allowedBy !== undefined) return { decision: 'allow', reason: `RBAC: allowed by ${allowedBy}` };
    return { decision: 'noOpinion', reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    if (!this.source) return noRules(true);
    const { rules, errors } = this.source.rulesFor(user, namespace);
    const resourceRules: ResourceRuleInfo[] = [];
    const nonResourceRules: NonResourceRuleInfo[] = [];
    for (const r of rules) {
      if ((r.resources ?? []).length > 0) {
        resourceRules.push({
          verbs: [...(r.verbs ?? [])],
          apiGroups: [...(r.apiGroups ?? [])],
          resources: [...(r.resources ?? [])],
          resourceNames: [...(r.resourceNames ?? [])],
        });
      }
      if ((r.nonResourceURLs ?? []).length > 0) {
        nonResourceRules.push({ verbs: [...(r.verbs ?? [])], nonResourceURLs: [...(r.nonResourceURLs ?? [])] });
      }
    }
    return { resourceRules, nonResourceRules, incomplete: false, errors };
  }
}
