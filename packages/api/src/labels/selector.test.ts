import {
  everything,
  isLabelSelectorParseError,
  LabelSelectorParseError,
  newRequirement,
  nothing,
  parseSelector,
  parseToRequirements,
  selectorFromSet,
  selectorFromValidatedSet,
  validatedSelectorFromSet,
  type Labels,
  type Operator,
} from './selector';

const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const QNAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

function parseError(s: string): string {
  try {
    parseSelector(s);
  } catch (err) {
    expect(isLabelSelectorParseError(err)).toBe(true);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(s)} to be rejected`);
}

describe('parseSelector: canonical form of valid selectors', () => {
  it.each<[string, string]>([
    ['', ''],
    ['   ', ''],
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['z=c,y=b,x=a', 'x=a,y=b,z=c'],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x=', 'x='],
    ['x= ', 'x='],
    ['x=,z= ', 'x=,z='],
    ['x= ,z= ', 'x=,z='],
    ['!x', '!x'],
    ['! x', '!x'],
    ['x', 'x'],
    ['x==a', 'x==a'],
    ['x>1', 'x>1'],
    ['x<1', 'x<1'],
    ['x>1,z<5', 'x>1,z<5'],
    ['x > 1 , z < 5', 'x>1,z<5'],
    ['x in (a)', 'x in (a)'],
    ['x in (b,a)', 'x in (a,b)'],
    ['x in (a,a,b)', 'x in (a,b)'],
    ['x in ()', 'x in ()'],
    ['x in (,)', 'x in ()'],
    ['x in (a,)', 'x in (,a)'],
    ['x in (,a)', 'x in (,a)'],
    ['x notin (a,,b)', 'x notin (,a,b)'],
    ['x in(a)', 'x in (a)'],
    ['x\tin\n(\ra , b )', 'x in (a,b)'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['in in (in,notin)', 'in in (in,notin)'],
    ['notin=in', 'notin=in'],
    ['example.com/app=web,tier', 'example.com/app=web,tier'],
    ['a=1,a=2', 'a=1,a=2'],
    ['y,x', 'x,y'],
    ['!y,x=1', 'x=1,!y'],
  ])('%j → %j', (input, want) => {
    expect(parseSelector(input).toString()).toBe(want);
  });

  it('round-trips: parsing the canonical form gives the same selector', () => {
    for (const s of ['x in (a,b),y notin (c),!z,w>3,v=1,u!=2', 'a', 'k==v']) {
      const once = parseSelector(s).toString();
      expect(parseSelector(once).toString()).toBe(once);
    }
  });
});

describe('parseSelector: errors worded like Kubernetes', () => {
  it.each<[string, string]>([
    ['x=a||y=b', `unable to parse requirement: invalid label value: "a||y": at key: "x": ${LABEL_VALUE_MSG}`],
    ['x==a==b', "found '==', expected: ',' or 'end of string'"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    ['x<a', "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"],
    ['x>1.5', "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"],
    ['x>99999999999999999999', "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"],
    ['x>-1', `unable to parse requirement: invalid label value: "-1": at key: "x": ${LABEL_VALUE_MSG}`],
    ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['x in a', "unable to parse requirement: found 'a' expected: '('"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    [',', "found ',', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['x,', "found '', expected: identifier after ','"],
    ['x,,y', "found ',', expected: identifier after ','"],
    ['x y', "unable to parse requirement: found 'y', expected: '=', '!=', '==', 'in', notin'"],
    ['x notinn (a)', "unable to parse requirement: found 'notinn', expected: '=', '!=', '==', 'in', notin'"],
    ['x=a b', "found 'b', expected: ',' or 'end of string'"],
    ['x=(a)', "unable to parse requirement: found '(', expected: identifier"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!!x', "unable to parse requirement: found '!', expected: identifier"],
    ['-x', `unable to parse requirement: invalid label key "-x": ${QNAME_MSG}`],
    [
      'a/b/c',
      expect.stringMatching(
        /^unable to parse requirement: invalid label key "a\/b\/c": a qualified name must/,
      ) as unknown as string,
    ],
    [
      'x=' + 'a'.repeat(64),
      `unable to parse requirement: invalid label value: "${'a'.repeat(64)}": at key: "x": must be no more than 63 characters`,
    ],
    ['x=a\u0000', `unable to parse requirement: invalid label value: "a\\x00": at key: "x": ${LABEL_VALUE_MSG}`],
    ['ключ=a', expect.stringMatching(/^unable to parse requirement: invalid label key "ключ": /) as unknown as string],
  ])('%j', (input, want) => {
    expect(parseError(input)).toEqual(want);
  });

  it('throws a branded, named error', () => {
    try {
      parseSelector('x in');
    } catch (err) {
      expect(err).toBeInstanceOf(LabelSelectorParseError);
      expect((err as Error).name).toBe('LabelSelectorParseError');
      return;
    }
    throw new Error('not thrown');
  });

  it('brand check rejects look-alikes', () => {
    expect(isLabelSelectorParseError(new Error('x'))).toBe(false);
    expect(isLabelSelectorParseError(null)).toBe(false);
    expect(isLabelSelectorParseError('x')).toBe(false);
  });
});

describe('matching', () => {
  const labelset = { foo: 'bar', baz: 'blah' };
  it.each<[string, Labels | undefined, boolean]>([
    ['', { x: 'y' }, true],
    ['', undefined, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x', { x: 'z' }, true],
    ['x', { x: '' }, true],
    ['!x', { y: 'z' }, true],
    ['!x', undefined, true],
    ['x>1', { x: '2' }, true],
    ['x<1', { x: '0' }, true],
    ['x<1', { x: '-5' }, true],
    ['x>1', { x: '+2' }, true],
    ['x=z', {}, false],
    ['x=z', undefined, false],
    ['x=', {}, false],
    ['x=', { x: '' }, true],
    ['x!=', {}, true],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['x', { y: 'z' }, false],
    ['!x', { x: 'z' }, false],
    ['x>1', { x: '0' }, false],
    ['x>1', { x: '1' }, false],
    ['x<1', { x: '2' }, false],
    ['x>1', { x: 'abc' }, false],
    ['x>1', {}, false],
    ['x>1', { x: '99999999999999999999' }, false],
    ['x>9007199254740993', { x: '9007199254740994' }, true],
    ['x in (a,b)', { x: 'b' }, true],
    ['x in (a,b)', { x: 'c' }, false],
    ['x in (a,b)', {}, false],
    ['x notin (a,b)', {}, true],
    ['x notin (a,b)', { x: 'a' }, false],
    ['x notin (a,b)', { x: 'c' }, true],
    ['x in (a,b,c,d,e,f,g,h,i,j)', { x: 'j' }, true],
    ['x in (a,b,c,d,e,f,g,h,i,j)', { x: 'k' }, false],
    ['x in ()', { x: '' }, true],
    ['foo=bar', labelset, true],
    ['baz=blah', labelset, true],
    ['foo=bar,baz=blah', labelset, true],
    ['foo=blah', labelset, false],
    ['baz=bar', labelset, false],
    ['foo=bar,foobar=bar,baz=blah', labelset, false],
    ['constructor', {}, false],
    ['!constructor', {}, true],
    ['hasOwnProperty=x', {}, false],
    ['valueOf', {}, false],
    ['toString', { toString: 'yes' }, true],
  ])('%j matches %j: %p', (sel, labels, want) => {
    expect(parseSelector(sel).matches(labels)).toBe(want);
  });

  it('ignores non-string label values instead of crashing', () => {
    expect(parseSelector('x').matches({ x: 5 } as unknown as Labels)).toBe(false);
  });
});

describe('everything, nothing, sets', () => {
  it('everything matches all and is empty', () => {
    const s = everything();
    expect(s.matches({})).toBe(true);
    expect(s.matches({ a: 'b' })).toBe(true);
    expect(s.isEmpty()).toBe(true);
    expect(s.isSelectable()).toBe(true);
    expect(s.toString()).toBe('');
    expect(s.requirements()).toEqual([]);
  });
  it('nothing matches none, is not empty and not selectable', () => {
    const s = nothing();
    expect(s.matches({})).toBe(false);
    expect(s.matches({ a: 'b' })).toBe(false);
    expect(s.isEmpty()).toBe(false);
    expect(s.isSelectable()).toBe(false);
    expect(s.toString()).toBe('');
    expect(s.add(newRequirement('a', 'exists'))).toBe(s);
    expect(s.requiresExactMatch('a')).toBeUndefined();
  });
  it('selectorFromSet matches exactly the set, sorted', () => {
    const s = selectorFromSet({ b: '2', a: '1' });
    expect(s.toString()).toBe('a=1,b=2');
    expect(s.matches({ a: '1', b: '2', c: '3' })).toBe(true);
    expect(s.matches({ a: '1' })).toBe(false);
    expect(selectorFromSet({}).isEmpty()).toBe(true);
    expect(selectorFromSet(undefined).isEmpty()).toBe(true);
  });
  it('validatedSelectorFromSet validates, selectorFromSet does not (as Kubernetes)', () => {
    expect(() => validatedSelectorFromSet({ 'bad key': 'v' })).toThrow(/^invalid label key "bad key": /);
    expect(() => validatedSelectorFromSet({ k: 'bad value' })).toThrow(
      /^invalid label value: "bad value": at key: "k": /,
    );
    expect(validatedSelectorFromSet({ b: '2', a: '1' }).toString()).toBe('a=1,b=2');
    expect(validatedSelectorFromSet(undefined).isEmpty()).toBe(true);
    expect(selectorFromSet({ k: 'bad value' }).matches({ k: 'bad value' })).toBe(true);
    expect(selectorFromValidatedSet({ k: 'v' }).matches({ k: 'v' })).toBe(true);
    expect(selectorFromValidatedSet(undefined).isEmpty()).toBe(true);
  });
  it('add keeps the selector sorted and leaves the original alone', () => {
    const s = parseSelector('b=1');
    const t = s.add(newRequirement('a', 'in', ['x', 'y']));
    expect(t.toString()).toBe('a in (x,y),b=1');
    expect(s.toString()).toBe('b=1');
  });
});

describe('requiresExactMatch', () => {
  it.each<[string, string, string | undefined]>([
    ['x=a', 'x', 'a'],
    ['x==a', 'x', 'a'],
    ['x in (a)', 'x', 'a'],
    ['x in (a,b)', 'x', undefined],
    ['x!=a', 'x', undefined],
    ['x', 'x', undefined],
    ['y=a', 'x', undefined],
    ['x=', 'x', ''],
  ])('%j for %j → %j', (sel, label, want) => {
    expect(parseSelector(sel).requiresExactMatch(label)).toBe(want);
  });
});

describe('newRequirement', () => {
  it.each<[string, Operator, string[], string]>([
    ['x', 'in', [], "for 'in', 'notin' operators, values set can't be empty"],
    ['x', 'notin', [], "for 'in', 'notin' operators, values set can't be empty"],
    ['x', '=', [], 'exact-match compatibility requires one single value'],
    ['x', '==', ['a', 'b'], 'exact-match compatibility requires one single value'],
    ['x', '!=', [], 'exact-match compatibility requires one single value'],
    ['x', 'exists', ['a'], 'values set must be empty for exists and does not exist'],
    ['x', '!', ['a'], 'values set must be empty for exists and does not exist'],
    ['x', 'gt', [], "for 'Gt', 'Lt' operators, exactly one value is required"],
    ['x', 'lt', ['1', '2'], "for 'Gt', 'Lt' operators, exactly one value is required"],
    ['x', 'gt', ['a'], "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['x', 'like' as Operator, ['a'], "operator 'like' is not recognized"],
    ['', 'exists', [], 'invalid label key "": name part must be non-empty; ' + QNAME_MSG],
    ['x', 'in', ['ok', '-bad'], `invalid label value: "-bad": at key: "x": ${LABEL_VALUE_MSG}`],
  ])('%j %s %j', (key, op, values, msg) => {
    expect(() => newRequirement(key, op, values)).toThrow(new LabelSelectorParseError(msg));
  });

  it('keeps values in the given order but prints them sorted', () => {
    const r = newRequirement('x', 'in', ['b', 'a']);
    expect(r.values).toEqual(['b', 'a']);
    expect(r.toString()).toBe('x in (a,b)');
    expect(r.matches({ x: 'a' })).toBe(true);
  });

  it('compares requirements', () => {
    expect(newRequirement('x', 'in', ['a']).equals(newRequirement('x', 'in', ['a']))).toBe(true);
    expect(newRequirement('x', 'in', ['a']).equals(newRequirement('x', 'notin', ['a']))).toBe(false);
    expect(newRequirement('x', 'in', ['a']).equals(newRequirement('x', 'in', ['a', 'b']))).toBe(false);
    expect(newRequirement('x', 'in', ['a']).equals(newRequirement('y', 'in', ['a']))).toBe(false);
  });

  it('prints every operator', () => {
    const cases: [Operator, string[], string][] = [
      ['in', ['a'], 'k in (a)'],
      ['notin', ['a', 'b'], 'k notin (a,b)'],
      ['=', ['a'], 'k=a'],
      ['==', ['a'], 'k==a'],
      ['!=', ['a'], 'k!=a'],
      ['exists', [], 'k'],
      ['!', [], '!k'],
      ['gt', ['1'], 'k>1'],
      ['lt', ['1'], 'k<1'],
    ];
    for (const [op, vals, want] of cases) expect(newRequirement('k', op, vals).toString()).toBe(want);
  });
});

describe('parseToRequirements', () => {
  it('returns the sorted requirements', () => {
    const reqs = parseToRequirements('z,x in (b,a),!y');
    expect(reqs.map((r) => [r.key, r.operator, r.values])).toEqual([
      ['x', 'in', ['a', 'b']],
      ['y', '!', []],
      ['z', 'exists', []],
    ]);
  });
});

describe('performance', () => {
  it('matches 200k label sets against a parsed selector quickly', () => {
    const s = parseSelector('app=web,tier in (frontend,backend),!canary,env notin (dev)');
    const labels = { app: 'web', tier: 'backend', env: 'prod', version: 'v1' };
    const start = process.hrtime.bigint();
    let n = 0;
    for (let i = 0; i < 200_000; i++) if (s.matches(labels)) n++;
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    expect(n).toBe(200_000);
    // Generous bound for slow or instrumented runs; typically about 40 ms (about 0.2 µs per match).
    expect(ms).toBeLessThan(2000);
  });
});
