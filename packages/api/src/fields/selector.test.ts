import {
  andFieldSelectors,
  checkSupportedFields,
  defaultSupportedFields,
  escapeValue,
  everythingFields,
  fieldSelectorFromSet,
  FieldSelectorParseError,
  isFieldSelectorParseError,
  nothingFields,
  objectMetaFieldsSet,
  oneTermEqualSelector,
  oneTermNotEqualSelector,
  parseAndTransformFieldSelector,
  parseFieldSelector,
  supportedFieldsTransform,
  unescapeValue,
  type Fields,
} from './selector';

function parseError(s: string): FieldSelectorParseError {
  try {
    parseFieldSelector(s);
  } catch (err) {
    expect(isFieldSelectorParseError(err)).toBe(true);
    return err as FieldSelectorParseError;
  }
  throw new Error(`expected ${JSON.stringify(s)} to be rejected`);
}

describe('parseFieldSelector: canonical form', () => {
  it.each<[string, string]>([
    ['', ''],
    [',', ''],
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['z=c,y=b,x=a', 'x=a,y=b,z=c'],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x==a', 'x=a'],
    ['x=', 'x='],
    ['x!=', 'x!='],
    ['x=a||y\\=b', 'x=a||y\\=b'],
    ['x=a\\=\\=b', 'x=a\\=\\=b'],
    ['x=a\\,b', 'x=a\\,b'],
    ['x=a\\\\b', 'x=a\\\\b'],
    ['metadata.name=foo,metadata.namespace!=kube-system', 'metadata.name=foo,metadata.namespace!=kube-system'],
    ['spec.nodeName=', 'spec.nodeName='],
    ['a b=c d', 'a b=c d'],
    ['=a', '=a'],
    ['x=a,,y=b', 'x=a,y=b'],
    ['x=!a', 'x=!a'],
  ])('%j → %j', (input, want) => {
    expect(parseFieldSelector(input).toString()).toBe(want);
  });

  it('sorts terms by UTF-8 bytes, as Go does', () => {
    // U+FF21 sorts after U+1F600 in UTF-16 code units but before it in UTF-8 bytes.
    expect(parseFieldSelector('x=\u{1F600},x=\uFF21').toString()).toBe('x=\uFF21,x=\u{1F600}');
    expect(parseFieldSelector('b=1,a=2,c=\u00e9').toString()).toBe('a=2,b=1,c=\u00e9');
  });

  it('is deterministic whatever the input order', () => {
    expect(parseFieldSelector('x=a,a=x').toString()).toBe(parseFieldSelector('a=x,x=a').toString());
  });

  it('parses the operators and unescapes values', () => {
    expect(parseFieldSelector('b!=1,a==x\\,y,c=').requirements()).toEqual([
      { field: 'a', operator: '=', value: 'x,y' },
      { field: 'b', operator: '!=', value: '1' },
      { field: 'c', operator: '=', value: '' },
    ]);
  });

  it('keeps whitespace, as Kubernetes does', () => {
    expect(parseFieldSelector('metadata.name = x').requirements()).toEqual([
      { field: 'metadata.name ', operator: '=', value: ' x' },
    ]);
  });
});

