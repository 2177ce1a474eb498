/**
 * Resource quantities (`100m`, `1.5Gi`, `1e3`), modelled on apimachinery `pkg/api/resource`
 * (`quantity.go`, `suffix.go`, `amount.go`) of Kubernetes 1.21. A quantity is an exact decimal,
 * `unscaled × 10^scale` with a bigint mantissa: no floating point is ever involved. Parsing keeps
 * nano precision, rounding any finer non-zero value away from zero (`0.1n` → `1n`); BinarySI values
 * are capped at 2^63-1 as Kubernetes does. The canonical string keeps the format family of the input
 * (binary `Ki`…`Ei`, decimal `n`…`E`, or exponent `e<N>`) with the largest suffix that loses nothing.
 * Like Kubernetes, a parsed string already in canonical form is printed back verbatim (so `+1` and
 * `1E3` print as given); arithmetic results are always printed canonically.
 */

/** How a quantity prints: `12Mi` (BinarySI), `12M` (DecimalSI) or `12e6` (DecimalExponent). */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

const SPLIT_RE_STRING = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

/** Message of a quantity whose text does not have the shape number + suffix. */
export const ERR_FORMAT_WRONG = `quantities must match the regular expression '${SPLIT_RE_STRING}'`;
/** Message of a quantity whose number part cannot be read. */
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
/** Message of a quantity with an unknown suffix. */
export const ERR_SUFFIX = "unable to parse quantity's suffix";

const BRAND = Symbol.for('@platform/api.QuantityParseError');

/** Thrown by `parseQuantity` for text that is not a quantity; the message is Kubernetes'. */
export class QuantityParseError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'QuantityParseError';
}

/** Brand check for `QuantityParseError` (works across duplicate copies of this package). */
export function isQuantityParseError(err: unknown): err is QuantityParseError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** Decimal scales of common SI prefixes, for `scaledValue` and `newScaledQuantity`. */
export const QuantityScale = {
  Nano: -9,
  Micro: -6,
  Milli: -3,
  Unit: 0,
  Kilo: 3,
  Mega: 6,
  Giga: 9,
  Tera: 12,
  Peta: 15,
  Exa: 18,
} as const;

const DEC_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const DEC_SUFFIX_BY_EXP: ReadonlyMap<number, string> = new Map([...DEC_SUFFIXES].map(([s, e]) => [e, s]));
const BIN_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const BIN_SUFFIX_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** Parsed exponents beyond this magnitude are refused: no real quantity needs them, and they would cost memory. */
const MAX_EXPONENT = 10000;
/** Longest quantity text accepted. Real quantities are a few dozen characters; huge digit strings cost quadratic time. */
export const MAX_QUANTITY_LENGTH = 1024;
const MAX_INT64 = 2n ** 63n - 1n;
const SUFFIX_CHARS = 'eEinumkKMGTP';

const POW10_CACHE: bigint[] = [];
function pow10(n: number): bigint {
  if (n < 64) {
    let v = POW10_CACHE[n];
    if (v === undefined) {
      v = 10n ** BigInt(n);
      POW10_CACHE[n] = v;
    }
    return v;
  }
  return 10n ** BigInt(n);
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/** Divides rounding away from zero (the `inf.RoundUp` of Go). `d` > 0. */
function divAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  if (q * d === n) return q;
  return n < 0n ? q - 1n : q + 1n;
}

function digitCount(n: bigint): number {
  return (n < 0n ? -n : n).toString().length;
}

/**
 * An exact, immutable decimal quantity. Create with `parseQuantity`, `mustParseQuantity` or the
 * `new…Quantity` constructors; all operations return new quantities.
 */
export class Quantity {
  /** @internal Mantissa: the value is `unscaled × 10^scale`. */
  readonly unscaled: bigint;
  /** @internal Decimal exponent of `unscaled`. */
  readonly scale: number;
  /** How the quantity prints. */
  readonly format: QuantityFormat;
  private memo: string | undefined;

  /** @internal use the constructors. */
  constructor(unscaled: bigint, scale: number, format: QuantityFormat, memo?: string) {
    this.unscaled = unscaled;
    this.scale = unscaled === 0n ? 0 : scale;
    this.format = format;
    this.memo = memo;
  }

  /** The value as `[unscaled, scale]` aligned to `scale` (≤ this scale), exactly. */
  private at(scale: number): bigint {
    return this.scale === scale ? this.unscaled : this.unscaled * pow10(this.scale - scale);
  }

