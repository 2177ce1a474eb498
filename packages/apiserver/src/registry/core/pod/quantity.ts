/**
 * Quantities as the strategies read them: a field value (a string, or a JSON number as Kubernetes also accepts)
 * parsed with the API's Quantity, never throwing. Malformed values are reported with the API's parse message.
 */
import { FieldPath, parseQuantityField, type Quantity } from '@platform/api';

/** A parsed quantity. */
export type QuantityValue = Quantity;

/** Reads a quantity; `undefined` when the value is not one. */
export function parseQuantityValue(value: unknown): QuantityValue | undefined {
  return parseQuantityField(value, new FieldPath()).quantity;
}

/** Why a value is not a quantity (the API's parse error, as Kubernetes words it). */
export function quantityError(value: unknown): string {
  return parseQuantityField(value, new FieldPath()).errors[0]?.detail ?? '';
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantities(a: QuantityValue, b: QuantityValue): -1 | 0 | 1 {
  return a.cmp(b);
}
