import {
  compareTimestamps,
  FakeClock,
  formatMicroTime,
  formatTime,
  isTimeParseError,
  microTimeFromJSON,
  microTimeFromProto,
  microTimeToProto,
  normalizeMicroTime,
  normalizeTime,
  now,
  nowMicro,
  parseMicroTime,
  parseRFC3339,
  parseTime,
  parseTimeMs,
  realClock,
  timeFromJSON,
  timeFromProto,
  timestampFromProto,
  timestampOf,
  timestampToDate,
  timeToProto,
  TimeParseError,
  type ProtoTimestamp,
  type TimeInput,
  type Timestamp,
} from './time';

const T2021 = Date.UTC(2021, 0, 1); // 1609459200000

describe('formatTime / formatMicroTime', () => {
  it.each<[string, TimeInput, string, string]>([
    ['epoch ms', T2021, '2021-01-01T00:00:00Z', '2021-01-01T00:00:00.000000Z'],
    ['Date', new Date(T2021 + 1500), '2021-01-01T00:00:01Z', '2021-01-01T00:00:01.500000Z'],
    ['fractional ms', T2021 + 0.123, '2021-01-01T00:00:00Z', '2021-01-01T00:00:00.000123Z'],
    ['timestamp', { seconds: 1609459200, nanos: 123456789 }, '2021-01-01T00:00:00Z', '2021-01-01T00:00:00.123456Z'],
    ['epoch', 0, '1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000000Z'],
    ['before the epoch', -1, '1969-12-31T23:59:59Z', '1969-12-31T23:59:59.999000Z'],
    ['leap day', Date.UTC(2024, 1, 29, 23, 59, 59, 999), '2024-02-29T23:59:59Z', '2024-02-29T23:59:59.999000Z'],
    ['year 1', { seconds: -62135596800, nanos: 0 }, '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000Z'],
    ['year 9999', { seconds: 253402300799, nanos: 999999999 }, '9999-12-31T23:59:59Z', '9999-12-31T23:59:59.999999Z'],
  ])('%s', (_n, input, time, micro) => {
    expect(formatTime(input)).toBe(time);
    expect(formatMicroTime(input)).toBe(micro);
  });

  it.each<[string, TimeInput, string]>([
    ['invalid Date', new Date(NaN), 'invalid Date'],
    ['NaN', NaN, 'time in epoch milliseconds must be finite, got NaN'],
    ['Infinity', Infinity, 'time in epoch milliseconds must be finite, got Infinity'],
    [
      'year 10000',
      { seconds: 253402300800, nanos: 0 },
      'time 253402300800s since the epoch is outside the years 0000-9999 that RFC 3339 can write',
    ],
    ['bad nanos', { seconds: 0, nanos: 1e9 }, 'timestamp nanos must be an integer in [0, 999999999], got 1000000000'],
    ['negative nanos', { seconds: 0, nanos: -1 }, 'timestamp nanos must be an integer in [0, 999999999], got -1'],
    ['fractional seconds', { seconds: 1.5, nanos: 0 }, 'timestamp seconds must be an integer, got 1.5'],
  ])('rejects %s', (_n, input, msg) => {
    expect(() => formatTime(input)).toThrow(new TimeParseError(msg));
  });
});

