/**
 * API timestamps: `metav1.Time` (RFC 3339 at second precision, always UTC:
 * `2021-01-01T00:00:00Z`) and `metav1.MicroTime` (six fractional digits:
 * `2021-01-01T00:00:00.000000Z`), their JSON forms, and the Protobuf `Timestamp` shape. Parsing
 * accepts any valid RFC 3339 date-time (any fraction, any offset) and normalises to UTC. The
 * current time always comes from an injectable `Clock`.
 */

/** A precise instant: whole seconds since the Unix epoch and nanoseconds into that second (0..999999999). */
export interface Timestamp {
  seconds: number;
  nanos: number;
}

/** The Protobuf `google.protobuf.Timestamp`/`k8s.io.apimachinery.pkg.apis.meta.v1.Time` shape, as decoded. */
export interface ProtoTimestamp {
  seconds: number | bigint;
  nanos: number;
}

/** Something that denotes an instant: a `Date`, epoch milliseconds, or a `Timestamp`. */
export type TimeInput = Date | number | Timestamp;

/** The source of the current time. Inject one in tests instead of reading the system clock. */
export interface Clock {
  /** Milliseconds since the Unix epoch, like `Date.now()`. */
  now(): number;
}

/** The system clock. */
export const realClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to, for tests. */
export class FakeClock implements Clock {
  constructor(private ms: number = Date.UTC(2021, 0, 1)) {}
  /** The current fake time in epoch milliseconds. */
  now(): number {
    return this.ms;
  }
  /** Moves the clock forward (or back, with a negative value) by `ms`. */
  step(ms: number): void {
    this.ms += ms;
  }
  /** Sets the clock to `ms` epoch milliseconds. */
  set(ms: number): void {
    this.ms = ms;
  }
}

const BRAND = Symbol.for('@platform/api.TimeParseError');

/** Thrown for text or values that are not a valid time; the message names the input and the problem. */
export class TimeParseError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'TimeParseError';
}

/** Brand check for `TimeParseError` (works across duplicate copies of this package). */
export function isTimeParseError(err: unknown): err is TimeParseError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';
const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
/** Epoch seconds of 0000-01-01 and 10000-01-01: RFC 3339 writes years 0000 to 9999 only. */
const YEAR0_SECONDS = (() => {
  const d = new Date(0);
  d.setUTCFullYear(0, 0, 1);
  d.setUTCHours(0, 0, 0, 0);
  return d.getTime() / 1000;
})();
const YEAR10000_SECONDS = (() => {
  const d = new Date(0);
  d.setUTCFullYear(10000, 0, 1);
  d.setUTCHours(0, 0, 0, 0);
  return d.getTime() / 1000;
})();

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number;
}

/**
 * Parses an RFC 3339 date-time (`2021-01-01T00:00:00Z`, `2021-01-01T01:00:00.5+01:00`) to a
 * precise UTC `Timestamp` (fractions beyond nanoseconds are truncated). Throws `TimeParseError`:
 * `parsing time "x" as "2006-01-02T15:04:05Z07:00": ...` for bad syntax, and Go's
 * `parsing time "x": month out of range` (day, hour, minute, second likewise) for bad fields.
 */
export function parseRFC3339(s: string): Timestamp {
  if (typeof s !== 'string') throw new TimeParseError('time must be an RFC 3339 string');
  const m = RFC3339_RE.exec(s);
  if (!m) {
    throw new TimeParseError(
      `parsing time ${JSON.stringify(s)} as "${RFC3339_LAYOUT}": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")`,
    );
  }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const range = (what: string): TimeParseError =>
    new TimeParseError(`parsing time ${JSON.stringify(s)}: ${what} out of range`);
  if (month < 1 || month > 12) throw range('month');
  if (day < 1 || day > daysInMonth(year, month)) throw range('day');
  if (hour > 23) throw range('hour');
  if (minute > 59) throw range('minute');
  if (second > 59) throw range('second');
  let offset = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23) throw range('time zone offset hour');
    if (om > 59) throw range('time zone offset minute');
    offset = (oh * 3600 + om * 60) * (m[9] === '-' ? -1 : 1);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const seconds = d.getTime() / 1000 - offset;
  const nanos = m[7] === undefined ? 0 : Number(m[7].slice(0, 9).padEnd(9, '0'));
  return { seconds, nanos };
}

function toTimestamp(t: TimeInput): Timestamp {
  if (t instanceof Date) {
    const ms = t.getTime();
    if (Number.isNaN(ms)) throw new TimeParseError('invalid Date');
    return msToTimestamp(ms);
  }
  if (typeof t === 'number') {
    if (!Number.isFinite(t)) throw new TimeParseError(`time in epoch milliseconds must be finite, got ${t}`);
    return msToTimestamp(t);
  }
  return checkTimestamp(t);
}

function msToTimestamp(ms: number): Timestamp {
  const seconds = Math.floor(ms / 1000);
  let nanos = Math.round((ms - seconds * 1000) * 1e6);
  if (nanos >= 1e9) nanos = 999_999_999;
  return { seconds, nanos };
}

