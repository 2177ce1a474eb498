/**
 * The Lease strategy (model: Kubernetes 1.21 `pkg/apis/coordination/validation.ValidateLease`): the lease duration
 * is positive and the transition count non-negative.
 */
import { type FieldError, FieldPath, field, type Kind, type Lease } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

/** Validation of a Lease. */
export function validateLease(lease: Lease): FieldError[] {
  const errs: FieldError[] = [];
  const spec = new FieldPath('spec');
  const duration = lease.spec?.leaseDurationSeconds;
  if (typeof duration === 'number' && duration <= 0) {
    errs.push(field.invalid(spec.child('leaseDurationSeconds'), duration, 'must be greater than 0'));
  }
  const transitions = lease.spec?.leaseTransitions;
  if (typeof transitions === 'number' && transitions < 0) {
    errs.push(field.invalid(spec.child('leaseTransitions'), transitions, 'must be greater than or equal to 0'));
  }
  return errs;
}

/** The strategy of `leases`. */
export function leaseStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateLease(obj as Lease),
    validateUpdate: (_ctx, obj) => validateLease(obj as Lease),
  });
}
