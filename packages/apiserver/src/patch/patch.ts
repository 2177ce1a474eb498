/**
 * The patch algorithms of the PATCH verb, on objects in their JSON form:
 *
 * - JSON Patch (RFC 6902, `application/json-patch+json`): a list of operations on JSON pointers;
 * - JSON Merge Patch (RFC 7386, `application/merge-patch+json`): objects merge, `null` deletes, everything else
 *   (lists included) replaces;
 * - strategic merge patch (`application/strategic-merge-patch+json`, what kubectl sends): a merge patch in which
 *   lists whose schema says `patchStrategy: merge` are merged, by `patchMergeKey` for lists of objects and as a set
 *   for lists of scalars, with the directives `$patch` (replace, delete, merge), `$retainKeys`,
 *   `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` (model: apimachinery
 *   `pkg/util/strategicpatch/patch.go`).
 *
 * Inputs are never changed; each function returns a new value. Problems are thrown as `PatchError`s, which the
 * handler answers with 422 (a patch that cannot apply) or 400 (a patch that is not well-formed).
 */
import { type AnnotatedSchema, resolveRef } from '@platform/api';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const PATCH_ERROR = Symbol.for('platform.apiserver.PatchError');

/** A patch that is malformed (`badRequest`) or cannot be applied to the object. */
export class PatchError extends Error {
  readonly [PATCH_ERROR] = true;
  constructor(
    message: string,
    readonly badRequest = false,
  ) {
    super(message);
    this.name = 'PatchError';
  }
}

/** Brand check for {@link PatchError}. */
export function isPatchError(err: unknown): err is PatchError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[PATCH_ERROR] === true;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

// ---- JSON Merge Patch -----------------------------------------------------------------------------------------

/** Applies a JSON Merge Patch (RFC 7386). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v) as Json;
  }
  return out;
}

// ---- JSON Patch -----------------------------------------------------------------------------------------------

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw new PatchError(`invalid JSON pointer ${JSON.stringify(pointer)}: must start with '/'`, true);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parent(doc: Json, tokens: string[], pointer: string): { container: Json; key: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, pointer, false)] as Json;
    else if (isObject(cur) && t in cur) cur = cur[t] as Json;
    else throw new PatchError(`path ${JSON.stringify(pointer)} does not exist`);
  }
  return { container: cur, key: tokens[tokens.length - 1] as string };
}

function arrayIndex(arr: Json[], token: string, pointer: string, forAdd: boolean): number {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token))
    throw new PatchError(`invalid array index ${JSON.stringify(token)} in ${JSON.stringify(pointer)}`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i >= arr.length))
    throw new PatchError(`array index ${i} out of range in ${JSON.stringify(pointer)}`);
  return i;
}

function get(doc: Json, pointer: string): Json {
  let cur = doc;
  for (const t of parsePointer(pointer)) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, pointer, false)] as Json;
    else if (isObject(cur) && t in cur) cur = cur[t] as Json;
    else throw new PatchError(`path ${JSON.stringify(pointer)} does not exist`);
  }
  return cur;
}

function remove(doc: Json, pointer: string): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new PatchError('cannot remove the whole document');
  const { container, key } = parent(doc, tokens, pointer);
  if (Array.isArray(container)) return container.splice(arrayIndex(container, key, pointer, false), 1)[0] as Json;
  if (isObject(container) && key in container) {
    const v = container[key] as Json;
    delete container[key];
    return v;
  }
  throw new PatchError(`path ${JSON.stringify(pointer)} does not exist`);
}

function add(doc: Json, pointer: string, value: Json): Json {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const { container, key } = parent(doc, tokens, pointer);
  if (Array.isArray(container)) container.splice(arrayIndex(container, key, pointer, true), 0, value);
  else if (isObject(container)) container[key] = value;
  else throw new PatchError(`path ${JSON.stringify(pointer)} does not exist`);
  return doc;
}

/** Applies a JSON Patch (RFC 6902). */
export function jsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw new PatchError('a JSON patch must be a list of operations', true);
  let doc = clone(target) as Json;
  patch.forEach((raw, i) => {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new PatchError(`operation ${i}: must be an object with string "op" and "path"`, true);
    }
    const o = raw as unknown as Operation;
    const needsValue = o.op === 'add' || o.op === 'replace' || o.op === 'test';
    if (needsValue && !('value' in raw)) throw new PatchError(`operation ${i} (${o.op}): missing "value"`, true);
    switch (o.op) {
      case 'add':
        doc = add(doc, o.path, clone(o.value as Json));
        break;
      case 'remove':
        remove(doc, o.path);
        break;
      case 'replace':
        get(doc, o.path);
        if (o.path === '') doc = clone(o.value as Json);
        else {
          remove(doc, o.path);
          doc = add(doc, o.path, clone(o.value as Json));
        }
        break;
      case 'move': {
        if (typeof o.from !== 'string') throw new PatchError(`operation ${i} (move): missing "from"`, true);
        if (o.path.startsWith(`${o.from}/`))
          throw new PatchError(`operation ${i} (move): cannot move a value into itself`);
        doc = add(doc, o.path, remove(doc, o.from));
        break;
      }
      case 'copy':
        if (typeof o.from !== 'string') throw new PatchError(`operation ${i} (copy): missing "from"`, true);
        doc = add(doc, o.path, clone(get(doc, o.from)));
        break;
      case 'test':
        if (JSON.stringify(canonical(get(doc, o.path))) !== JSON.stringify(canonical(o.value as Json))) {
          throw new PatchError(`operation ${i} (test): value at ${JSON.stringify(o.path)} differs`);
        }
        break;
      default:
        throw new PatchError(`operation ${i}: unknown op ${JSON.stringify(o.op)}`, true);
    }
  });
  return doc;
}

