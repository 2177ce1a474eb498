/**
 * Validation of a value against a schema, with the semantics and messages of the validator 1.21 uses for custom
 * resources (model: kube-openapi `pkg/validation/validate` — type, schema props, string, format, number, slice,
 * enum and object validators, in that order — and apiextensions `pkg/apiserver/validation.ValidateCustomResource`,
 * which turns its errors into field errors). Paths are printed as the validator prints them (`spec.ports[0].name`,
 * `spec.labels.app`).
 */
import { type FieldError, FieldPath, field, goNumber, goQuote } from '@platform/api';
import { cachedPattern, formatCheck } from './formats';
import { type Schema, deepEqualJSON, isObject } from './types';

/** One error of the validator: a validation error naming a path, or a composite one (allOf, anyOf, ...). */
type VError =
  | { code: 'required' | 'enum' | 'other'; name: string; value: unknown; message: string; values?: unknown[] }
  | { code: 'composite'; message: string };

interface Result {
  errors: VError[];
  /** How many checks passed, as kube-openapi's MatchCount: anyOf/oneOf report the failure that got furthest. */
  matchCount: number;
}

const IN = 'body';

function msg(name: string, text: string): string {
  return `${name} in ${IN} ${text}`;
}

function invalidType(name: string, typeName: string, value: string): VError {
  return { code: 'other', name, value, message: msg(name, `must be of type ${typeName}: ${goQuote(value)}`) };
}

/** The JSON type of a value as the validator names it, and the Go format of numbers (`int64`, `float64`). */
function schemaInfo(data: unknown): { schType: string; format: string } {
  if (typeof data === 'boolean') return { schType: 'boolean', format: '' };
  if (typeof data === 'string') return { schType: 'string', format: '' };
  if (typeof data === 'number') {
    // Go decodes a JSON number without fraction that fits an int64 as an integer, anything else as a float64.
    if (Number.isInteger(data) && Math.abs(data) < 9.2e18) return { schType: 'integer', format: 'int64' };
    return { schType: 'number', format: 'float64' };
  }
  if (Array.isArray(data)) return { schType: 'array', format: '' };
  return { schType: 'object', format: '' };
}

function isJSONInteger(f: number): boolean {
  if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53) return false;
  if (Number.isInteger(f)) return true;
  const g = Math.trunc(f);
  const diff = Math.abs(f - g);
  return diff / Math.min(Math.abs(f) + Math.abs(g), Number.MAX_VALUE) < 1e-9;
}

/** The types a schema accepts: `x-kubernetes-int-or-string` means integer or string (1.21's conversion). */
function typesOf(s: Schema): string[] {
  if (s['x-kubernetes-int-or-string']) return ['integer', 'string'];
  return s.type ? [s.type] : [];
}

/** The format the validator sees: 1.21 strips formats it does not support from string schemas. */
function formatOf(s: Schema): string {
  const types = typesOf(s);
  if (!s.format) return '';
  if (types.length === 1 && types[0] === 'string' && !formatCheck(s.format)) return '';
  return s.format;
}

type Kind = 'string' | 'slice' | 'bool' | 'number' | 'map';

function kindOf(data: unknown): Kind {
  if (typeof data === 'string') return 'string';
  if (Array.isArray(data)) return 'slice';
  if (typeof data === 'boolean') return 'bool';
  if (typeof data === 'number') return 'number';
  return 'map';
}

