/**
 * Label selectors: the `labelSelector` query syntax and its matching, modelled on apimachinery
 * `pkg/labels/selector.go` of Kubernetes 1.21 (same grammar, same canonical string, same error
 * wording). A selector is parsed once into requirements sorted by key, each compiled to a small
 * matcher, so `matches` does no parsing and no regular expressions.
 *
 *   <selector>    ::= <requirement> | <requirement> "," <selector>
 *   <requirement> ::= [!] KEY [ ("in" | "notin") "(" VALUES ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
 *
 * KEY is a qualified name (`[prefix/]name`), VALUE a label value (may be empty). Whitespace (space,
 * tab, CR, LF) separates tokens and is otherwise ignored.
 */
import { isQualifiedName, isValidLabelValue } from '../validation/names';
import { goQuote } from '../validation/go-format';

/** A set of labels, as in `metadata.labels`. `undefined` is the empty set. */
export type Labels = Readonly<Record<string, string>>;

/** A requirement operator, spelled as Go's `selection.Operator`. `gt`/`lt` compare integers. */
export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

/** Every operator a requirement may use, in Kubernetes order. */
export const OPERATORS: readonly Operator[] = ['in', 'notin', '=', '==', '!=', 'exists', '!', 'gt', 'lt'];

const BRAND = Symbol.for('@platform/api.LabelSelectorParseError');

/**
 * Thrown for a label selector that cannot be parsed or a requirement that is invalid. The message
 * is the Kubernetes one (`unable to parse requirement: ...`, `found ',', expected: ...`) and is fit
 * to be returned to a client as a 400 BadRequest.
 */
export class LabelSelectorParseError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'LabelSelectorParseError';
}

/** Brand check for `LabelSelectorParseError` (works across duplicate copies of this package). */
export function isLabelSelectorParseError(err: unknown): err is LabelSelectorParseError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

const hasOwn = Object.prototype.hasOwnProperty;

