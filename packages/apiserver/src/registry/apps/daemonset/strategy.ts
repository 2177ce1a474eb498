/**
 * The DaemonSet strategy (model: Kubernetes 1.21 `pkg/registry/apps/daemonset/strategy.go`, `ValidateDaemonSet`):
 * the workload rules (no replicas), the update strategy (maxUnavailable and maxSurge not both zero), and an
 * immutable selector.
 */
import { type DaemonSet, type FieldError, FieldPath, field, type Kind } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import {
  isZero,
  nonNegative,
  validateIntOrPercent,
  validateSelectorAndTemplate,
  validateSelectorUnchanged,
} from '../replicaset/validation';

/** Validation of a DaemonSet. */
export function validateDaemonSet(d: DaemonSet): FieldError[] {
  const spec = d.spec;
  const path = new FieldPath('spec');
  const errs: FieldError[] = [
    ...validateSelectorAndTemplate(spec?.selector, spec?.template, path, 'daemonset'),
    ...nonNegative(spec?.minReadySeconds, path.child('minReadySeconds')),
    ...nonNegative(spec?.revisionHistoryLimit, path.child('revisionHistoryLimit')),
  ];
  const us = spec?.updateStrategy;
  const up = path.child('updateStrategy');
  if (us?.type === 'RollingUpdate' || us?.type === undefined) {
    const ru = us?.rollingUpdate;
    if (ru) {
      const rp = up.child('rollingUpdate');
      errs.push(...validateIntOrPercent(ru.maxUnavailable, rp.child('maxUnavailable'), true));
      errs.push(...validateIntOrPercent(ru.maxSurge, rp.child('maxSurge'), true));
      if (isZero(ru.maxUnavailable) && (ru.maxSurge === undefined || isZero(ru.maxSurge))) {
        errs.push(field.invalid(rp.child('maxUnavailable'), ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
      }
    }
  } else if (us.type !== 'OnDelete') {
    errs.push(field.notSupported(up.child('type'), us.type, ['OnDelete', 'RollingUpdate']));
  }
  return errs;
}

/** The strategy of `daemonsets`. */
export function daemonSetStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateDaemonSet(obj as DaemonSet),
    validateUpdate: (_ctx, obj, old) => [
      ...validateDaemonSet(obj as DaemonSet),
      ...validateSelectorUnchanged(
        (obj as DaemonSet).spec?.selector,
        (old as DaemonSet).spec?.selector,
        new FieldPath('spec', 'selector'),
      ),
    ],
  });
}
