/**
 * The checks of a CRD's `openAPIV3Schema` itself, with 1.21's messages and field paths (model:
 * `apis/apiextensions/validation/validation.go` `ValidateCustomResourceDefinitionOpenAPISchema` and
 * `specStandardValidatorV3`; `apiserver/schema/validation.go` and `complete.go` for the structural rules;
 * `apiserver/schema/defaulting/validation.go` for defaults).
 */
import { type FieldError, FieldPath, aggregateMessage, field, fieldErrorToString } from '@platform/api';
import { cachedPattern } from './formats';
import { prune } from './pruning';
import { validateEmbeddedResources } from './structural-checks';
import { FLAG_KEYS, SCALAR_VALIDATION_KEYS, type Schema, deepCopyJSON, deepEqualJSON, setKey } from './types';
import { validateAgainstSchema } from './validator';

/** What the checks of a schema depend on (the CRD version and the CRD's other settings). */
export interface CRDSchemaCheckOptions {
  requireStructural: boolean;
  allowDefaults: boolean;
  /** Defaults must survive pruning unchanged (1.21: always on create; kept off on update when already violated). */
  requirePrunedDefaults?: boolean;
  /** Items of `x-kubernetes-list-type: set` lists must be atomic (1.21: on create; ratcheted on update). */
  requireAtomicSetType?: boolean;
  /** The version has the status subresource: the root may then only use some keywords (status is cut out of it). */
  statusSubresource?: boolean;
}

/** The state of the walk of `ValidateCustomResourceDefinitionOpenAPISchema` (its `specStandardValidatorV3`). */
interface Walk {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
  requireAtomicSetType: boolean;
}

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/** All errors of a parsed schema at `path` (`...openAPIV3Schema`), in 1.21's order. */
export function checkSchema(
  raw: Record<string, unknown>,
  s: Schema,
  path: FieldPath,
  opts: CRDSchemaCheckOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  if (opts.statusSubresource) errs.push(...checkRootWithStatus(raw, s, path));
  if (s.nullable) errs.push(field.forbidden(path.child('nullable'), 'nullable cannot be true at the root'));
  const walk: Walk = {
    allowDefaults: opts.allowDefaults,
    disallowDefaultsReason: '',
    insideResourceMeta: false,
    requireAtomicSetType: opts.requireAtomicSetType ?? true,
  };
  errs.push(...checkOpenAPISchema(s, path, walk, true));
  if (opts.requireStructural) {
    const structural = validateStructural(s, path);
    if (structural.length > 0) errs.push(...structural);
    else errs.push(...validateDefaults(s, path, opts.requirePrunedDefaults ?? true));
  }
  return errs;
}

/**
 * The keywords of `JSONSchemaProps` in the order of its Go fields, with the Go field names 1.21 prints, and whether
 * they are allowed at the root when the status subresource is enabled.
 */
const ROOT_FIELDS: readonly [keyof Schema | 'items', string, boolean][] = [
  ['id', 'ID', false],
  ['$schema', 'Schema', false],
  ['$ref', 'Ref', false],
  ['description', 'Description', true],
  ['type', 'Type', true],
  ['format', 'Format', true],
  ['title', 'Title', true],
  ['default', 'Default', false],
  ['maximum', 'Maximum', true],
  ['exclusiveMaximum', 'ExclusiveMaximum', true],
  ['minimum', 'Minimum', true],
  ['exclusiveMinimum', 'ExclusiveMinimum', true],
  ['maxLength', 'MaxLength', true],
  ['minLength', 'MinLength', true],
  ['pattern', 'Pattern', true],
  ['maxItems', 'MaxItems', true],
  ['minItems', 'MinItems', true],
  ['uniqueItems', 'UniqueItems', true],
  ['multipleOf', 'MultipleOf', true],
  ['enum', 'Enum', false],
  ['maxProperties', 'MaxProperties', false],
  ['minProperties', 'MinProperties', false],
  ['required', 'Required', true],
  ['items', 'Items', true],
  ['allOf', 'AllOf', false],
  ['oneOf', 'OneOf', false],
  ['anyOf', 'AnyOf', false],
  ['not', 'Not', false],
  ['properties', 'Properties', true],
  ['additionalProperties', 'AdditionalProperties', false],
  ['patternProperties', 'PatternProperties', false],
  ['dependencies', 'Dependencies', false],
  ['additionalItems', 'AdditionalItems', false],
  ['definitions', 'Definitions', false],
  ['externalDocs', 'ExternalDocs', true],
  ['example', 'Example', true],
  ['nullable', 'Nullable', false],
  ['x-kubernetes-preserve-unknown-fields', 'XPreserveUnknownFields', true],
  ['x-kubernetes-embedded-resource', 'XEmbeddedResource', false],
  ['x-kubernetes-int-or-string', 'XIntOrString', false],
  ['x-kubernetes-list-map-keys', 'XListMapKeys', false],
  ['x-kubernetes-list-type', 'XListType', false],
  ['x-kubernetes-map-type', 'XMapType', false],
];