function lookup(labels: Labels | undefined, key: string): string | undefined {
  if (labels === undefined || labels === null) return undefined;
  // Own properties only: a label may well be called `constructor` or `__proto__`.
  if (!hasOwn.call(labels, key)) return undefined;
  const v: unknown = labels[key];
  return typeof v === 'string' ? v : undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Parses a base-10 int64 as Go's `strconv.ParseInt(s, 10, 64)`; `undefined` when it is not one. */
function parseInt64(s: string): bigint | undefined {
  // A character loop rather than a regular expression: this runs on every gt/lt match.
  let i = s[0] === '+' || s[0] === '-' ? 1 : 0;
  if (i === s.length) return undefined;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  if (s.length < 16) return BigInt(s); // cannot overflow int64
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

function sortedUnlessSorted(values: readonly string[]): readonly string[] {
  for (let i = 1; i < values.length; i++) {
    if ((values[i - 1] as string) > (values[i] as string)) return [...values].sort();
  }
  return values;
}

/**
 * One condition on one label key. Immutable; create with `newRequirement`, which validates.
 */
export class Requirement {
  /** @internal use `newRequirement`. */
  readonly matches: (labels: Labels | undefined) => boolean;

  /** @internal use `newRequirement`. */
  constructor(
    readonly key: string,
    readonly operator: Operator,
    readonly values: readonly string[],
  ) {
    this.matches = compile(key, operator, values);
  }

  /** The canonical text of the requirement (`a in (x,y)`, `!b`, `c!=d`); values are printed sorted. */
  toString(): string {
    const prefix = this.operator === '!' ? '!' : '';
    let op: string;
    switch (this.operator) {
      case 'exists':
      case '!':
        return prefix + this.key;
      case '=':
      case '==':
      case '!=':
        op = this.operator;
        break;
      case 'in':
        op = ' in ';
        break;
      case 'notin':
        op = ' notin ';
        break;
      case 'gt':
        op = '>';
        break;
      case 'lt':
        op = '<';
        break;
    }
    const vals = this.values.length === 1 ? (this.values[0] as string) : sortedUnlessSorted(this.values).join(',');
    const set = this.operator === 'in' || this.operator === 'notin';
    return `${this.key}${op}${set ? '(' : ''}${vals}${set ? ')' : ''}`;
  }

  /** True when both requirements have the same key, operator and values (in the same order). */
  equals(other: Requirement): boolean {
    return (
      this.key === other.key &&
      this.operator === other.operator &&
      this.values.length === other.values.length &&
      this.values.every((v, i) => v === other.values[i])
    );
  }
}

function compile(key: string, op: Operator, values: readonly string[]): (labels: Labels | undefined) => boolean {
  switch (op) {
    case 'in':
    case '=':
    case '==': {
      if (values.length === 1) {
        const want = values[0];
        return (ls) => lookup(ls, key) === want;
      }
      const set = new Set(values);
      return (ls) => {
        const v = lookup(ls, key);
        return v !== undefined && set.has(v);
      };
    }
    case 'notin':
    case '!=': {
      if (values.length === 1) {
        const unwanted = values[0];
        return (ls) => lookup(ls, key) !== unwanted;
      }
      const set = new Set(values);
      return (ls) => {
        const v = lookup(ls, key);
        return v === undefined || !set.has(v);
      };
    }
    case 'exists':
      return (ls) => lookup(ls, key) !== undefined;
    case '!':
      return (ls) => lookup(ls, key) === undefined;
    case 'gt':
    case 'lt': {
      const bound = values.length === 1 ? parseInt64(values[0] as string) : undefined;
      if (bound === undefined) return () => false;
      return (ls) => {
        const raw = lookup(ls, key);
        if (raw === undefined) return false;
        const v = parseInt64(raw);
        if (v === undefined) return false;
        return op === 'gt' ? v > bound : v < bound;
      };
    }
  }
}

/**
 * Creates a validated requirement. Throws `LabelSelectorParseError` when the key is not a qualified
 * name, a value is not a label value, the operator is unknown, or the number of values does not fit
 * the operator (in/notin: at least one; =, ==, !=: exactly one; exists/!: none; gt/lt: one integer).
 * The empty string is a valid value.
 */
export function newRequirement(key: string, operator: Operator, values: readonly string[] = []): Requirement {
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length > 0) {
    throw new LabelSelectorParseError(`invalid label key ${goQuote(key)}: ${keyErrs.join('; ')}`);
  }
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) {
        throw new LabelSelectorParseError("for 'in', 'notin' operators, values set can't be empty");
      }
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) {
        throw new LabelSelectorParseError('exact-match compatibility requires one single value');
      }
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) {
        throw new LabelSelectorParseError('values set must be empty for exists and does not exist');
      }
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) {
        throw new LabelSelectorParseError("for 'Gt', 'Lt' operators, exactly one value is required");
      }
      if (values.some((v) => parseInt64(v) === undefined)) {
        throw new LabelSelectorParseError("for 'Gt', 'Lt' operators, the value must be an integer");
      }
      break;
    default:
      throw new LabelSelectorParseError(`operator '${String(operator)}' is not recognized`);
  }
  for (const v of values) {
    if (typeof v !== 'string')
      throw new LabelSelectorParseError(`invalid label value at key ${goQuote(key)}: not a string`);
    const errs = isValidLabelValue(v);
    if (errs.length > 0) {
      throw new LabelSelectorParseError(
        `invalid label value: ${goQuote(v)}: at key: ${goQuote(key)}: ${errs.join('; ')}`,
      );
    }
  }
  return new Requirement(key, operator, Object.freeze([...values]));
}

/**
 * A parsed label selector: the AND of its requirements. Immutable.
 */