describe('parseRFC3339', () => {
  it.each<[string, Timestamp]>([
    ['2021-01-01T00:00:00Z', { seconds: 1609459200, nanos: 0 }],
    ['2021-01-01T00:00:00.5Z', { seconds: 1609459200, nanos: 500000000 }],
    ['2021-01-01T00:00:00.000001Z', { seconds: 1609459200, nanos: 1000 }],
    ['2021-01-01T00:00:00.123456789Z', { seconds: 1609459200, nanos: 123456789 }],
    ['2021-01-01T00:00:00.1234567891Z', { seconds: 1609459200, nanos: 123456789 }],
    ['2021-01-01T01:00:00+01:00', { seconds: 1609459200, nanos: 0 }],
    ['2020-12-31T19:00:00-05:00', { seconds: 1609459200, nanos: 0 }],
    ['2021-01-01T05:30:00.25+05:30', { seconds: 1609459200, nanos: 250000000 }],
    ['2021-01-01t00:00:00z', { seconds: 1609459200, nanos: 0 }],
    ['1970-01-01T00:00:00Z', { seconds: 0, nanos: 0 }],
    ['1969-12-31T23:59:59.999Z', { seconds: -1, nanos: 999000000 }],
    ['2024-02-29T00:00:00Z', { seconds: 1709164800, nanos: 0 }],
    ['0000-01-01T00:00:00Z', { seconds: -62167219200, nanos: 0 }],
    ['0099-01-01T00:00:00Z', { seconds: -59042995200, nanos: 0 }],
  ])('%s', (s, want) => {
    expect(parseRFC3339(s)).toEqual(want);
  });

  it.each<[string, string]>([
    [
      '',
      'parsing time "" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      '2021-01-01',
      'parsing time "2021-01-01" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      '2021-01-01 00:00:00Z',
      'parsing time "2021-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      '2021-01-01T00:00:00',
      'parsing time "2021-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      '2021-01-01T00:00Z',
      'parsing time "2021-01-01T00:00Z" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      '2021-01-01T00:00:00.Z',
      'parsing time "2021-01-01T00:00:00.Z" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      '2021-01-01T00:00:00+0100',
      'parsing time "2021-01-01T00:00:00+0100" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      '21-01-01T00:00:00Z',
      'parsing time "21-01-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    [
      ' 2021-01-01T00:00:00Z',
      'parsing time " 2021-01-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 date-time (expected e.g. "2021-01-01T00:00:00Z")',
    ],
    ['2021-13-01T00:00:00Z', 'parsing time "2021-13-01T00:00:00Z": month out of range'],
    ['2021-00-01T00:00:00Z', 'parsing time "2021-00-01T00:00:00Z": month out of range'],
    ['2021-02-29T00:00:00Z', 'parsing time "2021-02-29T00:00:00Z": day out of range'],
    ['2021-04-31T00:00:00Z', 'parsing time "2021-04-31T00:00:00Z": day out of range'],
    ['2021-01-00T00:00:00Z', 'parsing time "2021-01-00T00:00:00Z": day out of range'],
    ['2021-01-01T24:00:00Z', 'parsing time "2021-01-01T24:00:00Z": hour out of range'],
    ['2021-01-01T00:60:00Z', 'parsing time "2021-01-01T00:60:00Z": minute out of range'],
    ['2021-01-01T00:00:60Z', 'parsing time "2021-01-01T00:00:60Z": second out of range'],
    ['2021-01-01T00:00:00+24:00', 'parsing time "2021-01-01T00:00:00+24:00": time zone offset hour out of range'],
    ['2021-01-01T00:00:00+01:60', 'parsing time "2021-01-01T00:00:00+01:60": time zone offset minute out of range'],
  ])('rejects %j', (s, msg) => {
    let caught: unknown;
    try {
      parseRFC3339(s);
    } catch (err) {
      caught = err;
    }
    expect(isTimeParseError(caught)).toBe(true);
    expect((caught as Error).message).toBe(msg);
  });

  it('rejects non-strings instead of crashing', () => {
    expect(() => parseRFC3339(1 as unknown as string)).toThrow(TimeParseError);
    expect(isTimeParseError(new Error('x'))).toBe(false);
  });
});

describe('conversions', () => {
  it('parses to Date, ms and MicroTime', () => {
    expect(parseTime('2021-01-01T01:00:00.9+01:00').toISOString()).toBe('2021-01-01T00:00:00.900Z');
    expect(parseTimeMs('2021-01-01T00:00:00Z')).toBe(T2021);
    expect(parseTimeMs('1969-12-31T23:59:59.9995Z')).toBe(-1);
    expect(parseMicroTime('2021-01-01T00:00:00.123456789Z')).toEqual({ seconds: 1609459200, nanos: 123456000 });
    expect(timestampToDate({ seconds: 1, nanos: 5e6 }).getTime()).toBe(1005);
    expect(timestampOf(new Date(1500))).toEqual({ seconds: 1, nanos: 500000000 });
  });

  it('normalises to the canonical UTC forms', () => {
    expect(normalizeTime('2021-01-01T01:00:00.9+01:00')).toBe('2021-01-01T00:00:00Z');
    expect(normalizeMicroTime('2021-01-01T01:00:00.9+01:00')).toBe('2021-01-01T00:00:00.900000Z');
    expect(normalizeTime('2020-12-31T23:30:00-00:30')).toBe('2021-01-01T00:00:00Z');
  });

  it('compares timestamps', () => {
    const a = { seconds: 1, nanos: 0 };
    const b = { seconds: 1, nanos: 1 };
    const c = { seconds: 2, nanos: 0 };
    expect(compareTimestamps(a, b)).toBe(-1);
    expect(compareTimestamps(b, a)).toBe(1);
    expect(compareTimestamps(c, b)).toBe(1);
    expect(compareTimestamps(a, { ...a })).toBe(0);
  });
});

