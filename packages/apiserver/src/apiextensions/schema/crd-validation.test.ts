/**
 * Table tests of `validateCRDSchema`: one case per keyword and per structural rule, with the field paths and
 * messages of Kubernetes 1.21 (`ValidateCustomResourceDefinitionOpenAPISchema`, `ValidateStructural`,
 * `ValidateDefaults`).
 */
import { FieldPath, fieldErrorToString } from '@platform/api';
import { type JSONSchemaProps, type SchemaCheckOptions, validateCRDSchema } from './index';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const PATH = new FieldPath('spec', 'versions').index(0).child('schema', 'openAPIV3Schema');
const V1: SchemaCheckOptions = { requireStructural: true, allowDefaults: true };

function check(schema: JSONSchemaProps, opts: SchemaCheckOptions = V1): string[] {
  return validateCRDSchema(schema, PATH, opts).map(fieldErrorToString);
}

/** A root object schema with one property `a`. */
function withA(a: JSONSchemaProps): JSONSchemaProps {
  return { type: 'object', properties: { a } };
}

describe('validateCRDSchema: keywords 1.21 refuses', () => {
  const cases: [string, JSONSchemaProps, string[]][] = [
    [
      '$ref',
      withA({ type: 'string', $ref: '#/definitions/x' }),
      [`${P}.properties[a].$ref: Forbidden: $ref is not supported`],
    ],
    ['id', withA({ type: 'string', id: 'x' }), [`${P}.properties[a].id: Forbidden: id is not supported`]],
    [
      'definitions',
      withA({ type: 'object', definitions: { d: { type: 'string' } } }),
      [`${P}.properties[a].definitions: Forbidden: definitions is not supported`],
    ],
    [
      'dependencies',
      withA({ type: 'object', dependencies: { x: ['y'] } }),
      [`${P}.properties[a].dependencies: Forbidden: dependencies is not supported`],
    ],
    [
      'additionalItems',
      withA({ type: 'array', items: { type: 'string' }, additionalItems: false }),
      [`${P}.properties[a].additionalItems: Forbidden: additionalItems is not supported`],
    ],
    [
      'patternProperties',
      withA({ type: 'object', patternProperties: { '^x': { type: 'string' } } }),
      [`${P}.properties[a].patternProperties: Forbidden: patternProperties is not supported`],
    ],
    [
      'uniqueItems: true',
      withA({ type: 'array', items: { type: 'string' }, uniqueItems: true }),
      [
        `${P}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      ],
    ],
    ['uniqueItems: false', withA({ type: 'array', items: { type: 'string' }, uniqueItems: false }), []],
    [
      'additionalProperties beside properties',
      withA({ type: 'object', properties: { x: { type: 'string' } }, additionalProperties: { type: 'string' } }),
      [`${P}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ],
    [
      'additionalProperties: false beside properties',
      withA({ type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false }),
      [`${P}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ],
    [
      'additionalProperties: true beside properties',
      withA({ type: 'object', properties: { x: { type: 'string' } }, additionalProperties: true }),
      [],
    ],
    [
      'type null',
      withA({ type: 'null' }),
      [`${P}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative`],
    ],
    [
      'items as a list',
      withA({ type: 'array', items: [{ type: 'string' }] }),
      [
        `${P}.properties[a].items: Forbidden: items must be a schema object and not an array`,
        `${P}.properties[a].items: Required value: must be specified`,
      ],
    ],
    [
      'nullable at the root',
      { type: 'object', nullable: true },
      [`${P}.nullable: Forbidden: nullable cannot be true at the root`],
    ],
    [
      'x-kubernetes-preserve-unknown-fields: false',
      withA({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }),
      [`${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`],
    ],
    [
      'keyword of the wrong JSON type',
      withA({ type: 5, maxLength: 'x' }),
      [
        `${P}.properties[a].type: Invalid value: 5: must be a string`,
        `${P}.properties[a].maxLength: Invalid value: "x": must be an integer`,
        `${P}.properties[a].type: Required value: must not be empty for specified object fields`,
      ],
    ],
  ];
  test.each(cases)('%s', (_name, schema, want) => {
    expect(check(schema)).toEqual(want);
  });
});

describe('validateCRDSchema: structural rules', () => {
  const cases: [string, JSONSchemaProps, string[]][] = [
    ['a valid schema', withA({ type: 'string', maxLength: 3, enum: ['a'] }), []],
    [
      'no type at the root',
      { properties: { a: { type: 'string' } } },
      [`${P}.type: Required value: must not be empty at the root`],
    ],
    ['root not an object', { type: 'string' }, [`${P}.type: Invalid value: "string": must be object at the root`]],
    [
      'no type on a field',
      { type: 'object', properties: { spec: {} } },
      [`${P}.properties[spec].type: Required value: must not be empty for specified object fields`],
    ],
    [
      'no type on array items',
      withA({ type: 'array', items: {} }),
      [`${P}.properties[a].items.type: Required value: must not be empty for specified array items`],
    ],
    [
      'an array without items',
      withA({ type: 'array' }),
      [`${P}.properties[a].items: Required value: must be specified`],
    ],
    ['preserve-unknown-fields needs no type', withA({ 'x-kubernetes-preserve-unknown-fields': true }), []],
    ['int-or-string needs no type', withA({ 'x-kubernetes-int-or-string': true }), []],
    [
      'int-or-string with the anyOf pattern',
      withA({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }),
      [],
    ],
    [
      'int-or-string with the allOf pattern',
      withA({
        'x-kubernetes-int-or-string': true,
        allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^a' }],
      }),
      [],
    ],
    [
      'int-or-string with preserve-unknown-fields',
      withA({ 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true }),
      [
        `${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
      ],
    ],
    [
      'int-or-string with embedded-resource',
      withA({
        type: 'object',
        'x-kubernetes-int-or-string': true,
        'x-kubernetes-embedded-resource': true,
        'x-kubernetes-preserve-unknown-fields': true,
      }),
      [
        `${P}.properties[a].x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
        `${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
      ],
    ],
    [
      'additionalProperties at the root',
      { type: 'object', additionalProperties: { type: 'string' } },
      [`${P}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    ['additionalProperties below the root', withA({ type: 'object', additionalProperties: { type: 'string' } }), []],
    [
      'embedded resource without type',
      withA({ 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true }),
      [`${P}.properties[a].type: Required value: must be object if x-kubernetes-embedded-resource is true`],
    ],
    [
      'embedded resource of type string',
      withA({ type: 'string', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true }),
      [`${P}.properties[a].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`],
    ],
    [
      'embedded resource without properties',
      withA({ type: 'object', 'x-kubernetes-embedded-resource': true }),
      [
        `${P}.properties[a].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      ],
    ],
    [
      'embedded resource with additionalProperties',
      withA({
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        'x-kubernetes-preserve-unknown-fields': true,
        additionalProperties: { type: 'string' },
      }),
      [`${P}.properties[a].additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set`],
    ],
    [
      'embedded resource kind not a string',
      withA({ type: 'object', 'x-kubernetes-embedded-resource': true, properties: { kind: { type: 'integer' } } }),
      [`${P}.properties[a].properties[kind].type: Invalid value: "integer": must be string`],
    ],
    [
      'root apiVersion not a string',
      { type: 'object', properties: { apiVersion: { type: 'object' } } },
      [`${P}.properties[apiVersion].type: Invalid value: "object": must be string`],
    ],
    [
      'root metadata restricting name',
      {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } } },
      },
      [],
    ],
    [
      'root metadata restricting labels',
      {
        type: 'object',
        properties: {
          metadata: {
            type: 'object',
            properties: { labels: { type: 'object', additionalProperties: { type: 'string' } } },
          },
        },
      },
      [
        `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'root metadata with a description',
      { type: 'object', properties: { metadata: { type: 'object', description: 'x' } } },
      [
        `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      ],
    ],
    [
      'root metadata not an object',
      { type: 'object', properties: { metadata: { type: 'string' } } },
      [`${P}.properties[metadata].type: Invalid value: "string": must be object`],
    ],
    [
      'type in a value validation',
      withA({ type: 'string', allOf: [{ type: 'string' }] }),
      [`${P}.properties[a].allOf[0].type: Forbidden: must be empty to be structural`],
    ],
    [
      'generic keywords in a value validation',
      withA({ type: 'string', anyOf: [{ description: 'd', title: 't', nullable: true, default: 'x' }] }),
      [
        `${P}.properties[a].anyOf[0].default: Forbidden: must be undefined to be structural`,
        `${P}.properties[a].anyOf[0].description: Forbidden: must be empty to be structural`,
        `${P}.properties[a].anyOf[0].nullable: Forbidden: must be false to be structural`,
        `${P}.properties[a].anyOf[0].title: Forbidden: must be empty to be structural`,
      ],
    ],
    [
      'extensions in a value validation',
      withA({
        type: 'array',
        items: { type: 'string' },
        oneOf: [{ 'x-kubernetes-list-type': 'set' }],
        not: { 'x-kubernetes-preserve-unknown-fields': true },
      }),
      [
        // the keyword checks run in value validations too, before the structural rules
        `${P}.properties[a].oneOf[0].type: Required value: must be array if x-kubernetes-list-type is specified`,
        `${P}.properties[a].not.x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`,
        `${P}.properties[a].oneOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
      ],
    ],
    [
      'additionalProperties in a value validation',
      withA({
        type: 'object',
        additionalProperties: { type: 'string' },
        allOf: [{ additionalProperties: { maxLength: 2 } }],
      }),
      [`${P}.properties[a].allOf[0].additionalProperties: Forbidden: must be undefined to be structural`],
    ],
    [
      'metadata in a value validation',
      { type: 'object', properties: { metadata: { type: 'object' } }, allOf: [{ properties: { metadata: {} } }] },
      [`${P}.allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`],
    ],
    [
      'a field only in a value validation',
      { type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ properties: { b: { maxLength: 1 } } }] },
      [`${P}.properties[b]: Required value: because it is defined in ${P}.anyOf[0].properties[b]`],
    ],
    [
      'a field in a value validation and in properties',
      {
        type: 'object',
        properties: { a: { type: 'string' } },
        anyOf: [{ properties: { a: { maxLength: 1 } } }, { required: ['a'] }],
      },
      [],
    ],
    [
      'an invalid pattern',
      withA({ type: 'string', pattern: '^[a-z' }),
      [
        `${P}.properties[a].pattern: Invalid value: "^[a-z": must be a valid regular expression, but isn't: error parsing regexp: missing closing ]: \`[a-z\``,
      ],
    ],
    ['a pattern of Go syntax', withA({ type: 'string', pattern: '\\A[[:alpha:]]+\\z' }), []],
    [
      'a pattern Go refuses (backreference)',
      withA({ type: 'string', pattern: '(a)\\1' }),
      [
        `${P}.properties[a].pattern: Invalid value: "(a)\\\\1": must be a valid regular expression, but isn't: error parsing regexp: invalid escape sequence: \`\\1\``,
      ],
    ],
    [
      'errors are sorted by message',
      { type: 'object', properties: { z: {}, b: { type: 'array' }, a: {} } },
      [
        `${P}.properties[a].type: Required value: must not be empty for specified object fields`,
        `${P}.properties[b].items: Required value: must be specified`,
        `${P}.properties[z].type: Required value: must not be empty for specified object fields`,
      ],
    ],
  ];
  test.each(cases)('%s', (_name, schema, want) => {
    expect(check(schema)).toEqual(want);
  });

  test('a non-structural schema passes where structure is not required (v1beta1)', () => {
    expect(check({ properties: { spec: {} } }, { requireStructural: false, allowDefaults: false })).toEqual([]);
  });
});

describe('validateCRDSchema: list and map types', () => {
  const cases: [string, JSONSchemaProps, string[]][] = [
    ['a set of strings', withA({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' }), []],
    [
      'a map list',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      }),
      [],
    ],
    [
      'list type on a string',
      withA({ type: 'string', 'x-kubernetes-list-type': 'set' }),
      [`${P}.properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`],
    ],
    [
      'an unknown list type',
      withA({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' }),
      [`${P}.properties[a].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`],
    ],
    [
      'map type on an array',
      withA({ type: 'array', items: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' }),
      [`${P}.properties[a].type: Invalid value: "array": must be object if x-kubernetes-map-type is specified`],
    ],
    [
      'an unknown map type',
      withA({ type: 'object', 'x-kubernetes-map-type': 'other' }),
      [`${P}.properties[a].x-kubernetes-map-type: Unsupported value: "other": supported values: "atomic", "granular"`],
    ],
    [
      'a map list without keys',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        items: { type: 'object', properties: { n: { type: 'string' } } },
      }),
      [
        `${P}.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      ],
    ],
    [
      'map keys that are not item properties',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['x'],
        items: { type: 'object', properties: { n: { type: 'string' } } },
      }),
      [
        `${P}.properties[a].x-kubernetes-list-map-keys: Invalid value: []string{"x"}: entries must all be names of item properties`,
      ],
    ],
    [
      'repeated map keys',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['n', 'n'],
        items: { type: 'object', properties: { n: { type: 'string' } } },
      }),
      [
        `${P}.properties[a].x-kubernetes-list-map-keys: Invalid value: []string{"n", "n"}: must not contain duplicate entries`,
      ],
    ],
    [
      'a map list of strings',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['n'],
        items: { type: 'string' },
      }),
      [
        `${P}.properties[a].items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
      ],
    ],
    [
      'a map key that is not a scalar',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['n'],
        items: { type: 'object', properties: { n: { type: 'object' } } },
      }),
      [
        `${P}.properties[a].items.properties[n].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
      ],
    ],
    [
      'map keys without list type',
      withA({
        type: 'array',
        items: { type: 'object', properties: { n: { type: 'string' } } },
        'x-kubernetes-list-map-keys': ['n'],
      }),
      [
        `${P}.properties[a].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
      ],
    ],
    [
      'map keys with list type set',
      withA({
        type: 'array',
        items: { type: 'string' },
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-list-map-keys': ['n'],
      }),
      [
        `${P}.properties[a].x-kubernetes-list-type: Invalid value: "set": must be map if x-kubernetes-list-map-keys is non-empty`,
      ],
    ],
    [
      'a set of granular objects',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'object', properties: { n: { type: 'string' } } },
      }),
      [
        `${P}.properties[a].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
      ],
    ],
    [
      'a set of atomic objects',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { n: { type: 'string' } } },
      }),
      [],
    ],
    [
      'a set of set lists',
      withA({
        type: 'array',
        'x-kubernetes-list-type': 'set',
        items: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      }),
      [
        `${P}.properties[a].items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set`,
      ],
    ],
  ];
  test.each(cases)('%s', (_name, schema, want) => {
    expect(check(schema)).toEqual(want);
  });
});

describe('validateCRDSchema: defaults', () => {
  const spec = (props: JSONSchemaProps, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
    type: 'object',
    properties: { spec: { type: 'object', properties: props, ...extra } },
  });
  const S = `${P}.properties[spec]`;
  const cases: [string, JSONSchemaProps, string[]][] = [
    ['a valid default', spec({ replicas: { type: 'integer', minimum: 1, default: 1 } }), []],
    [
      'a default of the wrong type',
      spec({ replicas: { type: 'integer', default: 'x' } }),
      [`${S}.properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"`],
    ],
    [
      'a default below the minimum',
      spec({ replicas: { type: 'integer', minimum: 1, default: 0 } }),
      [`${S}.properties[replicas].default: Invalid value: 0:  in body should be greater than or equal to 1`],
    ],
    [
      'a default not in the enum',
      spec({ mode: { type: 'string', enum: ['a', 'b'], default: 'c' } }),
      [`${S}.properties[mode].default: Unsupported value: "c": supported values: "a", "b"`],
    ],
    [
      'an object default missing a required field',
      spec({ a: { type: 'string' } }, { required: ['a'], default: {} }),
      [`${S}.default.a: Required value`],
    ],
    [
      'a default with unknown fields',
      spec({ a: { type: 'string' } }, { default: { a: 'x', b: 'y' } }),
      [`${S}.default: Invalid value: {"a":"x","b":"y"}: must not have unknown fields`],
    ],
    [
      'a default under preserve-unknown-fields keeps unknown fields',
      spec({ a: { type: 'string' } }, { default: { b: 1 }, 'x-kubernetes-preserve-unknown-fields': true }),
      [],
    ],
    [
      'a default of an embedded resource without kind',
      spec({
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
          default: { apiVersion: 'v1' },
        },
      }),
      [`${S}.properties[e].default.kind: Required value`],
    ],
    [
      'a default of an embedded resource name that is not a valid name',
      spec({
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { metadata: { type: 'object', properties: { name: { type: 'string', default: 'a/b' } } } },
        },
      }),
      [
        `${S}.properties[e].properties[metadata].properties[name].default: Invalid value: "a/b": must result in valid metadata: metadata.name: Invalid value: "a/b": may not contain '/'`,
      ],
    ],
    [
      'a valid default of embedded resource labels',
      spec({
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: {
            metadata: {
              type: 'object',
              properties: { labels: { type: 'object', additionalProperties: { type: 'string' }, default: { a: 'b' } } },
            },
          },
        },
      }),
      [],
    ],
    [
      'defaults not allowed',
      spec({ replicas: { type: 'integer', default: 1 } }),
      [`${S}.properties[replicas].default: Forbidden: must not be set`],
    ],
    [
      'a default in top-level metadata',
      {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', default: 'x' } } } },
      },
      [`${P}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`],
    ],
    [
      'a default under additionalProperties of embedded metadata',
      spec({
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: {
            metadata: {
              type: 'object',
              properties: { labels: { type: 'object', additionalProperties: { type: 'string', default: 'x' } } },
            },
          },
        },
      }),
      [
        `${S}.properties[e].properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata`,
      ],
    ],
    [
      'embedded-resource inside resource metadata',
      {
        type: 'object',
        properties: {
          metadata: {
            type: 'object',
            properties: {
              name: {
                type: 'object',
                'x-kubernetes-embedded-resource': true,
                'x-kubernetes-preserve-unknown-fields': true,
              },
            },
          },
        },
      },
      [
        `${P}.properties[metadata].properties[name].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta`,
      ],
    ],
  ];
  test.each(cases)('%s', (name, schema, want) => {
    const opts = name === 'defaults not allowed' ? { requireStructural: true, allowDefaults: false } : V1;
    expect(check(schema, opts)).toEqual(want);
  });

  test('defaults are checked only once the schema is structural', () => {
    const schema = spec({ replicas: { type: 'integer', default: 'x' }, other: {} });
    expect(check(schema)).toEqual([
      `${S}.properties[other].type: Required value: must not be empty for specified object fields`,
    ]);
  });

  test('pruned defaults can be left unrequired (update of a CRD that had them)', () => {
    const schema = spec({ a: { type: 'string' } }, { default: { a: 'x', b: 'y' } });
    expect(check(schema, { ...V1, requirePrunedDefaults: false })).toEqual([]);
  });
});

