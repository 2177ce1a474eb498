/**
 * The apply schema of a CRD version, read by the field manager's typed walks: what each structural keyword makes
 * of a node (the server-side behaviour is in apply.integration.test.ts).
 */
import { fieldSetOf, merge } from '../patch/apply/typed';
import { applySchemaOf } from './apply-schema';

const schema = applySchemaOf(
  {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          size: { 'x-kubernetes-int-or-string': true },
          template: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            'x-kubernetes-preserve-unknown-fields': true,
          },
          hosts: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['ip', 'port'],
            items: { type: 'object', properties: { ip: { type: 'string' }, port: { type: 'integer' } } },
          },
          constructor: { type: 'string' },
        },
      },
    },
  },
  false,
);

function paths(value: unknown, strict = true): string[] {
  return fieldSetOf(value, schema, strict)
    .sorted()
    .map((p) => p.join(' '));
}

it('is undefined for a version without a schema (objects are read untyped)', () => {
  expect(applySchemaOf(undefined, false)).toBeUndefined();
});

it('reads metadata as ObjectMeta, also in embedded resources, and int-or-string as a scalar', () => {
  const obj = {
    metadata: { labels: { a: 'b' }, finalizers: ['x'] },
    spec: { size: '10%', template: { metadata: { finalizers: ['y'] }, anything: { deep: 1 } } },
  };
  expect(paths(obj)).toEqual([
    'f:metadata f:finalizers v:"x"',
    'f:metadata f:labels f:a',
    'f:spec f:size',
    'f:spec f:template f:anything f:deep',
    'f:spec f:template f:metadata f:finalizers v:"y"',
  ]);
});

it('keys map lists by every key field, and merges entries of other managers', () => {
  const live = { spec: { hosts: [{ ip: '10.0.0.1', port: 80 }] } };
  const config = { spec: { hosts: [{ ip: '10.0.0.1', port: 443 }] } };
  expect(merge(live, config, schema)).toEqual({
    spec: {
      hosts: [
        { ip: '10.0.0.1', port: 80 },
        { ip: '10.0.0.1', port: 443 },
      ],
    },
  });
  expect(paths(config)).toEqual([
    'f:spec f:hosts k:{"ip":"10.0.0.1","port":443}',
    'f:spec f:hosts k:{"ip":"10.0.0.1","port":443} f:ip',
    'f:spec f:hosts k:{"ip":"10.0.0.1","port":443} f:port',
  ]);
});

it('takes property names such as constructor as ordinary fields, and refuses undeclared ones', () => {
  expect(paths({ spec: { constructor: 'x' } })).toEqual(['f:spec f:constructor']);
  expect(() => paths({ spec: { toString: 'x' } })).toThrow('.spec.toString: field not declared in schema');
});

it("lets every object take undeclared fields under the CRD's preserveUnknownFields", () => {
  const open = applySchemaOf({ type: 'object', properties: { spec: { type: 'object', properties: {} } } }, true);
  expect(
    fieldSetOf({ spec: { extra: { a: 1 } } }, open, true)
      .sorted()
      .map((p) => p.join(' ')),
  ).toEqual(['f:spec f:extra f:a']);
});