  /** True when the value is zero. */
  isZero(): boolean {
    return this.unscaled === 0n;
  }

  /** -1, 0 or 1 according to the sign of the value. */
  sign(): -1 | 0 | 1 {
    return this.unscaled === 0n ? 0 : this.unscaled < 0n ? -1 : 1;
  }

  /** Compares values: -1 when this < other, 0 when equal, 1 when greater. Formats are ignored. */
  cmp(other: Quantity): -1 | 0 | 1 {
    const s1 = this.sign();
    const s2 = other.sign();
    if (s1 !== s2) return s1 < s2 ? -1 : 1;
    if (s1 === 0) return 0;
    // Magnitudes far apart need no alignment (which could be costly for large scale differences).
    const m1 = digitCount(this.unscaled) + this.scale;
    const m2 = digitCount(other.unscaled) + other.scale;
    if (m1 !== m2) {
      const largerMagnitude = m1 > m2;
      return largerMagnitude === s1 > 0 ? 1 : -1;
    }
    const scale = Math.min(this.scale, other.scale);
    const a = this.at(scale);
    const b = other.at(scale);
    return a === b ? 0 : a < b ? -1 : 1;
  }

  /** True when both quantities have the same value (formats may differ: `1k` equals `1e3`). */
  equals(other: Quantity): boolean {
    return this.cmp(other) === 0;
  }

  /** Compares with an integer: -1, 0 or 1. */
  cmpInt(n: number | bigint): -1 | 0 | 1 {
    return this.cmp(newQuantity(n, this.format));
  }

  /** The sum. The result keeps this quantity's format, or takes `y`'s when this one is zero. */
  add(y: Quantity): Quantity {
    const scale = Math.min(this.scale, y.scale);
    return new Quantity(this.at(scale) + y.at(scale), scale, this.isZero() ? y.format : this.format);
  }

  /** The difference `this - y`; format as for `add`. */
  sub(y: Quantity): Quantity {
    const scale = Math.min(this.scale, y.scale);
    return new Quantity(this.at(scale) - y.at(scale), scale, this.isZero() ? y.format : this.format);
  }

  /** The negated value, same format. */
  neg(): Quantity {
    return new Quantity(-this.unscaled, this.scale, this.format);
  }

  /** The absolute value, same format. */
  abs(): Quantity {
    return this.unscaled < 0n ? this.neg() : this;
  }

  /** The same value printed in another format. */
  withFormat(format: QuantityFormat): Quantity {
    return format === this.format ? this : new Quantity(this.unscaled, this.scale, format);
  }

  /**
   * `ceil(|q| / 10^scale)` with the sign of q: the value in units of 10^scale, rounded up away
   * from zero (`scaledValue(-3)` is the milli-value). Exact, as a bigint.
   */
  scaledValue(scale: number): bigint {
    if (this.scale >= scale) return this.unscaled * pow10(this.scale - scale);
    return divAwayFromZero(this.unscaled, pow10(scale - this.scale));
  }

  /** The value rounded up away from zero to an integer (Kubernetes `Value()`), e.g. `1.2` → 2, `-1.2` → -2. */
  value(): bigint {
    return this.scaledValue(0);
  }

  /** The value in thousandths, rounded up away from zero (Kubernetes `MilliValue()`), e.g. `0.1m` → 1. */
  milliValue(): bigint {
    return this.scaledValue(-3);
  }

  /** `value()` as a number; exact below 2^53, approximate above. */
  valueNumber(): number {
    return Number(this.value());
  }

  /** `milliValue()` as a number; exact below 2^53, approximate above. */
  milliValueNumber(): number {
    return Number(this.milliValue());
  }

  /** The value as the nearest float (for display or ratios only, never for accounting). */
  asApproximateFloat64(): number {
    return Number(`${this.unscaled}e${this.scale}`);
  }

  /** The quantity rounded up away from zero to a multiple of 10^scale (`roundUp(0)` → whole units). */
  roundUp(scale: number): Quantity {
    if (this.scale >= scale) return this;
    return new Quantity(divAwayFromZero(this.unscaled, pow10(scale - this.scale)), scale, this.format);
  }

  /**
   * The printed form, as Kubernetes' `String()`: the parsed text when it was already canonical,
   * else the canonical form (see `canonicalString`).
   */
  toString(): string {
    if (this.memo === undefined) this.memo = this.canonicalString();
    return this.memo;
  }