function validateType(s: Schema, data: unknown, path: string, res: Result): void {
  const types = typesOf(s);
  const format = formatOf(s);
  if (types.length === 0 && format === '') return;
  res.matchCount++;
  if (data === null || data === undefined) {
    if (types.length > 0 && !types.includes('null') && !s.nullable) {
      res.errors.push(invalidType(path, types.join(','), 'null'));
    }
    return;
  }
  const kind = kindOf(data);
  const { schType, format: dataFormat } = schemaInfo(data);
  const isFloatInt = schType === 'number' && isJSONInteger(data as number) && types.includes('integer');
  const isIntFloat = schType === 'integer' && types.includes('number');
  if (
    kind !== 'string' &&
    kind !== 'slice' &&
    format !== '' &&
    !(types.includes(schType) || dataFormat === format || isFloatInt || isIntFloat)
  ) {
    res.errors.push(invalidType(path, format, dataFormat));
    return;
  }
  if (
    !(types.includes('number') || types.includes('integer')) &&
    format !== '' &&
    (kind === 'string' || kind === 'slice')
  ) {
    return;
  }
  if (!(types.includes(schType) || isFloatInt || isIntFloat)) {
    res.errors.push(invalidType(path, types.join(','), schType));
  }
}

function validateJunctors(s: Schema, data: unknown, path: string, res: Result): void {
  res.matchCount++;
  if (s.anyOf && s.anyOf.length > 0) {
    let best: Result | undefined;
    let ok = false;
    for (const sub of s.anyOf) {
      const r = validateNode(sub, data, path);
      if (r.errors.length === 0) {
        ok = true;
        best = undefined;
        break;
      }
      if (best === undefined || r.matchCount > best.matchCount) best = r;
    }
    if (!ok)
      res.errors.push({ code: 'composite', message: `${goQuote(path)} must validate at least one schema (anyOf)` });
    if (best) res.errors.push(...best.errors);
  }
  if (s.oneOf && s.oneOf.length > 0) {
    let best: Result | undefined;
    let validated = 0;
    for (const sub of s.oneOf) {
      const r = validateNode(sub, data, path);
      if (r.errors.length === 0) {
        validated++;
        best = undefined;
        continue;
      }
      if (validated === 0 && (best === undefined || r.matchCount > best.matchCount)) best = r;
    }
    if (validated !== 1) {
      const extra = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      res.errors.push({
        code: 'composite',
        message: `${goQuote(path)} must validate one and only one schema (oneOf). ${extra}`,
      });
      if (best) res.errors.push(...best.errors);
    }
  }
  if (s.allOf && s.allOf.length > 0) {
    let validated = 0;
    for (const sub of s.allOf) {
      const r = validateNode(sub, data, path);
      if (r.errors.length === 0) validated++;
      res.errors.push(...r.errors);
      res.matchCount += r.matchCount;
    }
    if (validated !== s.allOf.length) {
      const extra = validated === 0 ? '. None validated' : '';
      res.errors.push({ code: 'composite', message: `${goQuote(path)} must validate all the schemas (allOf)${extra}` });
    }
  }
  if (s.not) {
    if (validateNode(s.not, data, path).errors.length === 0) {
      res.errors.push({ code: 'composite', message: `${goQuote(path)} must not validate the schema (not)` });
    }
  }
}

function validateString(s: Schema, data: string, path: string, res: Result): void {
  res.matchCount++;
  // Lengths count characters (Go counts runes), so only strings with a length limit are measured.
  const length = s.maxLength !== undefined || s.minLength !== undefined ? [...data].length : 0;
  if (s.maxLength !== undefined && length > s.maxLength) {
    res.errors.push({
      code: 'other',
      name: path,
      value: data,
      message: msg(path, `should be at most ${s.maxLength} chars long`),
    });
    return;
  }
  if (s.minLength !== undefined && length < s.minLength) {
    res.errors.push({
      code: 'other',
      name: path,
      value: data,
      message: msg(path, `should be at least ${s.minLength} chars long`),
    });
    return;
  }
  if (s.pattern) {
    const re = cachedPattern(s.pattern);
    if (re instanceof Error) {
      const text = `should match '${s.pattern}, but pattern is invalid: ${re.message}'`;
      res.errors.push({ code: 'other', name: path, value: data, message: msg(path, text) });
    } else if (!re.test(data)) {
      res.errors.push({ code: 'other', name: path, value: data, message: msg(path, `should match '${s.pattern}'`) });
    }
  }
}

