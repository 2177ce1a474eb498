/**
 * The ReplicaSet strategies (model: Kubernetes 1.21 `pkg/registry/apps/replicaset/strategy.go`,
 * `ValidateReplicaSet`): replicas and minReadySeconds non-negative, selector and template as every workload, the
 * selector immutable; the status subresource keeps its counts non-negative.
 */
import { type FieldError, FieldPath, type Kind, type ReplicaSet } from '@platform/api';

import { defaultStrategy, statusStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { validateReplicaCounts } from '../../core/replicationcontroller/strategy';
import { nonNegative, validateSelectorAndTemplate, validateSelectorUnchanged } from './validation';

/** Validation of a ReplicaSet. */
export function validateReplicaSet(rs: ReplicaSet): FieldError[] {
  const spec = rs.spec;
  const path = new FieldPath('spec');
  return [
    ...nonNegative(spec?.replicas, path.child('replicas')),
    ...nonNegative(spec?.minReadySeconds, path.child('minReadySeconds')),
    ...validateSelectorAndTemplate(spec?.selector, spec?.template, path, 'ReplicaSet'),
  ];
}

/** The strategy of `replicasets`. */
export function replicaSetStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateReplicaSet(obj as ReplicaSet),
    validateUpdate: (_ctx, obj, old) => [
      ...validateReplicaSet(obj as ReplicaSet),
      ...validateSelectorUnchanged(
        (obj as ReplicaSet).spec?.selector,
        (old as ReplicaSet).spec?.selector,
        new FieldPath('spec', 'selector'),
      ),
    ],
  });
}

/** The status strategy of the replicated kinds: counts non-negative. */
export function replicaCountsStatusStrategy(): UpdateStrategy {
  return statusStrategy({
    validateUpdate: (_ctx, obj) => validateReplicaCounts((obj as { status?: Record<string, unknown> }).status),
  });
}
