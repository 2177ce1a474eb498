/**
 * Objects read through their schema, as structured-merge-diff's `typed` package reads them: which paths a value
 * sets, how two values differ, how an applied configuration merges into a live object, and how paths are removed.
 *
 * The schema decides how each node is read (its "shape"):
 *
 * - a struct (a named object type): fields are `f:<name>`; `LabelSelector` is atomic, as in Kubernetes, and so is
 *   a struct marked `x-kubernetes-map-type: atomic` (a CRD's schema); a struct that also has
 *   `additionalProperties: true` (a CRD's `x-kubernetes-preserve-unknown-fields` beside `properties`) takes fields it
 *   does not declare, read without a schema;
 * - a map (`additionalProperties`; also objects without a schema): keys are `f:<key>`; atomic when marked
 *   `x-kubernetes-map-type: atomic`;
 * - a list: `listType`/`listMapKeys` when the schema says; otherwise the strategic-merge-patch metadata decides,
 *   as Kubernetes derives it for built-in kinds: `patchStrategy: merge` with a `patchMergeKey` is an associative
 *   list keyed by it (`k:`), `patchStrategy: merge` alone is a set (`v:`), and anything else is atomic (a leaf);
 * - everything else is a scalar (a leaf).
 *
 * All functions are pure: inputs are never changed.
 */
import { type AnnotatedSchema, resolveRef } from '@platform/api';

import { FieldSet, fieldElement, keyElement, type Path, type PathElement, pathString, valueElement } from './field-set';

/** A value in its JSON form. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

/** How a schema node is read. */
export type Shape =
  | { type: 'struct'; properties: Record<string, AnnotatedSchema>; atomic: boolean; open?: boolean }
  | { type: 'map'; elem: AnnotatedSchema | undefined; atomic?: boolean }
  | { type: 'list'; listType: 'atomic' | 'set' | 'map'; keys: string[]; elem: AnnotatedSchema | undefined }
  | { type: 'scalar' };

/** A value that does not fit its schema where apply needs it to (unknown field, duplicate key): a 400. */
export class TypedValueError extends Error {
  readonly isTypedValueError = true;
  constructor(message: string) {
    super(message);
    this.name = 'TypedValueError';
  }
}

/** Brand check for {@link TypedValueError}. */
export function isTypedValueError(err: unknown): err is TypedValueError {
  return typeof err === 'object' && err !== null && (err as { isTypedValueError?: unknown }).isTypedValueError === true;
}

/** Structs that Kubernetes marks `+structType=atomic`: owned and replaced as a whole. */
const ATOMIC_STRUCT_SUFFIXES = ['.LabelSelector'];

/** Key fields that Kubernetes defaults when an element leaves them out (so `{containerPort: 80}` finds its TCP port). */
const KEY_DEFAULTS: Record<string, Json> = { protocol: 'TCP' };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function resolve(s: AnnotatedSchema | undefined): AnnotatedSchema | undefined {
  if (!s) return undefined;
  if (s.$ref) return resolveRef(s.$ref) as unknown as AnnotatedSchema;
  return s;
}

function deduced(value: unknown): Shape {
  if (Array.isArray(value)) return { type: 'list', listType: 'atomic', keys: [], elem: undefined };
  if (isObject(value)) return { type: 'map', elem: undefined };
  return { type: 'scalar' };
}

/** The shape of a schema node; where there is no schema, or it keeps unknown fields, the value decides. */
export function shapeOf(schema: AnnotatedSchema | undefined, value: unknown): Shape {
  const s = resolve(schema) as
    | (AnnotatedSchema & {
        properties?: Record<string, AnnotatedSchema>;
        additionalProperties?: unknown;
        items?: AnnotatedSchema;
        type?: unknown;
        'x-kubernetes-preserve-unknown-fields'?: boolean;
        'x-kubernetes-map-type'?: unknown;
      })
    | undefined;
  if (!s || s['x-kubernetes-preserve-unknown-fields'] || s.wire === 'raw') return deduced(value);
  if (s.type === 'array' || s.items) {
    let listType = s.listType;
    let keys = s.listMapKeys ?? [];
    if (!listType) {
      const merge = s.patchStrategy?.split(',').includes('merge') ?? false;
      if (merge && s.patchMergeKey) {
        listType = 'map';
        keys = [s.patchMergeKey];
      } else listType = merge ? 'set' : 'atomic';
    }
    if (listType === 'map' && keys.length === 0) listType = 'atomic';
    return { type: 'list', listType, keys, elem: s.items };
  }
  const atomic = s['x-kubernetes-map-type'] === 'atomic';
  if (s.properties) {
    const id = (schema?.$ref ?? s.$id ?? '') as string;
    return {
      type: 'struct',
      properties: s.properties,
      atomic: atomic || ATOMIC_STRUCT_SUFFIXES.some((x) => id.endsWith(x)),
      open: s.additionalProperties === true,
    };
  }
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    return { type: 'map', elem: s.additionalProperties as AnnotatedSchema, atomic };
  }
  if (s.type === 'object') return { type: 'map', elem: undefined, atomic };
  return { type: 'scalar' };
}