function canonical(v: Json): Json {
  if (Array.isArray(v)) return v.map(canonical);
  if (isObject(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k] as Json)]),
    );
  return v;
}

// ---- strategic merge patch ------------------------------------------------------------------------------------

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVES = '$deleteFromPrimitiveList/';

/** The schema node of a value, with references resolved. */
function resolve(s: AnnotatedSchema | undefined): AnnotatedSchema | undefined {
  if (!s) return undefined;
  return s.$ref ? (resolveRef(s.$ref) as unknown as AnnotatedSchema) : s;
}

function childSchema(s: AnnotatedSchema | undefined, key: string): AnnotatedSchema | undefined {
  const r = resolve(s) as
    | (AnnotatedSchema & { properties?: Record<string, AnnotatedSchema>; additionalProperties?: AnnotatedSchema })
    | undefined;
  if (!r) return undefined;
  if (r.properties && key in r.properties) return r.properties[key];
  if (r.wire === 'map' && r.additionalProperties && typeof r.additionalProperties === 'object')
    return r.additionalProperties;
  return undefined;
}

/**
 * Applies a strategic merge patch to `target`, an object whose schema is the named schema `schemaId` (a kind).
 * Where the schema has no list metadata (or no schema is known), the patch behaves as a JSON merge patch.
 */
export function strategicMergePatch(target: unknown, patch: unknown, schemaId: string): unknown {
  if (!isObject(patch)) throw new PatchError('a strategic merge patch must be a JSON object', true);
  return mergeMap(isObject(target) ? clone(target) : {}, patch, { $ref: schemaId } as AnnotatedSchema) ?? {};
}

