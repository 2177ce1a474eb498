/**
 * The schema server-side apply reads one CRD version's objects through (model: 1.21's CRD handler, which builds
 * the version's OpenAPI models with `pkg/controller/openapi/builder` and hands them to structured-merge-diff's type
 * converter). It is the version's structural schema in the annotations the field manager (`patch/apply/typed.ts`)
 * reads, so that apply merges and owns custom objects as it does built-in ones:
 *
 * - `x-kubernetes-list-type`: `map` (with `x-kubernetes-list-map-keys`) lists merge and are owned element by
 *   element, `set` lists value by value; `atomic`, and every list that does not say, is replaced and owned whole;
 * - `x-kubernetes-map-type: atomic` objects (with `properties` or `additionalProperties`) are replaced and owned
 *   whole; `granular`, the default, field by field;
 * - `x-kubernetes-preserve-unknown-fields`: fields the schema does not declare are read without a schema
 *   (structured-merge-diff's deduced type: objects granular, lists atomic), those it declares through it;
 * - `x-kubernetes-int-or-string` is a scalar; `x-kubernetes-embedded-resource` objects get `apiVersion`, `kind` and
 *   ObjectMeta's `metadata`, as the root does.
 *
 * A version without a schema is read entirely without one (undefined here: the kind's own schema keeps that).
 * A CRD's `preserveUnknownFields: true` (v1beta1) lets every object take undeclared fields, as 1.21's type
 * converter does with that flag.
 */
import { type AnnotatedSchema, ObjectMetaSchema } from '@platform/api';

import { type JSONSchemaProps, parseSchema, type Schema } from './schema';

type Node = Record<string, unknown>;

/** `apiVersion`, `kind` and `metadata` of a whole object (the root, and embedded resources). */
function typeMetaProperties(): Record<string, AnnotatedSchema> {
  return {
    apiVersion: { type: 'string' } as unknown as AnnotatedSchema,
    kind: { type: 'string' } as unknown as AnnotatedSchema,
    metadata: { $ref: ObjectMetaSchema.$id } as unknown as AnnotatedSchema,
  };
}

const LIST_TYPES = new Set(['atomic', 'set', 'map']);

function listNode(s: Schema, open: boolean): Node {
  const node: Node = { type: 'array' };
  if (s.items) node.items = convert(s.items, open);
  const listType = s['x-kubernetes-list-type'];
  node.listType = listType && LIST_TYPES.has(listType) ? listType : 'atomic';
  if (listType === 'map') node.listMapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  return node;
}

function structNode(s: Schema, open: boolean, embedded: boolean): Node {
  // A null prototype: property names such as `constructor` are ordinary fields here.
  const properties = Object.create(null) as Record<string, AnnotatedSchema>;
  for (const [name, sub] of s.properties ?? []) properties[name] = convert(sub, open) as AnnotatedSchema;
  if (embedded) Object.assign(properties, typeMetaProperties());
  const node: Node = { type: 'object', properties };
  if (open || s['x-kubernetes-preserve-unknown-fields']) node.additionalProperties = true;
  if (s['x-kubernetes-map-type'] === 'atomic') node['x-kubernetes-map-type'] = 'atomic';
  return node;
}

/** One node of the structural schema as the field manager reads it. */
function convert(s: Schema, open: boolean): Node {
  if (s['x-kubernetes-int-or-string']) return { 'x-kubernetes-int-or-string': true };
  if (s.type === 'array' || s.items) return listNode(s, open);
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (s.properties || embedded) return structNode(s, open, embedded);
  const atomic = s['x-kubernetes-map-type'] === 'atomic' ? { 'x-kubernetes-map-type': 'atomic' } : {};
  if (typeof s.additionalProperties === 'object') {
    return { type: 'object', additionalProperties: convert(s.additionalProperties, open), ...atomic };
  }
  if (s['x-kubernetes-preserve-unknown-fields']) return { 'x-kubernetes-preserve-unknown-fields': true };
  if (s.type === 'object') return { type: 'object', ...atomic };
  return s.type ? { type: s.type } : {};
}

/**
 * The apply schema of a CRD version's `openAPIV3Schema` (already validated as the CRD was written); undefined when
 * the version has none. `preserveUnknownFields` is the CRD's v1beta1 flag.
 */
export function applySchemaOf(
  openAPIV3Schema: JSONSchemaProps | undefined,
  preserveUnknownFields: boolean,
): AnnotatedSchema | undefined {
  if (!openAPIV3Schema) return undefined;
  const root = structNode(parseSchema(openAPIV3Schema).schema, preserveUnknownFields, true);
  // The root's `metadata` is ObjectMeta whatever the CRD says of it (1.21 allows only `type: object` there).
  return root as unknown as AnnotatedSchema;
}