describe('validateCRDSchema: the root with the status subresource', () => {
  const withStatus = { ...V1, statusSubresource: true };
  const ALLOWED =
    'Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern ' +
    'MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields';
  test('properties, required and type object are allowed', () => {
    const schema = { type: 'object', description: 'd', required: ['spec'], properties: { spec: { type: 'object' } } };
    expect(check(schema, withStatus)).toEqual([]);
  });
  test('anyOf at the root is not', () => {
    const schema = { type: 'object', properties: { spec: { type: 'object' } }, anyOf: [{ required: ['spec'] }] };
    expect(check(schema, withStatus)).toEqual([
      `${P}: Invalid value: ${JSON.stringify(schema)}: only [${ALLOWED}] fields are allowed at the root of the schema if the status subresource is enabled`,
    ]);
    expect(check(schema)).toEqual([]);
  });
  test('a root type other than object', () => {
    expect(check({ type: 'string' }, withStatus)).toEqual([
      `${P}.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled`,
      `${P}.type: Invalid value: "string": must be object at the root`,
    ]);
  });
});

describe('validateCRDSchema: malformed input gives errors, never a crash', () => {
  const inputs: unknown[] = [
    5,
    null,
    [],
    { type: 'object', properties: 5 },
    { type: 'object', properties: { a: 'x' } },
    { type: 'array', items: 'x' },
    { type: 'object', required: 'a', enum: 'x', allOf: {}, not: 3, additionalProperties: 'no' },
    { type: 'object', properties: { a: { type: 'string', pattern: '(' } } },
  ];
  test.each(inputs.map((i) => [JSON.stringify(i), i]))('%s', (_s, input) => {
    const errs = validateCRDSchema(input as JSONSchemaProps, PATH, V1);
    expect(errs.length).toBeGreaterThan(0);
    expect(errs.every((e) => e.field.startsWith(P))).toBe(true);
  });
});