export interface Selector {
  /** True when every requirement holds for `labels` (`undefined` is the empty label set). */
  matches(labels: Labels | undefined): boolean;
  /** True when the selector does not restrict anything (it matches every object). */
  isEmpty(): boolean;
  /** False only for `nothing()`, which selects no object at all. */
  isSelectable(): boolean;
  /** The canonical text: requirements sorted by key, joined by `,`; `''` for everything and nothing. */
  toString(): string;
  /** The requirements, sorted by key. Empty for `everything()` and `nothing()`. */
  requirements(): readonly Requirement[];
  /** A new selector with `reqs` added (the result is sorted by key again). */
  add(...reqs: Requirement[]): Selector;
  /**
   * The value a label must have for the selector to match, when the selector pins the label
   * to exactly one value (`k=v`, `k==v`, `k in (v)`); else `undefined`.
   */
  requiresExactMatch(label: string): string | undefined;
}

class InternalSelector implements Selector {
  private readonly reqs: readonly Requirement[];
  private readonly matchers: ReadonlyArray<(labels: Labels | undefined) => boolean>;

  constructor(reqs: readonly Requirement[]) {
    // A stable sort keeps requirements on one key in input order, as Go's small-slice sort does.
    this.reqs = Object.freeze([...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
    this.matchers = this.reqs.map((r) => r.matches);
  }

  matches(labels: Labels | undefined): boolean {
    const m = this.matchers;
    for (let i = 0; i < m.length; i++) {
      if (!(m[i] as (l: Labels | undefined) => boolean)(labels)) return false;
    }
    return true;
  }

  isEmpty(): boolean {
    return this.reqs.length === 0;
  }

  isSelectable(): boolean {
    return true;
  }

  toString(): string {
    return this.reqs.map((r) => r.toString()).join(',');
  }

  requirements(): readonly Requirement[] {
    return this.reqs;
  }

  add(...reqs: Requirement[]): Selector {
    return new InternalSelector([...this.reqs, ...reqs]);
  }

  requiresExactMatch(label: string): string | undefined {
    for (const r of this.reqs) {
      if (r.key !== label) continue;
      if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) {
        return r.values[0];
      }
      return undefined;
    }
    return undefined;
  }
}

class NothingSelector implements Selector {
  matches(): boolean {
    return false;
  }
  isEmpty(): boolean {
    return false;
  }
  isSelectable(): boolean {
    return false;
  }
  toString(): string {
    return '';
  }
  requirements(): readonly Requirement[] {
    return [];
  }
  add(): Selector {
    return this;
  }
  requiresExactMatch(): string | undefined {
    return undefined;
  }
}

const EVERYTHING: Selector = new InternalSelector([]);
const NOTHING: Selector = new NothingSelector();

/** The selector that matches every label set (the empty selector). */
export function everything(): Selector {
  return EVERYTHING;
}

/** The selector that matches nothing (what a `null` LabelSelector object means). */
export function nothing(): Selector {
  return NOTHING;
}

/** A selector made of the given requirements (validated by `newRequirement` already). */
export function selectorFromRequirements(reqs: readonly Requirement[]): Selector {
  return reqs.length === 0 ? EVERYTHING : new InternalSelector(reqs);
}

/**
 * A selector that matches exactly the given labels (`k1=v1,k2=v2`, keys sorted); the empty or
 * absent set gives `everything()`. Like Kubernetes' `SelectorFromSet`, keys and values are not
 * validated (a server will reject a bad one); never throws. See `validatedSelectorFromSet`.
 */
export function selectorFromSet(labels: Labels | undefined): Selector {
  if (labels === undefined || labels === null) return EVERYTHING;
  const reqs = Object.keys(labels).map((k) => new Requirement(k, '=', Object.freeze([labels[k] as string])));
  return selectorFromRequirements(reqs);
}

/** Another name of `selectorFromSet`, as Kubernetes' `SelectorFromValidatedSet`. */
export const selectorFromValidatedSet = selectorFromSet;

/**
 * Like `selectorFromSet`, but validates every key and value first (Kubernetes'
 * `ValidatedSelectorFromSet`): throws `LabelSelectorParseError` for a bad one.
 */
export function validatedSelectorFromSet(labels: Labels | undefined): Selector {
  if (labels === undefined || labels === null) return EVERYTHING;
  const reqs = Object.keys(labels).map((k) => newRequirement(k, '=', [labels[k] as string]));
  return selectorFromRequirements(reqs);
}

// ---------------------------------------------------------------------------------------------
// Lexer and parser (a direct port of the Kubernetes one, so that errors read the same).
// ---------------------------------------------------------------------------------------------

const enum Tok {
  Error,
  EndOfString,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const STRING_TO_TOKEN: ReadonlyMap<string, Tok> = new Map([
  [')', Tok.ClosedPar],
  [',', Tok.Comma],
  ['!', Tok.DoesNotExist],
  ['==', Tok.DoubleEquals],
  ['=', Tok.Equals],
  ['>', Tok.GreaterThan],
  ['in', Tok.In],
  ['<', Tok.LessThan],
  ['!=', Tok.NotEquals],
  ['notin', Tok.NotIn],
  ['(', Tok.OpenPar],
]);

interface Item {
  tok: Tok;
  lit: string;
}

function isWhitespace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n';
}

function isSpecial(c: string): boolean {
  return c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<';
}

function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos] as string)) pos++;
    if (pos >= s.length) {
      items.push({ tok: Tok.EndOfString, lit: '' });
      return items;
    }
    const c = s[pos] as string;
    if (isSpecial(c)) {
      // Longest run of special characters that still forms a known operator.
      let buffer = '';
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos] as string)) {
        buffer += s[pos];
        const t = STRING_TO_TOKEN.get(buffer);
        if (t !== undefined) {
          last = { tok: t, lit: buffer };
          pos++;
        } else if (last !== undefined) {
          break;
        } else {
          pos++;
        }
      }
      items.push(last ?? { tok: Tok.Error, lit: `error expected: keyword found '${buffer}'` });
      continue;
    }
    const start = pos;
    while (pos < s.length && !isSpecial(s[pos] as string) && !isWhitespace(s[pos] as string)) pos++;
    const word = s.slice(start, pos);
    items.push({ tok: STRING_TO_TOKEN.get(word) ?? Tok.Identifier, lit: word });
  }
}