/** A Go zero value: absent, false, empty string, empty list or map. */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  return false;
}

/** 1.21's restriction of the root schema when the status subresource is enabled: the first offending keyword. */
function checkRootWithStatus(raw: Record<string, unknown>, s: Schema, path: FieldPath): FieldError[] {
  const allowed = ROOT_FIELDS.filter(([, , ok]) => ok).map(([, name]) => name);
  for (const [key, , ok] of ROOT_FIELDS) {
    const v = key === 'items' ? (s.items ?? s.itemsList) : s[key];
    if (isZero(v)) continue;
    if (key === 'type') {
      if (s.type === 'object') continue;
      const detail =
        'only "object" is allowed as the type at the root of the schema if the status subresource is enabled';
      return [field.invalid(path.child('type'), s.type, detail)];
    }
    if (!ok) {
      const detail = `only [${allowed.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`;
      return [field.invalid(path, raw, detail)];
    }
  }
  return [];
}

function checkKeywords(s: Schema, p: FieldPath, w: Walk): FieldError[] {
  const errs: FieldError[] = [];
  if (s.default !== undefined && !w.allowDefaults) {
    const detail = 'must not be set' + (w.disallowDefaultsReason ? ' ' + w.disallowDefaultsReason : '');
    errs.push(field.forbidden(p.child('default'), detail));
  }
  if (s.id) errs.push(field.forbidden(p.child('id'), 'id is not supported'));
  if (s.additionalItems !== undefined)
    errs.push(field.forbidden(p.child('additionalItems'), 'additionalItems is not supported'));
  if (s.patternProperties && s.patternProperties.size > 0) {
    errs.push(field.forbidden(p.child('patternProperties'), 'patternProperties is not supported'));
  }
  if (s.definitions && s.definitions.size > 0)
    errs.push(field.forbidden(p.child('definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined)
    errs.push(field.forbidden(p.child('dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) errs.push(field.forbidden(p.child('$ref'), '$ref is not supported'));
  if (s.type === 'null') {
    errs.push(field.forbidden(p.child('type'), 'type cannot be set to null, use nullable as an alternative'));
  }
  if (s.itemsList && s.itemsList.length > 0) {
    errs.push(field.forbidden(p.child('items'), 'items must be a schema object and not an array'));
  }
  if (w.insideResourceMeta && s['x-kubernetes-embedded-resource']) {
    errs.push(field.forbidden(p.child('x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  }
  return errs;
}

function checkOpenAPISchema(s: Schema | undefined, p: FieldPath, w: Walk, isRoot: boolean): FieldError[] {
  if (!s) return [];
  const errs = checkKeywords(s, p, w);
  if (s.uniqueItems) {
    errs.push(
      field.forbidden(
        p.child('uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  const ap = s.additionalProperties;
  if (ap !== undefined) {
    if (s.properties && s.properties.size > 0 && (ap === false || typeof ap === 'object')) {
      errs.push(
        field.forbidden(p.child('additionalProperties'), 'additionalProperties and properties are mutual exclusive'),
      );
    }
    if (typeof ap === 'object') {
      const sub = w.insideResourceMeta
        ? forbidDefaults(w, 'inside additionalProperties applying to object metadata')
        : w;
      errs.push(...checkOpenAPISchema(ap, p.child('additionalProperties'), sub, false));
    }
  }
  for (const [name, prop] of s.properties ?? []) {
    let sub = w;
    if ((isRoot || s['x-kubernetes-embedded-resource']) && META_FIELDS.has(name)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = forbidDefaults(sub, `in top-level ${name}`);
    }
    errs.push(...checkOpenAPISchema(prop, p.child('properties').key(name), sub, false));
  }
  for (const [name, prop] of s.patternProperties ?? []) {
    errs.push(...checkOpenAPISchema(prop, p.child('patternProperties').key(name), w, false));
  }
  if (typeof s.additionalItems === 'object')
    errs.push(...checkOpenAPISchema(s.additionalItems, p.child('additionalItems'), w, false));
  errs.push(...checkOpenAPISchema(s.not, p.child('not'), w, false));
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    (s[key] ?? []).forEach((sub, i) => errs.push(...checkOpenAPISchema(sub, p.child(key).index(i), w, false)));
  }
  for (const [name, def] of s.definitions ?? []) {
    errs.push(...checkOpenAPISchema(def, p.child('definitions').key(name), w, false));
  }
  errs.push(...checkOpenAPISchema(s.items, p.child('items'), w, false));
  (s.itemsList ?? []).forEach((sub, i) => errs.push(...checkOpenAPISchema(sub, p.child('items').index(i), w, false)));
  for (const [name, dep] of s.dependencies ?? []) {
    if (!Array.isArray(dep)) errs.push(...checkOpenAPISchema(dep, p.child('dependencies').key(name), w, false));
  }
  errs.push(...checkExtensions(s, p, w));
  return errs;
}

function forbidDefaults(w: Walk, reason: string): Walk {
  return { ...w, allowDefaults: false, disallowDefaultsReason: reason };
}

/** The `x-kubernetes-*` rules of `ValidateCustomResourceDefinitionOpenAPISchema`. */
function checkExtensions(s: Schema, p: FieldPath, w: Walk): FieldError[] {
  const errs: FieldError[] = [];
  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    errs.push(field.invalid(p.child('x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && s.type !== 'object') {
    const detail = 'must be object if x-kubernetes-map-type is specified';
    errs.push(s.type ? field.invalid(p.child('type'), s.type, detail) : field.required(p.child('type'), detail));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(field.notSupported(p.child('x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined && s.type !== 'array') {
    const detail = 'must be array if x-kubernetes-list-type is specified';
    errs.push(s.type ? field.invalid(p.child('type'), s.type, detail) : field.required(p.child('type'), detail));
  } else if (w.requireAtomicSetType && listType === 'set' && s.items) {
    errs.push(...checkAtomicSetItems(s.items, p));
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    errs.push(field.notSupported(p.child('x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  const mapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  if (mapKeys.length > 0) {
    const detail = 'must be map if x-kubernetes-list-map-keys is non-empty';
    if (listType === undefined) errs.push(field.required(p.child('x-kubernetes-list-type'), detail));
    else if (listType !== 'map') errs.push(field.invalid(p.child('x-kubernetes-list-type'), listType, detail));
  }
  if (listType === 'map') errs.push(...checkListMap(s, p, mapKeys));
  return errs;
}

function checkAtomicSetItems(items: Schema, p: FieldPath): FieldError[] {
  const detail = 'must be atomic as item of a list with x-kubernetes-list-type=set';
  if (items.type === 'array') {
    const lt = items['x-kubernetes-list-type'];
    if (lt !== undefined && lt !== 'atomic')
      return [field.invalid(p.child('items', 'x-kubernetes-list-type'), lt, detail)];
  } else if (items.type === 'object') {
    if (items['x-kubernetes-map-type'] !== 'atomic') {
      // 1.21 reports the items' list type (usually unset) as the value here.
      return [
        field.invalid(p.child('items', 'x-kubernetes-map-type'), items['x-kubernetes-list-type'] ?? null, detail),
      ];
    }
  }
  return [];
}

function checkListMap(s: Schema, p: FieldPath, mapKeys: string[]): FieldError[] {
  const errs: FieldError[] = [];
  if (mapKeys.length === 0) {
    errs.push(
      field.required(p.child('x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'),
    );
  }
  if (!s.items && !s.itemsList) {
    errs.push(field.required(p.child('items'), 'must have a schema if x-kubernetes-list-type is map'));
  }
  if (!s.items && s.itemsList) {
    errs.push(field.invalid(p.child('items'), '', 'must only have a single schema if x-kubernetes-list-type is map'));
  }
  const items = s.items;
  if (items && items.type !== 'object') {
    errs.push(
      field.invalid(
        p.child('items', 'type'),
        items.type ?? '',
        "must be object if parent array's x-kubernetes-list-type is map",
      ),
    );
  }
  if (items && items.type === 'object') {
    const seen = new Set<string>();
    for (const k of mapKeys) {
      const prop = items.properties?.get(k);
      if (prop) {
        if (prop.type === 'array' || prop.type === 'object') {
          const detail = "must be a scalar type if parent array's x-kubernetes-list-type is map";
          errs.push(field.invalid(p.child('items', 'properties').key(k).child('type'), items.type, detail));
        }
      } else {
        errs.push(
          field.invalid(p.child('x-kubernetes-list-map-keys'), mapKeys, 'entries must all be names of item properties'),
        );
      }
      if (seen.has(k)) {
        errs.push(field.invalid(p.child('x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'));
      }
      seen.add(k);
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Structural rules (ValidateStructural): the invariants of a structural schema and its completeness.

type Level = 'root' | 'item' | 'field';

/** The errors of `ValidateStructural`, sorted by their message as 1.21 sorts them. */
export function validateStructural(s: Schema, path: FieldPath): FieldError[] {
  const errs = [...structuralInvariants(s, 'root', path), ...valueValidationCompleteness(s, s, path, path)];
  return errs
    .map((e) => ({ e, text: fieldErrorToString(e) }))
    .sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
    .map((x) => x.e);
}

function structuralInvariants(s: Schema, lvl: Level, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (s.type === 'array' && !s.items) errs.push(field.required(p.child('items'), 'must be specified'));
  if (s.items) errs.push(...structuralInvariants(s.items, 'item', p.child('items')));
  for (const [k, v] of s.properties ?? []) errs.push(...structuralInvariants(v, 'field', p.child('properties').key(k)));
  const ap = s.additionalProperties;
  if (ap !== undefined) {
    if (lvl === 'root') errs.push(field.forbidden(p.child('additionalProperties'), 'must not be used at the root'));
    if (typeof ap === 'object') errs.push(...structuralInvariants(ap, 'field', p.child('additionalProperties')));
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) {
    const detail = 'must be false if x-kubernetes-int-or-string is true';
    errs.push(field.invalid(p.child('x-kubernetes-preserve-unknown-fields'), true, detail));
  }
  if (intOrString && embedded) {
    errs.push(
      field.invalid(
        p.child('x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  errs.push(...valueValidation(s, isIntOrStringAnyOf(s.anyOf), isIntOrStringAllOf(s.allOf), p));
  if (embedded && s.type !== 'object') {
    const detail = 'must be object if x-kubernetes-embedded-resource is true';
    errs.push(s.type ? field.invalid(p.child('type'), s.type, detail) : field.required(p.child('type'), detail));
  } else if (!s.type && !intOrString && !preserve) {
    const where = { root: 'at the root', item: 'for specified array items', field: 'for specified object fields' }[lvl];
    errs.push(field.required(p.child('type'), `must not be empty ${where}`));
  }
  if (embedded && ap !== undefined) {
    errs.push(
      field.forbidden(p.child('additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'),
    );
  }
  if (lvl === 'root' && s.type && s.type !== 'object')
    errs.push(field.invalid(p.child('type'), s.type, 'must be object at the root'));
  const checkMetadata = lvl === 'root' || embedded;
  for (const name of ['kind', 'apiVersion']) {
    const prop = s.properties?.get(name);
    if (prop && checkMetadata && prop.type !== 'string') {
      errs.push(field.invalid(p.child('properties').key(name).child('type'), prop.type ?? '', 'must be string'));
    }
  }
  const metadata = s.properties?.get('metadata');
  if (metadata) errs.push(...metadataInvariants(metadata, checkMetadata, lvl, p.child('properties').key('metadata')));
  if (embedded && !preserve && (s.properties?.size ?? 0) === 0) {
    const detail =
      'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields';
    errs.push(field.required(p.child('properties'), detail));
  }
  return errs;
}

/** Keywords of a structural node other than properties, type and default (see `metadataInvariants`). */
const META_OTHER_KEYS: readonly (keyof Schema)[] = [
  'description',
  'title',
  ...SCALAR_VALIDATION_KEYS,
  'not',
  'items',
  'additionalProperties',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
];
const META_TRUE_KEYS: readonly (keyof Schema)[] = ['nullable', ...FLAG_KEYS];
const META_LIST_KEYS = ['enum', 'required', 'allOf', 'oneOf', 'anyOf', 'x-kubernetes-list-map-keys'] as const;

function metadataInvariants(s: Schema, checkMetadata: boolean, lvl: Level, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (checkMetadata && s.type !== 'object') errs.push(field.invalid(p.child('type'), s.type ?? '', 'must be object'));
  if (lvl === 'root') {
    const props = [...(s.properties?.keys() ?? [])];
    const onlyNames = props.every((k) => k === 'name' || k === 'generateName');
    const other =
      (props.length > 0 && !onlyNames) ||
      META_OTHER_KEYS.some((k) => s[k] !== undefined) ||
      META_TRUE_KEYS.some((k) => s[k] === true) ||
      META_LIST_KEYS.some((k) => (s[k]?.length ?? 0) > 0);
    if (other) {
      const detail = 'must not specify anything other than name and generateName, but metadata is implicitly specified';
      errs.push(field.forbidden(p, detail));
    }
  }
  return errs;
}

/** True for a schema that is exactly `{type: <type>}` among the keywords the structural form keeps. */
function isOnlyType(s: Schema | undefined, type: string): boolean {
  if (!s || s.type !== type) return false;
  return Object.keys(s).every((k) => k === 'type' || k === 'example' || k === 'externalDocs' || k === '$schema');
}

function isIntOrStringAnyOf(anyOf: Schema[] | undefined): boolean {
  return anyOf?.length === 2 && isOnlyType(anyOf[0], 'integer') && isOnlyType(anyOf[1], 'string');
}

function isIntOrStringAllOf(allOf: Schema[] | undefined): boolean {
  return (allOf?.length ?? 0) >= 1 && isIntOrStringAnyOf(allOf?.[0]?.anyOf);
}

function valueValidation(v: Schema, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!skipAnyOf)
    (v.anyOf ?? []).forEach((x, i) => errs.push(...nestedValueValidation(x, false, false, p.child('anyOf').index(i))));
  (v.allOf ?? []).forEach((x, i) =>
    errs.push(...nestedValueValidation(x, skipFirstAllOfAnyOf && i === 0, false, p.child('allOf').index(i))),
  );
  (v.oneOf ?? []).forEach((x, i) => errs.push(...nestedValueValidation(x, false, false, p.child('oneOf').index(i))));
  if (v.not) errs.push(...nestedValueValidation(v.not, false, false, p.child('not')));
  if (v.pattern) {
    const re = cachedPattern(v.pattern);
    if (re instanceof Error) {
      errs.push(
        field.invalid(p.child('pattern'), v.pattern, `must be a valid regular expression, but isn't: ${re.message}`),
      );
    }
  }
  return errs;
}

function nestedValueValidation(v: Schema, skipAnyOf: boolean, skipAllOfAnyOf: boolean, p: FieldPath): FieldError[] {
  const errs = valueValidation(v, skipAnyOf, skipAllOfAnyOf, p);
  if (v.items) errs.push(...nestedValueValidation(v.items, false, false, p.child('items')));
  for (const [k, x] of v.properties ?? [])
    errs.push(...nestedValueValidation(x, false, false, p.child('properties').key(k)));
  if (v.type) errs.push(field.forbidden(p.child('type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined) {
    errs.push(field.forbidden(p.child('additionalProperties'), 'must be undefined to be structural'));
  }
  if (v.default !== undefined) errs.push(field.forbidden(p.child('default'), 'must be undefined to be structural'));
  if (v.title) errs.push(field.forbidden(p.child('title'), 'must be empty to be structural'));
  if (v.description) errs.push(field.forbidden(p.child('description'), 'must be empty to be structural'));
  if (v.nullable) errs.push(field.forbidden(p.child('nullable'), 'must be false to be structural'));
  for (const k of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
    'x-kubernetes-int-or-string',
  ] as const) {
    if (v[k]) errs.push(field.forbidden(p.child(k), 'must be false to be structural'));
  }
  if ((v['x-kubernetes-list-map-keys']?.length ?? 0) > 0) {
    errs.push(field.forbidden(p.child('x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  }
  if (v['x-kubernetes-list-type'] !== undefined) {
    errs.push(field.forbidden(p.child('x-kubernetes-list-type'), 'must be undefined to be structural'));
  }
  if (v['x-kubernetes-map-type'] !== undefined) {
    errs.push(field.forbidden(p.child('x-kubernetes-map-type'), 'must be undefined to be structural'));
  }
  if (v.properties?.has('metadata')) {
    errs.push(field.forbidden(p.child('properties').key('metadata'), 'must not be specified in a nested context'));
  }
  return errs;
}

/** Every field or array a value validation (allOf, anyOf, oneOf, not) specifies must be specified structurally. */
function valueValidationCompleteness(v: Schema, s: Schema, sPath: FieldPath, vPath: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (v.not) errs.push(...nestedCompleteness(v.not, s, sPath, vPath.child('not')));
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    (v[key] ?? []).forEach((x, i) => errs.push(...nestedCompleteness(x, s, sPath, vPath.child(key).index(i))));
  }
  return errs;
}

function nestedCompleteness(v: Schema, s: Schema | undefined, sPath: FieldPath, vPath: FieldPath): FieldError[] {
  if (!s) return [field.required(sPath, `because it is defined in ${vPath.toString()}`)];
  const errs = valueValidationCompleteness(v, s, sPath, vPath);
  if (v.items) errs.push(...nestedCompleteness(v.items, s.items, sPath.child('items'), vPath.child('items')));
  for (const [k, x] of v.properties ?? []) {
    const sub = s.properties?.get(k);
    const sp = sPath.child('properties').key(k);
    const vp = vPath.child('properties').key(k);
    if (!sub) errs.push(field.required(sp, `because it is defined in ${vp.toString()}`));
    else errs.push(...nestedCompleteness(x, sub, sp, vp));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Defaults (ValidateDefaults): each default validates against its schema and is not changed by pruning.

function validateDefaults(root: Schema, path: FieldPath, requirePruned: boolean): FieldError[] {
  const rootSchema: Schema = { ...root, 'x-kubernetes-embedded-resource': true };
  return defaultsOf(rootSchema, path, { insideMeta: false, resource: rootSchema, at: [] }, requirePruned);
}

/** Where the walk of the defaults is: inside TypeMeta/ObjectMeta or not, and where in the nearest resource. */
interface DefaultsWalk {
  insideMeta: boolean;
  /** The schema of the nearest embedded resource (or of the root). */
  resource: Schema;
  /** The way from that resource to the current schema: field names, and `null` for list items. */
  at: (string | null)[];
}

/** An object of the nearest resource with `value` placed where the walk is (1.21's `SurroundingObjectFunc`). */
function surroundingObject(at: readonly (string | null)[], value: unknown): Record<string, unknown> {
  let v: unknown = value;
  for (let i = at.length - 1; i >= 0; i--) {
    const step = at[i];
    if (step === null || step === undefined) v = [v];
    else {
      const o: Record<string, unknown> = {};
      setKey(o, step, v);
      v = o;
    }
  }
  return { apiVersion: 'validation/v1', kind: 'Validation', ...(v as Record<string, unknown>) };
}

function defaultsOf(s: Schema, p: FieldPath, w: DefaultsWalk, requirePruned: boolean): FieldError[] {
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (embedded) w = { insideMeta: false, resource: s, at: [] };
  const errs: FieldError[] = [];
  if (s.default !== undefined) {
    const dp = p.child('default');
    if (w.insideMeta) {
      // A default of TypeMeta or ObjectMeta is checked in an object around it.
      const obj = surroundingObject(w.at, deepCopyJSON(s.default));
      const metaErrs = validateEmbeddedResources(obj, w.resource, new FieldPath());
      if (metaErrs.length > 0) {
        errs.push(field.invalid(dp, s.default, `must result in valid metadata: ${aggregateMessage(metaErrs)}`));
      } else errs.push(...validateAgainstSchema(s, s.default, dp));
    } else {
      if (requirePruned) {
        const pruned = deepCopyJSON(s.default);
        prune(pruned, s, embedded);
        if (!deepEqualJSON(pruned, s.default)) errs.push(field.invalid(dp, s.default, 'must not have unknown fields'));
      }
      const metaErrs = validateEmbeddedResources(s.default, s, dp);
      if (metaErrs.length > 0) errs.push(...metaErrs);
      else errs.push(...validateAgainstSchema(s, s.default, dp));
    }
  }
  // additionalProperties are not followed (as 1.21).
  if (s.items) errs.push(...defaultsOf(s.items, p.child('items'), { ...w, at: [...w.at, null] }, requirePruned));
  for (const [k, sub] of s.properties ?? []) {
    const insideMeta = w.insideMeta || (embedded && META_FIELDS.has(k));
    errs.push(...defaultsOf(sub, p.child('properties').key(k), { ...w, insideMeta, at: [...w.at, k] }, requirePruned));
  }
  return errs;
}
