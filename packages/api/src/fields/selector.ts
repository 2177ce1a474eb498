/**
 * Field selectors: the `fieldSelector` query syntax (`metadata.name=x,spec.nodeName!=`) and its
 * matching, modelled on apimachinery `pkg/fields/selector.go` of Kubernetes 1.21. Terms are
 * `field=value`, `field==value` or `field!=value`, joined by `,`; in values, `\,` `\=` and `\\`
 * escape the special characters. A missing field compares as the empty string. Field names are not
 * validated here: each kind supports its own list, checked with `supportedFieldsTransform`.
 */

/** The field values of one object, keyed by field path (`metadata.name`, `spec.nodeName` ...). */
export type Fields = Readonly<Record<string, string>>;

/** One term of a field selector. `=` and `==` both parse to `=`. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

/**
 * Rewrites one term (field and value) of a selector, e.g. to map a field of an old API version or to
 * reject an unsupported field by throwing. Returning `['', '']` drops the term.
 */
export type FieldTransform = (field: string, value: string) => [string, string];

const BRAND = Symbol.for('@platform/api.FieldSelectorParseError');

/**
 * Thrown for a field selector that cannot be parsed (`reason: 'Syntax'`) or that names a field the
 * kind does not support (`reason: 'UnsupportedField'`). The message is Kubernetes' and is fit to be
 * returned to a client as a 400 BadRequest.
 */
export class FieldSelectorParseError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'FieldSelectorParseError';
  constructor(
    message: string,
    readonly reason: 'Syntax' | 'UnsupportedField' = 'Syntax',
  ) {
    super(message);
  }
}

/** Brand check for `FieldSelectorParseError` (works across duplicate copies of this package). */
export function isFieldSelectorParseError(err: unknown): err is FieldSelectorParseError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

const hasOwn = Object.prototype.hasOwnProperty;

function get(fields: Fields | undefined, field: string): string {
  if (fields === undefined || fields === null || !hasOwn.call(fields, field)) return '';
  const v: unknown = fields[field];
  return typeof v === 'string' ? v : '';
}

/** A parsed field selector: the AND of its terms. Immutable. */
export interface FieldSelector {
  /** True when every term holds for `fields` (a missing field counts as `''`). */
  matches(fields: Fields | undefined): boolean;
  /** True when the selector does not restrict anything. */
  isEmpty(): boolean;
  /** The canonical text: terms in parse order (sorted), values escaped; `==` printed as `=`. */
  toString(): string;
  /** The terms of the selector. */
  requirements(): readonly FieldRequirement[];
  /** The value `field` must equal for the selector to match, if a `field=value` term pins it; else `undefined`. */
  requiresExactMatch(field: string): string | undefined;
  /** A new selector with `fn` applied to every term; errors thrown by `fn` propagate. */
  transform(fn: FieldTransform): FieldSelector;
}

class AndSelector implements FieldSelector {
  constructor(private readonly reqs: readonly FieldRequirement[]) {}

  matches(fields: Fields | undefined): boolean {
    for (const r of this.reqs) {
      const v = get(fields, r.field);
      if (r.operator === '=' ? v !== r.value : v === r.value) return false;
    }
    return true;
  }

  isEmpty(): boolean {
    return this.reqs.length === 0;
  }

  toString(): string {
    return this.reqs.map((r) => `${r.field}${r.operator}${escapeValue(r.value)}`).join(',');
  }

  requirements(): readonly FieldRequirement[] {
    return this.reqs;
  }

  requiresExactMatch(field: string): string | undefined {
    for (const r of this.reqs) if (r.field === field && r.operator === '=') return r.value;
    return undefined;
  }

  transform(fn: FieldTransform): FieldSelector {
    const out: FieldRequirement[] = [];
    for (const r of this.reqs) {
      const [field, value] = fn(r.field, r.value);
      if (field.length === 0 && value.length === 0) continue;
      out.push(Object.freeze({ field, operator: r.operator, value }));
    }
    return new AndSelector(Object.freeze(out));
  }
}

class NothingSelector implements FieldSelector {
  matches(): boolean {
    return false;
  }
  isEmpty(): boolean {
    return false;
  }
  toString(): string {
    return '';
  }
  requirements(): readonly FieldRequirement[] {
    return [];
  }
  requiresExactMatch(): string | undefined {
    return undefined;
  }
  transform(): FieldSelector {
    return this;
  }
}

const EVERYTHING: FieldSelector = new AndSelector(Object.freeze([]));
const NOTHING: FieldSelector = new NothingSelector();

/** The field selector that matches every object. */
export function everythingFields(): FieldSelector {
  return EVERYTHING;
}

/** The field selector that matches no object. */
export function nothingFields(): FieldSelector {
  return NOTHING;
}

/** A selector with the single term `field=value`. */
export function oneTermEqualSelector(field: string, value: string): FieldSelector {
  return new AndSelector(Object.freeze([Object.freeze({ field, operator: '=' as const, value })]));
}

