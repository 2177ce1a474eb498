/**
 * The LimitRange strategy (model: Kubernetes 1.21 `ValidateLimitRange`): each item has a known type, at most once;
 * its quantities are valid; min ≤ defaultRequest ≤ default ≤ max for each resource; Pod items have no defaults;
 * PersistentVolumeClaim items limit storage.
 */
import { type FieldError, FieldPath, field, type Kind, type LimitRange } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { compareQuantities, parseQuantityValue, quantityError, type QuantityValue } from '../pod/quantity';

const LIMIT_TYPES = ['Container', 'PersistentVolumeClaim', 'Pod'];
const MAPS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** Validation of a LimitRange. */
export function validateLimitRange(lr: LimitRange): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (lr.spec?.limits ?? []).forEach((item, i) => {
    const p = new FieldPath('spec', 'limits').index(i);
    const type = item.type ?? '';
    if (!LIMIT_TYPES.includes(type)) errs.push(field.notSupported(p.child('type'), type, LIMIT_TYPES));
    if (seen.has(type)) errs.push(field.duplicate(p.child('type'), type));
    seen.add(type);
    const values: Partial<Record<(typeof MAPS)[number], Map<string, QuantityValue>>> = {};
    for (const m of MAPS) {
      const parsed = new Map<string, QuantityValue>();
      for (const [k, v] of Object.entries(item[m] ?? {})) {
        const q = parseQuantityValue(v);
        if (!q) errs.push(field.invalid(p.child(m).key(k), v, quantityError(v)));
        else if (q.sign() < 0) errs.push(field.invalid(p.child(m).key(k), v, 'must be greater than or equal to 0'));
        else parsed.set(k, q);
      }
      values[m] = parsed;
    }
    if (type === 'Pod') {
      if (Object.keys(item.default ?? {}).length)
        errs.push(field.forbidden(p.child('default'), "may not be specified when `type` is 'Pod'"));
      if (Object.keys(item.defaultRequest ?? {}).length) {
        errs.push(field.forbidden(p.child('defaultRequest'), "may not be specified when `type` is 'Pod'"));
      }
    }
    if (type === 'PersistentVolumeClaim' && !item.min?.storage && !item.max?.storage) {
      errs.push(
        field.required(
          p.child('limits'),
          'either minimum or maximum storage value is required, but neither was provided',
        ),
      );
    }
    const order: [(typeof MAPS)[number], (typeof MAPS)[number], string][] = [
      ['min', 'max', 'min value %a is greater than max value %b'],
      ['defaultRequest', 'default', 'default request value %a is greater than default limit value %b'],
      ['defaultRequest', 'max', 'default request value %a is greater than max value %b'],
      ['default', 'max', 'default value %a is greater than max value %b'],
      ['min', 'defaultRequest', 'min value %a is greater than default request value %b'],
      ['min', 'default', 'min value %a is greater than default value %b'],
    ];
    for (const [lo, hi, message] of order) {
      for (const [k, low] of values[lo] ?? []) {
        const high = values[hi]?.get(k);
        if (high && compareQuantities(low, high) > 0) {
          const a = String(item[lo]?.[k]);
          const b = String(item[hi]?.[k]);
          errs.push(field.invalid(p.child(lo).key(k), a, message.replace('%a', a).replace('%b', b)));
        }
      }
    }
  });
  return errs;
}

/** The strategy of `limitranges`. */
export function limitRangeStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateLimitRange(obj as LimitRange),
    validateUpdate: (_ctx, obj) => validateLimitRange(obj as LimitRange),
  });
}
