import { FieldPath, fieldErrorToString } from '../validation/field-errors';
import { parseQuantity } from './quantity';
import {
  parseQuantityField,
  validateIntegerQuantity,
  validateNonnegativeQuantity,
  validatePositiveQuantity,
} from './validation';

const path = new FieldPath('spec', 'containers').index(0).child('resources', 'limits').key('cpu');

describe('parseQuantityField', () => {
  it.each<[unknown, string]>([
    ['100m', '100m'],
    [' 1Gi ', '1Gi'],
    [2, '2'],
    [0.5, '500m'],
  ])('reads %j', (v, want) => {
    const r = parseQuantityField(v, path);
    expect(r.errors).toEqual([]);
    expect(r.quantity?.toString()).toBe(want);
  });

  it.each<[unknown, string]>([
    [
      'abc',
      `spec.containers[0].resources.limits[cpu]: Invalid value: "abc": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    ],
    [
      '1Xi',
      `spec.containers[0].resources.limits[cpu]: Invalid value: "1Xi": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    ],
    ['1ki', `spec.containers[0].resources.limits[cpu]: Invalid value: "1ki": unable to parse quantity's suffix`],
    [
      true,
      'spec.containers[0].resources.limits[cpu]: Invalid value: true: must be a quantity string such as "100m" or "1Gi"',
    ],
    [
      null,
      'spec.containers[0].resources.limits[cpu]: Invalid value: "null": must be a quantity string such as "100m" or "1Gi"',
    ],
    [
      NaN,
      'spec.containers[0].resources.limits[cpu]: Invalid value: NaN: must be a quantity string such as "100m" or "1Gi"',
    ],
  ])('reports %j', (v, msg) => {
    const r = parseQuantityField(v, path);
    expect(r.quantity).toBeUndefined();
    expect(r.errors.map(fieldErrorToString)).toEqual([msg]);
  });
});

describe('quantity range checks', () => {
  it.each<[string, boolean, boolean, boolean]>([
    // [quantity, nonnegative ok, positive ok, integer ok]
    ['0', true, false, true],
    ['1', true, true, true],
    ['100m', true, true, false],
    ['-1', false, false, true],
    ['-100m', false, false, false],
    ['1Ki', true, true, true],
    ['1n', true, true, false],
  ])('%s', (s, nonneg, pos, int) => {
    const q = parseQuantity(s);
    expect(validateNonnegativeQuantity(q, path).length === 0).toBe(nonneg);
    expect(validatePositiveQuantity(q, path).length === 0).toBe(pos);
    expect(validateIntegerQuantity(q, path).length === 0).toBe(int);
  });

  it('words the errors like Kubernetes', () => {
    expect(validateNonnegativeQuantity(parseQuantity('-1'), path).map(fieldErrorToString)).toEqual([
      'spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ]);
    expect(validatePositiveQuantity(parseQuantity('0'), path).map(fieldErrorToString)).toEqual([
      'spec.containers[0].resources.limits[cpu]: Invalid value: "0": must be greater than 0',
    ]);
    expect(validateIntegerQuantity(parseQuantity('1500m'), path).map(fieldErrorToString)).toEqual([
      'spec.containers[0].resources.limits[cpu]: Invalid value: "1500m": must be an integer',
    ]);
  });
});
