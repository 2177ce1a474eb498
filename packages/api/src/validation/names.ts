/**
 * Name, label and other string-format checks with the exact wording of Kubernetes 1.21
 * (apimachinery `pkg/util/validation/validation.go`, `pkg/api/validation/path`, `pkg/api/validation`
 * `objectmeta.go`, `pkg/apis/meta/v1/validation`). The `is…` functions return the list of problems
 * as strings (empty when valid) and never throw; the `validate…` functions return field errors.
 */
import { invalid, required, tooLong, type FieldError, type FieldPath } from './field-errors';
import { byteLength } from './go-format';

const QNAME_CHAR_FMT = '[A-Za-z0-9]';
const QNAME_EXT_CHAR_FMT = '[-A-Za-z0-9_.]';
const QUALIFIED_NAME_FMT = `(${QNAME_CHAR_FMT}${QNAME_EXT_CHAR_FMT}*)?${QNAME_CHAR_FMT}`;
const QUALIFIED_NAME_ERR_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/** Maximum length of the name part of a qualified name (label and annotation keys). */
export const QUALIFIED_NAME_MAX_LENGTH = 63;
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/** Maximum length of a label value. */
export const LABEL_VALUE_MAX_LENGTH = 63;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
/** Maximum length of a DNS (RFC 1123) label. */
export const DNS1123_LABEL_MAX_LENGTH = 63;
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);

const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
/** Maximum length of a DNS (RFC 1123) subdomain. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_ERR_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
/** Maximum length of a DNS (RFC 1035) label. */
export const DNS1035_LABEL_MAX_LENGTH = 63;
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);

const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const WILDCARD_DNS1123_SUBDOMAIN_ERR_MSG =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";
const WILDCARD_DNS1123_SUBDOMAIN_RE = new RegExp(`^${WILDCARD_DNS1123_SUBDOMAIN_FMT}$`);

const C_IDENTIFIER_FMT = '[A-Za-z_][A-Za-z0-9_]*';
const C_IDENTIFIER_ERR_MSG =
  "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";
const C_IDENTIFIER_RE = new RegExp(`^${C_IDENTIFIER_FMT}$`);

const PERCENT_FMT = '[0-9]+%';
const PERCENT_ERR_MSG = "a valid percent string must be a numeric string followed by an ending '%'";
const PERCENT_RE = new RegExp(`^${PERCENT_FMT}$`);

const HTTP_HEADER_NAME_FMT = '[-A-Za-z0-9]+';
const HTTP_HEADER_NAME_ERR_MSG = "a valid HTTP header must consist of alphanumeric characters or '-'";
const HTTP_HEADER_NAME_RE = new RegExp(`^${HTTP_HEADER_NAME_FMT}$`);

const ENV_VAR_NAME_FMT = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const ENV_VAR_NAME_ERR_MSG =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";
const ENV_VAR_NAME_RE = new RegExp(`^${ENV_VAR_NAME_FMT}$`);

const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_MAP_KEY_ERR_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const CONFIG_MAP_KEY_RE = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);

const PORT_NAME_CHARSET_RE = /^[-a-z0-9]+$/;
const PORT_NAME_ONE_LETTER_RE = /[a-z]/;

/** `must be no more than N characters`, as Go's `MaxLenError`. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** A regex failure explanation with examples, exactly as Go's `RegexError` writes it. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // Go writes "'a', " then " or " between examples, hence the double space: `'a',  or 'b', `.
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** `must be non-empty`, as Go's `EmptyError`. */
export function emptyError(): string {
  return 'must be non-empty';
}

