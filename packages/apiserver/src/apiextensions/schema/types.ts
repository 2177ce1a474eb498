/**
 * The typed form of a `JSONSchemaProps` (model: 1.21's `apiextensions.JSONSchemaProps` and the structural
 * `Structural`). A CRD carries its schema as plain JSON; {@link parseSchema} turns it into a {@link Schema} once,
 * reporting keyword values of the wrong JSON type (which Kubernetes refuses while decoding), so that the checks,
 * the validator, pruning and defaulting all walk a tree whose fields have the types they expect.
 */
import { type FieldError, FieldPath, field } from '@platform/api';

/** One node of a schema. `properties` and friends are Maps: keys such as `__proto__` are ordinary names here. */
export interface Schema {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  /** Present when the schema sets a non-null `default` (a JSON `null` default means none, as in 1.21). */
  default?: unknown;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: Schema;
  /** `items` given as a list of schemas (refused by 1.21, kept to report it). */
  itemsList?: Schema[];
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  not?: Schema;
  properties?: Map<string, Schema>;
  additionalProperties?: boolean | Schema;
  patternProperties?: Map<string, Schema>;
  dependencies?: Map<string, Schema | string[]>;
  additionalItems?: boolean | Schema;
  definitions?: Map<string, Schema>;
  externalDocs?: { description?: string; url?: string };
  example?: unknown;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
}

/** The scalar value-validation keywords (kept as they are by the structural form and by OpenAPI v2). */
export const SCALAR_VALIDATION_KEYS = [
  'format',
  'maximum',
  'minimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'maxProperties',
  'minProperties',
] as const;

/** The boolean keywords whose `true` matters (`false` is the same as absent). */
export const FLAG_KEYS = [
  'exclusiveMaximum',
  'exclusiveMinimum',
  'uniqueItems',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
] as const;

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const STRING_KEYS = [
  'id',
  '$schema',
  '$ref',
  'description',
  'type',
  'format',
  'title',
  'pattern',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
] as const;
const NUMBER_KEYS = ['maximum', 'minimum', 'multipleOf'] as const;
const INTEGER_KEYS = ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'] as const;
const BOOLEAN_KEYS = [
  'exclusiveMaximum',
  'exclusiveMinimum',
  'uniqueItems',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
] as const;
const SCHEMA_LIST_KEYS = ['allOf', 'oneOf', 'anyOf'] as const;
const SCHEMA_MAP_KEYS = ['properties', 'patternProperties', 'definitions'] as const;

/** The result of {@link parseSchema}: the typed schema and the keyword values that had the wrong JSON type. */
export interface ParsedSchema {
  schema: Schema;
  errors: FieldError[];
}

/**
 * Reads a `JSONSchemaProps` given as JSON. Unknown keywords are ignored (as Kubernetes' decoder does); a keyword
 * whose value has the wrong JSON type is reported at its path and left out.
 */
export function parseSchema(raw: unknown, path: FieldPath = new FieldPath()): ParsedSchema {
  const errors: FieldError[] = [];
  const schema = parseNode(raw, path, errors);
  return { schema, errors };
}

