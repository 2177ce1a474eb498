/**
 * The StatefulSet strategy (model: Kubernetes 1.21 `pkg/registry/apps/statefulset/strategy.go`,
 * `ValidateStatefulSet`, `ValidateStatefulSetUpdate`): the workload rules, the pod management policy and update
 * strategy, and an update that changes nothing of the spec but replicas, template and updateStrategy.
 */
import { type FieldError, FieldPath, field, type Kind, semanticEqual, type StatefulSet } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { nonNegative, validateSelectorAndTemplate } from '../replicaset/validation';

/** Validation of a StatefulSet. */
export function validateStatefulSet(s: StatefulSet): FieldError[] {
  const spec = s.spec;
  const path = new FieldPath('spec');
  const errs: FieldError[] = [
    ...nonNegative(spec?.replicas, path.child('replicas')),
    ...nonNegative(spec?.revisionHistoryLimit, path.child('revisionHistoryLimit')),
    ...validateSelectorAndTemplate(spec?.selector, spec?.template, path, 'statefulset'),
  ];
  const policy = spec?.podManagementPolicy;
  if (policy !== undefined && policy !== 'OrderedReady' && policy !== 'Parallel') {
    errs.push(field.notSupported(path.child('podManagementPolicy'), policy, ['OrderedReady', 'Parallel']));
  }
  const us = spec?.updateStrategy;
  const up = path.child('updateStrategy');
  if (us?.type === 'OnDelete') {
    if (us.rollingUpdate) {
      errs.push(
        field.invalid(up.child('rollingUpdate'), us.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"),
      );
    }
  } else if (us?.type === 'RollingUpdate' || us?.type === undefined) {
    errs.push(...nonNegative(us?.rollingUpdate?.partition, up.child('rollingUpdate', 'partition')));
  } else {
    errs.push(field.notSupported(up.child('type'), us.type, ['OnDelete', 'RollingUpdate']));
  }
  return errs;
}

/** Validation of a StatefulSet update: only replicas, template and updateStrategy of the spec change. */
export function validateStatefulSetUpdate(s: StatefulSet, old: StatefulSet): FieldError[] {
  const errs = validateStatefulSet(s);
  const strip = (x: StatefulSet): unknown => {
    const {
      replicas: _r,
      template: _t,
      updateStrategy: _u,
      ...rest
    } = x.spec ?? ({} as NonNullable<StatefulSet['spec']>);
    return rest;
  };
  if (!semanticEqual(strip(s), strip(old))) {
    errs.push(
      field.forbidden(
        new FieldPath('spec'),
        "updates to statefulset spec for fields other than 'replicas', 'template', and 'updateStrategy' are forbidden",
      ),
    );
  }
  return errs;
}

/** The strategy of `statefulsets`. */
export function statefulSetStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateStatefulSet(obj as StatefulSet),
    validateUpdate: (_ctx, obj, old) => validateStatefulSetUpdate(obj as StatefulSet, old as StatefulSet),
  });
}