/** `must be between lo and hi, inclusive`, as Go's `InclusiveRangeError`. */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/**
 * Checks a qualified name: an optional DNS-1123 subdomain prefix and `/`, then a name of at most
 * 63 characters of `[-A-Za-z0-9_.]` starting and ending alphanumeric. Used for label keys,
 * annotation keys and finalizers.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] as string;
  } else if (parts.length === 2) {
    const prefix = parts[0] as string;
    name = parts[1] as string;
    if (prefix.length === 0) {
      errs.push('prefix part ' + emptyError());
    } else {
      for (const msg of isDNS1123Subdomain(prefix)) errs.push('prefix part ' + msg);
    }
  } else {
    return [
      'a qualified name ' +
        regexError(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) {
    errs.push('name part ' + emptyError());
  } else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) {
    errs.push('name part ' + maxLenError(QUALIFIED_NAME_MAX_LENGTH));
  }
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push('name part ' + regexError(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc'));
  }
  return errs;
}

/** Checks a label value: empty, or at most 63 characters of `[-A-Za-z0-9_.]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(regexError(LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** Checks a DNS label (RFC 1123): at most 63 lower-case alphanumerics or '-', alphanumeric at both ends. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    errs.push(regexError(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** Checks a DNS subdomain (RFC 1123): dot-separated DNS labels, at most 253 characters in all. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

/** Checks a DNS label (RFC 1035): like RFC 1123 but must start with a letter. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!DNS1035_LABEL_RE.test(value)) {
    errs.push(regexError(DNS1035_LABEL_ERR_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  }
  return errs;
}

/** Checks a wildcard DNS subdomain (`*.example.com`, RFC 1034 section 4.3.3). */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!WILDCARD_DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(regexError(WILDCARD_DNS1123_SUBDOMAIN_ERR_MSG, WILDCARD_DNS1123_SUBDOMAIN_FMT, '*.example.com'));
  }
  return errs;
}

/** Checks a C identifier (`[A-Za-z_][A-Za-z0-9_]*`); the length is not checked. */
export function isCIdentifier(value: string): string[] {
  if (C_IDENTIFIER_RE.test(value)) return [];
  return [regexError(C_IDENTIFIER_ERR_MSG, C_IDENTIFIER_FMT, 'my_name', 'MY_NAME', 'MyName')];
}

/** Checks a non-zero port number (1..65535). */
export function isValidPortNum(port: number): string[] {
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return [];
  return [inclusiveRangeError(1, 65535)];
}

/** Checks that an integer lies in the inclusive range [min, max]. */
export function isInRange(value: number, min: number, max: number): string[] {
  if (Number.isInteger(value) && value >= min && value <= max) return [];
  return [inclusiveRangeError(min, max)];
}

const MAX_INT32 = 2147483647;

/** Checks a Unix group id (0..2^31-1). */
export function isValidGroupID(gid: number): string[] {
  return isInRange(gid, 0, MAX_INT32);
}

/** Checks a Unix user id (0..2^31-1). */
export function isValidUserID(uid: number): string[] {
  return isInRange(uid, 0, MAX_INT32);
}

/**
 * Checks an IANA service (port) name: at most 15 characters of `[-a-z0-9]`, at least one letter,
 * no leading, trailing or consecutive hyphens.
 */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > 15) errs.push(maxLenError(15));
  if (!PORT_NAME_CHARSET_RE.test(port)) {
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  }
  if (!PORT_NAME_ONE_LETTER_RE.test(port)) errs.push('must contain at least one letter or number (a-z, 0-9)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) {
    errs.push('must not begin or end with a hyphen');
  }
  return errs;
}

/**
 * Parses an IP address as Go's `net.ParseIP` does (dotted IPv4, IPv6 with `::` and an optional
 * trailing dotted IPv4; no zones). Returns 16 bytes (IPv4 as an IPv4-mapped address) or
 * `undefined` when the text is not an address. Leading zeros in IPv4 fields are accepted as
 * decimal, as the Go 1.16 toolchain of Kubernetes 1.21 did.
 */
export function parseIP(s: string): Uint8Array | undefined {
  if (s.includes(':')) return parseIPv6(s);
  const v4 = parseIPv4(s);
  if (!v4) return undefined;
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  out.set(v4, 12);
  return out;
}

function parseIPv4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i] as string;
    if (!/^[0-9]+$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseIPv6(s: string): Uint8Array | undefined {
  const out = new Uint8Array(16);
  let ellipsis = -1;
  let rest = s;
  if (rest.startsWith('::')) {
    ellipsis = 0;
    rest = rest.slice(2);
    if (rest.length === 0) return out;
  }
  let i = 0;
  while (i < 16) {
    const m = /^[0-9a-fA-F]+/.exec(rest);
    if (!m) return undefined;
    // An embedded IPv4 address may end the text.
    if (rest.length > m[0].length && rest[m[0].length] === '.') {
      if (ellipsis < 0 && i !== 12) return undefined;
      if (i + 4 > 16) return undefined;
      const v4 = parseIPv4(rest);
      if (!v4) return undefined;
      out.set(v4, i);
      i += 4;
      rest = '';
      break;
    }
    const n = parseInt(m[0], 16);
    if (n > 0xffff) return undefined;
    out[i] = n >> 8;
    out[i + 1] = n & 0xff;
    i += 2;
    rest = rest.slice(m[0].length);
    if (rest.length === 0) break;
    if (rest[0] !== ':' || rest.length === 1) return undefined;
    rest = rest.slice(1);
    if (rest[0] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = i;
      rest = rest.slice(1);
      if (rest.length === 0) break;
    }
  }
  if (rest.length !== 0) return undefined;
  if (i < 16) {
    if (ellipsis < 0) return undefined;
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) out[j + n] = out[j] as number;
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) out[j] = 0;
  } else if (ellipsis >= 0) {
    return undefined; // `::` must stand for at least one group of zeros
  }
  return out;
}

