/**
 * Value parsers shared by every option family. Each takes the raw text of one occurrence of a flag and returns the
 * typed value or throws a {@link FlagValueError} whose message is the reason only (Go's wording where Kubernetes
 * uses a Go parser); {@link flagError} adds the pflag prefix `invalid argument "<v>" for "<flag>" flag: `.
 */
import { isIPv4, isIPv6 } from 'node:net';

import { goQuote, parseDuration } from './duration';

/** The reason a flag value was rejected; wrapped into a {@link FlagError} naming the flag. */
export class FlagValueError extends Error {
  readonly isFlagValueError = true;
  constructor(message: string) {
    super(message);
    this.name = 'FlagValueError';
  }
}

/**
 * A command-line problem that names the flag, worded like pflag:
 * `invalid argument "5x" for "--log-flush-frequency" flag: time: unknown unit "x" in duration "5x"`.
 */
export class FlagError extends Error {
  readonly isFlagError = true;
  constructor(
    message: string,
    readonly flag: string,
  ) {
    super(message);
    this.name = 'FlagError';
  }
}

/** Brand check for {@link FlagError} (works across module copies, unlike `instanceof`). */
export function isFlagError(err: unknown): err is FlagError {
  return typeof err === 'object' && err !== null && (err as { isFlagError?: unknown }).isFlagError === true;
}

/** Builds the pflag-style error for a rejected value of `flag` (e.g. `--v` or `-v, --v`). */
export function flagError(flag: string, value: string, reason: unknown): FlagError {
  const why = reason instanceof Error ? reason.message : String(reason);
  return new FlagError(`invalid argument ${goQuote(value)} for ${goQuote(flag)} flag: ${why}`, flag);
}

/** Go's `strconv.ParseBool`: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False. */
export function parseBool(s: string): boolean {
  switch (s) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
  }
  throw new FlagValueError(`strconv.ParseBool: parsing ${goQuote(s)}: invalid syntax`);
}

/** Bounds for {@link parseInt}; both inclusive. */
export interface IntRange {
  min?: number;
  max?: number;
}

/** The range of Go's int32, used by options the spec types as `int32`. */
export const INT32: IntRange = { min: -2147483648, max: 2147483647 };
/** The range of an unsigned 64-bit size as far as a JavaScript number is exact. */
export const UINT: IntRange = { min: 0, max: Number.MAX_SAFE_INTEGER };

/**
 * Decimal integer (Go `strconv.ParseInt` base 0 subset: optional sign, digits, `0x` hex). Outside `range` the
 * message says which bounds apply.
 */
export function parseInteger(s: string, range: IntRange = {}): number {
  const t = s.trim() === s ? s : '';
  let n: number;
  if (/^[+-]?[0-9]+$/.test(t)) n = Number(t);
  else if (/^[+-]?0[xX][0-9a-fA-F]+$/.test(t)) n = t.startsWith('-') ? -Number(t.slice(1)) : Number(t.replace('+', ''));
  else throw new FlagValueError(`strconv.ParseInt: parsing ${goQuote(s)}: invalid syntax`);
  if (!Number.isSafeInteger(n)) throw new FlagValueError(`strconv.ParseInt: parsing ${goQuote(s)}: value out of range`);
  const { min, max } = range;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
    if (min !== undefined && max !== undefined)
      throw new FlagValueError(`must be between ${min} and ${max}, inclusive`);
    if (min !== undefined) throw new FlagValueError(`must be greater than or equal to ${min}`);
    throw new FlagValueError(`must be less than or equal to ${max}`);
  }
  return n;
}

/** Finite decimal float (Go `strconv.ParseFloat`), optionally bounded (inclusive). */
export function parseFloat64(s: string, range: IntRange = {}): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) {
    throw new FlagValueError(`strconv.ParseFloat: parsing ${goQuote(s)}: invalid syntax`);
  }
  const n = Number(s);
  if (!Number.isFinite(n)) throw new FlagValueError(`strconv.ParseFloat: parsing ${goQuote(s)}: value out of range`);
  const { min, max } = range;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
    throw new FlagValueError(`must be between ${min ?? '-Inf'} and ${max ?? '+Inf'}, inclusive`);
  }
  return n;
}