const enum Ctx {
  KeyAndOperator,
  Values,
}

class Parser {
  private position = 0;
  constructor(private readonly items: Item[]) {}

  private lookahead(ctx: Ctx): Item {
    const it = this.items[this.position] as Item;
    if (ctx === Ctx.Values && (it.tok === Tok.In || it.tok === Tok.NotIn)) return { tok: Tok.Identifier, lit: it.lit };
    return it;
  }

  private consume(ctx: Ctx): Item {
    const it = this.lookahead(ctx);
    // EndOfString is sticky: consuming it again yields it again.
    if (this.position < this.items.length - 1) this.position++;
    return it;
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(Ctx.Values);
      switch (tok) {
        case Tok.Identifier:
        case Tok.DoesNotExist: {
          let r: Requirement;
          try {
            r = this.parseRequirement();
          } catch (err) {
            throw new LabelSelectorParseError(`unable to parse requirement: ${(err as Error).message}`);
          }
          reqs.push(r);
          const next = this.consume(Ctx.Values);
          switch (next.tok) {
            case Tok.EndOfString:
              return reqs;
            case Tok.Comma: {
              const after = this.lookahead(Ctx.Values);
              if (after.tok !== Tok.Identifier && after.tok !== Tok.DoesNotExist) {
                throw new LabelSelectorParseError(`found '${after.lit}', expected: identifier after ','`);
              }
              break;
            }
            default:
              throw new LabelSelectorParseError(`found '${next.lit}', expected: ',' or 'end of string'`);
          }
          break;
        }
        case Tok.EndOfString:
          return reqs;
        default:
          throw new LabelSelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): Requirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return newRequirement(key, operator, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort());
  }

