/**
 * The ReplicationController strategies (model: Kubernetes 1.21 `pkg/registry/core/replicationcontroller/strategy.go`,
 * `ValidateReplicationController`): a non-empty selector that matches the template's labels, replicas and
 * minReadySeconds non-negative, a template with restart policy Always; status counts non-negative.
 */
import {
  type FieldError,
  FieldPath,
  field,
  type Kind,
  type ReplicationController,
  selectorFromSet,
  validateLabels,
} from '@platform/api';

import { defaultStrategy, statusStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { validatePodTemplateSpec } from '../pod/validation';

function nonNegative(value: number | null | undefined, path: FieldPath): FieldError[] {
  return typeof value === 'number' && value < 0
    ? [field.invalid(path, value, 'must be greater than or equal to 0')]
    : [];
}

/** Validation of a ReplicationController. */
export function validateReplicationController(rc: ReplicationController): FieldError[] {
  const spec = rc.spec ?? {};
  const path = new FieldPath('spec');
  const errs: FieldError[] = [
    ...nonNegative(spec.replicas, path.child('replicas')),
    ...nonNegative(spec.minReadySeconds, path.child('minReadySeconds')),
  ];
  const selector = spec.selector ?? {};
  if (Object.keys(selector).length === 0) errs.push(field.required(path.child('selector'), ''));
  else errs.push(...validateLabels(selector, path.child('selector')));
  if (!spec.template) {
    errs.push(field.required(path.child('template'), ''));
    return errs;
  }
  const labels = spec.template.metadata?.labels ?? {};
  if (Object.keys(selector).length && !selectorFromSet(selector).matches(labels)) {
    errs.push(
      field.invalid(
        path.child('template', 'metadata', 'labels'),
        labels,
        '`selector` does not match template `labels`',
      ),
    );
  }
  errs.push(...validatePodTemplateSpec(spec.template, path.child('template'), ['Always']));
  return errs;
}

/** The status counts of the workload kinds, none of which may be negative. */
export const STATUS_COUNTS = [
  'replicas',
  'fullyLabeledReplicas',
  'readyReplicas',
  'availableReplicas',
  'updatedReplicas',
  'currentReplicas',
  'unavailableReplicas',
  'observedGeneration',
  'collisionCount',
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'active',
  'succeeded',
  'failed',
];

/** Validation of the status of a workload kind: every count non-negative. */
export function validateReplicaCounts(status: Record<string, unknown> | undefined): FieldError[] {
  const path = new FieldPath('status');
  const errs: FieldError[] = [];
  for (const k of STATUS_COUNTS) {
    const v = status?.[k];
    if (typeof v === 'number') errs.push(...nonNegative(v, path.child(k)));
  }
  return errs;
}

/** The strategy of `replicationcontrollers`. */
export function replicationControllerStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateReplicationController(obj as ReplicationController),
    validateUpdate: (_ctx, obj) => validateReplicationController(obj as ReplicationController),
  });
}

/** The strategy of `replicationcontrollers/status`. */
export function replicationControllerStatusStrategy(): UpdateStrategy {
  return statusStrategy({
    validateUpdate: (_ctx, obj) => validateReplicaCounts((obj as { status?: Record<string, unknown> }).status),
  });
}
