/**
 * Table tests of pruning, defaulting (1.21's `pruning/algorithm.go`, `defaulting/algorithm.go`, `prunenulls.go`)
 * and of the OpenAPI v2 form of a schema (`ToStructuralOpenAPIV2`).
 */
import { deepFreeze } from '../../storage/immutable';

import { type JSONSchemaProps, compileSchema, toOpenAPIV2 } from './index';

type Obj = Record<string, unknown>;

const META = { apiVersion: 'g.example/v1', kind: 'K', metadata: { name: 'n', labels: { a: 'b' } } };

function pruned(schema: JSONSchemaProps, obj: Obj, preserveUnknownFields = false): Obj {
  const o = structuredClone(obj);
  compileSchema(schema, preserveUnknownFields).prune(o);
  return o;
}

function defaulted(schema: JSONSchemaProps, obj: Obj): Obj {
  const o = structuredClone(obj);
  compileSchema(schema).applyDefaults(o);
  return o;
}

const spec = (props: JSONSchemaProps, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: props, ...extra } },
});

describe('prune', () => {
  const cases: [string, JSONSchemaProps, Obj, Obj][] = [
    [
      'unknown root fields go, apiVersion/kind/metadata stay',
      spec({}),
      { ...META, spec: {}, status: { x: 1 } },
      { ...META, spec: {} },
    ],
    ['unknown nested fields go', spec({ a: { type: 'string' } }), { spec: { a: 'x', b: 'y' } }, { spec: { a: 'x' } }],
    [
      'preserve-unknown-fields keeps unknown fields, prunes specified ones',
      spec(
        { a: { type: 'object', properties: { x: { type: 'string' } } } },
        { 'x-kubernetes-preserve-unknown-fields': true },
      ),
      { spec: { a: { x: '1', y: '2' }, b: { c: 1 } } },
      { spec: { a: { x: '1' }, b: { c: 1 } } },
    ],
    [
      'an embedded resource keeps its apiVersion, kind and metadata',
      spec({ e: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } } }),
      { spec: { e: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, other: 1 } } },
      { spec: { e: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} } } },
    ],
    [
      'additionalProperties prunes inside each value',
      spec({ m: { type: 'object', additionalProperties: { type: 'object', properties: { x: { type: 'string' } } } } }),
      { spec: { m: { k1: { x: 'a', y: 'b' }, k2: {} } } },
      { spec: { m: { k1: { x: 'a' }, k2: {} } } },
    ],
    [
      'items prune each element',
      spec({ l: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } } }),
      { spec: { l: [{ x: 'a', y: 'b' }, { z: 1 }] } },
      { spec: { l: [{ x: 'a' }, {}] } },
    ],
    [
      'non-nullable nulls without default go; nullable and defaulted ones stay',
      spec({ a: { type: 'string' }, b: { type: 'string', nullable: true }, c: { type: 'string', default: 'x' } }),
      { spec: { a: null, b: null, c: null } },
      { spec: { b: null, c: null } },
    ],
    [
      "an embedded resource's metadata keeps only ObjectMeta's fields",
      spec({
        e: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      }),
      {
        spec: {
          e: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' }, bogus: 1 }, spec: { x: 1 } },
        },
      },
      { spec: { e: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { a: 'b' } }, spec: { x: 1 } } } },
    ],
    [
      '__proto__ is an ordinary unknown field',
      spec({}),
      JSON.parse('{"spec":{"__proto__":{"x":1}}}') as Obj,
      { spec: {} },
    ],
  ];
  test.each(cases)('%s', (_n, schema, obj, want) => expect(pruned(schema, obj)).toEqual(want));

  test('nothing is pruned with preserveUnknownFields (v1beta1)', () => {
    const obj = { spec: { b: 1 }, status: {} };
    expect(pruned(spec({ a: { type: 'string' } }), obj, true)).toEqual(obj);
  });

  test('without a schema only apiVersion, kind and metadata stay', () => {
    expect(pruned(undefined as unknown as JSONSchemaProps, { ...META, spec: { a: 1 } })).toEqual(META);
  });
});

