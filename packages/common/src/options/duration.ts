/**
 * Go-syntax durations for command-line flags (`30s`, `5m0s`, `1h30m`, `100ms`, `1.5h`, `0`), parsed and printed
 * exactly as Go's `time.ParseDuration` and `Duration.String` do, so that values and error messages read like the
 * Kubernetes components' own. Durations are carried as milliseconds (a `number`, fractional below one millisecond):
 * every value Go accepts up to 104 days keeps nanosecond precision, and every longer one keeps microsecond precision.
 */

const UNIT_NS: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3, // U+00B5 micro sign
  μs: 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go durations are int64 nanoseconds: anything from 2^63 ns up overflows. */
const MAX_NS = 2 ** 63;

/** Thrown by {@link parseDuration}; the message is Go's (`time: unknown unit "x" in duration "5x"`). */
export class DurationError extends Error {
  readonly isDurationError = true;
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

/** Brand check for {@link DurationError}. */
export function isDurationError(err: unknown): err is DurationError {
  return typeof err === 'object' && err !== null && (err as { isDurationError?: unknown }).isDurationError === true;
}

/** Quotes a string the way Go's `strconv.Quote` (`%q`) does. */
export function goQuote(s: string): string {
  // Fast path: printable ASCII without quote or backslash.
  if (/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if ((c >= 0x80 && c < 0xa0) || c === 0xad || c === 0x2028 || c === 0x2029 || c === 0xfeff)
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/**
 * Parses a Go duration string into milliseconds. Accepts an optional sign, then one or more decimal numbers each
 * followed by a unit (`ns`, `us`/`µs`, `ms`, `s`, `m`, `h`); a bare `0` is allowed. Throws {@link DurationError}
 * with Go's wording for anything else.
 */
export function parseDuration(input: string): number {
  const orig = goQuote(input);
  let s = input;
  let negative = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new DurationError(`time: invalid duration ${orig}`);
  let totalNs = 0;
  while (s !== '') {
    // The next character must be [0-9.].
    if (!/^[0-9.]/.test(s)) throw new DurationError(`time: invalid duration ${orig}`);
    const num = /^([0-9]*)(\.([0-9]*))?/.exec(s)!;
    const intPart = num[1] ?? '';
    const fracPart = num[3] ?? '';
    if (intPart === '' && fracPart === '') throw new DurationError(`time: invalid duration ${orig}`);
    s = s.slice(num[0].length);
    const unitMatch = /^[^0-9.]*/.exec(s)!;
    const unit = unitMatch[0];
    if (unit === '') throw new DurationError(`time: missing unit in duration ${orig}`);
    const scale = UNIT_NS[unit];
    if (scale === undefined) throw new DurationError(`time: unknown unit ${goQuote(unit)} in duration ${orig}`);
    s = s.slice(unit.length);
    const value =
      Number(intPart === '' ? '0' : intPart) * scale + (fracPart === '' ? 0 : Number(`0.${fracPart}`) * scale);
    totalNs += value;
    if (totalNs >= MAX_NS) throw new DurationError(`time: invalid duration ${orig}`);
  }
  const ms = totalNs / 1e6;
  return negative ? -ms : ms;
}

/**
 * Formats milliseconds the way Go's `Duration.String` does: `0s`, `100ms`, `1.5s`, `5m0s`, `1h30m0s`,
 * `8760h0m0s`. Sub-second durations use the largest unit that keeps the integer part non-zero.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const negative = ms < 0;
  let ns = Math.round(Math.abs(ms) * 1e6);
  const sign = negative ? '-' : '';
  if (ns < 1e9) {
    if (ns < 1e3) return `${sign}${ns}ns`;
    if (ns < 1e6) return `${sign}${trimFraction(ns / 1e3)}µs`;
    return `${sign}${trimFraction(ns / 1e6)}ms`;
  }
  const hours = Math.floor(ns / 3600e9);
  ns -= hours * 3600e9;
  const minutes = Math.floor(ns / 60e9);
  ns -= minutes * 60e9;
  const seconds = `${trimFraction(ns / 1e9)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

function trimFraction(n: number): string {
  // At most 9 fractional digits, trailing zeros removed (Go prints the exact fraction).
  return n
    .toFixed(9)
    .replace(/\.?0+$/, '')
    .replace(/^$/, '0');
}
