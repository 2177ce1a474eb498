/**
 * The RuntimeClass strategy (model: Kubernetes 1.21 `pkg/apis/node/validation.ValidateRuntimeClass`): the handler is
 * a DNS-1123 label and never changes; the overhead's quantities are not negative; the scheduling node selector's
 * labels and tolerations are valid.
 */
import {
  type FieldError,
  FieldPath,
  field,
  isDNS1123Label,
  type Kind,
  parseQuantity,
  type RuntimeClass,
  validateImmutableField,
  validateLabels,
} from '@platform/api';

import { validateTolerations } from '../core/pod/validation';
import { defaultStrategy } from '../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../rest/rest';

/** True for a quantity below zero (a malformed one is the structural decoder's to reject). */
export function isNegative(q: string): boolean {
  try {
    return parseQuantity(q).sign() < 0;
  } catch {
    return false;
  }
}

/** Validation of a RuntimeClass. */
export function validateRuntimeClass(rc: RuntimeClass): FieldError[] {
  const errs = field.invalidEach(new FieldPath('handler'), rc.handler, isDNS1123Label(rc.handler ?? ''));
  for (const [name, q] of Object.entries(rc.overhead?.podFixed ?? {})) {
    const p = new FieldPath('overhead', 'podFixed').key(name);
    if (isNegative(String(q))) errs.push(field.invalid(p, q, 'must be greater than or equal to 0'));
  }
  if (rc.scheduling) {
    errs.push(...validateLabels(rc.scheduling.nodeSelector, new FieldPath('scheduling', 'nodeSelector')));
    errs.push(...validateTolerations(rc.scheduling.tolerations, new FieldPath('scheduling', 'tolerations')));
  }
  return errs;
}

/** The strategy of `runtimeclasses` (both versions). */
export function runtimeClassStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateRuntimeClass(obj as RuntimeClass),
    validateUpdate: (_ctx, obj, old) => [
      ...validateRuntimeClass(obj as RuntimeClass),
      ...validateImmutableField((obj as RuntimeClass).handler, (old as RuntimeClass).handler, new FieldPath('handler')),
    ],
  });
}
