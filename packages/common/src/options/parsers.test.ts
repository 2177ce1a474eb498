import {
  parseBool,
  parseCIDR,
  parseFloat64,
  parseIP,
  parseInteger,
  parseKeyBoolMap,
  parseKeyValueMap,
  parsePortRange,
  parseStringList,
} from './parsers';

describe('scalar parsers', () => {
  it('parses bools like strconv.ParseBool', () => {
    for (const t of ['1', 't', 'T', 'true', 'TRUE', 'True']) expect(parseBool(t)).toBe(true);
    for (const f of ['0', 'f', 'F', 'false', 'FALSE', 'False']) expect(parseBool(f)).toBe(false);
    expect(() => parseBool('yes')).toThrow('strconv.ParseBool: parsing "yes": invalid syntax');
    expect(() => parseBool('')).toThrow('strconv.ParseBool: parsing "": invalid syntax');
  });

  it('parses ints with ranges', () => {
    expect(parseInteger('42')).toBe(42);
    expect(parseInteger('-7')).toBe(-7);
    expect(parseInteger('0x1f')).toBe(31);
    expect(() => parseInteger('4.2')).toThrow('strconv.ParseInt: parsing "4.2": invalid syntax');
    expect(() => parseInteger('')).toThrow('strconv.ParseInt: parsing "": invalid syntax');
    expect(() => parseInteger(' 1')).toThrow('invalid syntax');
    expect(() => parseInteger('99999999999999999999')).toThrow('value out of range');
    expect(() => parseInteger('70000', { min: 0, max: 65535 })).toThrow('must be between 0 and 65535, inclusive');
    expect(() => parseInteger('-1', { min: 0 })).toThrow('must be greater than or equal to 0');
    expect(() => parseInteger('11', { max: 10 })).toThrow('must be less than or equal to 10');
  });

  it('parses floats', () => {
    expect(parseFloat64('0.1')).toBe(0.1);
    expect(parseFloat64('1e-3')).toBe(0.001);
    expect(() => parseFloat64('abc')).toThrow('strconv.ParseFloat: parsing "abc": invalid syntax');
    expect(() => parseFloat64('NaN')).toThrow('invalid syntax');
    expect(() => parseFloat64('0.5', { min: 0, max: 0.02 })).toThrow('must be between 0 and 0.02, inclusive');
  });

  it('parses IPs and CIDRs', () => {
    expect(parseIP('10.0.0.1')).toBe('10.0.0.1');
    expect(parseIP('::1')).toBe('::1');
    expect(() => parseIP('10.0.0.256')).toThrow('failed to parse IP: "10.0.0.256"');
    expect(() => parseIP('localhost')).toThrow('failed to parse IP: "localhost"');
    expect(parseCIDR('10.0.0.0/8')).toBe('10.0.0.0/8');
    expect(parseCIDR('fd00::/64')).toBe('fd00::/64');
    expect(() => parseCIDR('10.0.0.0/33')).toThrow('invalid CIDR address: 10.0.0.0/33');
    expect(() => parseCIDR('10.0.0.0')).toThrow('invalid CIDR address: 10.0.0.0');
    expect(() => parseCIDR('fd00::/129')).toThrow('invalid CIDR address');
    expect(() => parseCIDR('x/8')).toThrow('invalid CIDR address');
  });

  it('parses port ranges', () => {
    expect(parsePortRange('30000-32767')).toEqual({ base: 30000, size: 2768 });
    expect(parsePortRange('80')).toEqual({ base: 80, size: 1 });
    expect(parsePortRange('100+10')).toEqual({ base: 100, size: 11 });
    expect(() => parsePortRange('a-b')).toThrow('unable to parse port range: a-b');
    expect(() => parsePortRange('0-10')).toThrow('ports must be between 1 and 65535');
    expect(() => parsePortRange('10-70000')).toThrow('ports must be between 1 and 65535');
    expect(() => parsePortRange('20-10')).toThrow('end port is lower than start port');
  });
});

describe('list and map parsers', () => {
  it('splits comma lists', () => {
    expect(parseStringList('a, b,,c ')).toEqual(['a', 'b', 'c']);
    expect(parseStringList('')).toEqual([]);
  });

  it('parses key=value maps', () => {
    expect([...parseKeyValueMap('a=1,b=x=y, c=')]).toEqual([
      ['a', '1'],
      ['b', 'x=y'],
      ['c', ''],
    ]);
    expect(() => parseKeyValueMap('a=1,b')).toThrow('malformed pair, expect string=string');
    expect(() => parseKeyValueMap('=1')).toThrow('malformed pair, expect string=string');
    expect([...parseKeyValueMap('a=1,2,b=3', true)]).toEqual([
      ['a', '1,2'],
      ['b', '3'],
    ]);
  });

  it('parses key=bool maps', () => {
    expect([...parseKeyBoolMap('A=true,B=false')]).toEqual([
      ['A', true],
      ['B', false],
    ]);
    expect(() => parseKeyBoolMap('A')).toThrow('missing bool value for A');
    expect(() => parseKeyBoolMap('A=maybe')).toThrow(
      'invalid value of A=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
    );
  });
});
