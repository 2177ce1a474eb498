/**
 * The PodDisruptionBudget strategy (model: Kubernetes 1.21 `pkg/registry/policy/poddisruptionbudget/strategy.go`,
 * `ValidatePodDisruptionBudgetSpec`): minAvailable or maxUnavailable, never both, each a non-negative integer or a
 * percentage of at most 100%; a valid selector.
 */
import {
  type FieldError,
  FieldPath,
  field,
  type Kind,
  type PodDisruptionBudget,
  validateLabelSelector,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { validateIntOrPercent } from '../../apps/replicaset/validation';

/** Validation of a PodDisruptionBudget. */
export function validatePodDisruptionBudget(pdb: PodDisruptionBudget): FieldError[] {
  const spec = pdb.spec;
  const path = new FieldPath('spec');
  const errs: FieldError[] = [];
  if (!spec) return errs;
  if (
    spec.minAvailable !== undefined &&
    spec.minAvailable !== null &&
    spec.maxUnavailable !== undefined &&
    spec.maxUnavailable !== null
  ) {
    errs.push(field.invalid(path, spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  errs.push(...validateIntOrPercent(spec.minAvailable, path.child('minAvailable'), true));
  errs.push(...validateIntOrPercent(spec.maxUnavailable, path.child('maxUnavailable'), true));
  if (spec.selector) errs.push(...validateLabelSelector(spec.selector, path.child('selector')));
  return errs;
}

/** The strategy of `poddisruptionbudgets` (policy/v1 and v1beta1). */
export function podDisruptionBudgetStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validatePodDisruptionBudget(obj as PodDisruptionBudget),
    validateUpdate: (_ctx, obj) => validatePodDisruptionBudget(obj as PodDisruptionBudget),
  });
}