function checkTimestamp(ts: { seconds: number | bigint; nanos: number }): Timestamp {
  if (ts === null || typeof ts !== 'object')
    throw new TimeParseError('timestamp must be an object with seconds and nanos');
  const s = typeof ts.seconds === 'bigint' ? Number(ts.seconds) : ts.seconds;
  if (typeof s !== 'number' || !Number.isSafeInteger(s)) {
    throw new TimeParseError(`timestamp seconds must be an integer, got ${String(ts.seconds)}`);
  }
  const n = ts.nanos ?? 0;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 999_999_999) {
    throw new TimeParseError(`timestamp nanos must be an integer in [0, 999999999], got ${String(ts.nanos)}`);
  }
  return { seconds: s, nanos: n };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function formatSeconds(seconds: number): string {
  if (seconds < YEAR0_SECONDS || seconds >= YEAR10000_SECONDS) {
    throw new TimeParseError(`time ${seconds}s since the epoch is outside the years 0000-9999 that RFC 3339 can write`);
  }
  const d = new Date(seconds * 1000);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`
  );
}

/**
 * Formats an instant as `metav1.Time` does: RFC 3339 in UTC at second precision
 * (`2021-01-01T00:00:00Z`); sub-second parts are truncated. Throws `TimeParseError` for an invalid
 * `Date`, a non-finite number, or a year outside 0000–9999.
 */
export function formatTime(t: TimeInput): string {
  return `${formatSeconds(toTimestamp(t).seconds)}Z`;
}

/**
 * Formats an instant as `metav1.MicroTime` does: RFC 3339 in UTC with exactly six fractional digits
 * (`2021-01-01T00:00:00.000000Z`); finer parts are truncated. Errors as `formatTime`.
 */
export function formatMicroTime(t: TimeInput): string {
  const ts = toTimestamp(t);
  return `${formatSeconds(ts.seconds)}.${pad(Math.floor(ts.nanos / 1000), 6)}Z`;
}

/** Parses an RFC 3339 time (see `parseRFC3339`) into a `Date` (millisecond precision, truncated). */
export function parseTime(s: string): Date {
  return new Date(timestampToMs(parseRFC3339(s)));
}

/** Parses an RFC 3339 time (see `parseRFC3339`) into epoch milliseconds (truncated). */
export function parseTimeMs(s: string): number {
  return timestampToMs(parseRFC3339(s));
}

/** Parses a MicroTime (any RFC 3339 time) into a precise `Timestamp`, truncated to microseconds. */
export function parseMicroTime(s: string): Timestamp {
  const ts = parseRFC3339(s);
  return { seconds: ts.seconds, nanos: ts.nanos - (ts.nanos % 1000) };
}

/** Re-formats any RFC 3339 time in the canonical `metav1.Time` form (UTC, seconds). */
export function normalizeTime(s: string): string {
  return formatTime(parseRFC3339(s));
}

/** Re-formats any RFC 3339 time in the canonical `metav1.MicroTime` form (UTC, microseconds). */
export function normalizeMicroTime(s: string): string {
  return formatMicroTime(parseRFC3339(s));
}

/** Epoch milliseconds of a timestamp (sub-millisecond part truncated toward the past). */
export function timestampToMs(ts: Timestamp): number {
  return ts.seconds * 1000 + Math.floor(ts.nanos / 1e6);
}

/** A `Date` for a timestamp (millisecond precision). */
export function timestampToDate(ts: Timestamp): Date {
  return new Date(timestampToMs(ts));
}

/** A precise timestamp for any time input; throws `TimeParseError` for invalid input. */
export function timestampOf(t: TimeInput): Timestamp {
  return toTimestamp(t);
}

/** Compares two instants: -1, 0 or 1. */
export function compareTimestamps(a: Timestamp, b: Timestamp): -1 | 0 | 1 {
  if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1;
  if (a.nanos !== b.nanos) return a.nanos < b.nanos ? -1 : 1;
  return 0;
}

/**
 * The Protobuf form of a `metav1.Time`: whole seconds, `nanos` always 0 (Kubernetes drops them so
 * that Protobuf and JSON clients see the same value).
 */
export function timeToProto(t: TimeInput | string): { seconds: number; nanos: number } {
  const ts = typeof t === 'string' ? parseRFC3339(t) : toTimestamp(t);
  return { seconds: ts.seconds, nanos: 0 };
}

/** The Protobuf form of a `metav1.MicroTime`: seconds and nanoseconds. */
export function microTimeToProto(t: TimeInput | string): { seconds: number; nanos: number } {
  const ts = typeof t === 'string' ? parseRFC3339(t) : toTimestamp(t);
  return { seconds: ts.seconds, nanos: ts.nanos };
}

/**
 * A timestamp from its Protobuf form (`seconds` as number or bigint). Throws `TimeParseError` when
 * seconds is not an integer or nanos is outside 0..999999999.
 */
export function timestampFromProto(p: ProtoTimestamp): Timestamp {
  return checkTimestamp(p);
}

/** The `metav1.Time` string of a Protobuf timestamp (sub-seconds dropped). */
export function timeFromProto(p: ProtoTimestamp): string {
  return formatTime(checkTimestamp(p));
}

/** The `metav1.MicroTime` string of a Protobuf timestamp. */
export function microTimeFromProto(p: ProtoTimestamp): string {
  return formatMicroTime(checkTimestamp(p));
}

/**
 * Reads a `metav1.Time` from decoded JSON: `null` (the zero time) gives `undefined`, a string is
 * parsed and normalised to the canonical form. Throws `TimeParseError` for anything else.
 */
export function timeFromJSON(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'string') throw new TimeParseError(`time must be an RFC 3339 string, got ${typeof v}`);
  return normalizeTime(v);
}

/** Like `timeFromJSON` for `metav1.MicroTime`. */
export function microTimeFromJSON(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'string') throw new TimeParseError(`time must be an RFC 3339 string, got ${typeof v}`);
  return normalizeMicroTime(v);
}

/** The current time as a `metav1.Time` string, from `clock` (the system clock by default). */
export function now(clock: Clock = realClock): string {
  return formatTime(clock.now());
}

/** The current time as a `metav1.MicroTime` string, from `clock` (the system clock by default). */
export function nowMicro(clock: Clock = realClock): string {
  return formatMicroTime(clock.now());
}