/** The schema of a field of a struct or map shape (undefined when unknown or untyped). */
function childSchema(shape: Shape, name: string): AnnotatedSchema | undefined {
  if (shape.type === 'struct') return Object.hasOwn(shape.properties, name) ? shape.properties[name] : undefined;
  if (shape.type === 'map') return shape.elem;
  return undefined;
}

/** Whether a value is read as a container with children (rather than as a leaf) under this shape. */
function isGranular(shape: Shape, value: unknown): boolean {
  if (shape.type === 'struct') return !shape.atomic && isObject(value);
  if (shape.type === 'map') return !shape.atomic && isObject(value);
  if (shape.type === 'list') return shape.listType !== 'atomic' && Array.isArray(value);
  return false;
}

/** The path element of one item of a granular list (undefined when the item cannot be keyed). */
export function itemElement(shape: Shape & { type: 'list' }, item: unknown): PathElement | undefined {
  if (shape.listType === 'set') return valueElement(item);
  if (!isObject(item)) return undefined;
  const key: Record<string, unknown> = {};
  for (const k of shape.keys) {
    if (item[k] !== undefined && item[k] !== null) key[k] = item[k];
    else if (k in KEY_DEFAULTS) key[k] = KEY_DEFAULTS[k];
  }
  if (Object.keys(key).length === 0) return undefined;
  return keyElement(key);
}

interface Keyed {
  element: PathElement;
  item: Json;
}

/** The items of a granular list with their elements; duplicates and unkeyable items throw when `strict`. */
function keyedItems(shape: Shape & { type: 'list' }, list: Json[], path: Path, strict: boolean): Keyed[] {
  const seen = new Set<string>();
  const out: Keyed[] = [];
  for (const item of list) {
    const element = itemElement(shape, item);
    if (element === undefined) {
      if (strict) {
        throw new TypedValueError(
          `${pathString(path)}: associative list with keys ${JSON.stringify(shape.keys)} has an element that omits every key field`,
        );
      }
      continue;
    }
    if (seen.has(element)) {
      if (strict) throw new TypedValueError(`${pathString(path)}: duplicate entries for key ${pathString([element])}`);
      continue;
    }
    seen.add(element);
    out.push({ element, item });
  }
  return out;
}

/**
 * The paths a value sets: its leaves and the elements of its associative and set lists (structured-merge-diff
 * `ToFieldSet`), which is what an applier owns. With `strict` (an applied configuration), fields a struct does not
 * declare and duplicate list keys are {@link TypedValueError}s.
 */
export function fieldSetOf(value: unknown, schema: AnnotatedSchema | undefined, strict = false): FieldSet {
  const out: Path[] = [];
  const walk = (v: Json, s: AnnotatedSchema | undefined, path: PathElement[]): void => {
    const shape = shapeOf(s, v);
    if (!isGranular(shape, v)) {
      if (path.length > 0) out.push(path);
      return;
    }
    if (shape.type === 'list') {
      for (const { element, item } of keyedItems(shape, v as Json[], path, strict)) {
        out.push([...path, element]);
        if (shape.listType === 'map' && isObject(item))
          walkChildren(item, shapeOf(shape.elem, item), [...path, element]);
      }
      return;
    }
    const obj = v as JsonObject;
    if (Object.keys(obj).length === 0) {
      if (path.length > 0) out.push(path);
      return;
    }
    walkChildren(obj, shape, path);
  };
  const walkChildren = (obj: JsonObject, shape: Shape, path: PathElement[]): void => {
    for (const [k, child] of Object.entries(obj)) {
      if (child === undefined) continue;
      if (strict && shape.type === 'struct' && !shape.open && !Object.hasOwn(shape.properties, k)) {
        throw new TypedValueError(`${pathString([...path, fieldElement(k)])}: field not declared in schema`);
      }
      walk(child, childSchema(shape, k), [...path, fieldElement(k)]);
    }
  };
  walk(value as Json, schema, []);
  return FieldSet.of(out);
}