describe('parseFieldSelector: errors', () => {
  it.each<[string, string]>([
    ['x=a||y=b', 'invalid field selector: unescaped character in value: 61'],
    ['x==a==b', 'invalid field selector: unescaped character in value: 61'],
    ['x!==a', 'invalid field selector: unescaped character in value: 61'],
    ['x=a,b', "invalid selector: 'x=a,b'; can't understand 'b'"],
    ['x in (a)', "invalid selector: 'x in (a)'; can't understand 'x in (a)'"],
    ['x in (a,b,c)', "invalid selector: 'x in (a,b,c)'; can't understand 'b'"],
    ['x', "invalid selector: 'x'; can't understand 'x'"],
    ['x!a', "invalid selector: 'x!a'; can't understand 'x!a'"],
    ['x=a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['x=a\\b', 'invalid field selector: invalid escape sequence: \\b'],
    ['x=\\n', 'invalid field selector: invalid escape sequence: \\n'],
  ])('%j', (input, msg) => {
    const err = parseError(input);
    expect(err.message).toBe(msg);
    expect(err.reason).toBe('Syntax');
    expect(err.name).toBe('FieldSelectorParseError');
  });

  it('brand check rejects look-alikes', () => {
    expect(isFieldSelectorParseError(new Error('x'))).toBe(false);
    expect(isFieldSelectorParseError(undefined)).toBe(false);
  });
});

describe('escaping', () => {
  it.each<[string, string]>([
    ['', ''],
    ['a', 'a'],
    ['=', '\\='],
    [',', '\\,'],
    ['\\', '\\\\'],
    ['\\=\\,\\', '\\\\\\=\\\\\\,\\\\'],
    ['a b!c', 'a b!c'],
  ])('%j ⇄ %j', (raw, escaped) => {
    expect(escapeValue(raw)).toBe(escaped);
    expect(unescapeValue(escaped)).toBe(raw);
  });

  it.each<[string, string]>([
    ['\\', 'invalid field selector: invalid escape sequence: \\'],
    ['\\a', 'invalid field selector: invalid escape sequence: \\a'],
    ['a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['\\\\\\', 'invalid field selector: invalid escape sequence: \\'],
    ['=', 'invalid field selector: unescaped character in value: 61'],
    [',', 'invalid field selector: unescaped character in value: 44'],
    ['\\é', 'invalid field selector: invalid escape sequence: \\é'],
  ])('unescape rejects %j', (s, msg) => {
    expect(() => unescapeValue(s)).toThrow(new FieldSelectorParseError(msg));
  });
});

describe('matching', () => {
  it.each<[string, Fields | undefined, boolean]>([
    ['', { x: 'y' }, true],
    ['', undefined, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x=z', {}, false],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['x=', {}, true],
    ['x=', undefined, true],
    ['x!=', {}, false],
    ['x!=', { x: 'a' }, true],
    ['spec.nodeName=node-1', { 'spec.nodeName': 'node-1', 'metadata.name': 'p' }, true],
    ['spec.nodeName!=', { 'spec.nodeName': '' }, false],
    ['x=a\\,b', { x: 'a,b' }, true],
    ['constructor=', {}, true],
    ['toString!=', {}, false],
  ])('%j on %j → %p', (sel, fields, want) => {
    expect(parseFieldSelector(sel).matches(fields)).toBe(want);
  });
});

describe('requiresExactMatch', () => {
  it.each<[string, string, string | undefined]>([
    ['spec.nodeName=n1', 'spec.nodeName', 'n1'],
    ['spec.nodeName==n1', 'spec.nodeName', 'n1'],
    ['spec.nodeName!=n1', 'spec.nodeName', undefined],
    ['metadata.name=a,spec.nodeName=n1', 'spec.nodeName', 'n1'],
    ['metadata.name=a', 'spec.nodeName', undefined],
    ['spec.nodeName=', 'spec.nodeName', ''],
    ['', 'spec.nodeName', undefined],
  ])('%j for %j → %j', (sel, field, want) => {
    expect(parseFieldSelector(sel).requiresExactMatch(field)).toBe(want);
  });
});

describe('supported fields', () => {
  const podFields = ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase'];

  it('accepts supported fields', () => {
    const s = parseAndTransformFieldSelector(
      'spec.nodeName=n1,status.phase!=Failed',
      supportedFieldsTransform(podFields),
    );
    expect(s.toString()).toBe('spec.nodeName=n1,status.phase!=Failed');
    expect(checkSupportedFields(parseFieldSelector('metadata.name=a'), podFields).toString()).toBe('metadata.name=a');
  });

  it('rejects others with the Kubernetes message', () => {
    let caught: unknown;
    try {
      checkSupportedFields(parseFieldSelector('metadata.name=a,spec.foo=b'), podFields);
    } catch (err) {
      caught = err;
    }
    expect(isFieldSelectorParseError(caught)).toBe(true);
    expect((caught as FieldSelectorParseError).message).toBe('field label not supported: spec.foo');
    expect((caught as FieldSelectorParseError).reason).toBe('UnsupportedField');
  });

  it('lists the default metadata fields', () => {
    expect(defaultSupportedFields(true)).toEqual(['metadata.name', 'metadata.namespace']);
    expect(defaultSupportedFields(false)).toEqual(['metadata.name']);
    expect(() =>
      checkSupportedFields(parseFieldSelector('metadata.namespace=x'), defaultSupportedFields(false)),
    ).toThrow('field label not supported: metadata.namespace');
  });

  it('builds the metadata field set of an object', () => {
    expect(objectMetaFieldsSet({ name: 'a', namespace: 'ns' }, true)).toEqual({
      'metadata.name': 'a',
      'metadata.namespace': 'ns',
    });
    expect(objectMetaFieldsSet({ name: 'a', namespace: 'ns' }, false)).toEqual({ 'metadata.name': 'a' });
    expect(objectMetaFieldsSet(undefined, true)).toEqual({ 'metadata.name': '', 'metadata.namespace': '' });
  });
});

describe('transform', () => {
  it('rewrites terms and drops those mapped to empty', () => {
    const s = parseFieldSelector('a=1,b!=2,c=3').transform((f, v) => (f === 'b' ? ['', ''] : [f.toUpperCase(), v + v]));
    expect(s.toString()).toBe('A=11,C=33');
  });
  it('propagates errors from the transform', () => {
    expect(() =>
      parseFieldSelector('a=1').transform(() => {
        throw new Error('nope');
      }),
    ).toThrow('nope');
  });
});

describe('constructors', () => {
  it('everything and nothing', () => {
    expect(everythingFields().matches({})).toBe(true);
    expect(everythingFields().isEmpty()).toBe(true);
    expect(nothingFields().matches({})).toBe(false);
    expect(nothingFields().isEmpty()).toBe(false);
    expect(nothingFields().toString()).toBe('');
    expect(nothingFields().requiresExactMatch('a')).toBeUndefined();
    expect(nothingFields().transform(() => ['a', 'b'])).toBe(nothingFields());
  });
  it('one-term selectors escape on printing', () => {
    expect(oneTermEqualSelector('spec.nodeName', 'a,b').toString()).toBe('spec.nodeName=a\\,b');
    expect(oneTermEqualSelector('spec.nodeName', 'a,b').matches({ 'spec.nodeName': 'a,b' })).toBe(true);
    expect(oneTermNotEqualSelector('x', 'y').toString()).toBe('x!=y');
    expect(parseFieldSelector(oneTermEqualSelector('k', 'a=b\\c').toString()).requiresExactMatch('k')).toBe('a=b\\c');
  });
  it('and and set', () => {
    const s = andFieldSelectors(oneTermEqualSelector('a', '1'), oneTermNotEqualSelector('b', '2'));
    expect(s.toString()).toBe('a=1,b!=2');
    expect(andFieldSelectors(s, nothingFields()).matches({ a: '1' })).toBe(false);
    expect(fieldSelectorFromSet({ b: '2', a: '1' }).toString()).toBe('a=1,b=2');
    expect(fieldSelectorFromSet(undefined).isEmpty()).toBe(true);
  });
});
