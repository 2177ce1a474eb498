/**
 * The Deployment strategy (model: Kubernetes 1.21 `pkg/registry/apps/deployment/strategy.go`,
 * `ValidateDeployment`): the workload rules, plus the rollout strategy (Recreate takes no rollingUpdate; maxSurge
 * and maxUnavailable are not both zero; maxUnavailable at most 100%) and progressDeadlineSeconds beyond
 * minReadySeconds. The selector is immutable.
 */
import { type Deployment, type FieldError, FieldPath, field, type Kind } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import {
  isZero,
  nonNegative,
  validateIntOrPercent,
  validateSelectorAndTemplate,
  validateSelectorUnchanged,
} from '../replicaset/validation';

/** Validation of a Deployment. */
export function validateDeployment(d: Deployment): FieldError[] {
  const spec = d.spec;
  const path = new FieldPath('spec');
  const errs: FieldError[] = [
    ...nonNegative(spec?.replicas, path.child('replicas')),
    ...validateSelectorAndTemplate(spec?.selector, spec?.template, path, 'deployment'),
    ...nonNegative(spec?.minReadySeconds, path.child('minReadySeconds')),
    ...nonNegative(spec?.revisionHistoryLimit, path.child('revisionHistoryLimit')),
  ];
  const strategy = spec?.strategy;
  const sp = path.child('strategy');
  if (strategy?.type === 'Recreate') {
    if (strategy.rollingUpdate) {
      errs.push(field.forbidden(sp.child('rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (strategy?.type === 'RollingUpdate' || strategy?.type === undefined) {
    const ru = strategy?.rollingUpdate;
    if (ru) {
      const rp = sp.child('rollingUpdate');
      errs.push(...validateIntOrPercent(ru.maxUnavailable, rp.child('maxUnavailable'), true));
      errs.push(...validateIntOrPercent(ru.maxSurge, rp.child('maxSurge'), false));
      if (isZero(ru.maxUnavailable) && isZero(ru.maxSurge)) {
        errs.push(field.invalid(rp.child('maxUnavailable'), ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
      }
    }
  } else {
    errs.push(field.notSupported(sp.child('type'), strategy.type, ['Recreate', 'RollingUpdate']));
  }
  const pds = spec?.progressDeadlineSeconds;
  if (typeof pds === 'number') {
    errs.push(...nonNegative(pds, path.child('progressDeadlineSeconds')));
    if (pds <= (spec?.minReadySeconds ?? 0)) {
      errs.push(field.invalid(path.child('progressDeadlineSeconds'), pds, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

/** The strategy of `deployments`. */
export function deploymentStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateDeployment(obj as Deployment),
    validateUpdate: (_ctx, obj, old) => [
      ...validateDeployment(obj as Deployment),
      ...validateSelectorUnchanged(
        (obj as Deployment).spec?.selector,
        (old as Deployment).spec?.selector,
        new FieldPath('spec', 'selector'),
      ),
    ],
  });
}
