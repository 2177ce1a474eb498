import {
  ERR_FORMAT_WRONG,
  ERR_SUFFIX,
  isQuantityParseError,
  MAX_QUANTITY_LENGTH,
  maxQuantity,
  minQuantity,
  mustParse,
  mustParseQuantity,
  newMilliQuantity,
  newQuantity,
  newScaledQuantity,
  parseQuantity,
  type Quantity,
  QuantityParseError,
  quantityFromJSON,
  QuantityScale,
  zeroQuantity,
  type QuantityFormat,
} from './quantity';

const q = parseQuantity;

describe('parseQuantity: value, format and printed form', () => {
  // [input, exact value as a decimal string, format, printed form (Kubernetes String())].
  // Like Kubernetes, text whose digits already fit the canonical scale is printed back verbatim
  // (`100.035k`, `+1`, `1E3`); anything else is printed canonically.
  it.each<[string, string, QuantityFormat, string]>([
    ['0', '0', 'DecimalSI', '0'],
    ['0n', '0', 'DecimalSI', '0'],
    ['0u', '0', 'DecimalSI', '0'],
    ['0m', '0', 'DecimalSI', '0'],
    ['0Ki', '0', 'BinarySI', '0'],
    ['0k', '0', 'DecimalSI', '0'],
    ['0Mi', '0', 'BinarySI', '0'],
    ['0M', '0', 'DecimalSI', '0'],
    ['0Gi', '0', 'BinarySI', '0'],
    ['0Ti', '0', 'BinarySI', '0'],
    ['0T', '0', 'DecimalSI', '0'],
    ['-0', '0', 'DecimalSI', '0'],
    ['00', '0', 'DecimalSI', '0'],
    ['1', '1', 'DecimalSI', '1'],
    // binary suffixes
    ['1Ki', '1024', 'BinarySI', '1Ki'],
    ['8Ki', '8192', 'BinarySI', '8Ki'],
    ['7Mi', '7340032', 'BinarySI', '7Mi'],
    ['6Gi', '6442450944', 'BinarySI', '6Gi'],
    ['5Ti', '5497558138880', 'BinarySI', '5Ti'],
    ['4Pi', '4503599627370496', 'BinarySI', '4Pi'],
    ['3Ei', '3458764513820540928', 'BinarySI', '3Ei'],
    ['10Ti', '10995116277760', 'BinarySI', '10Ti'],
    ['100Ti', '109951162777600', 'BinarySI', '100Ti'],
    ['1024Mi', '1073741824', 'BinarySI', '1Gi'],
    ['500Mi', '524288000', 'BinarySI', '500Mi'],
    ['1.5Gi', '1610612736', 'BinarySI', '1536Mi'],
    ['1.5Ki', '1536', 'BinarySI', '1536'],
    ['0.5Mi', '524288', 'BinarySI', '512Ki'],
    ['100.035Ki', '102435.84', 'BinarySI', '102435840m'],
    ['0.05Gi', '53687091.2', 'BinarySI', '53687091200m'],
    ['0.025Ti', '27487790694.4', 'BinarySI', '27487790694400m'],
    ['.001Ki', '1.024', 'BinarySI', '1024m'],
    ['.000001Ki', '0.001024', 'DecimalSI', '1024u'],
    ['.000000001Ki', '0.000001024', 'DecimalSI', '1024n'],
    ['.000000000001Ki', '0.000000002', 'DecimalSI', '2n'],
    ['0.000000000001Ki', '0.000000002', 'DecimalSI', '2n'],
    ['-1Ki', '-1024', 'BinarySI', '-1Ki'],
    ['-80Ki', '-81920', 'BinarySI', '-80Ki'],
    ['-1.5Ki', '-1536', 'BinarySI', '-1536'],
    ['1023', '1023', 'DecimalSI', '1023'],
    ['9Ei', '9223372036854775807', 'BinarySI', '9223372036854775807'],
    ['8Ei', '9223372036854775807', 'BinarySI', '9223372036854775807'],
    ['-9Ei', '-9223372036854775807', 'BinarySI', '-9223372036854775807'],
    ['9223372036854775807Ki', '9223372036854775807', 'BinarySI', '9223372036854775807'],
    // decimal suffixes
    ['5n', '0.000000005', 'DecimalSI', '5n'],
    ['4u', '0.000004', 'DecimalSI', '4u'],
    ['3m', '0.003', 'DecimalSI', '3m'],
    ['100m', '0.1', 'DecimalSI', '100m'],
    ['9', '9', 'DecimalSI', '9'],
    ['8k', '8000', 'DecimalSI', '8k'],
    ['50k', '50000', 'DecimalSI', '50k'],
    ['7M', '7000000', 'DecimalSI', '7M'],
    ['6G', '6000000000', 'DecimalSI', '6G'],
    ['5T', '5000000000000', 'DecimalSI', '5T'],
    ['40T', '40000000000000', 'DecimalSI', '40T'],
    ['300T', '300000000000000', 'DecimalSI', '300T'],
    ['2P', '2000000000000000', 'DecimalSI', '2P'],
    ['1E', '1000000000000000000', 'DecimalSI', '1E'],
    ['12E', '12000000000000000000', 'DecimalSI', '12E'],
    ['1000', '1000', 'DecimalSI', '1k'],
    ['1000M', '1000000000', 'DecimalSI', '1G'],
    ['1000m', '1', 'DecimalSI', '1'],
    ['1500m', '1.5', 'DecimalSI', '1500m'],
    ['1000E', '1000000000000000000000', 'DecimalSI', '1e21'],
    // decimal exponents
    ['1E-3', '0.001', 'DecimalExponent', '1E-3'],
    ['1e3', '1000', 'DecimalExponent', '1e3'],
    ['1E6', '1000000', 'DecimalExponent', '1E6'],
    ['1e9', '1000000000', 'DecimalExponent', '1e9'],
    ['1E12', '1000000000000', 'DecimalExponent', '1E12'],
    ['1e15', '1000000000000000', 'DecimalExponent', '1e15'],
    ['1E18', '1000000000000000000', 'DecimalExponent', '1E18'],
    ['1e14', '100000000000000', 'DecimalExponent', '100e12'],
    ['1e13', '10000000000000', 'DecimalExponent', '10e12'],
    ['12e6', '12000000', 'DecimalExponent', '12e6'],
    ['1e+3', '1000', 'DecimalExponent', '1e+3'],
    ['1000e0', '1000', 'DecimalExponent', '1e3'],
    ['1e30', '1000000000000000000000000000000', 'DecimalExponent', '1e30'],
    ['1e-9', '0.000000001', 'DecimalExponent', '1e-9'],
    // things that look like floating point
    ['100.035k', '100035', 'DecimalSI', '100.035k'],
    ['0.001', '0.001', 'DecimalSI', '1m'],
    ['0.0005k', '0.5', 'DecimalSI', '500m'],
    ['0.005', '0.005', 'DecimalSI', '5m'],
    ['0.05', '0.05', 'DecimalSI', '50m'],
    ['0.5', '0.5', 'DecimalSI', '500m'],
    ['0.1', '0.1', 'DecimalSI', '100m'],
    ['0.00050k', '0.5', 'DecimalSI', '500m'],
    ['0.00500', '0.005', 'DecimalSI', '5m'],
    ['0.05000', '0.05', 'DecimalSI', '50m'],
    ['0.50000', '0.5', 'DecimalSI', '500m'],
    ['0.5e0', '0.5', 'DecimalExponent', '500e-3'],
    ['0.5e-1', '0.05', 'DecimalExponent', '50e-3'],
    ['0.5e-2', '0.005', 'DecimalExponent', '5e-3'],
    ['10.035M', '10035000', 'DecimalSI', '10.035M'],
    ['1.2e3', '1200', 'DecimalExponent', '1200'],
    ['1.3E+6', '1300000', 'DecimalExponent', '1300e3'],
    ['1.40e9', '1400000000', 'DecimalExponent', '1400e6'],
    ['1.53E12', '1530000000000', 'DecimalExponent', '1530e9'],
    ['1.6e15', '1600000000000000', 'DecimalExponent', '1600e12'],
    ['1.7E18', '1700000000000000000', 'DecimalExponent', '1700e15'],
    ['9.01', '9.01', 'DecimalSI', '9010m'],
    ['8.1k', '8100', 'DecimalSI', '8100'],
    ['7.123456M', '7123456', 'DecimalSI', '7.123456M'],
    ['6.987654321G', '6987654321', 'DecimalSI', '6.987654321G'],
    ['5.444T', '5444000000000', 'DecimalSI', '5.444T'],
    ['40.1T', '40100000000000', 'DecimalSI', '40100G'],
    ['300.2T', '300200000000000', 'DecimalSI', '300200G'],
    ['2.5P', '2500000000000000', 'DecimalSI', '2500T'],
    ['1.01E', '1010000000000000000', 'DecimalSI', '1010P'],
    ['1.0001k', '1000.1', 'DecimalSI', '1000100m'],
    ['-1', '-1', 'DecimalSI', '-1'],
    ['+1', '1', 'DecimalSI', '+1'],
    ['-100m', '-0.1', 'DecimalSI', '-100m'],
    ['-0.1', '-0.1', 'DecimalSI', '-100m'],
    ['01', '1', 'DecimalSI', '01'],
    ['1234567890123456789', '1234567890123456789', 'DecimalSI', '1234567890123456789'],
    ['18446744073709551616', '18446744073709551616', 'DecimalSI', '18446744073709551616'],
    // things that saturate or round (away from zero, to nano precision)
    ['3.001n', '0.000000004', 'DecimalSI', '4n'],
    ['1.1E-9', '0.000000002', 'DecimalExponent', '2e-9'],
    ['0.0000000001', '0.000000001', 'DecimalSI', '1n'],
    ['0.0000000005', '0.000000001', 'DecimalSI', '1n'],
    ['0.00000000050', '0.000000001', 'DecimalSI', '1n'],
    ['0.5e-9', '0.000000001', 'DecimalExponent', '1e-9'],
    ['0.9n', '0.000000001', 'DecimalSI', '1n'],
    ['0.1n', '0.000000001', 'DecimalSI', '1n'],
    ['-0.1n', '-0.000000001', 'DecimalSI', '-1n'],
    ['0.00000012345', '0.000000124', 'DecimalSI', '124n'],
    ['0.00000012354', '0.000000124', 'DecimalSI', '124n'],
    ['1e-10000', '0.000000001', 'DecimalExponent', '1e-9'],
    ['0.0000000000', '0', 'DecimalSI', '0'],
    // written by trolls
    ['.001', '0.001', 'DecimalSI', '1m'],
    ['.0001k', '0.1', 'DecimalSI', '100m'],
    ['1.', '1', 'DecimalSI', '1.'],
    ['1.G', '1000000000', 'DecimalSI', '1.G'],
  ])('%s', (input, value, format, printed) => {
    const got = q(input);
    expect(got.format).toBe(format);
    expect(got.cmp(q(value))).toBe(0);
    expect(got.toString()).toBe(printed);
    // The canonical form parses back to the same value.
    expect(q(got.canonicalString()).cmp(got)).toBe(0);
    expect(q(got.toString()).cmp(got)).toBe(0);
  });
});

