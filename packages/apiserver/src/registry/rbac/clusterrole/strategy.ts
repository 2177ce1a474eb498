/**
 * The ClusterRole and Role strategies (model: Kubernetes 1.21 `pkg/registry/rbac/<kind>/strategy.go` and
 * `pkg/apis/rbac/validation/validation.go`, with Document 1's PolicyRule rules): every rule has verbs; a rule names
 * resources (with at least one API group and one resource) or non-resource URLs, never both; `*` in a non-resource
 * URL only as the whole final step; non-resource URLs never in a Role; an aggregation rule has selectors.
 */
import {
  type ClusterRole,
  type FieldError,
  FieldPath,
  field,
  type Kind,
  type PolicyRule,
  type Role,
  validateLabelSelector,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

// `*` may stand only for a whole, final path step: "*" or "/apis/*", but not "/api*" or a "*" step in the middle.
function validateNonResourceURL(url: string, path: FieldPath): FieldError[] {
  const star = url.indexOf('*');
  if (star === -1) return [];
  const wholeFinalStep = star === url.length - 1 && (url === '*' || url.endsWith('/*'));
  return wholeFinalStep ? [] : [field.invalid(path, url, '`*` is allowed only as the full final step of the path')];
}

/** One rule (model: `ValidatePolicyRule`); `isNamespaced` for the rules of a Role. */
export function validatePolicyRule(rule: PolicyRule, isNamespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!rule.verbs || rule.verbs.length === 0) {
    errs.push(field.required(path.child('verbs'), 'verbs must contain at least one value'));
  }
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length > 0) {
    if (isNamespaced) {
      errs.push(
        field.invalid(path.child('nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'),
      );
    }
    if ((rule.apiGroups ?? []).length || (rule.resources ?? []).length || (rule.resourceNames ?? []).length) {
      errs.push(
        field.invalid(
          path.child('nonResourceURLs'),
          urls,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    }
    urls.forEach((u, i) => errs.push(...validateNonResourceURL(u, path.child('nonResourceURLs').index(i))));
    return errs;
  }
  if ((rule.apiGroups ?? []).length === 0) {
    errs.push(field.required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  }
  if ((rule.resources ?? []).length === 0) {
    errs.push(field.required(path.child('resources'), 'resource rules must supply at least one resource'));
  }
  return errs;
}

/** Validation of a Role. */
export function validateRole(role: Role): FieldError[] {
  return (role.rules ?? []).flatMap((r, i) => validatePolicyRule(r, true, new FieldPath('rules').index(i)));
}

/** Validation of a ClusterRole. */
export function validateClusterRole(role: ClusterRole): FieldError[] {
  const errs = (role.rules ?? []).flatMap((r, i) => validatePolicyRule(r, false, new FieldPath('rules').index(i)));
  const agg = role.aggregationRule;
  if (agg) {
    const path = new FieldPath('aggregationRule', 'clusterRoleSelectors');
    const selectors = agg.clusterRoleSelectors ?? [];
    if (selectors.length === 0) {
      errs.push(field.required(path, 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    }
    selectors.forEach((s, i) => errs.push(...validateLabelSelector(s, path.index(i))));
  }
  return errs;
}

/** The strategy of `roles`. */
export function roleStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateRole(obj as Role),
    validateUpdate: (_ctx, obj) => validateRole(obj as Role),
  });
}

/** The strategy of `clusterroles`. */
export function clusterRoleStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateClusterRole(obj as ClusterRole),
    validateUpdate: (_ctx, obj) => validateClusterRole(obj as ClusterRole),
  });
}
