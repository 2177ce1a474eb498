/**
 * The string formats a CRD schema can check (model: kube-openapi's `strfmt.Default` registry, narrowed to the
 * formats 1.21's `StripUnsupportedFormatsPostProcess` keeps for `type: string`; any other format is not checked),
 * and `pattern`s, compiled with Go's RE2 syntax (the `re2js` port).
 */
import { parseIP } from '@platform/api';
import { RE2JS } from 're2js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGBCOLOR = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const MAC =
  /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$|^([0-9a-fA-F]{4}\.){3}[0-9a-fA-F]{4}$|^([0-9a-fA-F]{4}\.){9}[0-9a-fA-F]{4}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(z|[+-]\d{2}:\d{2})$/;
const DURATION_UNIT =
  /^(\d+)\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$/i;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= days;
}

function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] as string)) return false;
  const m = TIME.exec(parts[1] as string);
  if (!m) return false;
  return Number(m[1]) < 24 && Number(m[2]) < 60 && Number(m[3]) <= 60;
}

function isCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = parseIP(s.slice(0, slash));
  const bits = s.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(bits)) return false;
  const max = s.slice(0, slash).includes(':') ? 128 : 32;
  return Number(bits) <= max;
}

function isEmail(s: string): boolean {
  if (!EMAIL.test(s.trim())) return false;
  const at = s.lastIndexOf('@');
  return at > 0 && at < s.length - 1;
}

function isURI(s: string): boolean {
  // Go's url.Parse accepts nearly anything; it refuses control characters and a bad percent-escape.
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u001f\u007f]/.test(s) && !/%(?![0-9a-fA-F]{2})/.test(s);
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function isISBN10(s: string): boolean {
  const v = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(v)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(v[i]);
  sum += v[9] === 'X' ? 100 : 10 * Number(v[9]);
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const v = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(v)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(v[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(v[12]);
}

function isHostname(s: string): boolean {
  if (s.length > 255 || !HOSTNAME.test(s)) return false;
  return s.split('.').every((p) => p.length <= 63);
}

function isIPv4(s: string): boolean {
  return parseIP(s) !== undefined && s.includes('.') && !s.includes(':');
}

function isIPv6(s: string): boolean {
  return parseIP(s) !== undefined && s.includes(':');
}

/** The format checks of the registry, keyed by the format's name with its dashes removed (`date-time` → `datetime`). */
const FORMATS: ReadonlyMap<string, (s: string) => boolean> = new Map<string, (s: string) => boolean>([
  ['bsonobjectid', (s) => BSON_OBJECT_ID.test(s)],
  ['uri', isURI],
  ['email', isEmail],
  ['hostname', isHostname],
  ['ipv4', isIPv4],
  ['ipv6', isIPv6],
  ['cidr', isCIDR],
  ['mac', (s) => MAC.test(s)],
  ['uuid', (s) => UUID.test(s)],
  ['uuid3', (s) => UUID3.test(s)],
  ['uuid4', (s) => UUID4.test(s)],
  ['uuid5', (s) => UUID5.test(s)],
  ['isbn', (s) => isISBN10(s) || isISBN13(s)],
  ['isbn10', isISBN10],
  ['isbn13', isISBN13],
  ['creditcard', (s) => /^\d{13,19}$/.test(s.replace(/[ -]/g, '')) && luhn(s.replace(/[ -]/g, ''))],
  ['ssn', (s) => SSN.test(s)],
  ['hexcolor', (s) => HEXCOLOR.test(s)],
  ['rgbcolor', (s) => RGBCOLOR.test(s)],
  ['byte', (s) => BASE64.test(s)],
  ['password', () => true],
  ['date', isDate],
  ['duration', (s) => GO_DURATION.test(s) || DURATION_UNIT.test(s)],
  ['datetime', isDateTime],
]);

/** The names (dashes removed) of the string formats that are checked. */
export const SUPPORTED_FORMATS: readonly string[] = [...FORMATS.keys()];

/**
 * The check of a string format, or undefined when the format is not checked (unknown formats, and every format
 * 1.21 strips from string schemas before validating, are accepted as any string).
 */
export function formatCheck(format: string | undefined): ((s: string) => boolean) | undefined {
  if (!format) return undefined;
  return FORMATS.get(format.replace(/-/g, ''));
}

/** A compiled `pattern`: `test` says whether the pattern matches somewhere in a string (Go's `MatchString`). */
export interface Pattern {
  test(s: string): boolean;
}

/**
 * Compiles a `pattern` with Go's regular expression syntax and semantics (RE2, as Kubernetes: `(?i)`, `\z`,
 * `[[:alpha:]]`, `\pL`), matching in linear time, so that no pattern or value can stall the server. Throws
 * Go's parse error (`error parsing regexp: missing closing ]: ...`) for an invalid pattern.
 */
export function compilePattern(pattern: string): Pattern {
  const re = RE2JS.compile(pattern);
  return { test: (s) => re.matcher(s).find() };
}

const PATTERN_CACHE = new Map<string, Pattern | Error>();

/** {@link compilePattern}, cached; an invalid pattern gives its Error. */
export function cachedPattern(pattern: string): Pattern | Error {
  let re = PATTERN_CACHE.get(pattern);
  if (re === undefined) {
    try {
      re = compilePattern(pattern);
    } catch (e) {
      re = e instanceof Error ? e : new Error(String(e));
    }
    if (PATTERN_CACHE.size > 10000) PATTERN_CACHE.clear();
    PATTERN_CACHE.set(pattern, re);
  }
  return re;
}