describe('canonicalString', () => {
  it.each<[Quantity, string]>([
    [newQuantity(1024 * 1024 * 1024, 'BinarySI'), '1Gi'],
    [newQuantity(300 * 1024 * 1024, 'BinarySI'), '300Mi'],
    [newQuantity(6 * 1024, 'BinarySI'), '6Ki'],
    [newQuantity(1001n * 1024n ** 3n, 'BinarySI'), '1001Gi'],
    [newQuantity(1024n ** 4n, 'BinarySI'), '1Ti'],
    [newQuantity(5, 'BinarySI'), '5'],
    [newMilliQuantity(500, 'BinarySI'), '500m'],
    [newScaledQuantity(1, 9), '1G'],
    [newScaledQuantity(1000, 6), '1G'],
    [newScaledQuantity(1000000, 3), '1G'],
    [newScaledQuantity(1000000000, 0), '1G'],
    [newScaledQuantity(1, -3), '1m'],
    [newScaledQuantity(80, -3), '80m'],
    [newScaledQuantity(1080, -3), '1080m'],
    [newScaledQuantity(108, -2), '1080m'],
    [newScaledQuantity(10800, -4), '1080m'],
    [newScaledQuantity(300, 6), '300M'],
    [newScaledQuantity(1, 12), '1T'],
    [newScaledQuantity(1234567, 6), '1234567M'],
    [newMilliQuantity(1234567, 'BinarySI'), '1234567m'],
    [newScaledQuantity(3, 3), '3k'],
    [newQuantity(1025, 'BinarySI'), '1025'],
    [newQuantity(0), '0'],
    [newQuantity(0, 'BinarySI'), '0'],
    [newQuantity(0, 'DecimalExponent'), '0'],
    [newScaledQuantity(1, 9).withFormat('DecimalExponent'), '1e9'],
    [newScaledQuantity(1, -3).withFormat('DecimalExponent'), '1e-3'],
    [newScaledQuantity(1, -9).withFormat('DecimalExponent'), '1e-9'],
    [newScaledQuantity(80, -3).withFormat('DecimalExponent'), '80e-3'],
    [newScaledQuantity(300, 6).withFormat('DecimalExponent'), '300e6'],
    [newScaledQuantity(3, 3).withFormat('DecimalExponent'), '3e3'],
    [newScaledQuantity(1, -9), '1n'],
    [newScaledQuantity(80, -9), '80n'],
    [newScaledQuantity(1080, -9), '1080n'],
    [newScaledQuantity(108, -8), '1080n'],
    [newScaledQuantity(1, -6), '1u'],
    [newScaledQuantity(1080, -6), '1080u'],
    [newScaledQuantity(-1080, -3), '-1080m'],
    [newQuantity(-80 * 1024, 'BinarySI'), '-80Ki'],
    [newQuantity(-1023, 'BinarySI'), '-1023'],
    [newQuantity(-1024, 'BinarySI'), '-1Ki'],
    [newQuantity(1024n ** 7n, 'BinarySI'), '1024Ei'],
    [newScaledQuantity(1, 21), '1e21'],
    [newScaledQuantity(1, 18), '1E'],
    [newScaledQuantity(15, 17), '1500P'],
  ])('%s', (quantity, want) => {
    expect(quantity.canonicalString()).toBe(want);
    expect(quantity.toString()).toBe(want);
    expect(JSON.stringify({ q: quantity })).toBe(`{"q":"${want}"}`);
  });
});