function parseNode(raw: unknown, path: FieldPath, errors: FieldError[]): Schema {
  const s: Schema = {};
  if (!isObject(raw)) {
    errors.push(field.invalid(path, raw, 'must be an object'));
    return s;
  }
  const bad = (key: string, what: string): void => {
    errors.push(field.invalid(path.child(key), raw[key], `must be ${what}`));
  };
  for (const key of STRING_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'string') s[key] = v;
    else bad(key, 'a string');
  }
  for (const key of NUMBER_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'number' && Number.isFinite(v)) s[key] = v;
    else bad(key, 'a number');
  }
  for (const key of INTEGER_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'number' && Number.isInteger(v)) s[key] = v;
    else bad(key, 'an integer');
  }
  for (const key of BOOLEAN_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'boolean') s[key] = v;
    else bad(key, 'a boolean');
  }
  if (raw.default !== undefined && raw.default !== null) s.default = raw.default;
  if (raw.example !== undefined && raw.example !== null) s.example = raw.example;
  parseStringList(raw, 'required', path, errors, (v) => (s.required = v));
  parseStringList(raw, 'x-kubernetes-list-map-keys', path, errors, (v) => (s['x-kubernetes-list-map-keys'] = v));
  if (raw.enum !== undefined && raw.enum !== null) {
    if (Array.isArray(raw.enum)) s.enum = raw.enum as unknown[];
    else bad('enum', 'a list');
  }
  for (const key of SCHEMA_LIST_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) s[key] = v.map((x, i) => parseNode(x, path.child(key).index(i), errors));
    else bad(key, 'a list of schemas');
  }
  for (const key of SCHEMA_MAP_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (isObject(v)) {
      const m = new Map<string, Schema>();
      for (const [k, x] of Object.entries(v)) m.set(k, parseNode(x, path.child(key).key(k), errors));
      s[key] = m;
    } else bad(key, 'an object');
  }
  if (raw.not !== undefined && raw.not !== null) s.not = parseNode(raw.not, path.child('not'), errors);
  if (raw.items !== undefined && raw.items !== null) {
    if (Array.isArray(raw.items)) {
      s.itemsList = raw.items.map((x, i) => parseNode(x, path.child('items').index(i), errors));
    } else s.items = parseNode(raw.items, path.child('items'), errors);
  }
  parseSchemaOrBool(raw, 'additionalProperties', path, errors, (v) => (s.additionalProperties = v));
  parseSchemaOrBool(raw, 'additionalItems', path, errors, (v) => (s.additionalItems = v));
  if (raw.dependencies !== undefined && raw.dependencies !== null) {
    if (isObject(raw.dependencies)) {
      const m = new Map<string, Schema | string[]>();
      for (const [k, x] of Object.entries(raw.dependencies)) {
        if (Array.isArray(x) && x.every((e) => typeof e === 'string')) m.set(k, x as string[]);
        else m.set(k, parseNode(x, path.child('dependencies').key(k), errors));
      }
      s.dependencies = m;
    } else bad('dependencies', 'an object');
  }
  if (raw.externalDocs !== undefined && raw.externalDocs !== null) {
    if (isObject(raw.externalDocs)) {
      const d: { description?: string; url?: string } = {};
      if (typeof raw.externalDocs.description === 'string') d.description = raw.externalDocs.description;
      if (typeof raw.externalDocs.url === 'string') d.url = raw.externalDocs.url;
      s.externalDocs = d;
    } else bad('externalDocs', 'an object');
  }
  return s;
}

function parseStringList(
  raw: Record<string, unknown>,
  key: string,
  path: FieldPath,
  errors: FieldError[],
  set: (v: string[]) => void,
): void {
  const v = raw[key];
  if (v === undefined || v === null) return;
  if (Array.isArray(v) && v.every((e) => typeof e === 'string')) set(v as string[]);
  else errors.push(field.invalid(path.child(key), v, 'must be a list of strings'));
}

function parseSchemaOrBool(
  raw: Record<string, unknown>,
  key: string,
  path: FieldPath,
  errors: FieldError[],
  set: (v: boolean | Schema) => void,
): void {
  const v = raw[key];
  if (v === undefined || v === null) return;
  if (typeof v === 'boolean') set(v);
  else set(parseNode(v, path.child(key), errors));
}

/** The schema applying to map entries that `properties` does not name (`additionalProperties` as a schema). */
export function additionalSchema(s: Schema | undefined): Schema | undefined {
  const ap = s?.additionalProperties;
  return typeof ap === 'object' ? ap : undefined;
}

/** JSON deep copy of a JSON value. */
export function deepCopyJSON<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x: unknown) => deepCopyJSON(x)) as T;
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setKey(out, k, deepCopyJSON(x));
    return out as T;
  }
  return v;
}

/** Sets `obj[key]` as an own property, also for the key `__proto__` (which plain assignment would not). */
export function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** JSON deep equality (object key order does not matter). */
export function deepEqualJSON(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqualJSON(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqualJSON(a[k], b[k]));
  }
  return false;
}
