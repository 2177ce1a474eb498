/**
 * Exact comparison of resource quantities for validation (requests ≤ limits, quotas): a quantity string
 * (`100m`, `1Gi`, `1.5e3`) read as a rational number, compared without rounding. `@platform/api` parses quantities
 * but does not export its parser through its root, which is the only import surface a package may use.
 * TODO(#4): use the api package's Quantity once it is exported.
 */

/** A non-negative or negative rational value `num / den` (den > 0). */
export interface QuantityValue {
  readonly num: bigint;
  readonly den: bigint;
}

const SUFFIXES: Record<string, [bigint, bigint]> = {
  '': [1n, 1n],
  n: [1n, 1_000_000_000n],
  u: [1n, 1_000_000n],
  m: [1n, 1000n],
  k: [1000n, 1n],
  M: [1_000_000n, 1n],
  G: [1_000_000_000n, 1n],
  T: [1_000_000_000_000n, 1n],
  P: [1_000_000_000_000_000n, 1n],
  E: [1_000_000_000_000_000_000n, 1n],
  Ki: [1n << 10n, 1n],
  Mi: [1n << 20n, 1n],
  Gi: [1n << 30n, 1n],
  Ti: [1n << 40n, 1n],
  Pi: [1n << 50n, 1n],
  Ei: [1n << 60n, 1n],
};

const QUANTITY_RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/;

/** The message Kubernetes gives for a malformed quantity. */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Reads a quantity (a string, or a JSON number); `undefined` when it is not one. */
export function parseQuantityValue(value: unknown): QuantityValue | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string' || text.length > 1024) return undefined;
  const m = QUANTITY_RE.exec(text.trim());
  if (!m) return undefined;
  const [, sign, digits = '', exponent, suffix = ''] = m;
  const [whole = '', frac = ''] = digits.split('.');
  let num = BigInt((whole || '0') + frac);
  let den = 10n ** BigInt(frac.length);
  if (exponent) {
    const e = Number(exponent.slice(1));
    if (Math.abs(e) > 100) return undefined;
    if (e >= 0) num *= 10n ** BigInt(e);
    else den *= 10n ** BigInt(-e);
  } else {
    const [mul, div] = SUFFIXES[suffix] as [bigint, bigint];
    num *= mul;
    den *= div;
  }
  return { num: sign === '-' ? -num : num, den };
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantities(a: QuantityValue, b: QuantityValue): -1 | 0 | 1 {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}
