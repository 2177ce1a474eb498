/**
 * A CRD schema as published in `/openapi/v2` (model: 1.21's `controller/openapi/v2/conversion.go`
 * `ToStructuralOpenAPIV2` and `Structural.ToGoOpenAPI`): what OpenAPI v2 and kubectl cannot express is dropped —
 * the junctors allOf/anyOf/oneOf/not, `nullable` (a nullable field loses its type, its sub-schema and its place in
 * `required`), `additionalProperties` beside `properties`, sub-schemas under `x-kubernetes-preserve-unknown-fields`,
 * and the type of an array left without items. `x-kubernetes-*` extensions are kept. A non-structural schema is
 * published as `{}` (any value), as 1.21 publishes no schema for it.
 */
import { FieldPath } from '@platform/api';
import { validateStructural } from './crd-validation';
import { FLAG_KEYS, SCALAR_VALIDATION_KEYS, type Schema, parseSchema, setKey } from './types';

/** Keywords copied as they are. */
const PLAIN_KEYS = ['description', 'type', 'title', 'default', ...SCALAR_VALIDATION_KEYS] as const;

/** The OpenAPI v2 form of a CRD version's schema. */
export function schemaToOpenAPIV2(raw: Record<string, unknown>): Record<string, unknown> {
  const { schema, errors } = parseSchema(raw);
  if (errors.length > 0 || validateStructural(schema, new FieldPath()).length > 0) return {};
  return convert(schema);
}

function convert(s: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let type = s.type;
  let items = s.items;
  let properties = s.properties;
  let additional = s.additionalProperties;
  if (properties && properties.size > 0 && additional !== undefined) additional = undefined;
  if (s.nullable) {
    type = undefined;
    items = undefined;
    properties = undefined;
  }
  if (s['x-kubernetes-preserve-unknown-fields']) {
    items = undefined;
    properties = undefined;
  }
  if (!items && type === 'array') type = undefined;
  let required = s.required;
  if (required && properties) required = required.filter((r) => !properties?.get(r)?.nullable);
  if (typeof additional === 'object' && additional.nullable) required = undefined;

  for (const key of PLAIN_KEYS) {
    const v = key === 'type' ? type : s[key];
    if (v !== undefined && v !== '') out[key] = v;
  }
  for (const key of FLAG_KEYS) if (s[key] === true) out[key] = true;
  if (s.enum && s.enum.length > 0) out.enum = s.enum;
  if (required && required.length > 0) out.required = required;
  if (items) out.items = convert(items);
  if (properties && properties.size > 0) {
    const props: Record<string, unknown> = {};
    for (const [k, v] of properties) setKey(props, k, convert(v));
    out.properties = props;
  }
  if (additional !== undefined)
    out.additionalProperties = typeof additional === 'object' ? convert(additional) : additional;
  if (s['x-kubernetes-list-map-keys'] && s['x-kubernetes-list-map-keys'].length > 0) {
    out['x-kubernetes-list-map-keys'] = s['x-kubernetes-list-map-keys'];
  }
  if (s['x-kubernetes-list-type'] !== undefined) out['x-kubernetes-list-type'] = s['x-kubernetes-list-type'];
  if (s['x-kubernetes-map-type'] !== undefined) out['x-kubernetes-map-type'] = s['x-kubernetes-map-type'];
  return out;
}