function validateFormat(s: Schema, data: string, path: string, res: Result): void {
  const format = formatOf(s);
  const check = formatCheck(format);
  if (!check) return;
  res.matchCount++;
  if (!check(data)) res.errors.push(invalidType(path, format, data));
}

function validateNumber(s: Schema, data: number, path: string, res: Result): void {
  res.matchCount++;
  const isInt = schemaInfo(data).schType === 'integer';
  const bound = (n: number): string => goNumber(isInt ? Math.trunc(n) : n);
  if (s.multipleOf !== undefined) {
    const factor = s.multipleOf;
    if (factor < 0) {
      res.errors.push({
        code: 'other',
        name: path,
        value: factor,
        message: `factor MultipleOf declared for ${path} must be positive: ${goNumber(factor)}`,
      });
    } else {
      const intPath = isInt && Number.isInteger(factor) && factor !== 0;
      const ok = intPath ? data % factor === 0 : isJSONInteger(factor < 1 ? (1 / factor) * data : data / factor);
      if (!ok) {
        res.errors.push({
          code: 'other',
          name: path,
          value: data,
          message: msg(path, `should be a multiple of ${goNumber(factor)}`),
        });
      }
    }
  }
  if (s.minimum !== undefined) {
    const min = isInt ? Math.trunc(s.minimum) : s.minimum;
    const ex = s.exclusiveMinimum === true;
    if ((!ex && data < min) || (ex && data <= min)) {
      const text = ex
        ? `should be greater than ${bound(s.minimum)}`
        : `should be greater than or equal to ${bound(s.minimum)}`;
      res.errors.push({ code: 'other', name: path, value: data, message: msg(path, text) });
    }
  }
  if (s.maximum !== undefined) {
    const max = isInt ? Math.trunc(s.maximum) : s.maximum;
    const ex = s.exclusiveMaximum === true;
    if ((!ex && data > max) || (ex && data >= max)) {
      const text = ex
        ? `should be less than ${bound(s.maximum)}`
        : `should be less than or equal to ${bound(s.maximum)}`;
      res.errors.push({ code: 'other', name: path, value: data, message: msg(path, text) });
    }
  }
}

function validateSlice(s: Schema, data: unknown[], path: string, res: Result): void {
  res.matchCount++;
  if (s.items) {
    for (let i = 0; i < data.length; i++) merge(res, validateNode(s.items, data[i], `${path}[${i}]`));
  }
  if (s.minItems !== undefined && data.length < s.minItems) {
    res.errors.push({
      code: 'other',
      name: path,
      value: data.length,
      message: msg(path, `should have at least ${s.minItems} items`),
    });
  }
  if (s.maxItems !== undefined && data.length > s.maxItems) {
    res.errors.push({
      code: 'other',
      name: path,
      value: data.length,
      message: msg(path, `should have at most ${s.maxItems} items`),
    });
  }
  if (s.uniqueItems) {
    const dup = data.some((x, i) => data.slice(0, i).some((y) => deepEqualJSON(x, y)));
    if (dup)
      res.errors.push({
        code: 'other',
        name: path,
        value: undefined,
        message: msg(path, "shouldn't contain duplicates"),
      });
  }
}

function validateEnum(s: Schema, data: unknown, path: string, res: Result): void {
  if (!s.enum || s.enum.length === 0) return;
  res.matchCount++;
  // A null value never matches, not even a null in the list (kube-openapi's Enum).
  if (data !== null && data !== undefined && s.enum.some((e) => deepEqualJSON(e, data))) return;
  res.errors.push({
    code: 'enum',
    name: path,
    value: data,
    values: s.enum,
    message: msg(path, `should be one of ${goList(s.enum)}`),
  });
}

function goList(values: unknown[]): string {
  return `[${values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ')}]`;
}

