import { CIDRRangeFullError, CIDRSet, cidrSetProblem, formatCIDR, parseCIDRNumbers } from './cidr-set';

const p = (s: string): NonNullable<ReturnType<typeof parseCIDRNumbers>> => {
  const c = parseCIDRNumbers(s);
  if (!c) throw new Error(`bad CIDR ${s}`);
  return c;
};

describe('parseCIDRNumbers / formatCIDR', () => {
  test.each([
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['10.1.2.3/16', '10.1.0.0/16'],
    ['fd00::/48', 'fd00::/48'],
    ['fd00:0:0:1::5/64', 'fd00:0:0:1::/64'],
    ['2001:db8:0:0:1:0:0:1/128', '2001:db8::1:0:0:1/128'],
    ['::/0', '::/0'],
  ])('%s is %s', (input, want) => expect(formatCIDR(p(input))).toBe(want));

  test.each(['10.0.0.0', '10.0.0.0/33', 'fd00::/129', 'x/8', '300.0.0.0/8', ''])('%s is not a CIDR', (s) =>
    expect(parseCIDRNumbers(s)).toBeUndefined(),
  );
});

describe('CIDRSet', () => {
  test('hands out node CIDRs in order, round the range, and refuses when full', () => {
    const s = new CIDRSet(p('10.0.0.0/24'), 26);
    expect(s.size).toBe(4);
    expect([s.allocateNext(), s.allocateNext(), s.allocateNext()]).toEqual([
      '10.0.0.0/26',
      '10.0.0.64/26',
      '10.0.0.128/26',
    ]);
    s.release(p('10.0.0.64/26'));
    // The freed one is not handed out at once: the next candidate comes first.
    expect(s.allocateNext()).toBe('10.0.0.192/26');
    expect(s.allocateNext()).toBe('10.0.0.64/26');
    expect(() => s.allocateNext()).toThrow(CIDRRangeFullError);
    expect(s.count).toBe(4);
  });

  test('occupies what a range covers: smaller, larger, and outside CIDRs', () => {
    const s = new CIDRSet(p('10.0.0.0/16'), 24);
    expect(s.occupy(p('10.0.4.0/22'))).toBe(true); // four node CIDRs
    expect(s.count).toBe(4);
    expect(s.occupy(p('10.0.9.128/25'))).toBe(true); // part of one
    expect(s.count).toBe(5);
    expect(s.occupy(p('10.0.9.0/24'))).toBe(true); // the same one again
    expect(s.count).toBe(5);
    expect(s.occupy(p('10.1.0.0/24'))).toBe(false);
    expect(s.occupy(p('fd00::/64'))).toBe(false);
    expect(s.occupy(p('10.0.0.0/8'))).toBe(true); // covers the whole cluster CIDR
    expect(s.count).toBe(256);
    expect(() => s.allocateNext()).toThrow(CIDRRangeFullError);
  });

  test('IPv6 node CIDRs', () => {
    const s = new CIDRSet(p('fd00:10::/112'), 114);
    expect([s.allocateNext(), s.allocateNext()]).toEqual(['fd00:10::/114', 'fd00:10::4000/114']);
    expect(s.contains(p('fd00:10::8000/114'))).toBe(true);
    expect(s.contains(p('fd00:11::/114'))).toBe(false);
    expect(s.contains(p('fd00::/64'))).toBe(false);
  });

  test('a mask size that does not fit the cluster CIDR is refused', () => {
    expect(cidrSetProblem(p('10.0.0.0/16'), 8)).toMatch(/larger than the cluster CIDR 10.0.0.0\/16/);
    expect(cidrSetProblem(p('10.0.0.0/8'), 25)).toMatch(/more than 2\^16 node CIDRs; use a mask size of at most \/24/);
    expect(cidrSetProblem(p('10.0.0.0/8'), 33)).toMatch(/not a valid IPv4 prefix length/);
    expect(cidrSetProblem(p('10.0.0.0/8'), 24)).toBeUndefined();
    expect(() => new CIDRSet(p('10.0.0.0/16'), 8)).toThrow(/larger than/);
  });
});
