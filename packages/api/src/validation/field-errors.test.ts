import {
  FieldPath,
  aggregateMessage,
  duplicate,
  fieldErrorBody,
  fieldErrorToString,
  forbidden,
  formatBadValue,
  internalError,
  invalid,
  invalidEach,
  notFound,
  notSupported,
  required,
  tooLong,
  tooMany,
  type FieldError,
} from './field-errors';
import { goNumber, goQuote } from './go-format';

describe('FieldPath', () => {
  it.each<[string, () => FieldPath, string]>([
    ['empty root', () => new FieldPath(), ''],
    ['one segment', () => new FieldPath('metadata'), 'metadata'],
    ['several segments', () => new FieldPath('spec', 'template', 'spec'), 'spec.template.spec'],
    ['child', () => new FieldPath('metadata').child('name'), 'metadata.name'],
    ['child chain', () => new FieldPath('spec').child('a', 'b', 'c'), 'spec.a.b.c'],
    ['index', () => new FieldPath('spec', 'containers').index(0).child('ports'), 'spec.containers[0].ports'],
    ['key', () => new FieldPath('metadata', 'labels').key('app'), 'metadata.labels[app]'],
    ['key with dots', () => new FieldPath('data').key('a.b/c'), 'data[a.b/c]'],
    ['index of index', () => new FieldPath('m').index(1).index(2), 'm[1][2]'],
    ['root index', () => new FieldPath().index(3).child('x'), '[3].x'],
    ['child of empty root', () => new FieldPath().child('spec'), 'spec'],
  ])('%s', (_name, make, want) => {
    expect(make().toString()).toBe(want);
  });

  it('is immutable: deriving a path leaves the parent unchanged', () => {
    const p = new FieldPath('spec');
    p.child('a');
    p.index(1);
    p.key('k');
    expect(p.toString()).toBe('spec');
  });
});

describe('field error constructors and printing (Go field.Error.Error())', () => {
  const p = new FieldPath('metadata', 'name');
  it.each<[string, FieldError, string]>([
    [
      'invalid string',
      invalid(p, 'A_B', 'a lowercase RFC 1123 subdomain ...'),
      'metadata.name: Invalid value: "A_B": a lowercase RFC 1123 subdomain ...',
    ],
    [
      'invalid number',
      invalid(new FieldPath('spec', 'replicas'), -1, 'must be >= 0'),
      'spec.replicas: Invalid value: -1: must be >= 0',
    ],
    ['invalid float', invalid(p, 1.5, 'x'), 'metadata.name: Invalid value: 1.5: x'],
    ['invalid bool', invalid(p, true, 'x'), 'metadata.name: Invalid value: true: x'],
    ['invalid null', invalid(p, null, 'x'), 'metadata.name: Invalid value: "null": x'],
    ['invalid undefined', invalid(p, undefined, 'x'), 'metadata.name: Invalid value: "null": x'],
    ['invalid string list', invalid(p, ['a', 'b'], 'x'), 'metadata.name: Invalid value: []string{"a", "b"}: x'],
    ['invalid empty list', invalid(p, [], 'x'), 'metadata.name: Invalid value: []string{}: x'],
    ['invalid object', invalid(p, { a: 1 }, 'x'), 'metadata.name: Invalid value: {"a":1}: x'],
    ['invalid bigint', invalid(p, 12345678901234567890n, 'x'), 'metadata.name: Invalid value: 12345678901234567890: x'],
    ['invalid with empty detail', invalid(p, 'v', ''), 'metadata.name: Invalid value: "v"'],
    ['invalid quoting', invalid(p, 'a"b\\c\n', 'x'), 'metadata.name: Invalid value: "a\\"b\\\\c\\n": x'],
    [
      'required',
      required(p, 'name or generateName is required'),
      'metadata.name: Required value: name or generateName is required',
    ],
    ['required no detail', required(p), 'metadata.name: Required value'],
    ['not found', notFound(p, 'x'), 'metadata.name: Not found: "x"'],
    ['duplicate', duplicate(new FieldPath('spec', 'ports').index(1), 80), 'spec.ports[1]: Duplicate value: 80'],
    [
      'not supported',
      notSupported(new FieldPath('spec', 'restartPolicy'), 'Sometimes', ['Always', 'OnFailure', 'Never']),
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ],
    ['not supported without list', notSupported(p, 'x', []), 'metadata.name: Unsupported value: "x"'],
    [
      'forbidden',
      forbidden(new FieldPath('metadata', 'namespace'), 'not allowed on this type'),
      'metadata.namespace: Forbidden: not allowed on this type',
    ],
    ['too long', tooLong(p, 'xxxx', 63), 'metadata.name: Too long: must have at most 63 bytes'],
    ['too many', tooMany(new FieldPath('spec', 'items'), 5, 3), 'spec.items: Too many: 5: must have at most 3 items'],
    ['internal error', internalError(p, new Error('boom')), 'metadata.name: Internal error: boom'],
    ['internal error from string', internalError(p, 'bad'), 'metadata.name: Internal error: bad'],
  ])('%s', (_name, err, want) => {
    expect(fieldErrorToString(err)).toBe(want);
  });

  it.each<[FieldError, string]>([
    [invalid(p, 'x', 'y'), 'FieldValueInvalid'],
    [required(p), 'FieldValueRequired'],
    [notFound(p, 'x'), 'FieldValueNotFound'],
    [duplicate(p, 'x'), 'FieldValueDuplicate'],
    [notSupported(p, 'x', ['a']), 'FieldValueNotSupported'],
    [forbidden(p, 'x'), 'FieldValueForbidden'],
    [tooLong(p, 'x', 1), 'FieldValueTooLong'],
    [tooMany(p, 2, 1), 'FieldValueTooMany'],
    [internalError(p, 'x'), 'InternalError'],
  ])('type of %j is %s', (err, type) => {
    expect(err.type).toBe(type);
    expect(err.field).toBe('metadata.name');
  });

  it('body leaves out the field', () => {
    expect(fieldErrorBody(invalid(p, 'a', 'b'))).toBe('Invalid value: "a": b');
  });

  it('prints objects with their own toString (Go fmt.Stringer)', () => {
    const v = { toString: () => '100m' };
    expect(formatBadValue(v)).toBe('100m');
  });
});

