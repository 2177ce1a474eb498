/**
 * A named schema copied into another group version: the same properties, field numbers and descriptions, with every
 * named type under the source prefix (`io.platform.api.scheduling.v1.`) defined again under the target prefix
 * (`io.platform.api.scheduling.v1beta1.`). Kubernetes serves many beta versions whose types are field for field
 * those of the GA version; this defines each such version once, from the GA schema, instead of writing it twice.
 * Named types outside the source prefix (core/v1, meta/v1) stay shared references.
 */
import { type TObject, type TProperties } from '@sinclair/typebox';

import { namedSchemas, object } from './schema';

const OWN_KEYS = new Set<PropertyKey>(['type', 'properties', 'required', '$id', 'additionalProperties']);

function cloneNode(node: unknown, rename: (id: string) => string): unknown {
  if (Array.isArray(node)) return node.map((x) => cloneNode(x, rename));
  if (!node || typeof node !== 'object') return node;
  const src = node as Record<PropertyKey, unknown>;
  const out: Record<PropertyKey, unknown> = {};
  for (const k of Reflect.ownKeys(src)) {
    const v = src[k];
    // `$ref` of a reference, `ref` of an embedded struct's marker.
    out[k] = (k === '$ref' || k === 'ref') && typeof v === 'string' ? rename(v) : cloneNode(v, rename);
  }
  return out;
}

/**
 * The copy of `schema` (a named object whose `$id` starts with `from`) under `to`. Each named type is copied once
 * per target: calling again for another kind of the same version reuses the types already copied.
 */
export function schemaInVersion<T extends TObject>(schema: T, from: string, to: string): T {
  const rename = (id: string): string => {
    if (!id.startsWith(from)) return id;
    const target = `${to}${id.slice(from.length)}`;
    if (namedSchemas().has(target)) return target;
    const original = namedSchemas().get(id);
    if (!original) throw new Error(`unknown schema reference ${id}`);
    const options: Record<string, unknown> = {};
    for (const k of Object.keys(original)) {
      if (!OWN_KEYS.has(k)) options[k] = (original as unknown as Record<string, unknown>)[k];
    }
    object(target, cloneNode(original.properties, rename) as TProperties, options);
    return target;
  };
  return namedSchemas().get(rename(schema.$id as string)) as unknown as T;
}