  /** The JSON form: the string of `toString()`. */
  toJSON(): string {
    return this.toString();
  }

  /**
   * The canonical form: no fractional digits and the largest suffix of the format that loses no
   * precision (`1.5` → `1500m`, `1.5Gi` → `1536Mi`, `1000` → `1k`). A BinarySI value below 1024
   * in magnitude, or not a whole number, prints as DecimalSI; a DecimalSI value beyond the `E`
   * suffix prints with an exponent (`1e21`).
   */
  canonicalString(): string {
    if (this.unscaled === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      const a = this.unscaled < 0n ? -this.unscaled : this.unscaled;
      if (this.cmpAbsSmall(a, 1024n) || (this.scale < 0 && a % pow10(-this.scale) !== 0n)) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let v = this.at(Math.min(this.scale, 0));
      if (this.scale < 0) v /= pow10(-this.scale); // exact: checked above
      let power = 0;
      while (power < 6 && v % 1024n === 0n) {
        v /= 1024n;
        power++;
      }
      return `${v}${BIN_SUFFIX_BY_POWER[power] as string}`;
    }
    let u = this.unscaled;
    let exp = this.scale;
    if (u % 10n === 0n) {
      // Strip factors of ten through the decimal text: linear, where repeated division is quadratic.
      const text = u.toString();
      let end = text.length;
      while (text.charCodeAt(end - 1) === 48) end--;
      exp += text.length - end;
      u = BigInt(text.slice(0, end));
    }
    const rem = ((exp % 3) + 3) % 3;
    if (rem !== 0) {
      u *= pow10(rem);
      exp -= rem;
    }
    if (format === 'DecimalSI') {
      const suffix = DEC_SUFFIX_BY_EXP.get(exp);
      if (suffix !== undefined) return `${u}${suffix}`;
    }
    return exp === 0 ? `${u}` : `${u}e${exp}`;
  }

  /** True when |value| (whose mantissa magnitude is `absUnscaled`) < n, for a small integer n. */
  private cmpAbsSmall(absUnscaled: bigint, n: bigint): boolean {
    if (this.scale >= 0) return digitCount(absUnscaled) + this.scale <= 4 && absUnscaled * pow10(this.scale) < n;
    return absUnscaled < n * pow10(-this.scale);
  }
}

/** A quantity of `value` units (an integer), printed in `format`. */
export function newQuantity(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
  return new Quantity(toBigInt(value), 0, format);
}

/** A quantity of `value` thousandths (an integer), printed in `format`. */
export function newMilliQuantity(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
  return new Quantity(toBigInt(value), -3, format);
}

/** A DecimalSI quantity `value × 10^scale` (see `QuantityScale`). */
export function newScaledQuantity(value: number | bigint, scale: number): Quantity {
  if (!Number.isInteger(scale)) throw new RangeError(`scale must be an integer, got ${scale}`);
  return new Quantity(toBigInt(value), scale, 'DecimalSI');
}

function toBigInt(value: number | bigint): bigint {
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`quantity value must be a safe integer or a bigint, got ${value}`);
  }
  return BigInt(value);
}

const ZERO = new Quantity(0n, 0, 'DecimalSI', '0');

interface Scanned {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
  hasDigits: boolean;
}

/** The fast scanner of Kubernetes' `parseQuantityString`. */
function scan(str: string): Scanned {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  const numberStart = pos;
  while (pos < end && str[pos] === '0') pos++;
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  const num = str.slice(pos, i) || '0';
  pos = i;
  let denom = '';
  if (pos < end && str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    pos = i;
  }
  const hasDigits = /[0-9]/.test(str.slice(numberStart, pos));
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos] as string)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityParseError(ERR_FORMAT_WRONG);
  return { positive, num, denom, suffix: str.slice(suffixStart), hasDigits };
}

function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } {
  const dec = DEC_SUFFIXES.get(suffix);
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BIN_SUFFIXES.get(suffix);
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const rest = suffix.slice(1);
    if (/^[+-]?[0-9]+$/.test(rest)) {
      const e = Number(rest);
      if (Math.abs(e) <= MAX_EXPONENT) return { base: 10, exponent: e, format: 'DecimalExponent' };
    }
  }
  throw new QuantityParseError(ERR_SUFFIX);
}