  private parseKeyAndInferOperator(): { key: string; operator: Operator | undefined } {
    let operator: Operator | undefined;
    let it = this.consume(Ctx.Values);
    if (it.tok === Tok.DoesNotExist) {
      operator = '!';
      it = this.consume(Ctx.Values);
    }
    if (it.tok !== Tok.Identifier) throw new LabelSelectorParseError(`found '${it.lit}', expected: identifier`);
    const keyErrs = isQualifiedName(it.lit);
    if (keyErrs.length > 0) {
      throw new LabelSelectorParseError(`invalid label key ${goQuote(it.lit)}: ${keyErrs.join('; ')}`);
    }
    const next = this.lookahead(Ctx.Values).tok;
    if ((next === Tok.EndOfString || next === Tok.Comma) && operator !== '!') operator = 'exists';
    return { key: it.lit, operator };
  }

  private parseOperator(): Operator {
    const { tok, lit } = this.consume(Ctx.KeyAndOperator);
    switch (tok) {
      case Tok.In:
        return 'in';
      case Tok.Equals:
        return '=';
      case Tok.DoubleEquals:
        return '==';
      case Tok.GreaterThan:
        return 'gt';
      case Tok.LessThan:
        return 'lt';
      case Tok.NotIn:
        return 'notin';
      case Tok.NotEquals:
        return '!=';
      default:
        throw new LabelSelectorParseError(`found '${lit}', expected: '=', '!=', '==', 'in', notin'`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.consume(Ctx.Values);
    if (open.tok !== Tok.OpenPar) throw new LabelSelectorParseError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead(Ctx.Values);
    switch (tok) {
      case Tok.Identifier:
      case Tok.Comma: {
        const s = this.parseIdentifiersList();
        if (this.consume(Ctx.Values).tok !== Tok.ClosedPar) {
          throw new LabelSelectorParseError(`found '${lit}', expected: ')'`);
        }
        return s;
      }
      case Tok.ClosedPar:
        this.consume(Ctx.Values);
        return new Set(['']);
      default:
        throw new LabelSelectorParseError(`found '${lit}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume(Ctx.Values);
      switch (tok) {
        case Tok.Identifier: {
          s.add(lit);
          const next = this.lookahead(Ctx.Values);
          switch (next.tok) {
            case Tok.Comma:
              continue;
            case Tok.ClosedPar:
              return s;
            default:
              throw new LabelSelectorParseError(`found '${next.lit}', expected: ',' or ')'`);
          }
        }
        case Tok.Comma: {
          if (s.size === 0) s.add(''); // "(," means an empty value first
          const next = this.lookahead(Ctx.Values).tok;
          if (next === Tok.ClosedPar) {
            s.add(''); // ",)" means an empty value last
            return s;
          }
          if (next === Tok.Comma) {
            this.consume(Ctx.Values);
            s.add(''); // ",," means an empty value between
          }
          break;
        }
        default:
          throw new LabelSelectorParseError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(Ctx.Values).tok;
    if (next === Tok.EndOfString || next === Tok.Comma) return new Set(['']);
    const { tok, lit } = this.consume(Ctx.Values);
    if (tok === Tok.Identifier) return new Set([lit]);
    throw new LabelSelectorParseError(`found '${lit}', expected: identifier`);
  }
}

/**
 * Parses a label selector string (the `labelSelector` query parameter, `kubectl -l`). The empty
 * string (or only whitespace) gives `everything()`. Throws `LabelSelectorParseError` with the
 * Kubernetes message on bad syntax, an invalid key or value, or a wrong number of values.
 */
export function parseSelector(selector: string): Selector {
  if (typeof selector !== 'string') throw new LabelSelectorParseError('label selector must be a string');
  return selectorFromRequirements(new Parser(lex(selector)).parse());
}

/** Parses a selector string into its requirements (sorted by key), for callers that inspect them. */
export function parseToRequirements(selector: string): readonly Requirement[] {
  return parseSelector(selector).requirements();
}
