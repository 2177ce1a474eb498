import { compareQuantities, parseQuantityValue, quantityError } from './quantity';

describe('quantities', () => {
  it.each<[string, string, -1 | 0 | 1]>([
    ['1', '1000m', 0],
    ['1Gi', '1024Mi', 0],
    ['1G', '1Gi', -1],
    ['1.5', '1500m', 0],
    ['1e3', '1k', 0],
    ['2', '1.999', 1],
    ['-1', '0', -1],
    ['100n', '1u', -1],
    ['.5', '500m', 0],
  ])('%s compared with %s is %d', (a, b, expected) => {
    expect(compareQuantities(parseQuantityValue(a)!, parseQuantityValue(b)!)).toBe(expected);
  });

  it.each(['', 'abc', '1.2.3', '1Xi', '--1', 'Gi'])('rejects %j', (text) => {
    expect(parseQuantityValue(text)).toBeUndefined();
  });

  it('reads JSON numbers', () => {
    expect(compareQuantities(parseQuantityValue(2)!, parseQuantityValue('2000m')!)).toBe(0);
  });

  it('says why a value is not a quantity', () => {
    expect(quantityError('lots')).toBe(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    expect(quantityError('1')).toBe('');
  });
});