describe('Protobuf shape', () => {
  it('drops nanos for metav1.Time and keeps them for MicroTime', () => {
    expect(timeToProto('2021-01-01T00:00:00.5Z')).toEqual({ seconds: 1609459200, nanos: 0 });
    expect(timeToProto(T2021 + 1500)).toEqual({ seconds: 1609459201, nanos: 0 });
    expect(microTimeToProto('2021-01-01T00:00:00.123456Z')).toEqual({ seconds: 1609459200, nanos: 123456000 });
    expect(microTimeToProto({ seconds: 5, nanos: 7 })).toEqual({ seconds: 5, nanos: 7 });
  });

  it.each<[ProtoTimestamp, string, string]>([
    [{ seconds: 1609459200, nanos: 0 }, '2021-01-01T00:00:00Z', '2021-01-01T00:00:00.000000Z'],
    [{ seconds: 1609459200n, nanos: 999999999 }, '2021-01-01T00:00:00Z', '2021-01-01T00:00:00.999999Z'],
    [{ seconds: -1n, nanos: 0 }, '1969-12-31T23:59:59Z', '1969-12-31T23:59:59.000000Z'],
  ])('reads %p', (p, time, micro) => {
    expect(timeFromProto(p)).toBe(time);
    expect(microTimeFromProto(p)).toBe(micro);
    expect(timestampFromProto(p).seconds).toBe(Number(p.seconds));
  });

  it.each<[unknown, string]>([
    [{ seconds: 1.5, nanos: 0 }, 'timestamp seconds must be an integer, got 1.5'],
    [{ seconds: 2n ** 60n, nanos: 0 }, 'timestamp seconds must be an integer, got 1152921504606846976'],
    [{ seconds: '1', nanos: 0 }, 'timestamp seconds must be an integer, got 1'],
    [{ seconds: 1, nanos: 1e9 }, 'timestamp nanos must be an integer in [0, 999999999], got 1000000000'],
    [{ seconds: 1, nanos: 0.5 }, 'timestamp nanos must be an integer in [0, 999999999], got 0.5'],
    [null, 'timestamp must be an object with seconds and nanos'],
  ])('rejects %p', (p, msg) => {
    expect(() => timestampFromProto(p as ProtoTimestamp)).toThrow(new TimeParseError(msg));
  });

  it('accepts a missing nanos as zero', () => {
    expect(timestampFromProto({ seconds: 3 } as ProtoTimestamp)).toEqual({ seconds: 3, nanos: 0 });
  });
});

describe('JSON forms', () => {
  it('reads null as the zero (absent) time and normalises strings', () => {
    expect(timeFromJSON(null)).toBeUndefined();
    expect(timeFromJSON(undefined)).toBeUndefined();
    expect(timeFromJSON('2021-01-01T01:00:00+01:00')).toBe('2021-01-01T00:00:00Z');
    expect(microTimeFromJSON(null)).toBeUndefined();
    expect(microTimeFromJSON('2021-01-01T00:00:00.1Z')).toBe('2021-01-01T00:00:00.100000Z');
  });
  it('rejects other JSON values', () => {
    expect(() => timeFromJSON(5)).toThrow('time must be an RFC 3339 string, got number');
    expect(() => microTimeFromJSON({})).toThrow('time must be an RFC 3339 string, got object');
    expect(() => timeFromJSON('yesterday')).toThrow(TimeParseError);
  });
});

describe('clocks', () => {
  it('now() reads the injected clock', () => {
    const clock = new FakeClock(T2021);
    expect(now(clock)).toBe('2021-01-01T00:00:00Z');
    expect(nowMicro(clock)).toBe('2021-01-01T00:00:00.000000Z');
    clock.step(90_500);
    expect(now(clock)).toBe('2021-01-01T00:01:30Z');
    expect(nowMicro(clock)).toBe('2021-01-01T00:01:30.500000Z');
    clock.set(0);
    expect(now(clock)).toBe('1970-01-01T00:00:00Z');
  });
  it('the real clock is the system time', () => {
    const before = Date.now();
    const t = realClock.now();
    expect(t).toBeGreaterThanOrEqual(before);
    expect(parseTimeMs(now())).toBeLessThanOrEqual(Date.now());
    expect(nowMicro()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });
  it('FakeClock defaults to 2021-01-01', () => {
    expect(new FakeClock().now()).toBe(T2021);
  });
});