/**
 * Every path of a value, containers included, as a comparison reports an added or removed subtree. Structs with
 * children are left out as members (in Kubernetes a struct field always exists in the Go object, so it is never
 * "added"); maps, lists, list elements and leaves are members.
 */
function allPaths(v: Json, s: AnnotatedSchema | undefined, path: PathElement[], out: Path[]): void {
  const shape = shapeOf(s, v);
  if (!isGranular(shape, v)) {
    if (path.length > 0) out.push(path);
    return;
  }
  if (shape.type === 'list') {
    if (path.length > 0) out.push(path);
    for (const { element, item } of keyedItems(shape, v as Json[], path, false)) {
      out.push([...path, element]);
      if (shape.listType === 'map' && isObject(item)) {
        const is = shapeOf(shape.elem, item);
        for (const [k, c] of Object.entries(item))
          allPaths(c, childSchema(is, k), [...path, element, fieldElement(k)], out);
      }
    }
    return;
  }
  const obj = v as JsonObject;
  if (path.length > 0 && (shape.type === 'map' || Object.keys(obj).length === 0)) out.push(path);
  for (const [k, c] of Object.entries(obj)) allPaths(c, childSchema(shape, k), [...path, fieldElement(k)], out);
}

/** How one value became another: paths added, removed, and leaves whose value changed. */
export interface Comparison {
  added: FieldSet;
  removed: FieldSet;
  modified: FieldSet;
}

