/**
 * `/openapi/v2`: the OpenAPI v2 document of the served kinds, as JSON, and as the Protobuf `openapi.v2.Document`
 * (the gnostic schema) that kubectl asks for with `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
 * and uses to validate manifests and for `kubectl explain`. Both are built once, from the same definitions
 * (`openApiDefinitions` of @platform/api) and the served resources (the paths). Vendor extensions travel in Protobuf
 * as YAML text, as gnostic encodes them.
 */
import { DeleteOptionsSchema, openApiDefinitions, type Scheme } from '@platform/api';
import * as yaml from 'js-yaml';
import * as protobuf from 'protobufjs';

import { type OpenApiResource } from './installer';

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
  msg('JsonReference', [['_ref', 1, 'string']]);
  msg('BodyParameter', [
    ['description', 1, 'string'],
    ['name', 2, 'string'],
    ['in', 3, 'string'],
    ['required', 4, 'bool'],
    ['schema', 5, 'Schema'],
  ]);
  const subSchema: [string, number, string][] = [
    ['required', 1, 'bool'],
    ['in', 2, 'string'],
    ['description', 3, 'string'],
    ['name', 4, 'string'],
  ];
  msg('QueryParameterSubSchema', [...subSchema, ['allow_empty_value', 5, 'bool'], ['type', 6, 'string']]);
  msg('PathParameterSubSchema', [...subSchema, ['type', 5, 'string']]);
  msg('NonBodyParameter', [
    ['query_parameter_sub_schema', 3, 'QueryParameterSubSchema'],
    ['path_parameter_sub_schema', 4, 'PathParameterSubSchema'],
  ]);
  msg('Parameter', [
    ['body_parameter', 1, 'BodyParameter'],
    ['non_body_parameter', 2, 'NonBodyParameter'],
  ]);
  msg('ParametersItem', [['parameter', 1, 'Parameter']]);
  msg('SchemaItem', [['schema', 1, 'Schema']]);
  msg('Response', [
    ['description', 1, 'string'],
    ['schema', 2, 'SchemaItem'],
  ]);
  msg('ResponseValue', [['response', 1, 'Response']]);
  msg('NamedResponseValue', [
    ['name', 1, 'string'],
    ['value', 2, 'ResponseValue'],
  ]);
  msg('Responses', [['response_code', 1, 'NamedResponseValue', 'repeated']]);
  msg('Operation', [
    ['tags', 1, 'string', 'repeated'],
    ['description', 3, 'string'],
    ['operation_id', 5, 'string'],
    ['produces', 6, 'string', 'repeated'],
    ['consumes', 7, 'string', 'repeated'],
    ['parameters', 8, 'ParametersItem', 'repeated'],
    ['responses', 9, 'Responses'],
    ['schemes', 10, 'string', 'repeated'],
    ['vendor_extension', 13, 'NamedAny', 'repeated'],
  ]);
  msg('PathItem', [
    ['get', 2, 'Operation'],
    ['put', 3, 'Operation'],
    ['post', 4, 'Operation'],
    ['delete', 5, 'Operation'],
    ['patch', 8, 'Operation'],
    ['parameters', 9, 'ParametersItem', 'repeated'],
  ]);
  msg('NamedPathItem', [
    ['name', 1, 'string'],
    ['value', 2, 'PathItem'],
  ]);
  msg('Paths', [
    ['vendor_extension', 1, 'NamedAny', 'repeated'],
    ['path', 2, 'NamedPathItem', 'repeated'],
  ]);
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

// ---- paths ---------------------------------------------------------------------------------------------------

interface Parameter {
  name: string;
  in: 'query' | 'path' | 'body';
  type?: string;
  description?: string;
  required?: boolean;
  uniqueItems?: boolean;
  schema?: Json;
}

interface Operation {
  description: string;
  operationId: string;
  tags: string[];
  consumes: string[];
  produces: string[];
  schemes: string[];
  parameters: Parameter[];
  responses: Record<string, { description: string; schema?: Json }>;
  'x-kubernetes-action': string;
  'x-kubernetes-group-version-kind': { group: string; version: string; kind: string };
}

type PathItem = Partial<Record<'get' | 'put' | 'post' | 'delete' | 'patch', Operation>> & { parameters?: Parameter[] };

const q = (name: string, type: string, description: string): Parameter => ({
  name,
  in: 'query',
  type,
  uniqueItems: true,
  description,
});