/** Go duration (see {@link parseDuration}) in milliseconds; negative values are rejected unless allowed. */
export function parseDurationValue(s: string, allowNegative = false): number {
  const ms = parseDuration(s);
  if (ms < 0 && !allowNegative) throw new FlagValueError(`duration must not be negative`);
  return ms;
}

/** An IPv4 or IPv6 address literal (no zone, no brackets). Returns it unchanged. */
export function parseIP(s: string): string {
  if (!isIPv4(s) && !isIPv6(s)) throw new FlagValueError(`failed to parse IP: ${goQuote(s)}`);
  return s;
}

/** A CIDR (`10.0.0.0/8`, `fd00::/64`); the address must be a valid IP and the prefix fit its family. */
export function parseCIDR(s: string): string {
  const slash = s.indexOf('/');
  const ip = slash < 0 ? '' : s.slice(0, slash);
  const prefix = slash < 0 ? '' : s.slice(slash + 1);
  const bits = isIPv4(ip) ? 32 : isIPv6(ip) ? 128 : 0;
  if (bits === 0 || !/^[0-9]{1,3}$/.test(prefix) || Number(prefix) > bits) {
    throw new FlagValueError(`invalid CIDR address: ${s}`);
  }
  return s;
}

/** Comma-separated strings; empty items are dropped and items trimmed (`a, b,` → `['a','b']`). */
export function parseStringList(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/**
 * `k1=v1,k2=v2` into a map, as Kubernetes' `MapStringString` (values may not contain commas; keys may not be
 * empty). With `allowCommasInValues`, a comma only starts a new pair when followed by `key=`.
 */
export function parseKeyValueMap(s: string, allowCommasInValues = false): Map<string, string> {
  const out = new Map<string, string>();
  const pairs = allowCommasInValues ? splitPairsLoosely(s) : s.split(',');
  for (const raw of pairs) {
    const pair = raw.trim();
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq < 0) throw new FlagValueError(`malformed pair, expect string=string`);
    const key = pair.slice(0, eq).trim();
    if (key === '') throw new FlagValueError(`malformed pair, expect string=string`);
    out.set(key, pair.slice(eq + 1).trim());
  }
  return out;
}

function splitPairsLoosely(s: string): string[] {
  const parts = s.split(',');
  const out: string[] = [];
  for (const p of parts) {
    if (out.length > 0 && !p.includes('=')) out[out.length - 1] += `,${p}`;
    else out.push(p);
  }
  return out;
}

/** `k1=true,k2=false` (Kubernetes' `MapStringBool`), used by `--feature-gates`. Order is preserved. */
export function parseKeyBoolMap(s: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const raw of s.split(',')) {
    if (raw.trim() === '') continue;
    const eq = raw.indexOf('=');
    if (eq < 0) throw new FlagValueError(`missing bool value for ${raw.trim()}`);
    const key = raw.slice(0, eq).trim();
    const value = raw.slice(eq + 1).trim();
    if (key === '') throw new FlagValueError(`malformed pair, expect string=bool`);
    let b: boolean;
    try {
      b = parseBool(value);
    } catch (err) {
      throw new FlagValueError(`invalid value of ${key}=${value}, err: ${(err as Error).message}`);
    }
    out.set(key, b);
  }
  return out;
}

/** An inclusive port range `N1-N2` (or a single port `N`), as Kubernetes' `PortRange`. */
export interface PortRange {
  base: number;
  size: number;
}

/** Parses `N1-N2`/`N1+N` (or `N`) into a {@link PortRange} with 1 ≤ ports ≤ 65535. */
export function parsePortRange(s: string): PortRange {
  const m = /^\s*(\d+)\s*(?:([-+])\s*(\d+)\s*)?$/.exec(s);
  if (!m) throw new FlagValueError(`unable to parse port range: ${s}: expected "N1-N2"`);
  const low = Number(m[1]);
  let high = low;
  if (m[2] === '-') high = Number(m[3]);
  else if (m[2] === '+') high = low + Number(m[3]);
  if (low < 1 || low > 65535 || high > 65535) {
    throw new FlagValueError(`unable to parse port range: ${s}: ports must be between 1 and 65535`);
  }
  if (high < low) throw new FlagValueError(`unable to parse port range: ${s}: end port is lower than start port`);
  return { base: low, size: high - low + 1 };
}

/** Formats a {@link PortRange} as `N1-N2`. */
export function formatPortRange(r: PortRange): string {
  return `${r.base}-${r.base + r.size - 1}`;
}
