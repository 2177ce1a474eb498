import { formatDuration, parseDuration } from './duration';
import { flagError } from './parsers';

describe('Go durations', () => {
  it.each([
    ['0', 0],
    ['30s', 30_000],
    ['5m0s', 300_000],
    ['1h30m', 5_400_000],
    ['8760h0m0s', 8760 * 3600_000],
    ['100ms', 100],
    ['1.5h', 5_400_000],
    ['.5s', 500],
    ['1us', 0.001],
    ['1µs', 0.001],
    ['2ns', 0.000002],
    ['-1m', -60_000],
    ['+2s', 2000],
  ])('parses %s', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each([
    ['5x', 'time: unknown unit "x" in duration "5x"'],
    ['5', 'time: missing unit in duration "5"'],
    ['', 'time: invalid duration ""'],
    ['s', 'time: invalid duration "s"'],
    ['1h-5m', 'time: unknown unit "h-" in duration "1h-5m"'],
    ['.s', 'time: invalid duration ".s"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
  ])('rejects %j with Go wording', (text, message) => {
    expect(() => parseDuration(text)).toThrow(message);
  });

  it.each([
    [0, '0s'],
    [100, '100ms'],
    [1500, '1.5s'],
    [5000, '5s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [5_400_000, '1h30m0s'],
    [8760 * 3600_000, '8760h0m0s'],
    [0.5, '500µs'],
    [-60_000, '-1m0s'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('wraps errors with the pflag prefix naming the flag', () => {
    let err: unknown;
    try {
      parseDuration('5x');
    } catch (e) {
      err = e;
    }
    expect(flagError('--log-flush-frequency', '5x', err).message).toBe(
      'invalid argument "5x" for "--log-flush-frequency" flag: time: unknown unit "x" in duration "5x"',
    );
  });
});
