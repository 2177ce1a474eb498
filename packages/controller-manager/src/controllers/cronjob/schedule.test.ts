import { parseSchedule, ScheduleParseError } from './schedule';

const at = (s: string) => Date.parse(s);
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

describe('parseSchedule', () => {
  test.each([
    ['*/15 * * * *', '2021-04-08T10:07:30Z', '2021-04-08T10:15:00.000Z'],
    ['0 * * * *', '2021-04-08T10:00:00Z', '2021-04-08T11:00:00.000Z'],
    ['@hourly', '2021-04-08T10:59:59Z', '2021-04-08T11:00:00.000Z'],
    ['@daily', '2021-04-08T10:00:00Z', '2021-04-09T00:00:00.000Z'],
    ['@midnight', '2021-12-31T23:00:00Z', '2022-01-01T00:00:00.000Z'],
    ['@weekly', '2021-04-08T10:00:00Z', '2021-04-11T00:00:00.000Z'], // the next Sunday
    ['@monthly', '2021-04-08T10:00:00Z', '2021-05-01T00:00:00.000Z'],
    ['@yearly', '2021-04-08T10:00:00Z', '2022-01-01T00:00:00.000Z'],
    ['@annually', '2021-04-08T10:00:00Z', '2022-01-01T00:00:00.000Z'],
    ['30 2 * JAN-MAR MON-FRI', '2021-04-08T10:00:00Z', '2022-01-03T02:30:00.000Z'],
    ['5-10/2 1 * * *', '2021-04-08T01:06:00Z', '2021-04-08T01:07:00.000Z'],
    ['5/20 * * * *', '2021-04-08T01:26:00Z', '2021-04-08T01:45:00.000Z'],
    ['0 0 1,15 * ?', '2021-04-08T10:00:00Z', '2021-04-15T00:00:00.000Z'],
    // Both day fields restricted: either matches (the 13th, or a Friday).
    ['0 0 13 * 5', '2021-04-08T10:00:00Z', '2021-04-09T00:00:00.000Z'],
    ['0 0 29 2 *', '2021-03-01T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['@every 90s', '2021-04-08T10:00:00.500Z', '2021-04-08T10:01:30.000Z'],
    ['@every 1h30m', '2021-04-08T10:00:00Z', '2021-04-08T11:30:00.000Z'],
  ])('%s after %s is %s (UTC)', (spec, after, want) => {
    expect(iso(parseSchedule(spec, 'UTC').next(at(after)))).toBe(want);
  });

  test('CRON_TZ= and TZ= read the fields in that zone', () => {
    // 09:00 in New York is 13:00 UTC in summer (EDT) and 14:00 UTC in winter (EST).
    expect(iso(parseSchedule('CRON_TZ=America/New_York 0 9 * * *', 'UTC').next(at('2021-07-01T00:00:00Z')))).toBe(
      '2021-07-01T13:00:00.000Z',
    );
    expect(iso(parseSchedule('TZ=America/New_York 0 9 * * *', 'UTC').next(at('2021-12-01T00:00:00Z')))).toBe(
      '2021-12-01T14:00:00.000Z',
    );
    expect(iso(parseSchedule('CRON_TZ=Asia/Tokyo @daily', 'UTC').next(at('2021-07-01T16:00:00Z')))).toBe(
      '2021-07-02T15:00:00.000Z',
    );
    // The zone given to the parser is the default.
    expect(iso(parseSchedule('0 9 * * *', 'Europe/Paris').next(at('2021-07-01T00:00:00Z')))).toBe(
      '2021-07-01T07:00:00.000Z',
    );
  });

  test('a wall time skipped by a daylight-saving jump does not run that day', () => {
    // 2021-03-14 02:30 does not exist in New York.
    expect(iso(parseSchedule('CRON_TZ=America/New_York 30 2 * * *', 'UTC').next(at('2021-03-13T12:00:00Z')))).toBe(
      '2021-03-15T06:30:00.000Z',
    );
  });

  test('a schedule that never runs has no next time', () => {
    expect(parseSchedule('0 0 30 2 *', 'UTC').next(at('2021-01-01T00:00:00Z'))).toBeUndefined();
  });

  test.each([
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['* * * * * *', 'expected exactly 5 fields, found 6: [* * * * * *]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['CRON_TZ=Mars/Olympus * * * * *', 'provided bad location Mars/Olympus: unknown time zone Mars/Olympus'],
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
  ])('%j is refused: %s', (spec, message) => {
    expect(() => parseSchedule(spec, 'UTC')).toThrow(new ScheduleParseError(message));
  });
});