describe('remembered input text', () => {
  it.each<[string, string]>([
    ['100.035k', '100035'],
    ['+1', '1'],
    ['01', '1'],
    ['1E3', '1e3'],
    ['1.', '1'],
    ['+1Ki', '1Ki'],
  ])('%s prints verbatim but is canonically %s', (input, canonical) => {
    expect(q(input).toString()).toBe(input);
    expect(q(input).canonicalString()).toBe(canonical);
    expect(q(input).neg().neg().toString()).toBe(canonical);
  });
});

describe('parseQuantity: errors', () => {
  it.each<[string, string]>([
    ['', ERR_FORMAT_WRONG],
    ['1.1.M', ERR_FORMAT_WRONG],
    ['1+1.0M', ERR_FORMAT_WRONG],
    ['0.1mi', ERR_SUFFIX],
    ['0.1am', ERR_FORMAT_WRONG],
    ['aoeu', ERR_FORMAT_WRONG],
    ['.5i', ERR_SUFFIX],
    ['1i', ERR_SUFFIX],
    ['-3.01i', ERR_SUFFIX],
    ['-3.01e-', ERR_SUFFIX],
    [' 1', ERR_FORMAT_WRONG],
    ['1 ', ERR_FORMAT_WRONG],
    ['1e', ERR_SUFFIX],
    ['1ki', ERR_SUFFIX],
    ['1KI', ERR_FORMAT_WRONG],
    ['1k3', ERR_SUFFIX],
    ['1Mi5', ERR_SUFFIX],
    ['1e3e4', ERR_FORMAT_WRONG],
    ['1e10001', ERR_SUFFIX],
    ['1e-10001', ERR_SUFFIX],
    ['--1', ERR_FORMAT_WRONG],
    ['1,5', ERR_FORMAT_WRONG],
    ['1_000', ERR_FORMAT_WRONG],
    ['0x10', ERR_FORMAT_WRONG],
    ['Infinity', ERR_FORMAT_WRONG],
    ['NaN', ERR_FORMAT_WRONG],
    // no digit at all: Kubernetes reads these as 0, we refuse them
    ['-', ERR_FORMAT_WRONG],
    ['+', ERR_FORMAT_WRONG],
    ['.', ERR_FORMAT_WRONG],
    ['Ki', ERR_FORMAT_WRONG],
    ['m', ERR_FORMAT_WRONG],
    ['e5', ERR_FORMAT_WRONG],
  ])('%j', (input, msg) => {
    let caught: unknown;
    try {
      parseQuantity(input);
    } catch (err) {
      caught = err;
    }
    expect(isQuantityParseError(caught)).toBe(true);
    expect(caught).toBeInstanceOf(QuantityParseError);
    expect((caught as Error).message).toBe(msg);
  });

  it('words the regular expression like Kubernetes', () => {
    expect(ERR_FORMAT_WRONG).toBe(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
  });

  it('rejects non-strings instead of crashing', () => {
    expect(() => parseQuantity(5 as unknown as string)).toThrow(ERR_FORMAT_WRONG);
  });

  it('refuses absurdly long text, and parses long-but-allowed text quickly', () => {
    expect(() => parseQuantity('1'.repeat(MAX_QUANTITY_LENGTH + 1))).toThrow(
      new QuantityParseError(
        `quantity is too long: ${MAX_QUANTITY_LENGTH + 1} characters, at most ${MAX_QUANTITY_LENGTH}`,
      ),
    );
    const start = process.hrtime.bigint();
    const big = parseQuantity('1' + '0'.repeat(MAX_QUANTITY_LENGTH - 1));
    expect(big.toString()).toBe(`1e${MAX_QUANTITY_LENGTH - 1}`);
    expect(parseQuantity('1' + '0'.repeat(30)).toString()).toBe('1e30');
    expect(parseQuantity('0.' + '0'.repeat(MAX_QUANTITY_LENGTH - 3) + '1').toString()).toBe('1n');
    expect(big.add(parseQuantity('1n')).sub(big).toString()).toBe('1n');
    expect(Number(process.hrtime.bigint() - start) / 1e6).toBeLessThan(500);
  });

  it('mustParseQuantity wraps the reason', () => {
    expect(mustParseQuantity('1Gi').toString()).toBe('1Gi');
    expect(mustParse('500Mi').toString()).toBe('500Mi');
    expect(() => mustParse('')).toThrow(`cannot parse '': ${ERR_FORMAT_WRONG}`);
    expect(() => mustParseQuantity('x')).toThrow(`cannot parse 'x': ${ERR_FORMAT_WRONG}`);
  });

  it('brand check rejects look-alikes', () => {
    expect(isQuantityParseError(new Error(ERR_SUFFIX))).toBe(false);
    expect(isQuantityParseError(undefined)).toBe(false);
  });
});

describe('value, milliValue, scaledValue (rounded up away from zero)', () => {
  it.each<[string, bigint, bigint]>([
    ['0', 0n, 0n],
    ['1', 1n, 1000n],
    ['1.1', 2n, 1100n],
    ['1.0001', 2n, 1001n],
    ['100m', 1n, 100n],
    ['0.1m', 1n, 1n],
    ['1n', 1n, 1n],
    ['-1.1', -2n, -1100n],
    ['-0.1m', -1n, -1n],
    ['1Ki', 1024n, 1024000n],
    ['1.5Gi', 1610612736n, 1610612736000n],
    ['1e3', 1000n, 1000000n],
    ['8Ei', 9223372036854775807n, 9223372036854775807000n],
    ['1e30', 10n ** 30n, 10n ** 33n],
    ['2.5', 3n, 2500n],
  ])('%s → %s units, %s milli', (input, value, milli) => {
    expect(q(input).value()).toBe(value);
    expect(q(input).milliValue()).toBe(milli);
  });

  it('scales to any power of ten', () => {
    expect(q('1Gi').scaledValue(QuantityScale.Mega)).toBe(1074n);
    expect(q('1G').scaledValue(QuantityScale.Giga)).toBe(1n);
    expect(q('1').scaledValue(QuantityScale.Nano)).toBe(1000000000n);
    expect(q('1500m').valueNumber()).toBe(2);
    expect(q('1500m').milliValueNumber()).toBe(1500);
  });

  it('approximates as a float', () => {
    expect(q('1500m').asApproximateFloat64()).toBe(1.5);
    expect(q('-1Ki').asApproximateFloat64()).toBe(-1024);
    expect(q('1e30').asApproximateFloat64()).toBe(1e30);
  });

  it('rounds up to a scale', () => {
    expect(q('1.2').roundUp(0).toString()).toBe('2');
    expect(q('1234m').roundUp(-2).toString()).toBe('1240m');
    expect(q('-1.2').roundUp(0).toString()).toBe('-2');
    expect(q('5').roundUp(0).toString()).toBe('5');
  });
});

describe('comparison', () => {
  it.each<[string, string, -1 | 0 | 1]>([
    ['1k', '1e3', 0],
    ['1k', '1000', 0],
    ['1000m', '1', 0],
    ['1Ki', '1k', 1],
    ['1k', '1Ki', -1],
    ['-1', '0', -1],
    ['0', '-1', 1],
    ['1n', '0', 1],
    ['0', '0m', 0],
    ['1e30', '1', 1],
    ['-1e30', '-1', -1],
    ['-1', '-1e30', 1],
    ['1e-9', '1n', 0],
    ['999m', '1', -1],
    ['1.5Gi', '1536Mi', 0],
    ['100Mi', '100M', 1],
    ['12E', '1e19', 1],
    ['99', '1e2', -1],
  ])('%s vs %s → %p', (a, b, want) => {
    expect(q(a).cmp(q(b))).toBe(want);
    expect(q(b).cmp(q(a))).toBe(-want === 0 ? 0 : -want);
    expect(q(a).equals(q(b))).toBe(want === 0);
  });

  it('compares with integers and picks min/max', () => {
    expect(q('1500m').cmpInt(1)).toBe(1);
    expect(q('1500m').cmpInt(2n)).toBe(-1);
    expect(q('1Ki').cmpInt(1024)).toBe(0);
    expect(maxQuantity(q('1'), q('2')).toString()).toBe('2');
    expect(minQuantity(q('1'), q('2')).toString()).toBe('1');
  });

  it('reports zero and sign', () => {
    expect(q('0Mi').isZero()).toBe(true);
    expect(q('1n').isZero()).toBe(false);
    expect(q('-1n').sign()).toBe(-1);
    expect(q('0').sign()).toBe(0);
    expect(q('3').sign()).toBe(1);
  });
});

describe('arithmetic (exact)', () => {
  it.each<[string, string, string, string]>([
    ['10m', '10m', '20m', '0'],
    ['1', '100m', '1100m', '900m'],
    ['1', '1Ki', '1025', '-1023'],
    ['1Ki', '1Ki', '2Ki', '0'],
    ['0', '1Ki', '1Ki', '-1Ki'],
    ['0.1', '0.2', '300m', '-100m'],
    ['1n', '1', '1000000001n', '-999999999n'],
    ['8Ei', '8Ei', '18446744073709551614', '0'],
    ['1e3', '1', '1001', '999'],
    ['0', '1e3', '1e3', '-1e3'],
    ['1e30', '1', '1000000000000000000000000000001', '999999999999999999999999999999'],
  ])('%s ± %s', (a, b, sum, diff) => {
    expect(q(a).add(q(b)).toString()).toBe(sum);
    expect(q(a).sub(q(b)).toString()).toBe(diff);
  });

  it('0.1 + 0.2 is exactly 0.3', () => {
    expect(q('0.1').add(q('0.2')).equals(q('0.3'))).toBe(true);
  });

  it('does not mutate its operands', () => {
    const a = q('1');
    const b = q('2');
    a.add(b);
    a.sub(b);
    a.neg();
    expect(a.toString()).toBe('1');
    expect(b.toString()).toBe('2');
  });

  it('negates, takes absolute values and prints arithmetic results canonically', () => {
    expect(q('1Ki').neg().toString()).toBe('-1Ki');
    expect(q('-1').neg().toString()).toBe('1');
    expect(q('+1').add(zeroQuantity()).toString()).toBe('1');
    expect(q('-100m').abs().toString()).toBe('100m');
    expect(q('100m').abs().toString()).toBe('100m');
  });

  it('sums many quantities without drift', () => {
    let total = zeroQuantity();
    for (let i = 0; i < 1000; i++) total = total.add(q('100m'));
    expect(total.toString()).toBe('100');
  });
});

describe('constructors', () => {
  it('refuses unsafe numbers', () => {
    expect(() => newQuantity(1.5)).toThrow(RangeError);
    expect(() => newQuantity(2 ** 60)).toThrow(RangeError);
    expect(() => newScaledQuantity(1, 0.5)).toThrow(RangeError);
    expect(newQuantity(2n ** 60n, 'BinarySI').toString()).toBe('1Ei');
  });
});

describe('quantityFromJSON', () => {
  it.each<[unknown, string]>([
    ['100m', '100m'],
    [' 1Gi ', '1Gi'],
    [1.5, '1500m'],
    [1000, '1k'],
    [0, '0'],
    [null, '0'],
  ])('%j → %s', (v, want) => expect(quantityFromJSON(v).toString()).toBe(want));

  it.each<[unknown]>([[undefined], [true], [{}], [[]], [NaN], ['x']])('rejects %j', (v) => {
    expect(() => quantityFromJSON(v)).toThrow(QuantityParseError);
  });
});

describe('performance', () => {
  it('parses and prints 100k quantities quickly', () => {
    const inputs = ['100m', '1.5Gi', '500Mi', '1e3', '0.5', '2', '250m', '64Mi'];
    const start = process.hrtime.bigint();
    let n = 0;
    for (let i = 0; i < 100_000; i++) n += q(inputs[i % inputs.length] as string).canonicalString().length;
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    expect(n).toBeGreaterThan(0);
    expect(ms).toBeLessThan(3000);
  });
});
