/**
 * The checks of a custom object that walk the structural part of its schema (properties, items,
 * additionalProperties) rather than the validator: embedded resources (`x-kubernetes-embedded-resource`: apiVersion
 * and kind required, metadata valid; model: 1.21's `schema/objectmeta/validation.go`) and the uniqueness of
 * `x-kubernetes-list-type: set` elements and `map` keys (model: `schema/listtype/validation.go`).
 */
import {
  type FieldError,
  type FieldPath,
  field,
  isDNS1035Label,
  validateObjectMeta,
  validatePathSegmentName,
} from '@platform/api';
import { type Schema, additionalSchema, isObject } from './types';

/** Errors of embedded resources in `x` (not the root object: its metadata is checked by the caller). */
export function validateEmbeddedResources(x: unknown, s: Schema | undefined, path: FieldPath): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (isObject(x)) {
    if (s['x-kubernetes-embedded-resource']) errs.push(...validateEmbeddedResource(x, path));
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties?.get(k);
      if (prop) errs.push(...validateEmbeddedResources(v, prop, path.child(k)));
      else if (s.additionalProperties !== undefined) {
        errs.push(...validateEmbeddedResources(v, additionalSchema(s), path.key(k)));
      }
    }
  } else if (Array.isArray(x)) {
    x.forEach((v, i) => errs.push(...validateEmbeddedResources(v, s.items, path.index(i))));
  }
  return errs;
}

/** `apiVersion` as Go's `schema.ParseGroupVersion` accepts it: `v1`, `group/v1`, or empty. */
function parseGroupVersionError(gv: string): string | undefined {
  if (gv.length === 0 || gv === '/') return undefined;
  if (gv.split('/').length > 2) return `unexpected GroupVersion string: ${gv}`;
  return undefined;
}

function validateEmbeddedResource(x: Record<string, unknown>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!('apiVersion' in x)) errs.push(field.required(path.child('apiVersion'), ''));
  if (!('kind' in x)) errs.push(field.required(path.child('kind'), ''));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(field.invalid(path.child('apiVersion'), v, 'must be a string'));
      else if (v.length === 0) errs.push(field.required(path.child('apiVersion'), ''));
      else {
        const err = parseGroupVersionError(v);
        if (err) errs.push(field.invalid(path.child('apiVersion'), v, err));
      }
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(field.invalid(path.child('kind'), v, 'must be a string'));
      else if (v.length === 0) errs.push(field.required(path.child('kind'), ''));
      else {
        const msgs = isDNS1035Label(v.toLowerCase());
        if (msgs.length > 0) {
          errs.push(
            field.invalid(path.child('kind'), v, 'may have mixed case, but should otherwise match: ' + msgs.join(',')),
          );
        }
      }
    } else if (k === 'metadata') {
      errs.push(...validateEmbeddedMetadata(v, path.child('metadata')));
    }
  }
  return errs;
}

function validateEmbeddedMetadata(v: unknown, path: FieldPath): FieldError[] {
  if (!isObject(v)) {
    return [field.invalid(path, v, `json: cannot unmarshal ${goJSONType(v)} into Go value of type v1.ObjectMeta`)];
  }
  const meta = { ...v };
  if (meta.name === undefined || meta.name === null || meta.name === '') meta.name = 'fakename';
  const namespaced = typeof meta.namespace === 'string' && meta.namespace.length > 0;
  return validateObjectMeta(meta, { namespaced, nameValidator: validatePathSegmentName }, path);
}

function goJSONType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/**
 * `Duplicate value` errors for repeated elements of `x-kubernetes-list-type: set` lists and repeated keys of
 * `x-kubernetes-list-type: map` lists in `obj` (the root object).
 */
export function validateListSetsAndMaps(obj: unknown, s: Schema | undefined, path: FieldPath): FieldError[] {
  if (!s || !isObject(obj)) return [];
  const errs: FieldError[] = [];
  const ap = additionalSchema(s);
  if (ap) {
    for (const [k, v] of Object.entries(obj)) errs.push(...listSetAndMaps(v, ap, path.key(k)));
  }
  if (s.properties) {
    for (const [k, v] of Object.entries(obj)) {
      const sub = s.properties.get(k);
      if (sub) errs.push(...listSetAndMaps(v, sub, path.child(k)));
    }
  }
  return errs;
}

function listSetAndMaps(x: unknown, s: Schema, path: FieldPath): FieldError[] {
  if (Array.isArray(x)) return listSetsAndMapsArray(x, s, path);
  if (isObject(x)) return validateListSetsAndMaps(x, s, path);
  return [];
}

function listSetsAndMapsArray(x: unknown[], s: Schema, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    for (const i of nonUniqueIndices(x)) errs.push(field.duplicate(path.index(i), x[i]));
  } else if (listType === 'map') {
    errs.push(...validateListMap(x, s, path));
  }
  if (s.items) x.forEach((v, i) => errs.push(...listSetAndMaps(v, s.items as Schema, path.index(i))));
  return errs;
}

/** The key under which a list element is compared: a canonical JSON text (object keys sorted, as Go's json). */
function canonical(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The indices of the second appearance of each repeated element (later repeats are not reported again). */
function nonUniqueIndices(x: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  x.forEach((v, i) => {
    const key = canonical(v);
    const times = seen.get(key) ?? 0;
    if (times === 1) out.push(i);
    seen.set(key, times + 1);
  });
  return out;
}

function validateListMap(x: unknown[], s: Schema, path: FieldPath): FieldError[] {
  for (let i = 0; i < x.length; i++) {
    const e = x[i];
    if (e !== null && e !== undefined && !isObject(e)) {
      return [field.invalid(path.index(i), e, 'must be an object for an array of list-type map')];
    }
  }
  if (x.length <= 1) return [];
  const keyFields = s['x-kubernetes-list-map-keys'] ?? [];
  const keys = x.map((e) => {
    const key: Record<string, unknown> = {};
    if (isObject(e)) for (const k of keyFields) if (Object.prototype.hasOwnProperty.call(e, k)) key[k] = e[k];
    return key;
  });
  return nonUniqueIndices(keys).map((i) => field.duplicate(path.index(i), keys[i]));
}