describe('applyDefaults', () => {
  const cases: [string, JSONSchemaProps, Obj, Obj][] = [
    ['an absent field is defaulted', spec({ r: { type: 'integer', default: 1 } }), { spec: {} }, { spec: { r: 1 } }],
    ['a present field is kept', spec({ r: { type: 'integer', default: 1 } }), { spec: { r: 3 } }, { spec: { r: 3 } }],
    [
      'a non-nullable null is defaulted',
      spec({ r: { type: 'integer', default: 1 } }),
      { spec: { r: null } },
      { spec: { r: 1 } },
    ],
    [
      'a nullable null is kept',
      spec({ r: { type: 'integer', nullable: true, default: 1 } }),
      { spec: { r: null } },
      { spec: { r: null } },
    ],
    ['an absent parent is not created', spec({ r: { type: 'integer', default: 1 } }), {}, {}],
    [
      'a defaulted object is defaulted below',
      spec({ o: { type: 'object', default: {}, properties: { x: { type: 'string', default: 'd' } } } }),
      { spec: {} },
      { spec: { o: { x: 'd' } } },
    ],
    [
      'list items are defaulted',
      spec({ l: { type: 'array', items: { type: 'object', properties: { p: { type: 'integer', default: 80 } } } } }),
      { spec: { l: [{}, { p: 1 }] } },
      { spec: { l: [{ p: 80 }, { p: 1 }] } },
    ],
    [
      'a non-nullable null item is defaulted',
      spec({ l: { type: 'array', items: { type: 'string', default: 'x' } } }),
      { spec: { l: [null, 'a'] } },
      { spec: { l: ['x', 'a'] } },
    ],
    [
      'a non-nullable null map value is defaulted',
      spec({ m: { type: 'object', additionalProperties: { type: 'string', default: 'x' } } }),
      { spec: { m: { k: null } } },
      { spec: { m: { k: 'x' } } },
    ],
  ];
  test.each(cases)('%s', (_n, schema, obj, want) => expect(defaulted(schema, obj)).toEqual(want));

  // `defaulted` serves reads of the watch cache's frozen objects: the same answers, the object itself when unchanged.
  test.each(cases)('defaulted, on a frozen object: %s', (_n, schema, obj, want) => {
    const frozen = deepFreeze(structuredClone(obj));
    const out = compileSchema(schema).defaulted(frozen);
    expect(out).toEqual(want);
    if (JSON.stringify(want) === JSON.stringify(obj)) expect(out).toBe(frozen);
    else expect(out).not.toBe(frozen);
  });

  test('a field named __proto__ is defaulted as an own field', () => {
    const schema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string","default":"x"}}}',
    ) as JSONSchemaProps;
    const o: Obj = {};
    compileSchema(schema).applyDefaults(o);
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(JSON.stringify(o)).toBe('{"__proto__":"x"}');
  });

  test('defaults are deep copies', () => {
    const c = compileSchema(
      spec({
        o: { type: 'object', default: { l: [1] }, properties: { l: { type: 'array', items: { type: 'integer' } } } },
      }),
    );
    const a: Obj = { spec: {} };
    const b: Obj = { spec: {} };
    c.applyDefaults(a);
    ((a.spec as Obj).o as { l: number[] }).l.push(2);
    c.applyDefaults(b);
    expect(b).toEqual({ spec: { o: { l: [1] } } });
  });
});

describe('toOpenAPIV2', () => {
  const cases: [string, JSONSchemaProps, JSONSchemaProps][] = [
    [
      'value keywords and extensions are kept',
      spec({ a: { type: 'string', maxLength: 3, enum: ['a'], description: 'd', 'x-kubernetes-list-type': undefined } }),
      spec({ a: { type: 'string', maxLength: 3, enum: ['a'], description: 'd' } }),
    ],
    [
      'junctors are dropped',
      spec({
        a: {
          type: 'integer',
          allOf: [{ minimum: 1 }],
          anyOf: [{ maximum: 3 }],
          oneOf: [{ minimum: 2 }],
          not: { enum: [5] },
        },
      }),
      spec({ a: { type: 'integer' } }),
    ],
    [
      'a nullable field loses its type, sub-schemas and required entry',
      spec(
        { a: { type: 'object', nullable: true, properties: { x: { type: 'string' } } }, b: { type: 'string' } },
        { required: ['a', 'b'] },
      ),
      spec({ a: {}, b: { type: 'string' } }, { required: ['b'] }),
    ],
    [
      'preserve-unknown-fields drops sub-schemas',
      spec({
        a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { x: { type: 'string' } } },
      }),
      spec({ a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
    ],
    [
      'an array left without items loses its type',
      spec({ a: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } } }),
      spec({ a: { 'x-kubernetes-preserve-unknown-fields': true } }),
    ],
    [
      'int-or-string is kept as the extension',
      spec({ a: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } }),
      spec({ a: { 'x-kubernetes-int-or-string': true } }),
    ],
    [
      'list and map extensions are kept',
      spec({
        a: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['n'],
          items: {
            type: 'object',
            'x-kubernetes-map-type': 'granular',
            properties: { n: { type: 'string' } },
            required: ['n'],
          },
        },
      }),
      spec({
        a: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['n'],
          items: {
            type: 'object',
            'x-kubernetes-map-type': 'granular',
            properties: { n: { type: 'string' } },
            required: ['n'],
          },
        },
      }),
    ],
    ['a non-structural schema is published as any value', { type: 'object', properties: { spec: {} } }, {}],
  ];
  test.each(cases)('%s', (_n, schema, want) =>
    expect(toOpenAPIV2(JSON.parse(JSON.stringify(schema)) as JSONSchemaProps)).toEqual(want),
  );
});