/** True when nothing differs. */
export function isSame(c: Comparison): boolean {
  return c.added.isEmpty() && c.removed.isEmpty() && c.modified.isEmpty();
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Compares `lhs` (before) with `rhs` (after) through the schema (structured-merge-diff `Compare`). */
export function compare(lhs: unknown, rhs: unknown, schema: AnnotatedSchema | undefined): Comparison {
  const added: Path[] = [];
  const removed: Path[] = [];
  const modified: Path[] = [];
  const walk = (
    l: Json | undefined,
    r: Json | undefined,
    s: AnnotatedSchema | undefined,
    path: PathElement[],
  ): void => {
    if (l === undefined && r === undefined) return;
    if (l === undefined) return allPaths(r as Json, s, path, added);
    if (r === undefined) return allPaths(l, s, path, removed);
    const ls = shapeOf(s, l);
    const rs = shapeOf(s, r);
    if (!isGranular(ls, l) || !isGranular(rs, r) || ls.type !== rs.type) {
      if (!deepEqual(l, r) && path.length > 0) modified.push(path);
      return;
    }
    if (rs.type === 'list') {
      const li = new Map(keyedItems(rs, l as Json[], path, false).map((k) => [k.element, k.item]));
      const ri = new Map(keyedItems(rs, r as Json[], path, false).map((k) => [k.element, k.item]));
      for (const [e, item] of li) {
        if (!ri.has(e)) allPaths(item, rs.elem, [...path, e], removed);
      }
      for (const [e, item] of ri) {
        const p = [...path, e];
        if (!li.has(e)) {
          added.push(p);
          if (rs.listType === 'map' && isObject(item)) {
            const is = shapeOf(rs.elem, item);
            for (const [k, c] of Object.entries(item)) allPaths(c, childSchema(is, k), [...p, fieldElement(k)], added);
          }
        } else if (rs.listType === 'map') {
          const before = li.get(e) as Json;
          walkFields(isObject(before) ? before : {}, isObject(item) ? item : {}, shapeOf(rs.elem, item), p);
        }
      }
      return;
    }
    walkFields(l as JsonObject, r as JsonObject, rs, path);
  };
  const walkFields = (l: JsonObject, r: JsonObject, shape: Shape, path: PathElement[]): void => {
    const keys = new Set([...Object.keys(l), ...Object.keys(r)]);
    for (const k of keys) walk(l[k], r[k], childSchema(shape, k), [...path, fieldElement(k)]);
  };
  walk(lhs as Json, rhs as Json, schema, []);
  return { added: FieldSet.of(added), removed: FieldSet.of(removed), modified: FieldSet.of(modified) };
}

/**
 * Merges an applied configuration into a live object (structured-merge-diff `Merge`): structs and maps merge
 * field by field, associative lists merge element by element (live order first, new elements after, in the
 * configuration's order), sets take the union, and everything else takes the configuration's value. The result
 * shares unchanged subtrees with its inputs: copy it (as {@link dropNulls} does) before changing it.
 */
export function merge(lhs: unknown, rhs: unknown, schema: AnnotatedSchema | undefined): Json {
  const walk = (l: Json | undefined, r: Json | undefined, s: AnnotatedSchema | undefined, path: Path): Json => {
    if (r === undefined) return l as Json;
    if (l === undefined) return r;
    const shape = shapeOf(s, r);
    if (!isGranular(shape, r) || !isGranular(shapeOf(s, l), l)) return r;
    if (shape.type === 'list') {
      const ri = keyedItems(shape, r as Json[], path, false);
      const byElement = new Map(ri.map((k) => [k.element, k.item]));
      const out: Json[] = [];
      const used = new Set<string>();
      for (const item of l as Json[]) {
        const e = itemElement(shape, item);
        if (e !== undefined && byElement.has(e) && !used.has(e)) {
          used.add(e);
          out.push(shape.listType === 'map' ? walk(item, byElement.get(e), shape.elem, [...path, e]) : item);
        } else out.push(item);
      }
      for (const { element, item } of ri) if (!used.has(element)) out.push(item);
      return out;
    }
    const out: JsonObject = { ...(l as JsonObject) };
    for (const [k, v] of Object.entries(r as JsonObject)) {
      if (v === undefined) continue;
      out[k] = walk(out[k], v, childSchema(shape, k), [...path, fieldElement(k)]);
    }
    return out;
  };
  return walk(lhs as Json, rhs as Json, schema, []);
}

/**
 * Removes the nodes at `paths` (each with its subtree) from `value`, in place, and returns it. Paths that do not
 * exist are ignored.
 */
export function removePaths(value: Json, paths: Iterable<Path>, schema: AnnotatedSchema | undefined): Json {
  const root = value;
  for (const path of paths) {
    if (path.length === 0) continue;
    let node: Json | undefined = root;
    let s: AnnotatedSchema | undefined = schema;
    for (let i = 0; i < path.length && node !== undefined; i++) {
      const e = path[i] as PathElement;
      const last = i === path.length - 1;
      const shape = shapeOf(s, node);
      if (e.startsWith('f:')) {
        if (!isObject(node)) break;
        const name = e.slice(2);
        if (last) delete node[name];
        node = node[name];
        s = childSchema(shape, name);
        continue;
      }
      if (!Array.isArray(node)) break;
      let idx: number;
      if (e.startsWith('i:')) idx = Number(e.slice(2));
      else if (shape.type === 'list') idx = node.findIndex((item) => itemElement(shape, item) === e);
      else break;
      if (idx < 0 || idx >= node.length) break;
      if (last) node.splice(idx, 1);
      else {
        node = node[idx];
        s = shape.type === 'list' ? shape.elem : undefined;
      }
    }
  }
  return root;
}

/**
 * A deep copy of `value` in which object fields whose value is `null` are dropped (an applied `null` unsets a
 * field).
 */
export function dropNulls(value: unknown): Json {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = dropNulls(v);
    return out;
  }
  return value as Json;
}

/**
 * The paths of `set` together with the struct fields above them (structured-merge-diff
 * `EnsureNamedFieldsAreMembers`): a manager that owned `.spec.replicas` is taken to have owned `.spec` too, so
 * that dropping everything under a struct drops the struct. Keys of maps are not added.
 */
export function withNamedParents(set: FieldSet, value: unknown, schema: AnnotatedSchema | undefined): FieldSet {
  const extra: Path[] = [];
  for (const path of set) {
    let node: Json | undefined = value as Json;
    let s: AnnotatedSchema | undefined = schema;
    for (let i = 0; i < path.length - 1; i++) {
      const e = path[i] as PathElement;
      const shape = shapeOf(s, node);
      if (e.startsWith('f:')) {
        const name = e.slice(2);
        if (shape.type === 'struct') extra.push(path.slice(0, i + 1));
        s = childSchema(shape, name);
        node = isObject(node) ? node[name] : undefined;
      } else {
        s = shape.type === 'list' ? shape.elem : undefined;
        node =
          Array.isArray(node) && shape.type === 'list'
            ? node.find((item) => itemElement(shape, item) === e)
            : undefined;
      }
    }
  }
  return set.with(...extra);
}