/**
 * Parses a quantity (`100m`, `1.5Gi`, `1e3`, `-1`, `+1`, `.5`, `1.`). Throws `QuantityParseError`
 * with Kubernetes' message when the text is not a quantity: `quantities must match the regular
 * expression ...`, `unable to parse quantity's suffix` (unknown suffix, or an exponent beyond ±10000),
 * `quantity is too long` (more than `MAX_QUANTITY_LENGTH` characters).
 * Unlike Kubernetes, a text with no digit at all (`-`, `.`, `Ki`) is refused rather than read as 0.
 */
export function parseQuantity(str: string): Quantity {
  if (typeof str !== 'string' || str.length === 0) throw new QuantityParseError(ERR_FORMAT_WRONG);
  if (str === '0') return ZERO;
  if (str.length > MAX_QUANTITY_LENGTH) {
    throw new QuantityParseError(`quantity is too long: ${str.length} characters, at most ${MAX_QUANTITY_LENGTH}`);
  }
  const { positive, num, denom, suffix, hasDigits } = scan(str);
  if (!hasDigits) throw new QuantityParseError(ERR_FORMAT_WRONG);
  const { base, exponent, format } = interpretSuffix(suffix);

  // Trailing zeros go into the scale, keeping the mantissa small (`1` + 300 zeros is 1e300).
  const digits = num + denom;
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) === 48) end--;
  let unscaled = BigInt(digits.slice(0, end));
  if (!positive) unscaled = -unscaled;
  let scale = -denom.length + (digits.length - end);
  if (base === 10) scale += exponent;
  else unscaled *= 1n << BigInt(exponent);

  // Kubernetes keeps the input text when its fast int64 path sees it is already canonical.
  // Its scale there is the suffix exponent less the fraction digits (zeros not folded in).
  let memo: string | undefined;
  const shifted = digits;
  if (base === 10) {
    const goScale = exponent - denom.length;
    const fast = 18 - shifted.length >= 0 && goScale >= -9;
    if (fast && goScale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0') memo = str;
  } else if (denom.length === 0) {
    const precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    if (precision >= 0 && (BigInt(num) & 7n) !== 0n) memo = str;
  }

  let q: Quantity;
  if (scale < -9) {
    // Keep nano precision, rounding any finer non-zero part away from zero.
    const shift = -9 - scale;
    const rounded =
      digitCount(unscaled) < shift
        ? unscaled === 0n
          ? 0n
          : unscaled < 0n
            ? -1n
            : 1n
        : divAwayFromZero(unscaled, pow10(shift));
    q = new Quantity(rounded, -9, format);
  } else {
    q = new Quantity(unscaled, scale, format, memo);
  }
  if (format === 'BinarySI') {
    const abs = q.abs();
    if (abs.cmp(new Quantity(MAX_INT64, 0, 'BinarySI')) > 0) {
      q = new Quantity(positive ? MAX_INT64 : -MAX_INT64, 0, 'BinarySI');
    } else if (!abs.isZero() && abs.cmp(new Quantity(1n, 0, 'BinarySI')) < 0) {
      q = q.withFormat('DecimalSI');
    }
  }
  return q;
}

/** Parses a quantity known to be valid (constants, tests); throws `cannot parse '<s>': <reason>` otherwise. */
export function mustParseQuantity(str: string): Quantity {
  try {
    return parseQuantity(str);
  } catch (err) {
    throw new QuantityParseError(`cannot parse '${str}': ${(err as Error).message}`);
  }
}

/** Short name of `mustParseQuantity`, as Kubernetes' `resource.MustParse`. */
export const mustParse = mustParseQuantity;

/**
 * Reads a quantity from decoded JSON as Kubernetes does: a string (surrounding spaces ignored) or a
 * number (`1.5`), and `null` as zero. Throws `QuantityParseError` for anything else.
 */
export function quantityFromJSON(value: unknown): Quantity {
  if (value === null) return ZERO;
  if (typeof value === 'string') return parseQuantity(value.trim());
  if (typeof value === 'number' && Number.isFinite(value)) return parseQuantity(String(value));
  throw new QuantityParseError(
    `quantity must be a string or a number, got ${Array.isArray(value) ? 'array' : typeof value}`,
  );
}

/** The zero quantity (DecimalSI). */
export function zeroQuantity(): Quantity {
  return ZERO;
}

/** The larger of two quantities (the first when equal). */
export function maxQuantity(a: Quantity, b: Quantity): Quantity {
  return b.cmp(a) > 0 ? b : a;
}

/** The smaller of two quantities (the first when equal). */
export function minQuantity(a: Quantity, b: Quantity): Quantity {
  return b.cmp(a) < 0 ? b : a;
}
