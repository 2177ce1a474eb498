/**
 * Go durations (`5m0s`, `1.5h`, `300ms`), as parsed by Go's `time.ParseDuration` and printed by
 * `time.Duration.String()`: the text form of every duration option of the daemons and of the
 * `metav1.Duration` JSON fields. Values are exact int64 nanoseconds (bigint); millisecond helpers
 * are provided for timers.
 */

/** Nanoseconds in one unit. */
export const Nanosecond = 1n;
/** Nanoseconds in a microsecond. */
export const Microsecond = 1000n;
/** Nanoseconds in a millisecond. */
export const Millisecond = 1_000_000n;
/** Nanoseconds in a second. */
export const Second = 1_000_000_000n;
/** Nanoseconds in a minute. */
export const Minute = 60n * Second;
/** Nanoseconds in an hour. */
export const Hour = 60n * Minute;

/** The largest duration (about 292 years), as Go's `math.MaxInt64` nanoseconds. */
export const MAX_DURATION = 2n ** 63n - 1n;
/** The smallest (most negative) duration. */
export const MIN_DURATION = -(2n ** 63n);

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', Nanosecond],
  ['us', Microsecond],
  ['\u00b5s', Microsecond], // U+00B5 micro sign
  ['\u03bcs', Microsecond], // U+03BC Greek small letter mu
  ['ms', Millisecond],
  ['s', Second],
  ['m', Minute],
  ['h', Hour],
]);

const BRAND = Symbol.for('@platform/api.DurationParseError');

/** Thrown for text that is not a Go duration; the message is Go's (`time: invalid duration "x"`). */
export class DurationParseError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'DurationParseError';
}

/** Brand check for `DurationParseError` (works across duplicate copies of this package). */
export function isDurationParseError(err: unknown): err is DurationParseError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** Quotes like Go's time package: non-ASCII and control bytes as `\xNN`, `"` and `\` escaped. */
function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x20 || cp >= 0x80) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return out + '"';
}

const TWO_63 = 2n ** 63n;

/**
 * Parses a Go duration: an optionally signed sequence of decimal numbers, each with an optional
 * fraction and a unit (`ns`, `us`/`µs`, `ms`, `s`, `m`, `h`), e.g. `300ms`, `-1.5h`, `2h45m`; `0`
 * alone needs no unit. Returns nanoseconds. Throws `DurationParseError` with Go's message:
 * `time: invalid duration "x"`, `time: missing unit in duration "5"`,
 * `time: unknown unit "x" in duration "5x"`; values beyond int64 nanoseconds are invalid.
 */
export function parseDuration(input: string): bigint {
  if (typeof input !== 'string') throw new DurationParseError('time: invalid duration: not a string');
  const orig = input;
  let s = input;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  const invalid = (): DurationParseError => new DurationParseError(`time: invalid duration ${quote(orig)}`);
  if (s === '') throw invalid();
  let d = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || ((s[0] as string) >= '0' && (s[0] as string) <= '9'))) throw invalid();
    // Integer part.
    let i = 0;
    let v = 0n;
    while (i < s.length && (s[i] as string) >= '0' && (s[i] as string) <= '9') {
      v = v * 10n + BigInt(s.charCodeAt(i) - 48);
      if (v > TWO_63) throw invalid();
      i++;
    }
    const pre = i > 0;
    s = s.slice(i);
    // Fraction part: Go keeps at most the digits that fit in an int64, then scales with float64.
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (j < s.length && (s[j] as string) >= '0' && (s[j] as string) <= '9') {
        if (!overflow) {
          const y = f * 10n + BigInt(s.charCodeAt(j) - 48);
          if (f > (TWO_63 - 1n) / 10n || y > TWO_63) overflow = true;
          else {
            f = y;
            scale *= 10;
          }
        }
        j++;
      }
      post = j > 0;
      s = s.slice(j);
    }
    if (!pre && !post) throw invalid();
    // Unit.
    let k = 0;
    while (k < s.length && s[k] !== '.' && !((s[k] as string) >= '0' && (s[k] as string) <= '9')) k++;
    if (k === 0) throw new DurationParseError(`time: missing unit in duration ${quote(orig)}`);
    const u = s.slice(0, k);
    s = s.slice(k);
    const unit = UNITS.get(u);
    if (unit === undefined) throw new DurationParseError(`time: unknown unit ${quote(u)} in duration ${quote(orig)}`);
    if (v > TWO_63 / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      // float64 is precise enough for fractions of hours at nanosecond resolution (as in Go).
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > TWO_63) throw invalid();
    }
    d += v;
    if (d > TWO_63) throw invalid();
  }
  if (neg) return -d;
  if (d > TWO_63 - 1n) throw invalid();
  return d;
}

/** Parses a Go duration into milliseconds (fractional below a millisecond); see `parseDuration`. */
export function parseDurationMs(input: string): number {
  return durationNsToMs(parseDuration(input));
}

/** Converts nanoseconds to (possibly fractional) milliseconds. */
export function durationNsToMs(ns: bigint): number {
  return Number(ns / Millisecond) + Number(ns % Millisecond) / 1e6;
}

/** Converts milliseconds (a finite number, may be fractional) to whole nanoseconds, rounding to nearest. */
export function durationMsToNs(ms: number): bigint {
  if (!Number.isFinite(ms)) throw new RangeError(`duration in milliseconds must be finite, got ${ms}`);
  const whole = Math.trunc(ms);
  return BigInt(whole) * Millisecond + BigInt(Math.round((ms - whole) * 1e6));
}

/** Writes `v / 10^prec` as a fraction (".5"), without trailing zeros; returns the text and the integer part. */
function fmtFrac(v: bigint, prec: number): [string, bigint] {
  let out = '';
  let printed = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    printed = printed || digit !== 0n;
    if (printed) out = digit.toString() + out;
    v /= 10n;
  }
  return [printed ? '.' + out : '', v];
}

/**
 * Formats nanoseconds as Go's `Duration.String()`: `72h3m0.5s`, `5m0s`, `1.5s`, `100ms`, `1.2µs`,
 * `15ns`, `0s`. The input is clamped to the int64 range.
 */
export function formatDuration(ns: bigint): string {
  const d = ns > MAX_DURATION ? MAX_DURATION : ns < MIN_DURATION ? MIN_DURATION : ns;
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < Second) {
    if (u === 0n) return '0s';
    let prec: number;
    let unit: string;
    if (u < Microsecond) {
      prec = 0;
      unit = 'ns';
    } else if (u < Millisecond) {
      prec = 3;
      unit = '\u00b5s';
    } else {
      prec = 6;
      unit = 'ms';
    }
    const [frac, int] = fmtFrac(u, prec);
    out = `${int}${frac}${unit}`;
  } else {
    const [frac, secs] = fmtFrac(u, 9);
    u = secs;
    out = `${u % 60n}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? '-' + out : out;
}

/** Formats milliseconds (see `durationMsToNs`) as Go's `Duration.String()`. */
export function formatDurationMs(ms: number): string {
  return formatDuration(durationMsToNs(ms));
}

/**
 * Reads a `metav1.Duration` from decoded JSON: a Go duration string. Throws `DurationParseError`
 * naming the problem for a non-string (Kubernetes rejects JSON numbers here too).
 */
export function durationFromJSON(value: unknown): bigint {
  if (typeof value !== 'string') {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    throw new DurationParseError(`time: invalid duration: expected a string such as "5m0s", got ${kind}`);
  }
  return parseDuration(value);
}

/** Writes a `metav1.Duration` for JSON: the Go duration string of `ns`. */
export function durationToJSON(ns: bigint): string {
  return formatDuration(ns);
}