describe('invalidEach', () => {
  it('makes one error per message', () => {
    const p = new FieldPath('metadata', 'name');
    expect(invalidEach(p, 'x', [])).toEqual([]);
    expect(invalidEach(p, 'x', ['a', 'b']).map(fieldErrorToString)).toEqual([
      'metadata.name: Invalid value: "x": a',
      'metadata.name: Invalid value: "x": b',
    ]);
  });
});

describe('aggregateMessage (utilerrors.NewAggregate)', () => {
  const a = required(new FieldPath('a'));
  const b = invalid(new FieldPath('b'), 1, 'bad');
  it.each<[string, FieldError[], string]>([
    ['none', [], ''],
    ['one', [a], 'a: Required value'],
    ['two', [a, b], '[a: Required value, b: Invalid value: 1: bad]'],
    ['duplicates printed once', [a, a], 'a: Required value'],
    ['duplicates among several', [a, b, a], '[a: Required value, b: Invalid value: 1: bad]'],
  ])('%s', (_n, errs, want) => {
    expect(aggregateMessage(errs)).toBe(want);
  });
});

describe('goQuote (strconv.Quote)', () => {
  it.each<[string, string]>([
    ['', '""'],
    ['abc', '"abc"'],
    ['a"b', '"a\\"b"'],
    ['a\\b', '"a\\\\b"'],
    ['\t\n\r', '"\\t\\n\\r"'],
    ['\x07\x08\x0b\x0c', '"\\a\\b\\v\\f"'],
    ['\x00\x1f\x7f', '"\\x00\\x1f\\x7f"'],
    ['héllo 世界', '"héllo 世界"'],
    ['\u00a0', '"\\u00a0"'],
    ['\u200b', '"\\u200b"'],
    ['😀', '"😀"'],
    ['\u{e0001}', '"\\U000e0001"'],
    ['\ud800', '"\\ufffd"'],
  ])('%j', (s, want) => {
    expect(goQuote(s)).toBe(want);
  });
});

describe('goNumber (%v)', () => {
  it.each<[number | bigint, string]>([
    [0, '0'],
    [-1, '-1'],
    [1.5, '1.5'],
    [1e20, '100000000000000000000'],
    [1e21, '1e+21'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [10n, '10'],
  ])('%p', (n, want) => {
    expect(goNumber(n)).toBe(want);
  });
});
