/**
 * Field errors: the validation result type of the whole platform, modelled on apimachinery
 * `pkg/util/validation/field` (errors.go, path.go). A validator returns every problem it finds as a
 * `FieldError[]`; the registry turns a non-empty list into a 422 `Invalid` Status whose
 * `details.causes` carry `type`, `field` and the message. The printed form is exactly Go's
 * `field.Error.Error()` so that clients see the messages Kubernetes users know.
 */
import { goNumber, goQuote } from './go-format';

/** The kind of a field error; the strings are the `StatusCause.type` values of Kubernetes. */
export type FieldErrorType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

/**
 * One validation problem. `field` is the printed path (`spec.containers[0].image`), `badValue` the
 * offending value when one is meaningful, `detail` a human explanation (may be empty).
 */
export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail: string;
}

type PathElement = { readonly name: string } | { readonly index: string };

/**
 * An immutable path to a field, printed as Kubernetes prints `field.Path`: names joined by dots,
 * list indexes and map keys in brackets (`spec.containers[0].ports`, `metadata.labels[app]`).
 * `new FieldPath()` is the empty root, printed as `''`; every method returns a new path.
 */
export class FieldPath {
  private readonly elements: readonly PathElement[];

  /** Builds a path from field names, e.g. `new FieldPath('spec', 'template')`. */
  constructor(...segments: string[]) {
    this.elements = segments.map((name) => ({ name }));
  }

  private static of(elements: readonly PathElement[]): FieldPath {
    const p = new FieldPath();
    (p as unknown as { elements: readonly PathElement[] }).elements = elements;
    return p;
  }

  /** The path of a child field (or a chain of them): `metadata` → `metadata.name`. */
  child(name: string, ...more: string[]): FieldPath {
    return FieldPath.of([...this.elements, { name }, ...more.map((n) => ({ name: n }))]);
  }

  /** The path of a list element: `containers` → `containers[3]`. */
  index(i: number): FieldPath {
    return FieldPath.of([...this.elements, { index: String(i) }]);
  }

  /** The path of a map entry: `labels` → `labels[app]`. */
  key(k: string): FieldPath {
    return FieldPath.of([...this.elements, { index: k }]);
  }

  /** The printed path, as Go's `(*field.Path).String()`. */
  toString(): string {
    let out = '';
    for (let i = 0; i < this.elements.length; i++) {
      const e = this.elements[i] as PathElement;
      if ('name' in e) {
        if (i > 0 && e.name.length > 0) out += '.';
        out += e.name;
      } else {
        out += `[${e.index}]`;
      }
    }
    return out;
  }
}

/** A value is invalid; `detail` says why. */
export function invalid(path: FieldPath, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field: path.toString(), badValue: value, detail };
}

/**
 * One `FieldValueInvalid` error per message at `path`, e.g. `invalidEach(path, name, isDNS1123Label(name))`:
 * the usual way to turn an `is…` check into field errors.
 */
export function invalidEach(path: FieldPath, value: unknown, messages: readonly string[]): FieldError[] {
  return messages.map((detail) => invalid(path, value, detail));
}

/** A required value is missing; `detail` may say what was expected (may be empty). */
export function required(path: FieldPath, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field: path.toString(), badValue: '', detail };
}

/** A value refers to something that does not exist (printed `Not found: <value>`). */
export function notFound(path: FieldPath, value: unknown): FieldError {
  return { type: 'FieldValueNotFound', field: path.toString(), badValue: value, detail: '' };
}

/** A value that must be unique appears twice. */
export function duplicate(path: FieldPath, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field: path.toString(), badValue: value, detail: '' };
}

/** A value is not one of `validValues` (listed in the detail, each quoted, in the order given). */
export function notSupported(path: FieldPath, value: unknown, validValues: readonly string[]): FieldError {
  const detail = validValues.length > 0 ? 'supported values: ' + validValues.map(goQuote).join(', ') : '';
  return { type: 'FieldValueNotSupported', field: path.toString(), badValue: value, detail };
}

/** The field may not be set (or changed) in this context; `detail` says why. */
export function forbidden(path: FieldPath, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field: path.toString(), badValue: '', detail };
}

/** A value is longer than `maxLength` bytes. */
export function tooLong(path: FieldPath, value: unknown, maxLength: number): FieldError {
  return {
    type: 'FieldValueTooLong',
    field: path.toString(),
    badValue: value,
    detail: `must have at most ${maxLength} bytes`,
  };
}

/** A list has `actual` items where at most `max` are allowed. */
export function tooMany(path: FieldPath, actual: number, max: number): FieldError {
  return {
    type: 'FieldValueTooMany',
    field: path.toString(),
    badValue: actual,
    detail: `must have at most ${max} items`,
  };
}

/** Validation could not be completed because of a bug or an unexpected condition, not bad input. */
export function internalError(path: FieldPath, err: unknown): FieldError {
  const detail = err instanceof Error ? err.message : String(err);
  return { type: 'InternalError', field: path.toString(), badValue: null, detail };
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

/** The human text of an error type (`Invalid value`, `Required value` ...), as Go's `ErrorType.String()`. */
export function fieldErrorTypeText(type: FieldErrorType): string {
  return TYPE_TEXT[type];
}

/**
 * Prints a bad value as Go's field errors do: strings quoted (`%q`), numbers and booleans plainly,
 * `null`/`undefined` as `"null"`, string lists as `[]string{"a", "b"}`, anything else as JSON.
 */
export function formatBadValue(value: unknown): string {
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'bigint') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return `[]string{${(value as string[]).map(goQuote).join(', ')}}`;
  }
  if (typeof value === 'object' && typeof (value as { toString?: unknown }).toString === 'function') {
    const own = (value as { toString: () => string }).toString;
    if (own !== Object.prototype.toString && !Array.isArray(value)) return own.call(value);
  }
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The message of one error without its field, as Go's `ErrorBody()`: `Invalid value: "A_B": <detail>`,
 * `Required value`, `Unsupported value: "x": supported values: "a", "b"`.
 */
export function fieldErrorBody(e: FieldError): string {
  let s: string;
  switch (e.type) {
    case 'FieldValueRequired':
    case 'FieldValueForbidden':
    case 'FieldValueTooLong':
    case 'InternalError':
      s = TYPE_TEXT[e.type];
      break;
    default:
      s = `${TYPE_TEXT[e.type]}: ${formatBadValue(e.badValue)}`;
  }
  if (e.detail.length > 0) s += `: ${e.detail}`;
  return s;
}

/** The full message of one error, as Go's `field.Error.Error()`: `metadata.name: Invalid value: "A_B": ...`. */
export function fieldErrorToString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/**
 * The message of a list of errors as `utilerrors.NewAggregate(errs).Error()` prints it: `''` for
 * none, the message itself for one, `[a, b]` for several (repeated messages printed once).
 */
export function aggregateMessage(errs: readonly FieldError[]): string {
  const seen = new Set<string>();
  for (const e of errs) seen.add(fieldErrorToString(e));
  if (seen.size === 0) return '';
  const msgs = [...seen];
  if (msgs.length === 1) return msgs[0] as string;
  return `[${msgs.join(', ')}]`;
}
