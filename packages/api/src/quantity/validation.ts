/**
 * Field validation of quantities, for strategies that check resource requests, limits and
 * capacities (Kubernetes `ValidateNonnegativeQuantity`, `ValidateResourceQuantityValue`).
 */
import { invalid, type FieldError, type FieldPath } from '../validation/field-errors';
import { IS_NEGATIVE_ERROR_MSG } from '../validation/object-meta';
import { parseQuantity, type Quantity } from './quantity';

/** The result of reading a quantity field: the value, or the errors that say why there is none. */
export interface QuantityFieldResult {
  quantity?: Quantity;
  errors: FieldError[];
}

/**
 * Reads a quantity from a decoded field value (a string, or a JSON number as Kubernetes also
 * accepts). Never throws: bad input becomes a `FieldValueInvalid` error at `path` whose detail is the
 * parse error (`quantities must match the regular expression ...`).
 */
export function parseQuantityField(value: unknown, path: FieldPath): QuantityFieldResult {
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else return { errors: [invalid(path, value, 'must be a quantity string such as "100m" or "1Gi"')] };
  try {
    return { quantity: parseQuantity(text), errors: [] };
  } catch (err) {
    return { errors: [invalid(path, value, (err as Error).message)] };
  }
}

/** Reports a negative quantity: `Invalid value: "-1": must be greater than or equal to 0`. */
export function validateNonnegativeQuantity(q: Quantity, path: FieldPath): FieldError[] {
  return q.sign() < 0 ? [invalid(path, q.toString(), IS_NEGATIVE_ERROR_MSG)] : [];
}

/** Reports a quantity that is not strictly positive: `must be greater than 0`. */
export function validatePositiveQuantity(q: Quantity, path: FieldPath): FieldError[] {
  return q.sign() <= 0 ? [invalid(path, q.toString(), 'must be greater than 0')] : [];
}

/**
 * Reports a quantity that is not a whole number of units, for resources that cannot be divided
 * (`must be an integer`), as Kubernetes does for extended resources and hugepages counts.
 */
export function validateIntegerQuantity(q: Quantity, path: FieldPath): FieldError[] {
  return q.cmp(q.roundUp(0)) !== 0 ? [invalid(path, q.toString(), 'must be an integer')] : [];
}