function validateObject(s: Schema, data: Record<string, unknown>, path: string, res: Result): void {
  res.matchCount++;
  const keys = Object.keys(data);
  if (s.minProperties !== undefined && keys.length < s.minProperties) {
    const text = `should have at least ${s.minProperties} properties`;
    res.errors.push({ code: 'other', name: path, value: s.minProperties, message: msg(path, text) });
    return;
  }
  if (s.maxProperties !== undefined && keys.length > s.maxProperties) {
    const text = `should have at most ${s.maxProperties} properties`;
    res.errors.push({ code: 'other', name: path, value: s.maxProperties, message: msg(path, text) });
    return;
  }
  const props = s.properties;
  if (s.additionalProperties === false) {
    for (const k of keys) {
      if (!props?.has(k)) {
        res.errors.push({
          code: 'other',
          name: path,
          value: k,
          message: `${path}.${k} in ${IN} is a forbidden property`,
        });
      }
    }
  } else if (typeof s.additionalProperties === 'object') {
    for (const k of keys) {
      if (!props?.has(k)) merge(res, validateNode(s.additionalProperties, data[k], `${path}.${k}`));
    }
  }
  if (props) {
    for (const [name, sub] of props) {
      if (!Object.prototype.hasOwnProperty.call(data, name)) continue;
      merge(res, validateNode(sub, data[name], path === '' ? name : `${path}.${name}`));
    }
  }
  for (const k of s.required ?? []) {
    if (!Object.prototype.hasOwnProperty.call(data, k)) {
      res.errors.push({
        code: 'required',
        name: `${path}.${k}`,
        value: undefined,
        message: msg(`${path}.${k}`, 'is required'),
      });
    }
  }
}

function merge(into: Result, from: Result): void {
  into.errors.push(...from.errors);
  into.matchCount += from.matchCount;
}

/** Validates `data` at `path` against one schema node, as kube-openapi's SchemaValidator. */
function validateNode(s: Schema, data: unknown, path: string): Result {
  const res: Result = { errors: [], matchCount: 0 };
  if (data === null || data === undefined) {
    validateType(s, data, path, res);
    validateEnum(s, data, path, res);
    return res;
  }
  validateType(s, data, path, res);
  validateJunctors(s, data, path, res);
  if (typeof data === 'string') {
    validateString(s, data, path, res);
    validateFormat(s, data, path, res);
  }
  if (typeof data === 'number') validateNumber(s, data, path, res);
  if (Array.isArray(data)) validateSlice(s, data, path, res);
  validateEnum(s, data, path, res);
  if (isObject(data)) validateObject(s, data, path, res);
  res.matchCount++;
  return res;
}

/** The field path of a validator error name below `base` (`.spec` → `spec`; `''` and `.` → `base`). */
function errorPath(base: FieldPath, name: string): FieldPath {
  if (name.length === 0 || name === '.') return base;
  return base.child(name.startsWith('.') ? name.slice(1) : name);
}

/**
 * The field errors of `data` against `schema`, below `base` (1.21's `ValidateCustomResource`): a missing
 * required field is `Required value`, an enum mismatch `Unsupported value` listing the allowed values, anything
 * else `Invalid value` carrying the validator's message; allOf/anyOf/oneOf/not failures are reported at `base`.
 */
export function validateAgainstSchema(schema: Schema, data: unknown, base: FieldPath = new FieldPath()): FieldError[] {
  const out: FieldError[] = [];
  for (const e of validateNode(schema, data, '').errors) {
    if (e.code === 'composite') {
      out.push(field.invalid(base, '', e.message));
    } else if (e.code === 'required') {
      out.push(field.required(errorPath(base, e.name), ''));
    } else if (e.code === 'enum') {
      const values = (e.values ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      out.push(field.notSupported(errorPath(base, e.name), e.value ?? null, values));
    } else {
      out.push(field.invalid(errorPath(base, e.name), e.value === undefined ? '' : e.value, e.message));
    }
  }
  return out;
}
