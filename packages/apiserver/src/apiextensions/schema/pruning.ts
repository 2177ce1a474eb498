/**
 * Pruning and defaulting of custom objects by the structural part of their schema (model: 1.21's
 * `schema/pruning/algorithm.go`, `schema/defaulting/algorithm.go` and `prunenulls.go`). Both change the object
 * in place and only follow `properties`, `items` and `additionalProperties`; {@link needsDefaults} tells, without
 * changing anything, whether defaulting would (objects of the watch cache are frozen and shared).
 */
import { type Schema, additionalSchema, deepCopyJSON, isObject, setKey } from './types';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** The fields of ObjectMeta (`metav1.ObjectMeta` of 1.21): an embedded resource's metadata keeps only these. */
const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'clusterName',
  'managedFields',
]);

/**
 * Removes the fields of `x` that `s` does not specify. `root`: `x` is a whole object, whose apiVersion, kind and
 * metadata are kept (as for `x-kubernetes-embedded-resource`; the caller coerces the root metadata).
 */
export function prune(x: unknown, s: Schema | undefined, root: boolean): void {
  if (!root) {
    pruneNode(x, s);
    return;
  }
  const rootSchema: Schema = { ...(s ?? {}), 'x-kubernetes-embedded-resource': true };
  if (rootSchema['x-kubernetes-preserve-unknown-fields']) skipPrune(x, rootSchema);
  else pruneObject(x, rootSchema);
}

/**
 * The metadata of an embedded resource as 1.21 stores it (its round trip through ObjectMeta in `objectmeta.Coerce`):
 * fields ObjectMeta does not have are dropped.
 */
function coerceEmbeddedMetadata(x: Record<string, unknown>): void {
  const meta = x.metadata;
  if (!isObject(meta)) return;
  for (const k of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(k)) delete meta[k];
}

function pruneNode(x: unknown, s: Schema | undefined): void {
  if (isObject(x) && s?.['x-kubernetes-embedded-resource']) coerceEmbeddedMetadata(x);
  if (s?.['x-kubernetes-preserve-unknown-fields']) {
    skipPrune(x, s);
    return;
  }
  pruneObject(x, s);
}

function pruneObject(x: unknown, s: Schema | undefined): void {
  if (isObject(x)) {
    if (!s) {
      for (const k of Object.keys(x)) delete x[k];
      return;
    }
    for (const [k, v] of Object.entries(x)) {
      if (s['x-kubernetes-embedded-resource'] && META_FIELDS.has(k)) continue;
      const prop = s.properties?.get(k);
      if (prop) pruneNode(v, prop);
      else if (s.additionalProperties !== undefined) pruneNode(v, additionalSchema(s));
      else delete x[k];
    }
  } else if (Array.isArray(x)) {
    for (const v of x) pruneNode(v, s?.items);
  }
}

/** Below `x-kubernetes-preserve-unknown-fields`: unknown fields stay, specified ones are pruned as usual. */
function skipPrune(x: unknown, s: Schema): void {
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      if (s['x-kubernetes-embedded-resource'] && META_FIELDS.has(k)) continue;
      const prop = s.properties?.get(k);
      if (prop) pruneNode(v, prop);
      else if (s.additionalProperties !== undefined) pruneNode(v, additionalSchema(s));
    }
  } else if (Array.isArray(x)) {
    for (const v of x) if (s.items) skipPrune(v, s.items);
  }
}

/** The schema of the value under `key` of an object whose schema is `s`. */
function fieldSchema(s: Schema | undefined, key: string): Schema | undefined {
  if (!s) return undefined;
  return s.properties?.get(key) ?? additionalSchema(s);
}

/**
 * Removes `null` values that their schema does not allow (not `nullable`) and has no default for; nulls with a
 * default are left for {@link applyDefaults} to replace.
 */
export function pruneNonNullableNullsWithoutDefaults(x: unknown, s: Schema | undefined): void {
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      const sub = fieldSchema(s, k);
      if (v === null && sub && !sub.nullable && sub.default === undefined) delete x[k];
      else pruneNonNullableNullsWithoutDefaults(v, sub);
    }
  } else if (Array.isArray(x)) {
    for (const v of x) pruneNonNullableNullsWithoutDefaults(v, s?.items);
  }
}

function isNonNullableNull(v: unknown, s: Schema | undefined): boolean {
  return v === null && s !== undefined && !s.nullable;
}

/**
 * Sets the schema's defaults where a field is absent (or a non-nullable null), then descends: defaults are
 * deep copies, and a defaulted value is itself defaulted below.
 */
export function applyDefaults(x: unknown, s: Schema | undefined): void {
  if (!s) return;
  if (isObject(x)) {
    for (const [k, prop] of s.properties ?? []) {
      if (prop.default === undefined) continue;
      if (!Object.prototype.hasOwnProperty.call(x, k) || isNonNullableNull(x[k], prop)) {
        setKey(x, k, deepCopyJSON(prop.default));
      }
    }
    const ap = additionalSchema(s);
    for (const k of Object.keys(x)) {
      const prop = s.properties?.get(k);
      if (prop) applyDefaults(x[k], prop);
      else if (ap) {
        if (isNonNullableNull(x[k], ap) && ap.default !== undefined) x[k] = deepCopyJSON(ap.default);
        applyDefaults(x[k], ap);
      }
    }
  } else if (Array.isArray(x)) {
    const items = s.items;
    for (let i = 0; i < x.length; i++) {
      if (items && isNonNullableNull(x[i], items) && items.default !== undefined) x[i] = deepCopyJSON(items.default);
      applyDefaults(x[i], items);
    }
  }
}

/** Whether {@link applyDefaults} would change `x` (which this never changes: it may be frozen and shared). */
export function needsDefaults(x: unknown, s: Schema | undefined): boolean {
  if (!s) return false;
  if (isObject(x)) {
    for (const [k, prop] of s.properties ?? []) {
      if (prop.default === undefined) continue;
      if (!Object.prototype.hasOwnProperty.call(x, k) || isNonNullableNull(x[k], prop)) return true;
    }
    const ap = additionalSchema(s);
    for (const k of Object.keys(x)) {
      const prop = s.properties?.get(k);
      if (prop) {
        if (needsDefaults(x[k], prop)) return true;
      } else if (ap) {
        if ((isNonNullableNull(x[k], ap) && ap.default !== undefined) || needsDefaults(x[k], ap)) return true;
      }
    }
  } else if (Array.isArray(x)) {
    const items = s.items;
    for (const v of x) {
      if (items && isNonNullableNull(v, items) && items.default !== undefined) return true;
      if (needsDefaults(v, items)) return true;
    }
  }
  return false;
}

/** Whether a schema has a `default` anywhere in its structural part (else defaulting is a walk that does nothing). */
export function hasDefaults(s: Schema | undefined): boolean {
  if (!s) return false;
  if (s.default !== undefined) return true;
  if (hasDefaults(s.items) || hasDefaults(additionalSchema(s))) return true;
  for (const sub of s.properties?.values() ?? []) if (hasDefaults(sub)) return true;
  return false;
}