function isIPv4Mapped(ip: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false;
  return ip[10] === 0xff && ip[11] === 0xff;
}

/** Checks an IPv4 or IPv6 address. */
export function isValidIP(value: string): string[] {
  if (parseIP(value)) return [];
  return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
}

/** Checks an IPv4 address, as a field error list. */
export function isValidIPv4Address(path: FieldPath, value: string): FieldError[] {
  const ip = parseIP(value);
  if (!ip || !isIPv4Mapped(ip)) return [invalid(path, value, 'must be a valid IPv4 address')];
  return [];
}

/** Checks an IPv6 address (an IPv4 address written in IPv6 form does not count), as a field error list. */
export function isValidIPv6Address(path: FieldPath, value: string): FieldError[] {
  const ip = parseIP(value);
  if (!ip || isIPv4Mapped(ip)) return [invalid(path, value, 'must be a valid IPv6 address')];
  return [];
}

/**
 * Checks a fully qualified domain name (a trailing dot allowed): a DNS-1123 subdomain of at least
 * two labels, each a DNS-1123 label. Reports one field error, like Kubernetes.
 */
export function isFullyQualifiedDomainName(path: FieldPath, name: string): FieldError[] {
  if (name.length === 0) return [required(path, '')];
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  const errs = isDNS1123Subdomain(n);
  if (errs.length > 0) return [invalid(path, n, errs.join(','))];
  const labels = n.split('.');
  if (labels.length < 2) return [invalid(path, n, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const le = isDNS1123Label(label);
    if (le.length > 0) return [invalid(path, label, le.join(','))];
  }
  return [];
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH_RE = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

/**
 * Checks a domain-prefixed path such as `acme.io/foo`: a DNS-1123 subdomain, `/`, then RFC 3986
 * path characters.
 */
export function isDomainPrefixedPath(path: FieldPath, dpPath: string): FieldError[] {
  if (dpPath.length === 0) return [required(path, '')];
  const slash = dpPath.indexOf('/');
  if (slash <= 0 || slash === dpPath.length - 1) {
    return [invalid(path, dpPath, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  }
  const host = dpPath.slice(0, slash);
  const errs = isDNS1123Subdomain(host).map((msg) => invalid(path, host, msg));
  const rest = dpPath.slice(slash + 1);
  if (!HTTP_PATH_RE.test(rest)) return [...errs, invalid(path, rest, regexError('Invalid path', HTTP_PATH_FMT))];
  return errs;
}

/** Checks a percentage string (`[0-9]+%`). */
export function isValidPercent(percent: string): string[] {
  if (PERCENT_RE.test(percent)) return [];
  return [regexError(PERCENT_ERR_MSG, PERCENT_FMT, '1%', '93%')];
}

/** Checks an HTTP header name (`[-A-Za-z0-9]+`). */
export function isHTTPHeaderName(value: string): string[] {
  if (HTTP_HEADER_NAME_RE.test(value)) return [];
  return [regexError(HTTP_HEADER_NAME_ERR_MSG, HTTP_HEADER_NAME_FMT, 'X-Header-Name')];
}

function hasChDirPrefix(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

/** Checks an environment variable name (`[-._a-zA-Z][-._a-zA-Z0-9]*`, not `.`, `..` or `..*`). */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (!ENV_VAR_NAME_RE.test(value)) {
    errs.push(regexError(ENV_VAR_NAME_ERR_MSG, ENV_VAR_NAME_FMT, 'my.env-name', 'MY_ENV.NAME', 'MyEnvName1'));
  }
  errs.push(...hasChDirPrefix(value));
  return errs;
}

/** Checks a ConfigMap or Secret key (`[-._a-zA-Z0-9]+`, at most 253 characters, not `.`/`..`). */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!CONFIG_MAP_KEY_RE.test(value)) {
    errs.push(regexError(CONFIG_MAP_KEY_ERR_MSG, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  }
  errs.push(...hasChDirPrefix(value));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Object name validators (`ValidateNameFunc`): (name, prefix) → messages. With `prefix` true the
// value is a `generateName`, to which random characters are appended, so a trailing '-' is fine.
// ---------------------------------------------------------------------------------------------

/**
 * Validates an object name or, when `prefix` is true, a `generateName` prefix. Returns the
 * problems as messages (empty when valid). Used by `validateObjectMeta`.
 */
export type NameValidator = (name: string, prefix: boolean) => string[];

function maskTrailingDash(name: string): string {
  // A generateName may end in '-' since random characters follow; check it as if they were there.
  return name.length > 1 && name.endsWith('-') ? name.slice(0, -1) + 'a' : name;
}

/** Name validator for names that must be DNS-1123 subdomains (most kinds). */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);

/** Name validator for names that must be DNS-1123 labels (namespaces, services' ports ...). */
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);

/** Name validator for names that must be DNS-1035 labels (services). */
export const nameIsDNS1035Label: NameValidator = (name, prefix) =>
  isDNS1035Label(prefix ? maskTrailingDash(name) : name);

/** Validates a namespace name (a DNS-1123 label). */
export const validateNamespaceName: NameValidator = nameIsDNSLabel;

const NAME_MAY_NOT_BE = ['.', '..'];
const NAME_MAY_NOT_CONTAIN = ['/', '%'];

/** Checks a name that is used as one segment of a URL path: not `.` or `..`, no `/` or `%`. */
export function isValidPathSegmentName(name: string): string[] {
  for (const illegal of NAME_MAY_NOT_BE) {
    if (name === illegal) return [`may not be '${illegal}'`];
  }
  return isValidPathSegmentPrefix(name);
}

/** Checks a prefix of a path segment name (a `generateName`): no `/` or `%`. */
export function isValidPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  for (const illegal of NAME_MAY_NOT_CONTAIN) {
    if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  }
  return errs;
}

/** Name validator for kinds whose names only need to be valid path segments (RBAC roles and bindings ...). */
export const validatePathSegmentName: NameValidator = (name, prefix) =>
  prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name);

// ---------------------------------------------------------------------------------------------
// Labels and annotations.
// ---------------------------------------------------------------------------------------------

/** Total size limit of all annotation keys and values of one object: 256 KiB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

function sortedKeys(map: Readonly<Record<string, string>>): string[] {
  return Object.keys(map).sort();
}

/** Validates one label key (a qualified name); errors are reported at `path` with the key as value. */
export function validateLabelName(labelName: string, path: FieldPath): FieldError[] {
  return isQualifiedName(labelName).map((msg) => invalid(path, labelName, msg));
}

/**
 * Validates a label map: every key a qualified name, every value a valid label value (or a
 * non-string, which is reported as invalid). Errors are reported at `path` itself, like Kubernetes.
 * Keys are visited in sorted order so that the result is deterministic.
 */
export function validateLabels(labels: Readonly<Record<string, string>> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (labels === undefined || labels === null) return errs;
  for (const k of sortedKeys(labels)) {
    errs.push(...validateLabelName(k, path));
    const v: unknown = labels[k];
    if (typeof v !== 'string') {
      errs.push(invalid(path.key(k), v, 'must be a string'));
      continue;
    }
    for (const msg of isValidLabelValue(v)) errs.push(invalid(path, v, msg));
  }
  return errs;
}

/**
 * Validates an annotation map: every key (compared in lower case) a qualified name, and the total
 * size of keys and values at most 256 KiB (reported as `Too long: must have at most 262144 bytes`).
 */
export function validateAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  path: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  if (annotations === undefined || annotations === null) return errs;
  let total = 0;
  for (const k of sortedKeys(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, msg));
    const v: unknown = annotations[k];
    if (typeof v !== 'string') {
      errs.push(invalid(path.key(k), v, 'must be a string'));
      continue;
    }
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) errs.push(tooLong(path, '', TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return errs;
}