const PRETTY = q('pretty', 'string', "If 'true', then the output is pretty printed.");
const DRY_RUN = q(
  'dryRun',
  'string',
  'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed',
);
const FIELD_MANAGER = q(
  'fieldManager',
  'string',
  'A name associated with the actor or entity that is making these changes.',
);
const FORCE = q(
  'force',
  'boolean',
  'Force is going to "force" Apply requests. It must be unset for non-apply patch requests.',
);
const LIST = [
  q('allowWatchBookmarks', 'boolean', 'Requests watch events with type "BOOKMARK".'),
  q('continue', 'string', 'The continue option should be set when retrieving more results from the server.'),
  q('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields.'),
  q('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels.'),
  q('limit', 'integer', 'The maximum number of responses to return for a list call.'),
  q('resourceVersion', 'string', 'Sets a constraint on what resource versions a request may be served from.'),
  q('resourceVersionMatch', 'string', 'Determines how resourceVersion is applied to list calls.'),
  q('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  q('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream.'),
];
const DELETE = [
  DRY_RUN,
  q('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted.'),
  q(
    'propagationPolicy',
    'string',
    'Whether and how garbage collection will be performed: Orphan, Background or Foreground.',
  ),
];
const PRODUCES = ['application/json', 'application/yaml', 'application/vnd.platform.protobuf'];
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];
const ref = (id: string): Json => ({ $ref: `#/definitions/${id}` });
const body = (schema: Json): Parameter => ({ name: 'body', in: 'body', required: true, schema });
const pathParam = (name: string, description: string): Parameter => ({
  name,
  in: 'path',
  type: 'string',
  required: true,
  uniqueItems: true,
  description,
});

