import {
  durationFromJSON,
  durationMsToNs,
  durationNsToMs,
  DurationParseError,
  durationToJSON,
  formatDuration,
  formatDurationMs,
  Hour,
  isDurationParseError,
  Microsecond,
  Millisecond,
  Minute,
  parseDuration,
  parseDurationMs,
  Second,
} from './duration';

describe('parseDuration (Go time.ParseDuration)', () => {
  it.each<[string, bigint]>([
    ['0', 0n],
    ['5s', 5n * Second],
    ['30s', 30n * Second],
    ['1478s', 1478n * Second],
    ['-5s', -5n * Second],
    ['+5s', 5n * Second],
    ['-0', 0n],
    ['+0', 0n],
    ['5.0s', 5n * Second],
    ['5.6s', 5n * Second + 600n * Millisecond],
    ['5.s', 5n * Second],
    ['.5s', 500n * Millisecond],
    ['1.0s', Second],
    ['1.00s', Second],
    ['1.004s', Second + 4n * Millisecond],
    ['1.0040s', Second + 4n * Millisecond],
    ['100.00100s', 100n * Second + Millisecond],
    ['10ns', 10n],
    ['11us', 11n * Microsecond],
    ['12\u00b5s', 12n * Microsecond],
    ['12\u03bcs', 12n * Microsecond],
    ['1µs', Microsecond],
    ['13ms', 13n * Millisecond],
    ['300ms', 300n * Millisecond],
    ['14s', 14n * Second],
    ['15m', 15n * Minute],
    ['16h', 16n * Hour],
    ['5m0s', 5n * Minute],
    ['8760h0m0s', 8760n * Hour],
    ['1.5h', 90n * Minute],
    ['1h2m3.5s', Hour + 2n * Minute + 3500n * Millisecond],
    ['-1s', -Second],
    ['3h30m', 3n * Hour + 30n * Minute],
    ['10.5s4m', 4n * Minute + 10n * Second + 500n * Millisecond],
    ['-2m3.4s', -(2n * Minute + 3n * Second + 400n * Millisecond)],
    ['1h2m3s4ms5us6ns', Hour + 2n * Minute + 3n * Second + 4n * Millisecond + 5n * Microsecond + 6n],
    ['39h9m14.425s', 39n * Hour + 9n * Minute + 14n * Second + 425n * Millisecond],
    ['52763797000ns', 52763797000n],
    ['0.3333333333333333333h', 20n * Minute],
    ['9007199254740993ns', 2n ** 53n + 1n],
    ['9223372036854775807ns', 2n ** 63n - 1n],
    ['9223372036854775.807us', 2n ** 63n - 1n],
    ['9223372036s854ms775us807ns', 2n ** 63n - 1n],
    ['-9223372036854775808ns', -(2n ** 63n)],
    ['-9223372036854775.808us', -(2n ** 63n)],
    ['-9223372036s854ms775us808ns', -(2n ** 63n)],
    ['-2562047h47m16.854775808s', -(2n ** 63n)],
    ['0.100000000000000000000h', 6n * Minute],
    ['0.830103483285477580700h', 49n * Minute + 48n * Second + 372539827n],
  ])('%j', (input, want) => {
    expect(parseDuration(input)).toBe(want);
  });

  it.each<[string, string]>([
    ['', 'time: invalid duration ""'],
    ['3', 'time: missing unit in duration "3"'],
    ['5', 'time: missing unit in duration "5"'],
    ['1h5', 'time: missing unit in duration "1h5"'],
    ['-', 'time: invalid duration "-"'],
    ['s', 'time: invalid duration "s"'],
    ['x', 'time: invalid duration "x"'],
    ['.', 'time: invalid duration "."'],
    ['-.', 'time: invalid duration "-."'],
    ['.s', 'time: invalid duration ".s"'],
    ['+.s', 'time: invalid duration "+.s"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['5x', 'time: unknown unit "x" in duration "5x"'],
    ['1 s', 'time: unknown unit " s" in duration "1 s"'],
    ['1S', 'time: unknown unit "S" in duration "1S"'],
    ['--1s', 'time: invalid duration "--1s"'],
    ['\u00851s', 'time: invalid duration "\\xc2\\x851s"'],
    ['1é', 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'],
    ['\ufffd', 'time: invalid duration "\\xef\\xbf\\xbd"'],
    ['a"b', 'time: invalid duration "a\\"b"'],
    ['9223372036854775810ns', 'time: invalid duration "9223372036854775810ns"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['-9223372036854775809ns', 'time: invalid duration "-9223372036854775809ns"'],
    ['9223372036854776us', 'time: invalid duration "9223372036854776us"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
    ['9223372036854775.808us', 'time: invalid duration "9223372036854775.808us"'],
    ['9223372036854ms775us808ns', 'time: invalid duration "9223372036854ms775us808ns"'],
    ['99999999999999999999999s', 'time: invalid duration "99999999999999999999999s"'],
  ])('rejects %j', (input, msg) => {
    let caught: unknown;
    try {
      parseDuration(input);
    } catch (err) {
      caught = err;
    }
    expect(isDurationParseError(caught)).toBe(true);
    expect(caught).toBeInstanceOf(DurationParseError);
    expect((caught as Error).message).toBe(msg);
  });

  it('rejects non-strings instead of crashing', () => {
    expect(() => parseDuration(5 as unknown as string)).toThrow(DurationParseError);
  });

  it('brand check rejects look-alikes', () => {
    expect(isDurationParseError(new Error('time: invalid duration "x"'))).toBe(false);
  });
});

describe('formatDuration (Go Duration.String())', () => {
  it.each<[bigint, string]>([
    [0n, '0s'],
    [1n, '1ns'],
    [1100n, '1.1\u00b5s'],
    [2200n * Microsecond, '2.2ms'],
    [3300n * Millisecond, '3.3s'],
    [4n * Minute + 5n * Second, '4m5s'],
    [4n * Minute + 5001n * Millisecond, '4m5.001s'],
    [5n * Hour + 6n * Minute + 7001n * Millisecond, '5h6m7.001s'],
    [8n * Minute + 1n, '8m0.000000001s'],
    [2n ** 63n - 1n, '2562047h47m16.854775807s'],
    [-(2n ** 63n), '-2562047h47m16.854775808s'],
    [5n * Minute, '5m0s'],
    [Hour, '1h0m0s'],
    [8760n * Hour, '8760h0m0s'],
    [1500n * Millisecond, '1.5s'],
    [100n * Millisecond, '100ms'],
    [-Second, '-1s'],
    [-1n, '-1ns'],
    [999n, '999ns'],
    [1000n, '1\u00b5s'],
    [Second, '1s'],
    [59n * Second, '59s'],
    [60n * Second, '1m0s'],
    [2n ** 64n, '2562047h47m16.854775807s'],
  ])('%s ns → %j', (ns, want) => {
    expect(formatDuration(ns)).toBe(want);
  });

  it('round-trips every format it prints', () => {
    for (const ns of [
      0n,
      1n,
      1100n,
      3300n * Millisecond,
      5n * Hour + 7001n * Millisecond,
      2n ** 63n - 1n,
      -(2n ** 63n),
    ]) {
      expect(parseDuration(formatDuration(ns))).toBe(ns);
    }
  });
});

describe('milliseconds', () => {
  it.each<[string, number]>([
    ['5m0s', 300000],
    ['1.5s', 1500],
    ['300ms', 300],
    ['1us', 0.001],
    ['1ns', 0.000001],
    ['-1s', -1000],
    ['0', 0],
    ['8760h', 31536000000],
  ])('%s → %p ms', (input, ms) => {
    expect(parseDurationMs(input)).toBeCloseTo(ms, 9);
  });

  it.each<[number, string]>([
    [0, '0s'],
    [1500, '1.5s'],
    [300000, '5m0s'],
    [0.001, '1\u00b5s'],
    [-2000, '-2s'],
    [3600000, '1h0m0s'],
  ])('%p ms → %j', (ms, want) => {
    expect(formatDurationMs(ms)).toBe(want);
  });

  it('converts exactly for whole milliseconds', () => {
    expect(durationMsToNs(1234)).toBe(1234n * Millisecond);
    expect(durationNsToMs(1234n * Millisecond)).toBe(1234);
    expect(() => durationMsToNs(Infinity)).toThrow(RangeError);
    expect(() => durationMsToNs(NaN)).toThrow(RangeError);
  });
});

describe('metav1.Duration JSON', () => {
  it('reads and writes strings', () => {
    expect(durationFromJSON('1h0m0s')).toBe(Hour);
    expect(durationToJSON(90n * Second)).toBe('1m30s');
    expect(JSON.stringify({ ttl: durationToJSON(durationFromJSON('2h')) })).toBe('{"ttl":"2h0m0s"}');
  });
  it.each<[unknown, string]>([
    [5, 'time: invalid duration: expected a string such as "5m0s", got number'],
    [null, 'time: invalid duration: expected a string such as "5m0s", got null'],
    [[], 'time: invalid duration: expected a string such as "5m0s", got array'],
    [{}, 'time: invalid duration: expected a string such as "5m0s", got object'],
    ['5', 'time: missing unit in duration "5"'],
  ])('rejects %j', (v, msg) => {
    expect(() => durationFromJSON(v)).toThrow(new DurationParseError(msg));
  });
});
