/**
 * The `LabelSelector` object of the API (`matchLabels` + `matchExpressions`, as in
 * `metav1.LabelSelector` of Kubernetes 1.21) and its conversions: to a `Selector`, to the selector
 * string, from a selector string, and its field validation (`ValidateLabelSelector`).
 */
import { type FieldPath, forbidden, invalid, required, type FieldError } from '../validation/field-errors';
import { goQuote } from '../validation/go-format';
import { isValidLabelValue, validateLabelName, validateLabels } from '../validation/names';
import {
  LabelSelectorParseError,
  everything,
  newRequirement,
  nothing,
  parseSelector,
  selectorFromRequirements,
  type Labels,
  type Operator,
  type Requirement,
  type Selector,
} from './selector';

/** The operator of a `matchExpressions` entry. */
export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/** One `matchExpressions` entry: `key` related to `values` by `operator`. */
export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

/**
 * A label selector object. Both parts are ANDed. An empty object selects everything; a `null` or
 * absent selector (where the API allows one) selects nothing.
 */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

const OPERATOR_MAP: Readonly<Record<LabelSelectorOperator, Operator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * Converts a `LabelSelector` object into a `Selector`. `null`/`undefined` gives `nothing()`, an
 * empty object `everything()`. Throws `LabelSelectorParseError` for an unknown operator
 * (`"Foo" is not a valid pod selector operator`) or an invalid requirement.
 */
export function labelSelectorAsSelector(ls: LabelSelector | null | undefined): Selector {
  if (ls === null || ls === undefined) return nothing();
  const matchLabels = ls.matchLabels ?? {};
  const exprs = ls.matchExpressions ?? [];
  const labelKeys = Object.keys(matchLabels);
  if (labelKeys.length + exprs.length === 0) return everything();
  const reqs: Requirement[] = labelKeys.map((k) => newRequirement(k, '=', [matchLabels[k] as string]));
  for (const expr of exprs) {
    const op = hasOwnOperator(expr.operator) ? OPERATOR_MAP[expr.operator] : undefined;
    if (op === undefined) {
      throw new LabelSelectorParseError(`${goQuote(String(expr.operator))} is not a valid pod selector operator`);
    }
    reqs.push(newRequirement(expr.key, op, expr.values ?? []));
  }
  return selectorFromRequirements(reqs);
}

function hasOwnOperator(op: unknown): op is LabelSelectorOperator {
  return typeof op === 'string' && Object.prototype.hasOwnProperty.call(OPERATOR_MAP, op);
}

/**
 * The selector string of a `LabelSelector` object as `kubectl` prints it (`metav1.FormatLabelSelector`):
 * `<none>` when it selects everything or nothing, `<error>` when it is invalid.
 */
export function formatLabelSelector(ls: LabelSelector | null | undefined): string {
  let s: string;
  try {
    s = labelSelectorAsSelector(ls).toString();
  } catch {
    return '<error>';
  }
  return s.length === 0 ? '<none>' : s;
}

/**
 * True when `labels` satisfy the selector object; `null`/`undefined` selects nothing and an
 * empty object everything. An invalid selector matches nothing (use `validateLabelSelector` to
 * report it).
 */
export function matchesLabelSelector(ls: LabelSelector | null | undefined, labels: Labels | undefined): boolean {
  try {
    return labelSelectorAsSelector(ls).matches(labels);
  } catch {
    return false;
  }
}

/**
 * Converts a selector string into a `LabelSelector` object (`metav1.ParseToLabelSelector`):
 * `k=v`/`k==v` go to `matchLabels`, `!=` becomes `NotIn` with one value, set-based and existence
 * requirements go to `matchExpressions`. Throws `LabelSelectorParseError` on bad syntax and for
 * `>`/`<`, which have no object form.
 */
export function parseToLabelSelector(selector: string): LabelSelector {
  const reqs = parseSelector(selector).requirements();
  const out: LabelSelector = { matchLabels: {}, matchExpressions: [] };
  for (const r of reqs) {
    switch (r.operator) {
      case '=':
      case '==':
        (out.matchLabels as Record<string, string>)[r.key] = r.values[0] as string;
        break;
      case '!=':
        out.matchExpressions?.push({ key: r.key, operator: 'NotIn', values: [...r.values] });
        break;
      case 'in':
        out.matchExpressions?.push({ key: r.key, operator: 'In', values: [...r.values] });
        break;
      case 'notin':
        out.matchExpressions?.push({ key: r.key, operator: 'NotIn', values: [...r.values] });
        break;
      case 'exists':
        out.matchExpressions?.push({ key: r.key, operator: 'Exists' });
        break;
      case '!':
        out.matchExpressions?.push({ key: r.key, operator: 'DoesNotExist' });
        break;
      default:
        throw new LabelSelectorParseError(`${goQuote(r.operator)} isn't supported in label selectors`);
    }
  }
  return out;
}

/**
 * Validates a `LabelSelector` object as a field (`ValidateLabelSelector`): matchLabels keys and
 * values; each expression's operator, key, and values (required for In/NotIn, forbidden for
 * Exists/DoesNotExist, each a valid label value). `null`/`undefined` is valid.
 */
export function validateLabelSelector(ls: LabelSelector | null | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (ls === null || ls === undefined) return errs;
  if (typeof ls !== 'object' || Array.isArray(ls)) return [invalid(path, ls, 'must be an object')];
  if (ls.matchLabels !== undefined && ls.matchLabels !== null) {
    if (typeof ls.matchLabels !== 'object' || Array.isArray(ls.matchLabels)) {
      errs.push(invalid(path.child('matchLabels'), ls.matchLabels, 'must be a map of strings'));
    } else {
      errs.push(...validateLabels(ls.matchLabels, path.child('matchLabels')));
    }
  }
  const exprs = ls.matchExpressions;
  if (exprs !== undefined && exprs !== null) {
    if (!Array.isArray(exprs)) {
      errs.push(invalid(path.child('matchExpressions'), exprs, 'must be a list'));
    } else {
      exprs.forEach((expr, i) =>
        errs.push(...validateLabelSelectorRequirement(expr, path.child('matchExpressions').index(i))),
      );
    }
  }
  return errs;
}

/** Validates one `matchExpressions` entry; see `validateLabelSelector`. */
export function validateLabelSelectorRequirement(expr: LabelSelectorRequirement, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (expr === null || typeof expr !== 'object') return [invalid(path, expr, 'must be an object')];
  const values = expr.values ?? [];
  switch (expr.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) {
        errs.push(required(path.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      }
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) {
        errs.push(
          forbidden(path.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        );
      }
      break;
    default:
      errs.push(invalid(path.child('operator'), expr.operator, 'not a valid selector operator'));
  }
  errs.push(...validateLabelName(typeof expr.key === 'string' ? expr.key : '', path.child('key')));
  if (Array.isArray(values)) {
    values.forEach((v, i) => {
      const p = path.child('values').index(i);
      if (typeof v !== 'string') errs.push(invalid(p, v, 'must be a string'));
      else for (const msg of isValidLabelValue(v)) errs.push(invalid(p, v, msg));
    });
  } else {
    errs.push(invalid(path.child('values'), values, 'must be a list'));
  }
  return errs;
}