function upperFirst(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The Kubernetes-style operation id, e.g. `patchAppsV1NamespacedDeploymentScale`. */
function operationId(verb: string, r: OpenApiResource, namespaced: boolean, collection: boolean): string {
  const group = r.group
    .split('.')
    .filter((p) => p !== 'platform')
    .map(upperFirst)
    .join('');
  const gv = `${group || 'Core'}${upperFirst(r.version)}`;
  const kind = `${namespaced ? 'Namespaced' : ''}${r.kind.kind}`;
  const sub = r.subresource ? upperFirst(r.subresource) : '';
  return `${verb}${gv}${kind}${sub}${collection && verb === 'deletecollection' ? 'Collection' : ''}`;
}

/**
 * The paths of the served resources, as Kubernetes publishes them: a collection path (list, create,
 * deletecollection), an object path (get, replace, patch, delete) and subresource paths, each operation with its
 * query parameters and `x-kubernetes-action` / `x-kubernetes-group-version-kind`. kubectl reads these to decide
 * that a kind supports server-side dry-run (a PATCH with a `dryRun` parameter).
 */
export function openApiPaths(resources: readonly OpenApiResource[]): Record<string, PathItem> {
  const paths: Record<string, PathItem> = {};
  for (const r of [...resources].sort((a, b) => `${a.group}/${a.resource}`.localeCompare(`${b.group}/${b.resource}`))) {
    const root = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    const base = r.namespaced ? `${root}/namespaces/{namespace}/${r.resource}` : `${root}/${r.resource}`;
    const scopeParams = r.namespaced
      ? [pathParam('namespace', 'object name and auth scope, such as for teams and projects')]
      : [];
    const tag = r.group ? `${r.group.replace(/\./g, '_')}_${r.version}` : `core_${r.version}`;
    const op = (
      verb: string,
      action: string,
      collection: boolean,
      params: Parameter[],
      response: Json,
      consumes = ['*/*'],
    ): Operation => ({
      description: `${action} ${r.subresource ? `${r.subresource} of ` : ''}${collection ? 'objects of kind' : 'the specified'} ${r.kind.kind}`,
      operationId: operationId(verb, r, r.namespaced, collection),
      tags: [tag],
      consumes,
      produces: PRODUCES,
      schemes: ['https'],
      parameters: params,
      responses: { '200': { description: 'OK', schema: response }, '401': { description: 'Unauthorized' } },
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': r.kind,
    });
    const has = (v: string): boolean => r.verbs.includes(v);
    const item: PathItem = { parameters: [pathParam('name', `name of the ${r.kind.kind}`), ...scopeParams, PRETTY] };
    const itemPath = r.subresource ? `${base}/{name}/${r.subresource}` : `${base}/{name}`;
    if (has('get')) item.get = op('read', 'get', false, [], ref(r.schemaId));
    if (has('update')) {
      item.put = op('replace', 'put', false, [body(ref(r.schemaId)), DRY_RUN, FIELD_MANAGER], ref(r.schemaId));
      item.patch = op(
        'patch',
        'patch',
        false,
        [body({ type: 'object' }), DRY_RUN, FIELD_MANAGER, FORCE],
        ref(r.schemaId),
        PATCH_TYPES,
      );
    }
    if (r.subresource && has('create')) {
      item.post = op('create', 'post', false, [body(ref(r.schemaId)), DRY_RUN, FIELD_MANAGER], ref(r.schemaId));
    }
    if (!r.subresource && has('delete')) {
      const options = { ...body(ref(DeleteOptionsSchema.$id as string)), required: false };
      item.delete = op('delete', 'delete', false, [options, ...DELETE], { type: 'object' });
    }
    if (item.get || item.put || item.post || item.delete) paths[itemPath] = item;
    if (r.subresource) continue;
    const collection: PathItem = { parameters: [...scopeParams, PRETTY] };
    if (has('list')) collection.get = op('list', 'list', true, LIST, ref(r.listSchemaId));
    if (has('create'))
      collection.post = op('create', 'post', true, [body(ref(r.schemaId)), DRY_RUN, FIELD_MANAGER], ref(r.schemaId));
    if (has('deletecollection'))
      collection.delete = op('delete', 'deletecollection', true, [...DELETE, ...LIST], { type: 'object' });
    if (collection.get || collection.post || collection.delete) paths[base] = collection;
    if (r.namespaced && has('list')) {
      paths[`${root}/${r.resource}`] = {
        parameters: [PRETTY],
        get: {
          ...op('list', 'list', true, LIST, ref(r.listSchemaId)),
          operationId: `${operationId('list', r, false, true)}ForAllNamespaces`,
        },
      };
    }
  }
  return paths;
}

function gnosticParameter(p: Parameter): Json {
  if (p.in === 'body') {
    return {
      parameter: {
        body_parameter: { name: p.name, in: 'body', required: p.required ?? false, schema: toGnostic(p.schema ?? {}) },
      },
    };
  }
  const sub = {
    required: p.required ?? false,
    in: p.in,
    name: p.name,
    type: p.type,
    ...(p.description ? { description: p.description } : {}),
  };
  return {
    parameter: {
      non_body_parameter: p.in === 'path' ? { path_parameter_sub_schema: sub } : { query_parameter_sub_schema: sub },
    },
  };
}

function gnosticOperation(o: Operation): Json {
  return {
    tags: o.tags,
    description: o.description,
    operation_id: o.operationId,
    produces: o.produces,
    consumes: o.consumes,
    parameters: o.parameters.map(gnosticParameter),
    responses: {
      response_code: Object.entries(o.responses).map(([name, r]) => ({
        name,
        value: {
          response: { description: r.description, ...(r.schema ? { schema: { schema: toGnostic(r.schema) } } : {}) },
        },
      })),
    },
    schemes: o.schemes,
    vendor_extension: [
      { name: 'x-kubernetes-action', value: anyOf(o['x-kubernetes-action']) },
      { name: 'x-kubernetes-group-version-kind', value: anyOf(o['x-kubernetes-group-version-kind']) },
    ],
  };
}

function gnosticPaths(paths: Record<string, PathItem>): Json {
  return {
    path: Object.entries(paths).map(([name, item]) => {
      const value: Json = {};
      for (const m of ['get', 'put', 'post', 'delete', 'patch'] as const) {
        const o = item[m];
        if (o) value[m] = gnosticOperation(o);
      }
      if (item.parameters) value.parameters = item.parameters.map(gnosticParameter);
      return { name, value };
    }),
  };
}

/** The OpenAPI v2 document of a scheme, as JSON and as Protobuf. */
export interface OpenApiDocument {
  json: Buffer;
  protobuf: Buffer;
}

/** Builds both forms of the document (once per server: the scheme does not change). */
export function buildOpenApi(
  scheme: Scheme,
  version: string,
  resources: readonly OpenApiResource[] = [],
  /** Definitions served beside the scheme's (the schemas of custom resources). */
  extraDefinitions: Record<string, unknown> = {},
): OpenApiDocument {
  const definitions = { ...openApiDefinitions(scheme), ...extraDefinitions };
  const info = { title: 'Platform', version };
  const paths = openApiPaths(resources);
  const json = Buffer.from(JSON.stringify({ swagger: '2.0', info, paths, definitions }));
  const { document } = gnosticTypes();
  const pb = document
    .encode({
      swagger: '2.0',
      info,
      paths: gnosticPaths(paths),
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

/**
 * The Protobuf form of a JSON OpenAPI v2 document (the aggregator encodes the server's document merged with the
 * extension servers' ones). Throws when the document has a shape the gnostic message cannot hold.
 */
export function encodeOpenApi(doc: Record<string, unknown>): Buffer {
  const definitions = (doc.definitions ?? {}) as Record<string, unknown>;
  const pb = gnosticTypes()
    .document.encode({
      swagger: '2.0',
      info: doc.info,
      paths: gnosticPaths((doc.paths ?? {}) as Record<string, PathItem>),
      definitions: {
        additional_properties: Object.entries(definitions).map(([name, d]) => ({ name, value: toGnostic(d as Json) })),
      },
    })
    .finish();
  return Buffer.from(pb);
}
