import { isTrueParam, parseGoBool } from './parse-bool';

describe('parseGoBool (Go strconv.ParseBool)', () => {
  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('%p is true', (v) => {
    expect(parseGoBool(v)).toBe(true);
    expect(isTrueParam(v)).toBe(true);
  });
  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('%p is false', (v) => {
    expect(parseGoBool(v)).toBe(false);
    expect(isTrueParam(v)).toBe(false);
  });
  it.each(['', 'yes', 'no', 'tRUE', 'TrUe', ' true', 'true ', '2', 'on'])('%p is not a boolean', (v) => {
    expect(parseGoBool(v)).toBeUndefined();
    expect(isTrueParam(v)).toBe(false);
  });
  it('an absent parameter is not true', () => expect(isTrueParam(null)).toBe(false));
});
