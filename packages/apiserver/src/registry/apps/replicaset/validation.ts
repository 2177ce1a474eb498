/**
 * Validation shared by the apps/v1 workload kinds (model: Kubernetes 1.21 `pkg/apis/apps/validation/validation.go`):
 * a non-empty selector that matches the template's labels, a pod template whose pods restart Always, counts that
 * are never negative, int-or-percent rollout parameters, and a selector that never changes.
 */
import {
  type FieldError,
  type FieldPath,
  field,
  isValidPercent,
  type LabelSelector,
  labelSelectorAsSelector,
  type PodTemplateSpec,
  semanticEqual,
  validateLabelSelector,
} from '@platform/api';

import { validatePodTemplateSpec } from '../../core/pod/validation';

/** `value` (optional) is not negative. */
export function nonNegative(value: number | null | undefined, path: FieldPath): FieldError[] {
  return typeof value === 'number' && value < 0
    ? [field.invalid(path, value, 'must be greater than or equal to 0')]
    : [];
}

/**
 * `spec.selector` and `spec.template` of a workload (model: `ValidateDeploymentSpec`'s selector part and
 * `ValidatePodTemplateSpecForReplicaSet`): the selector is present, valid and not empty, the template matches it,
 * its pods restart Always, and it sets no activeDeadlineSeconds.
 */
export function validateSelectorAndTemplate(
  selector: LabelSelector | null | undefined,
  template: PodTemplateSpec | null | undefined,
  path: FieldPath,
  kindName: string,
): FieldError[] {
  const errs: FieldError[] = [];
  let matches: ((labels: Record<string, string>) => boolean) | undefined;
  if (!selector) errs.push(field.required(path.child('selector'), ''));
  else {
    const selErrs = validateLabelSelector(selector, path.child('selector'));
    errs.push(...selErrs);
    if (Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0) {
      errs.push(field.invalid(path.child('selector'), selector, `empty selector is invalid for ${kindName}`));
    } else if (selErrs.length === 0) {
      try {
        const sel = labelSelectorAsSelector(selector);
        matches = (labels) => sel.matches(labels);
      } catch {
        // Reported by validateLabelSelector.
      }
    }
  }
  if (!template) {
    errs.push(field.required(path.child('template'), ''));
    return errs;
  }
  const labels = template.metadata?.labels ?? {};
  if (matches && !matches(labels)) {
    errs.push(
      field.invalid(
        path.child('template', 'metadata', 'labels'),
        labels,
        '`selector` does not match template `labels`',
      ),
    );
  }
  const tp = path.child('template');
  errs.push(...validatePodTemplateSpec(template, tp, ['Always']));
  if (template.spec?.activeDeadlineSeconds !== undefined && template.spec.activeDeadlineSeconds !== null) {
    errs.push(
      field.forbidden(
        tp.child('spec', 'activeDeadlineSeconds'),
        `activeDeadlineSeconds in ${kindName} is not Supported`,
      ),
    );
  }
  return errs;
}

/** An int-or-percent rollout parameter: a non-negative integer, or a percentage (at most 100% when `max100`). */
export function validateIntOrPercent(
  value: number | string | null | undefined,
  path: FieldPath,
  max100: boolean,
): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'number') return nonNegative(value, path);
  const msgs = isValidPercent(value);
  if (msgs.length) return field.invalidEach(path, value, msgs);
  if (max100 && Number(value.slice(0, -1)) > 100) return [field.invalid(path, value, 'must not be greater than 100%')];
  return [];
}

/** Whether an int-or-percent value is zero (`0` or `"0%"`). */
export function isZero(value: number | string | null | undefined): boolean {
  return value === 0 || value === '0%';
}

/** apps/v1 selectors are immutable (`field is immutable`). */
export function validateSelectorUnchanged(selector: unknown, old: unknown, path: FieldPath): FieldError[] {
  return semanticEqual(selector, old) ? [] : [field.invalid(path, selector, 'field is immutable')];
}
