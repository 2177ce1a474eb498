/**
 * `/openapi/v2`: the OpenAPI v2 document of the served kinds, as JSON, and as the Protobuf `openapi.v2.Document`
 * (the gnostic schema) that kubectl asks for with `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
 * and uses to validate manifests and for `kubectl explain`. Both are built once, from the same definitions
 * (`openApiDefinitions` of @platform/api). Vendor extensions travel in Protobuf as YAML text, as gnostic encodes them.
 */
import { openApiDefinitions, type Scheme } from '@platform/api';
import * as yaml from 'js-yaml';
import * as protobuf from 'protobufjs';

/** The media type of the Protobuf document. */
export const OPENAPI_PROTOBUF_MEDIA_TYPE = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

type Json = Record<string, unknown>;

/** The subset of gnostic's OpenAPIv2 messages a document of definitions needs (field numbers as gnostic's). */
function gnosticTypes(): { document: protobuf.Type } {
  const root = new protobuf.Root();
  const ns = root.define('openapi.v2');
  const msg = (name: string, fields: [string, number, string, ('repeated' | 'optional')?][]): void => {
    const t = new protobuf.Type(name);
    for (const [f, id, type, rule] of fields) t.add(new protobuf.Field(f, id, type, rule ?? 'optional'));
    ns.add(t);
  };
  msg('Any', [['yaml', 2, 'string']]);
  msg('NamedAny', [
    ['name', 1, 'string'],
    ['value', 2, 'Any'],
  ]);
  msg('Info', [
    ['title', 1, 'string'],
    ['version', 2, 'string'],
    ['description', 3, 'string'],
  ]);
  msg('TypeItem', [['value', 1, 'string', 'repeated']]);
  msg('ItemsItem', [['schema', 1, 'Schema', 'repeated']]);
  msg('NamedSchema', [
    ['name', 1, 'string'],
    ['value', 2, 'Schema'],
  ]);
  msg('Properties', [['additional_properties', 1, 'NamedSchema', 'repeated']]);
  msg('AdditionalPropertiesItem', [
    ['schema', 1, 'Schema'],
    ['boolean', 2, 'bool'],
  ]);
  msg('Schema', [
    ['_ref', 1, 'string'],
    ['format', 2, 'string'],
    ['title', 3, 'string'],
    ['description', 4, 'string'],
    ['default', 5, 'Any'],
    ['required', 19, 'string', 'repeated'],
    ['enum', 20, 'Any', 'repeated'],
    ['additional_properties', 21, 'AdditionalPropertiesItem'],
    ['type', 22, 'TypeItem'],
    ['items', 23, 'ItemsItem'],
    ['all_of', 24, 'Schema', 'repeated'],
    ['properties', 25, 'Properties'],
    ['vendor_extension', 31, 'NamedAny', 'repeated'],
  ]);
  msg('Definitions', [['additional_properties', 1, 'NamedSchema', 'repeated']]);
  msg('Paths', [['vendor_extension', 1, 'NamedAny', 'repeated']]);
  msg('Document', [
    ['swagger', 1, 'string'],
    ['info', 2, 'Info'],
    ['paths', 8, 'Paths'],
    ['definitions', 9, 'Definitions'],
  ]);
  root.resolveAll();
  return { document: root.lookupType('openapi.v2.Document') };
}

function anyOf(value: unknown): Json {
  return { yaml: yaml.dump(value, { lineWidth: -1 }) };
}

/** One JSON schema object in gnostic's Schema message form. */
function toGnostic(s: Json): Json {
  const out: Json = {};
  const vendor: Json[] = [];
  for (const [k, v] of Object.entries(s)) {
    switch (k) {
      case '$ref':
        out._ref = v;
        break;
      case 'format':
      case 'title':
      case 'description':
        out[k] = v;
        break;
      case 'type':
        out.type = { value: Array.isArray(v) ? v : [v] };
        break;
      case 'required':
        out.required = v;
        break;
      case 'enum':
        out.enum = (v as unknown[]).map(anyOf);
        break;
      case 'default':
        out.default = anyOf(v);
        break;
      case 'items':
        out.items = { schema: [toGnostic(v as Json)] };
        break;
      case 'allOf':
        out.all_of = (v as Json[]).map(toGnostic);
        break;
      case 'properties':
        out.properties = {
          additional_properties: Object.entries(v as Record<string, Json>).map(([name, p]) => ({
            name,
            value: toGnostic(p),
          })),
        };
        break;
      case 'additionalProperties':
        out.additional_properties = typeof v === 'boolean' ? { boolean: v } : { schema: toGnostic(v as Json) };
        break;
      default:
        if (k.startsWith('x-')) vendor.push({ name: k, value: anyOf(v) });
    }
  }
  if (vendor.length) out.vendor_extension = vendor;
  return out;
}

/** The OpenAPI v2 document of a scheme, as JSON and as Protobuf. */
export interface OpenApiDocument {
  json: Buffer;
  protobuf: Buffer;
}

/** Builds both forms of the document (once per server: the scheme does not change). */
export function buildOpenApi(scheme: Scheme, version: string): OpenApiDocument {
  const definitions = openApiDefinitions(scheme);
  const info = { title: 'Platform', version };
  const json = Buffer.from(JSON.stringify({ swagger: '2.0', info, paths: {}, definitions }));
  const { document } = gnosticTypes();
  const pb = document
    .encode({
      swagger: '2.0',
      info,
      paths: {},
      definitions: {
        additional_properties: Object.entries(definitions).map(([name, d]) => ({ name, value: toGnostic(d as Json) })),
      },
    })
    .finish();
  return { json, protobuf: Buffer.from(pb) };
}

/** Decodes the Protobuf document back into gnostic's message form (for tests and tools). */
export function decodeOpenApiProtobuf(data: Uint8Array): Json {
  return gnosticTypes().document.toObject(gnosticTypes().document.decode(data), { defaults: false }) as Json;
}