/** A selector with the single term `field!=value`. */
export function oneTermNotEqualSelector(field: string, value: string): FieldSelector {
  return new AndSelector(Object.freeze([Object.freeze({ field, operator: '!=' as const, value })]));
}

/** The AND of several selectors; `nothingFields()` among them makes the result match nothing. */
export function andFieldSelectors(...selectors: FieldSelector[]): FieldSelector {
  if (selectors.some((s) => s instanceof NothingSelector)) return NOTHING;
  return new AndSelector(Object.freeze(selectors.flatMap((s) => s.requirements())));
}

/** A selector matching exactly the given field values, terms sorted by field. */
export function fieldSelectorFromSet(set: Fields | undefined): FieldSelector {
  if (set === undefined || set === null) return EVERYTHING;
  const reqs = Object.keys(set)
    .sort()
    .map((field) => Object.freeze({ field, operator: '=' as const, value: set[field] as string }));
  return new AndSelector(Object.freeze(reqs));
}

/** Escapes `\`, `,` and `=` in a literal value for use in a field selector. */
export function escapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * Unescapes a field selector value. Throws `FieldSelectorParseError` for an unknown escape
 * (`invalid field selector: invalid escape sequence: \x`), a trailing backslash, or an unescaped
 * `,` or `=` (`invalid field selector: unescaped character in value: 61`, Go printing the rune's code).
 */
export function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new FieldSelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      throw new FieldSelectorParseError(
        `invalid field selector: unescaped character in value: ${c.codePointAt(0) as number}`,
      );
    } else out += c;
  }
  if (inSlash) throw new FieldSelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Splits on unescaped commas; escaped commas stay in the terms, backslash included. */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

function splitTerm(term: string): [string, (typeof TERM_OPERATORS)[number], string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

const NEEDS_BYTE_ORDER = /[\ud800-\uffff]/;

function byteOrder(a: string, b: string): number {
  // Go sorts strings by UTF-8 bytes. UTF-16 code-unit order is the same except where surrogates
  // meet characters U+E000 and above, so only such strings need the slower byte comparison.
  if (NEEDS_BYTE_ORDER.test(a) || NEEDS_BYTE_ORDER.test(b)) {
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Parses a field selector string. The empty string gives `everythingFields()`. Terms are sorted
 * (as Kubernetes does) so that equal selectors print equally. Whitespace is not trimmed: it is part
 * of field names and values, as in Kubernetes. Throws `FieldSelectorParseError` on bad syntax
 * (`invalid selector: 'x'; can't understand 'x'`) or bad escaping.
 */
export function parseFieldSelector(selector: string): FieldSelector {
  return parseAndTransformFieldSelector(selector, (f, v) => [f, v]);
}

/** Parses like `parseFieldSelector`, then applies `fn` to every term (see `FieldSelector.transform`). */
export function parseAndTransformFieldSelector(selector: string, fn: FieldTransform): FieldSelector {
  if (typeof selector !== 'string') throw new FieldSelectorParseError('field selector must be a string');
  const parts = splitTerms(selector).sort(byteOrder);
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (split === undefined) {
      throw new FieldSelectorParseError(`invalid selector: '${selector}'; can't understand '${part}'`);
    }
    const [field, op, rhs] = split;
    reqs.push(Object.freeze({ field, operator: op === '!=' ? '!=' : '=', value: unescapeValue(rhs) }));
  }
  return new AndSelector(Object.freeze(reqs)).transform(fn);
}

/**
 * A transform that accepts only the given field names and rejects any other with Kubernetes' error
 * for a kind's field label conversion: `field label not supported: spec.foo`
 * (`FieldSelectorParseError` with reason `UnsupportedField`, a 400 BadRequest).
 */
export function supportedFieldsTransform(supported: readonly string[]): FieldTransform {
  const set = new Set(supported);
  return (field, value) => {
    if (!set.has(field)) throw new FieldSelectorParseError(`field label not supported: ${field}`, 'UnsupportedField');
    return [field, value];
  };
}

/**
 * Checks every field of `selector` against the kind's supported fields; throws like
 * `supportedFieldsTransform` for the first unsupported one. Returns the selector for chaining.
 */
export function checkSupportedFields(selector: FieldSelector, supported: readonly string[]): FieldSelector {
  return selector.transform(supportedFieldsTransform(supported));
}

/** The fields every kind supports: `metadata.name`, plus `metadata.namespace` for namespaced kinds. */
export function defaultSupportedFields(namespaced: boolean): readonly string[] {
  return namespaced ? ['metadata.name', 'metadata.namespace'] : ['metadata.name'];
}

/**
 * The metadata fields of an object for matching (`generic.ObjectMetaFieldsSet`): `metadata.name`
 * and, for namespaced kinds, `metadata.namespace`.
 */
export function objectMetaFieldsSet(
  meta: { name?: string; namespace?: string } | undefined,
  namespaced: boolean,
): Record<string, string> {
  const out: Record<string, string> = { 'metadata.name': meta?.name ?? '' };
  if (namespaced) out['metadata.namespace'] = meta?.namespace ?? '';
  return out;
}
