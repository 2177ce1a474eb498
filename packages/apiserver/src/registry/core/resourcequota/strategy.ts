/**
 * The ResourceQuota strategies (model: Kubernetes 1.21 `pkg/registry/core/resourcequota/strategy.go`,
 * `ValidateResourceQuota`): hard limits are valid non-negative quantities of qualified resource names; scopes are
 * known and not contradictory; status (hard, used) is written through `resourcequotas/status` and valid there.
 */
import { type FieldError, FieldPath, field, isQualifiedName, type Kind, type ResourceQuota } from '@platform/api';

import { defaultStrategy, statusStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { parseQuantityValue, quantityError } from '../pod/quantity';

/** The quota scopes. */
export const QUOTA_SCOPES = [
  'BestEffort',
  'CrossNamespacePodAffinity',
  'NotBestEffort',
  'NotTerminating',
  'PriorityClass',
  'Terminating',
];

function validateQuantities(map: Record<string, unknown> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(map ?? {})) {
    const p = path.key(k);
    errs.push(...field.invalidEach(p, k, isQualifiedName(k.replace(/^(requests|limits)\./, ''))));
    const q = parseQuantityValue(v);
    if (!q) errs.push(field.invalid(p, v, quantityError(v)));
    else if (q.sign() < 0) errs.push(field.invalid(p, v, 'must be greater than or equal to 0'));
  }
  return errs;
}

/** Validation of a ResourceQuota's spec. */
export function validateResourceQuota(rq: ResourceQuota): FieldError[] {
  const spec = new FieldPath('spec');
  const errs = validateQuantities(rq.spec?.hard, spec.child('hard'));
  const scopes = rq.spec?.scopes ?? [];
  scopes.forEach((s, i) => {
    if (!QUOTA_SCOPES.includes(s)) errs.push(field.notSupported(spec.child('scopes').index(i), s, QUOTA_SCOPES));
  });
  for (const [a, b] of [
    ['Terminating', 'NotTerminating'],
    ['BestEffort', 'NotBestEffort'],
  ]) {
    if (scopes.includes(a as string) && scopes.includes(b as string)) {
      errs.push(field.invalid(spec.child('scopes'), scopes, 'conflicting scopes'));
    }
  }
  return errs;
}

/** The strategy of `resourcequotas`. */
export function resourceQuotaStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateResourceQuota(obj as ResourceQuota),
    validateUpdate: (_ctx, obj) => validateResourceQuota(obj as ResourceQuota),
  });
}

/** The strategy of `resourcequotas/status`. */
export function resourceQuotaStatusStrategy(): UpdateStrategy {
  return statusStrategy({
    validateUpdate: (_ctx, obj) => {
      const rq = obj as ResourceQuota;
      const status = new FieldPath('status');
      return [
        ...validateQuantities(rq.status?.hard, status.child('hard')),
        ...validateQuantities(rq.status?.used, status.child('used')),
      ];
    },
  });
}