function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  schema: AnnotatedSchema | undefined,
): JsonObject | undefined {
  const directive = patch[DIRECTIVE];
  if (directive !== undefined) {
    if (directive === 'delete') return undefined;
    if (directive === 'replace') {
      const { [DIRECTIVE]: _d, ...rest } = patch;
      return stripDirectives(rest) as JsonObject;
    }
    if (directive !== 'merge') throw new PatchError(`unknown patch directive ${JSON.stringify(directive)}`, true);
  }
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain) || retain.some((k) => typeof k !== 'string'))
      throw new PatchError('$retainKeys must be a list of strings', true);
    for (const k of Object.keys(original)) if (!retain.includes(k)) delete original[k];
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS || key.startsWith(SET_ORDER)) continue;
    if (key.startsWith(DELETE_PRIMITIVES)) {
      const list = key.slice(DELETE_PRIMITIVES.length);
      if (!Array.isArray(value)) throw new PatchError(`${key} must be a list`, true);
      const cur = original[list];
      if (Array.isArray(cur))
        original[list] = cur.filter((x) => !value.some((v) => JSON.stringify(v) === JSON.stringify(x)));
      continue;
    }
    const s = childSchema(schema, key);
    if (value === null) {
      delete original[key];
    } else if (isObject(value)) {
      const merged = mergeMap(isObject(original[key]) ? (original[key] as JsonObject) : {}, value, s);
      if (merged === undefined) delete original[key];
      else original[key] = merged;
    } else if (Array.isArray(value)) {
      const order = patch[`${SET_ORDER}${key}`];
      const merged = mergeList(Array.isArray(original[key]) ? (original[key] as Json[]) : [], value, resolve(s));
      original[key] = Array.isArray(order) ? reorder(merged, order, resolve(s)?.patchMergeKey) : merged;
    } else {
      original[key] = value;
    }
  }
  for (const [key, order] of Object.entries(patch)) {
    // An order with no list in the patch reorders the existing list.
    if (!key.startsWith(SET_ORDER) || !Array.isArray(order)) continue;
    const list = key.slice(SET_ORDER.length);
    if (!(list in patch) && Array.isArray(original[list])) {
      original[list] = reorder(original[list] as Json[], order, resolve(childSchema(schema, list))?.patchMergeKey);
    }
  }
  return original;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (isObject(v)) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !k.startsWith('$'))
        .map(([k, x]) => [k, stripDirectives(x)]),
    );
  }
  return v;
}

function mergeList(original: Json[], patch: Json[], schema: AnnotatedSchema | undefined): Json[] {
  const isMerge = schema?.patchStrategy?.split(',').includes('merge');
  // A `{$patch: replace}` element replaces the whole list with the other elements.
  if (patch.some((e) => isObject(e) && e[DIRECTIVE] === 'replace')) {
    return stripDirectives(patch.filter((e) => !(isObject(e) && e[DIRECTIVE] === 'replace'))) as Json[];
  }
  if (!isMerge) return stripDirectives(patch) as Json[];
  const itemSchema = (schema as unknown as { items?: AnnotatedSchema }).items;
  const key = schema?.patchMergeKey;
  if (!key) {
    // A set of scalars: add what is missing.
    const out = [...original];
    for (const v of patch) if (!out.some((x) => JSON.stringify(x) === JSON.stringify(v))) out.push(v);
    return out;
  }
  const out = [...original];
  for (const p of patch) {
    if (!isObject(p))
      throw new PatchError(`list items must be objects with the merge key ${JSON.stringify(key)}`, true);
    if (!(key in p))
      throw new PatchError(`map: ${JSON.stringify(p)} does not contain declared merge key: ${key}`, true);
    const i = out.findIndex((o) => isObject(o) && JSON.stringify(o[key]) === JSON.stringify(p[key]));
    if (p[DIRECTIVE] === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) {
      const merged = mergeMap(clone(out[i] as JsonObject), p, itemSchema);
      if (merged === undefined) out.splice(i, 1);
      else out[i] = merged;
    } else {
      out.push(stripDirectives(p));
    }
  }
  return out;
}

function reorder(list: Json[], order: Json[], key: string | undefined): Json[] {
  const idOf = (v: Json): string => JSON.stringify(key && isObject(v) ? v[key] : v);
  const rank = new Map(order.map((o, i) => [idOf(o), i]));
  const inOrder = list
    .filter((v) => rank.has(idOf(v)))
    .sort((a, b) => (rank.get(idOf(a)) as number) - (rank.get(idOf(b)) as number));
  const rest = list.filter((v) => !rank.has(idOf(v)));
  return [...inOrder, ...rest];
}
