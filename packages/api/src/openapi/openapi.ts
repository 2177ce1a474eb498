/**
 * The OpenAPI v2 view of the schemas: the `definitions` of `/openapi/v2`, one per named schema, with the
 * Kubernetes extensions clients read (`x-kubernetes-group-version-kind`, `x-kubernetes-patch-merge-key`,
 * `x-kubernetes-patch-strategy`, `x-kubernetes-list-type`, `x-kubernetes-int-or-string`, ...).
 */
import { type TObject } from '@sinclair/typebox';

import { type AnnotatedSchema, namedSchemas, resolveRef } from '../schema/schema';
import { type Scheme } from '../scheme/scheme';

/** An OpenAPI v2 schema object. */
export type OpenApiSchema = Record<string, unknown>;

const DEFINITION_PREFIX = '#/definitions/';

function convert(s: AnnotatedSchema, refs: Set<string>): OpenApiSchema {
  if (s.$ref) {
    refs.add(s.$ref);
    // A described reference keeps its description (and patch metadata) beside $ref, as Kubernetes' document does;
    // kubectl's OpenAPI models follow $ref but not allOf.
    const out: OpenApiSchema = { $ref: DEFINITION_PREFIX + s.$ref };
    if (s.description) out.description = s.description;
    if (s.patchMergeKey) out['x-kubernetes-patch-merge-key'] = s.patchMergeKey;
    if (s.patchStrategy) out['x-kubernetes-patch-strategy'] = s.patchStrategy;
    return out;
  }
  const out: OpenApiSchema = {};
  if (s.description) out.description = s.description;
  switch (s.wire) {
    case 'quantity':
      return { ...out, type: 'string', format: 'quantity' };
    case 'int-or-string':
      return { ...out, type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true };
    case 'time':
    case 'microtime':
      return { ...out, type: 'string', format: 'date-time' };
    case 'raw':
      return {
        ...out,
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        'x-kubernetes-embedded-resource': true,
      };
    case 'fields':
      return { ...out, type: 'object' };
    case 'bytes':
      return { ...out, type: 'string', format: 'byte' };
    case 'duration':
      return { ...out, type: 'string' };
    case 'map':
      return {
        ...out,
        type: 'object',
        additionalProperties: convert(
          (s as unknown as { additionalProperties: AnnotatedSchema }).additionalProperties,
          refs,
        ),
      };
  }
  const raw = s as unknown as Record<string, unknown>;
  if (raw.type !== undefined) out.type = raw.type;
  if (typeof raw.format === 'string') out.format = raw.format;
  if (Array.isArray(raw.enum)) out.enum = raw.enum;
  if (raw.default !== undefined) out.default = raw.default;
  if (raw.type === 'array') {
    out.items = convert(raw.items as AnnotatedSchema, refs);
    if (s.patchMergeKey) out['x-kubernetes-patch-merge-key'] = s.patchMergeKey;
    if (s.patchStrategy) out['x-kubernetes-patch-strategy'] = s.patchStrategy;
    if (s.listType) out['x-kubernetes-list-type'] = s.listType;
    if (s.listMapKeys) out['x-kubernetes-list-map-keys'] = s.listMapKeys;
  }
  return out;
}

/** The OpenAPI definition of one named schema, and the named schemas it references. */
export function definitionOf(schema: TObject): { definition: OpenApiSchema; refs: Set<string> } {
  const refs = new Set<string>();
  const properties: Record<string, OpenApiSchema> = {};
  for (const [name, prop] of Object.entries(schema.properties))
    properties[name] = convert(prop as AnnotatedSchema, refs);
  const definition: OpenApiSchema = { type: 'object', properties };
  if (schema.description) definition.description = schema.description;
  if (schema.required && schema.required.length) definition.required = [...schema.required];
  return { definition, refs };
}

/**
 * The `definitions` of the OpenAPI v2 document for every kind of the scheme (and its list), plus everything they
 * reference, keyed by schema id. Top-level kinds carry `x-kubernetes-group-version-kind`.
 */
export function openApiDefinitions(scheme: Scheme): Record<string, OpenApiSchema> {
  const defs: Record<string, OpenApiSchema> = {};
  const gvks = new Map<string, { group: string; version: string; kind: string }[]>();
  for (const k of scheme.kinds()) {
    const add = (id: string, kind: string) => {
      const list = gvks.get(id) ?? [];
      list.push({ group: k.group, version: k.version, kind });
      gvks.set(id, list);
    };
    add(k.schema.$id as string, k.kind);
    add(k.listSchema.$id as string, k.listKind);
  }
  const queue = [...gvks.keys()];
  while (queue.length) {
    const id = queue.pop() as string;
    if (defs[id]) continue;
    const { definition, refs } = definitionOf(resolveRef(id));
    const gvk = gvks.get(id);
    if (gvk) definition['x-kubernetes-group-version-kind'] = gvk;
    defs[id] = definition;
    for (const r of refs) if (!defs[r]) queue.push(r);
  }
  return defs;
}

/** Every named schema's id, for tests that check all of them convert. */
export function allSchemaIds(): string[] {
  return [...namedSchemas().keys()];
}
