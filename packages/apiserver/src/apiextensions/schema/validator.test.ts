/**
 * Table tests of `compileSchema(...).validate`: one case per keyword, with the messages a 1.21 API server gives
 * for a custom object (kube-openapi's validator messages wrapped by `ValidateCustomResource`).
 */
import { fieldErrorToString } from '@platform/api';
import { type JSONSchemaProps, compileSchema } from './index';

/** The messages of `{spec: {a: value}}` against a schema whose `spec.a` is `a`. */
function checkA(a: JSONSchemaProps, value: unknown): string[] {
  const schema = { type: 'object', properties: { spec: { type: 'object', properties: { a } } } };
  return compileSchema(schema)
    .validate({ apiVersion: 'g.example/v1', kind: 'K', metadata: { name: 'n' }, spec: { a: value } })
    .map(fieldErrorToString);
}

type Case = [string, JSONSchemaProps, unknown, string[]];

describe('validate: types', () => {
  const cases: Case[] = [
    ['integer', { type: 'integer' }, 3, []],
    [
      'integer given a string',
      { type: 'integer' },
      'string',
      ['spec.a: Invalid value: "string": spec.a in body must be of type integer: "string"'],
    ],
    [
      'integer given a fraction',
      { type: 'integer' },
      1.5,
      ['spec.a: Invalid value: "number": spec.a in body must be of type integer: "number"'],
    ],
    ['number given an integer', { type: 'number' }, 2, []],
    ['number given a fraction', { type: 'number' }, 2.5, []],
    [
      'number given a boolean',
      { type: 'number' },
      true,
      ['spec.a: Invalid value: "boolean": spec.a in body must be of type number: "boolean"'],
    ],
    [
      'boolean given a string',
      { type: 'boolean' },
      'true',
      ['spec.a: Invalid value: "string": spec.a in body must be of type boolean: "string"'],
    ],
    [
      'string given an object',
      { type: 'string' },
      {},
      ['spec.a: Invalid value: "object": spec.a in body must be of type string: "object"'],
    ],
    [
      'array given an object',
      { type: 'array', items: { type: 'string' } },
      {},
      ['spec.a: Invalid value: "object": spec.a in body must be of type array: "object"'],
    ],
    [
      'object given an array',
      { type: 'object' },
      [],
      ['spec.a: Invalid value: "array": spec.a in body must be of type object: "array"'],
    ],
    [
      'null where not nullable',
      { type: 'string' },
      null,
      ['spec.a: Invalid value: "null": spec.a in body must be of type string: "null"'],
    ],
    ['null where nullable', { type: 'string', nullable: true }, null, []],
    ['int-or-string given an integer', { 'x-kubernetes-int-or-string': true }, 80, []],
    ['int-or-string given a string', { 'x-kubernetes-int-or-string': true }, '80%', []],
    [
      'int-or-string given a boolean',
      { 'x-kubernetes-int-or-string': true },
      true,
      ['spec.a: Invalid value: "boolean": spec.a in body must be of type integer,string: "boolean"'],
    ],
    [
      'int-or-string with its anyOf given a boolean',
      { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      true,
      [
        'spec.a: Invalid value: "boolean": spec.a in body must be of type integer,string: "boolean"',
        ': Invalid value: "": "spec.a" must validate at least one schema (anyOf)',
        'spec.a: Invalid value: "boolean": spec.a in body must be of type integer: "boolean"',
      ],
    ],
    ['preserve-unknown-fields takes anything', { 'x-kubernetes-preserve-unknown-fields': true }, [1, 'x'], []],
  ];
  test.each(cases)('%s', (_n, a, value, want) => expect(checkA(a, value)).toEqual(want));
});

describe('validate: formats', () => {
  const cases: Case[] = [
    ['int32 on an integer', { type: 'integer', format: 'int32' }, 5, []],
    ['int64 beyond int32 (not range-checked, as 1.21)', { type: 'integer', format: 'int32' }, 2 ** 40, []],
    [
      'int32 given a boolean',
      { type: 'integer', format: 'int32' },
      true,
      ['spec.a: Invalid value: "": spec.a in body must be of type int32: ""'],
    ],
    [
      'double given a string',
      { type: 'number', format: 'double' },
      'x',
      ['spec.a: Invalid value: "string": spec.a in body must be of type number: "string"'],
    ],
    ['an unchecked string format', { type: 'string', format: 'int32' }, 'anything', []],
    ['date-time', { type: 'string', format: 'date-time' }, '2021-04-08T12:30:00Z', []],
    [
      'date-time with offset and fraction',
      { type: 'string', format: 'date-time' },
      '2021-04-08T12:30:00.123+02:00',
      [],
    ],
    [
      'bad date-time',
      { type: 'string', format: 'date-time' },
      'yesterday',
      ['spec.a: Invalid value: "yesterday": spec.a in body must be of type date-time: "yesterday"'],
    ],
    ['date', { type: 'string', format: 'date' }, '2021-02-28', []],
    [
      'bad date',
      { type: 'string', format: 'date' },
      '2021-02-30',
      ['spec.a: Invalid value: "2021-02-30": spec.a in body must be of type date: "2021-02-30"'],
    ],
    ['uuid', { type: 'string', format: 'uuid' }, '123e4567-e89b-12d3-a456-426614174000', []],
    [
      'bad uuid',
      { type: 'string', format: 'uuid' },
      '123',
      ['spec.a: Invalid value: "123": spec.a in body must be of type uuid: "123"'],
    ],
    ['email', { type: 'string', format: 'email' }, 'a@example.com', []],
    [
      'bad email',
      { type: 'string', format: 'email' },
      'nobody',
      ['spec.a: Invalid value: "nobody": spec.a in body must be of type email: "nobody"'],
    ],
    ['hostname', { type: 'string', format: 'hostname' }, 'www.example.com', []],
    [
      'bad hostname',
      { type: 'string', format: 'hostname' },
      'a_b',
      ['spec.a: Invalid value: "a_b": spec.a in body must be of type hostname: "a_b"'],
    ],
    ['ipv4', { type: 'string', format: 'ipv4' }, '10.0.0.1', []],
    [
      'ipv4 given ipv6',
      { type: 'string', format: 'ipv4' },
      '::1',
      ['spec.a: Invalid value: "::1": spec.a in body must be of type ipv4: "::1"'],
    ],
    ['ipv6', { type: 'string', format: 'ipv6' }, 'fe80::1', []],
    ['cidr', { type: 'string', format: 'cidr' }, '10.0.0.0/8', []],
    [
      'bad cidr',
      { type: 'string', format: 'cidr' },
      '10.0.0.0/33',
      ['spec.a: Invalid value: "10.0.0.0/33": spec.a in body must be of type cidr: "10.0.0.0/33"'],
    ],
    ['byte', { type: 'string', format: 'byte' }, 'aGVsbG8=', []],
    [
      'bad byte',
      { type: 'string', format: 'byte' },
      'a!',
      ['spec.a: Invalid value: "a!": spec.a in body must be of type byte: "a!"'],
    ],
    ['duration', { type: 'string', format: 'duration' }, '1h30m', []],
    ['mac', { type: 'string', format: 'mac' }, '01:23:45:67:89:ab', []],
    ['hexcolor', { type: 'string', format: 'hexcolor' }, '#fff', []],
    ['password', { type: 'string', format: 'password' }, '', []],
  ];
  test.each(cases)('%s', (_n, a, value, want) => expect(checkA(a, value)).toEqual(want));
});

describe('validate: value keywords', () => {
  const cases: Case[] = [
    ['enum', { type: 'string', enum: ['a', 'b'] }, 'a', []],
    [
      'enum mismatch',
      { type: 'string', enum: ['a', 'b'] },
      'x',
      ['spec.a: Unsupported value: "x": supported values: "a", "b"'],
    ],
    [
      'numeric enum mismatch',
      { type: 'integer', enum: [1, 2] },
      3,
      ['spec.a: Unsupported value: 3: supported values: "1", "2"'],
    ],
    [
      'null never matches an enum',
      { type: 'string', nullable: true, enum: ['a', null] },
      null,
      ['spec.a: Unsupported value: "null": supported values: "a", "null"'],
    ],
    ['pattern', { type: 'string', pattern: '^[a-z]+$' }, 'abc', []],
    [
      'pattern mismatch',
      { type: 'string', pattern: '^[a-z]+$' },
      'ABC',
      ['spec.a: Invalid value: "ABC": spec.a in body should match \'^[a-z]+$\''],
    ],
    ['pattern with Go inline flags', { type: 'string', pattern: '(?i)^[a-z]+$' }, 'ABC', []],
    [
      'pattern with POSIX classes',
      { type: 'string', pattern: '^[[:digit:]]+\\z' },
      '12a',
      ['spec.a: Invalid value: "12a": spec.a in body should match \'^[[:digit:]]+\\z\''],
    ],
    ['pattern matches anywhere (unanchored)', { type: 'string', pattern: 'b' }, 'abc', []],
    [
      'a catastrophic pattern runs in linear time',
      { type: 'string', pattern: '^(a+)+$' },
      'a'.repeat(3000) + 'b',
      [expect.stringMatching(/should match/) as unknown as string],
    ],
    [
      'maxLength',
      { type: 'string', maxLength: 3 },
      'abcd',
      ['spec.a: Invalid value: "abcd": spec.a in body should be at most 3 chars long'],
    ],
    ['maxLength counts characters', { type: 'string', maxLength: 3 }, 'héé', []],
    [
      'minLength',
      { type: 'string', minLength: 2 },
      'a',
      ['spec.a: Invalid value: "a": spec.a in body should be at least 2 chars long'],
    ],
    [
      'minimum',
      { type: 'integer', minimum: 1 },
      0,
      ['spec.a: Invalid value: 0: spec.a in body should be greater than or equal to 1'],
    ],
    [
      'exclusiveMinimum',
      { type: 'integer', minimum: 1, exclusiveMinimum: true },
      1,
      ['spec.a: Invalid value: 1: spec.a in body should be greater than 1'],
    ],
    [
      'maximum',
      { type: 'integer', maximum: 10 },
      11,
      ['spec.a: Invalid value: 11: spec.a in body should be less than or equal to 10'],
    ],
    [
      'exclusiveMaximum',
      { type: 'integer', maximum: 10, exclusiveMaximum: true },
      10,
      ['spec.a: Invalid value: 10: spec.a in body should be less than 10'],
    ],
    [
      'fractional maximum',
      { type: 'number', maximum: 1.5 },
      2.5,
      ['spec.a: Invalid value: 2.5: spec.a in body should be less than or equal to 1.5'],
    ],
    [
      'multipleOf',
      { type: 'integer', multipleOf: 3 },
      7,
      ['spec.a: Invalid value: 7: spec.a in body should be a multiple of 3'],
    ],
    ['fractional multipleOf', { type: 'number', multipleOf: 0.1 }, 0.3, []],
    [
      'minItems',
      { type: 'array', items: { type: 'string' }, minItems: 2 },
      ['a'],
      ['spec.a: Invalid value: 1: spec.a in body should have at least 2 items'],
    ],
    [
      'maxItems',
      { type: 'array', items: { type: 'string' }, maxItems: 1 },
      ['a', 'b'],
      ['spec.a: Invalid value: 2: spec.a in body should have at most 1 items'],
    ],
    [
      'items',
      { type: 'array', items: { type: 'integer' } },
      [1, 'x'],
      ['spec.a[1]: Invalid value: "string": spec.a[1] in body must be of type integer: "string"'],
    ],
    [
      'minProperties',
      { type: 'object', additionalProperties: { type: 'string' }, minProperties: 2 },
      { x: 'y' },
      ['spec.a: Invalid value: 2: spec.a in body should have at least 2 properties'],
    ],
    [
      'maxProperties',
      { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 },
      { x: 'y', z: 'w' },
      ['spec.a: Invalid value: 1: spec.a in body should have at most 1 properties'],
    ],
    [
      'required',
      { type: 'object', properties: { x: { type: 'string' } }, required: ['x', 'y'] },
      { x: 'a' },
      ['spec.a.y: Required value'],
    ],
    [
      'additionalProperties schema',
      { type: 'object', additionalProperties: { type: 'string' } },
      { k: 1 },
      ['spec.a.k: Invalid value: "integer": spec.a.k in body must be of type string: "integer"'],
    ],
    [
      'additionalProperties false',
      { type: 'object', additionalProperties: false },
      { k: 1 },
      ['spec.a: Invalid value: "k": spec.a.k in body is a forbidden property'],
    ],
    [
      'allOf',
      { type: 'integer', allOf: [{ minimum: 5 }] },
      3,
      [
        'spec.a: Invalid value: 3: spec.a in body should be greater than or equal to 5',
        ': Invalid value: "": "spec.a" must validate all the schemas (allOf). None validated',
      ],
    ],
    ['anyOf satisfied', { type: 'integer', anyOf: [{ minimum: 5 }, { maximum: 1 }] }, 0, []],
    [
      'anyOf failed',
      { type: 'integer', anyOf: [{ minimum: 5 }, { maximum: 1 }] },
      3,
      [
        ': Invalid value: "": "spec.a" must validate at least one schema (anyOf)',
        'spec.a: Invalid value: 3: spec.a in body should be greater than or equal to 5',
      ],
    ],
    [
      'oneOf none valid',
      { type: 'integer', oneOf: [{ minimum: 5 }, { maximum: 1 }] },
      3,
      [
        ': Invalid value: "": "spec.a" must validate one and only one schema (oneOf). Found none valid',
        'spec.a: Invalid value: 3: spec.a in body should be greater than or equal to 5',
      ],
    ],
    [
      'oneOf two valid',
      { type: 'integer', oneOf: [{ minimum: 1 }, { maximum: 5 }] },
      3,
      [': Invalid value: "": "spec.a" must validate one and only one schema (oneOf). Found 2 valid alternatives'],
    ],
    [
      'not',
      { type: 'string', not: { enum: ['x'] } },
      'x',
      [': Invalid value: "": "spec.a" must not validate the schema (not)'],
    ],
  ];
  test.each(cases)('%s', (_n, a, value, want) => expect(checkA(a, value)).toEqual(want));

  test('a required field at the root', () => {
    const schema = { type: 'object', required: ['spec'], properties: { spec: { type: 'object' } } };
    expect(compileSchema(schema).validate({ apiVersion: 'v1', kind: 'K' }).map(fieldErrorToString)).toEqual([
      'spec: Required value',
    ]);
  });
  test('no schema validates nothing', () => {
    expect(compileSchema(undefined).validate({ spec: 1 })).toEqual([]);
  });
});

describe('validate: list types and embedded resources', () => {
  const cases: Case[] = [
    [
      'set without duplicates',
      { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      ['a', 'b'],
      [],
    ],
    [
      'set with duplicates',
      { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      ['a', 'b', 'a', 'a', 'b'],
      ['spec.a[2]: Duplicate value: "a"', 'spec.a[4]: Duplicate value: "b"'],
    ],
    [
      'set of objects with duplicates',
      {
        type: 'array',
        items: {
          type: 'object',
          'x-kubernetes-map-type': 'atomic',
          properties: { x: { type: 'integer' }, y: { type: 'integer' } },
        },
        'x-kubernetes-list-type': 'set',
      },
      [
        { x: 1, y: 2 },
        { y: 2, x: 1 },
      ],
      ['spec.a[1]: Duplicate value: {"y":2,"x":1}'],
    ],
    [
      'map with duplicate keys',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } },
      },
      [{ name: 'a', v: 1 }, { name: 'b' }, { name: 'a', v: 2 }],
      ['spec.a[2]: Duplicate value: {"name":"a"}'],
    ],
    [
      'map with two keys',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['port', 'protocol'],
        items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string' } } },
      },
      [
        { port: 80, protocol: 'TCP' },
        { port: 80, protocol: 'UDP' },
        { port: 80, protocol: 'TCP' },
      ],
      ['spec.a[2]: Duplicate value: {"port":80,"protocol":"TCP"}'],
    ],
    [
      'embedded resource without apiVersion and kind',
      { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      { spec: {} },
      ['spec.a.apiVersion: Required value', 'spec.a.kind: Required value'],
    ],
    [
      'embedded resource with a bad kind and apiVersion',
      { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      { apiVersion: 'a/b/c', kind: 'Foo_Bar' },
      [
        'spec.a.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        expect.stringMatching(
          /^spec\.a\.kind: Invalid value: "Foo_Bar": may have mixed case, but should otherwise match: /,
        ) as unknown as string,
      ],
    ],
    [
      'embedded resource with bad metadata',
      { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a/b' } },
      [expect.stringMatching(/^spec\.a\.metadata\.name: Invalid value: "a\/b": /) as unknown as string],
    ],
    [
      'embedded resource in a list',
      {
        type: 'array',
        items: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
      [{ apiVersion: 'v1', kind: 'Pod' }, { kind: 'Pod' }],
      ['spec.a[1].apiVersion: Required value'],
    ],
  ];
  test.each(cases)('%s', (_n, a, value, want) => expect(checkA(a, value)).toEqual(want));
});

describe('validateStatus', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
      status: { type: 'object', properties: { replicas: { type: 'integer', minimum: 0 } } },
    },
  };
  test('status is validated with paths below status and messages relative to it', () => {
    const errs = compileSchema(schema).validateStatus({ spec: { replicas: 'x' }, status: { replicas: -1 } });
    expect(errs.map(fieldErrorToString)).toEqual([
      'status.replicas: Invalid value: -1: replicas in body should be greater than or equal to 0',
    ]);
  });
  test('a valid status', () => {
    expect(compileSchema(schema).validateStatus({ status: { replicas: 1 } })).toEqual([]);
  });
});
