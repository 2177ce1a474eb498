import { FieldPath, fieldErrorToString } from './field-errors';
import {
  isCIdentifier,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isDomainPrefixedPath,
  isEnvVarName,
  isFullyQualifiedDomainName,
  isHTTPHeaderName,
  isInRange,
  isQualifiedName,
  isValidGroupID,
  isValidIP,
  isValidIPv4Address,
  isValidIPv6Address,
  isValidLabelValue,
  isValidPathSegmentName,
  isValidPathSegmentPrefix,
  isValidPercent,
  isValidPortName,
  isValidPortNum,
  isValidUserID,
  isWildcardDNS1123Subdomain,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  parseIP,
  regexError,
  validateAnnotations,
  validateLabels,
  validatePathSegmentName,
} from './names';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('regexError', () => {
  it('formats without examples', () => {
    expect(regexError('bad', 'x+')).toBe("bad (regex used for validation is 'x+')");
  });
  it('formats one and several examples like Go', () => {
    expect(regexError('bad', 'x+', 'x')).toBe("bad (e.g. 'x', regex used for validation is 'x+')");
    expect(regexError('bad', 'x+', 'x', 'xx')).toBe("bad (e.g. 'x',  or 'xx', regex used for validation is 'x+')");
  });
});

describe('isDNS1123Subdomain', () => {
  it.each([
    'a',
    'ab',
    'a-b',
    'a.b',
    'a0.b1',
    '0',
    'example.com',
    'a'.repeat(253),
    `${'a'.repeat(63)}.${'b'.repeat(63)}`,
  ])('accepts %s', (v) => expect(isDNS1123Subdomain(v)).toEqual([]));
  it.each(['', 'A', 'a_b', '-a', 'a-', 'a..b', '.a', 'a.', 'a b', 'ü', 'a.-b'])('rejects %j', (v) => {
    expect(isDNS1123Subdomain(v)).toEqual([SUBDOMAIN_MSG]);
  });
  it('reports length and format', () => {
    expect(isDNS1123Subdomain('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
    expect(isDNS1123Subdomain('A'.repeat(254))).toEqual(['must be no more than 253 characters', SUBDOMAIN_MSG]);
  });
});

describe('isDNS1123Label', () => {
  it.each(['a', '0', 'a-b', '1-2', 'a'.repeat(63)])('accepts %s', (v) => expect(isDNS1123Label(v)).toEqual([]));
  it.each(['', 'a.b', 'A', '-a', 'a-', 'a_b'])('rejects %j', (v) => expect(isDNS1123Label(v)).toEqual([LABEL_MSG]));
  it('reports length', () => {
    expect(isDNS1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });
});

describe('isDNS1035Label', () => {
  it.each(['a', 'a-b', 'a1', 'a'.repeat(63)])('accepts %s', (v) => expect(isDNS1035Label(v)).toEqual([]));
  it.each(['', '1a', 'a-', 'A', 'a.b'])('rejects %j', (v) => expect(isDNS1035Label(v)).toEqual([DNS1035_MSG]));
  it('reports length', () => {
    expect(isDNS1035Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });
});

describe('isWildcardDNS1123Subdomain', () => {
  it.each(['*.example.com', '*.a'])('accepts %s', (v) => expect(isWildcardDNS1123Subdomain(v)).toEqual([]));
  it.each(['*', 'example.com', '*.*.a', 'f*.a', '*a.b'])('rejects %s', (v) =>
    expect(isWildcardDNS1123Subdomain(v)).toEqual([
      "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]),
  );
});

describe('isQualifiedName', () => {
  it.each([
    'simple',
    'now-with-dashes',
    '1-starts-with-num',
    '1234',
    'simple/simple',
    'now-with-dashes/simple',
    'now-with-dashes/now-with-dashes',
    'now.with.dots/simple',
    'now-with.dashes-and.dots/simple',
    '1-num.2-num/3-num',
    '1234/5678',
    '1.2.3.4/5678',
    'Uppercase_Is_OK_123',
    'example.com/Uppercase_Is_OK_123',
    'requests.storage-foo',
    'a'.repeat(63),
    `${'a'.repeat(253)}/${'b'.repeat(63)}`,
  ])('accepts %s', (v) => expect(isQualifiedName(v)).toEqual([]));

  it.each<[string, string[]]>([
    ['', ['name part must be non-empty', QNAME_MSG]],
    ['/simple', ['prefix part must be non-empty']],
    ['example.com/', ['name part must be non-empty', QNAME_MSG]],
    [
      'a/b/c',
      [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
    ['-dash', [QNAME_MSG]],
    ['dash-', [QNAME_MSG]],
    ['has space', [QNAME_MSG]],
    ['Example.com/name', ['prefix part ' + SUBDOMAIN_MSG]],
    ['a'.repeat(64), ['name part must be no more than 63 characters']],
    [`${'a'.repeat(254)}/b`, ['prefix part must be no more than 253 characters']],
    ['a_b.c/x', ['prefix part ' + SUBDOMAIN_MSG]],
  ])('rejects %j', (v, want) => expect(isQualifiedName(v)).toEqual(want));
});

describe('isValidLabelValue', () => {
  it.each([
    '',
    'simple',
    'now-with-dashes',
    '1-starts-with-num',
    'end-with-num-1',
    '1234',
    'a_b',
    'A.B',
    'a'.repeat(63),
  ])('accepts %j', (v) => expect(isValidLabelValue(v)).toEqual([]));
  it.each([
    'nospecialchars%^=@',
    'Tama-nui-te-rā.is.Māori.sun',
    '\\backslashes\\are\\bad',
    '-starts-with-dash',
    'ends-with-dash-',
    '.starts.with.dot',
    'ends.with.dot.',
    'a b',
  ])('rejects %j', (v) => expect(isValidLabelValue(v)).toEqual([LABEL_VALUE_MSG]));
  it('reports length', () => {
    expect(isValidLabelValue('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });
});

describe('small format checks', () => {
  it.each<[string, (v: string) => string[], string, boolean]>([
    ['C identifier', isCIdentifier, 'my_name', true],
    ['C identifier', isCIdentifier, '_x1', true],
    ['C identifier', isCIdentifier, '1x', false],
    ['C identifier', isCIdentifier, 'a-b', false],
    ['C identifier', isCIdentifier, '', false],
    ['percent', isValidPercent, '10%', true],
    ['percent', isValidPercent, '10', false],
    ['percent', isValidPercent, '%', false],
    ['percent', isValidPercent, '1.5%', false],
    ['header', isHTTPHeaderName, 'X-Header-1', true],
    ['header', isHTTPHeaderName, 'X_Header', false],
    ['header', isHTTPHeaderName, '', false],
    ['env var', isEnvVarName, 'MY_ENV.NAME', true],
    ['env var', isEnvVarName, '-a', true],
    ['env var', isEnvVarName, '1A', false],
    ['env var', isEnvVarName, '.', false],
    ['env var', isEnvVarName, '..a', false],
    ['config key', isConfigMapKey, 'key.name', true],
    ['config key', isConfigMapKey, '.dot', true],
    ['config key', isConfigMapKey, '..', false],
    ['config key', isConfigMapKey, 'a/b', false],
    ['config key', isConfigMapKey, 'a'.repeat(254), false],
  ])('%s %j → valid %s', (_n, fn, v, valid) => {
    expect(fn(v).length === 0).toBe(valid);
  });

  it('words the C identifier error like Kubernetes', () => {
    expect(isCIdentifier('1')).toEqual([
      "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
    ]);
  });
  it('words the env var errors like Kubernetes', () => {
    expect(isEnvVarName('..')).toEqual(["must not be '..'"]);
    expect(isEnvVarName('..a')).toEqual(["must not start with '..'"]);
    expect(isEnvVarName('1')).toEqual([
      "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
    ]);
  });
});

describe('numbers', () => {
  it.each<[number, boolean]>([
    [1, true],
    [65535, true],
    [0, false],
    [65536, false],
    [-1, false],
    [1.5, false],
    [NaN, false],
  ])('port %p valid=%p', (p, valid) => {
    expect(isValidPortNum(p)).toEqual(valid ? [] : ['must be between 1 and 65535, inclusive']);
  });
  it('checks ranges and ids', () => {
    expect(isInRange(5, 1, 10)).toEqual([]);
    expect(isInRange(11, 1, 10)).toEqual(['must be between 1 and 10, inclusive']);
    expect(isValidUserID(0)).toEqual([]);
    expect(isValidUserID(-1)).toEqual(['must be between 0 and 2147483647, inclusive']);
    expect(isValidGroupID(2147483648)).toEqual(['must be between 0 and 2147483647, inclusive']);
  });
});

describe('isValidPortName', () => {
  it.each(['http', 'h-t-t-p', 'a1', '1a', 'abcdefghijklmno'])('accepts %s', (v) =>
    expect(isValidPortName(v)).toEqual([]),
  );
  it.each<[string, string[]]>([
    [
      '',
      [
        'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        'must contain at least one letter or number (a-z, 0-9)',
      ],
    ],
    ['abcdefghijklmnop', ['must be no more than 15 characters']],
    [
      'HTTP',
      [
        'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        'must contain at least one letter or number (a-z, 0-9)',
      ],
    ],
    ['123', ['must contain at least one letter or number (a-z, 0-9)']],
    ['a--b', ['must not contain consecutive hyphens']],
    ['-ab', ['must not begin or end with a hyphen']],
    ['ab-', ['must not begin or end with a hyphen']],
    ['a_b', ['must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)']],
  ])('rejects %j', (v, want) => expect(isValidPortName(v)).toEqual(want));
});

describe('IP addresses (net.ParseIP)', () => {
  it.each([
    '0.0.0.0',
    '10.9.8.7',
    '255.255.255.255',
    '010.001.1.1',
    '::',
    '::1',
    '1::',
    '2001:db8::ffff',
    '2001:0db8:0000:0000:0000:ff00:0042:8329',
    '::ffff:1.2.3.4',
    '1:2:3:4:5:6:1.2.3.4',
    'fe80::1:2',
    '00001::1',
  ])('accepts %s', (v) => expect(isValidIP(v)).toEqual([]));
  it.each([
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '1.2.3.-1',
    ' 1.2.3.4',
    'a.b.c.d',
    ':::',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    '12345::1',
    '1:2:3:4:5:6:7:8::',
    'fe80::1%eth0',
    '1.2.3.4::',
    '::1.2.3',
    '1:',
    ':1',
    'localhost',
  ])('rejects %j', (v) =>
    expect(isValidIP(v)).toEqual(['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']),
  );

  it('parses into 16 bytes with IPv4 mapped', () => {
    expect(Array.from(parseIP('1.2.3.4') ?? [])).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    expect(Array.from(parseIP('1::2') ?? [])).toEqual([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
  });

  it('distinguishes families', () => {
    const p = new FieldPath('spec', 'clusterIP');
    expect(isValidIPv4Address(p, '1.2.3.4')).toEqual([]);
    expect(isValidIPv4Address(p, '::ffff:1.2.3.4')).toEqual([]);
    expect(isValidIPv4Address(p, '::1').map(fieldErrorToString)).toEqual([
      'spec.clusterIP: Invalid value: "::1": must be a valid IPv4 address',
    ]);
    expect(isValidIPv6Address(p, '::1')).toEqual([]);
    expect(isValidIPv6Address(p, '1.2.3.4').map(fieldErrorToString)).toEqual([
      'spec.clusterIP: Invalid value: "1.2.3.4": must be a valid IPv6 address',
    ]);
  });
});

describe('name validators', () => {
  it.each<[string, string, boolean, string[]]>([
    ['subdomain name', 'my.name', false, []],
    ['subdomain name bad', 'My', false, [SUBDOMAIN_MSG]],
    ['subdomain prefix trailing dash', 'my-name-', true, []],
    ['subdomain prefix single dash char', 'a-', true, []],
    ['subdomain name trailing dash', 'my-name-', false, [SUBDOMAIN_MSG]],
    ['subdomain prefix bad', 'My-', true, [SUBDOMAIN_MSG]],
    ['subdomain prefix lone dash', '-', true, [SUBDOMAIN_MSG]],
  ])('%s', (_n, v, prefix, want) => expect(nameIsDNSSubdomain(v, prefix)).toEqual(want));

  it('label and 1035 validators', () => {
    expect(nameIsDNSLabel('ns-', true)).toEqual([]);
    expect(nameIsDNSLabel('a.b', false)).toEqual([LABEL_MSG]);
    expect(nameIsDNS1035Label('svc-', true)).toEqual([]);
    expect(nameIsDNS1035Label('1svc', false)).toEqual([DNS1035_MSG]);
  });

  it.each<[string, boolean, string[]]>([
    ['name', false, []],
    ['system:admin', false, []],
    ['.', false, ["may not be '.'"]],
    ['..', false, ["may not be '..'"]],
    ['...', false, []],
    ['a/b', false, ["may not contain '/'"]],
    ['a%b', false, ["may not contain '%'"]],
    ['a/%b', false, ["may not contain '/'", "may not contain '%'"]],
    ['.', true, []],
    ['a/', true, ["may not contain '/'"]],
  ])('path segment %j prefix=%p', (v, prefix, want) => {
    expect(validatePathSegmentName(v, prefix)).toEqual(want);
    expect(prefix ? isValidPathSegmentPrefix(v) : isValidPathSegmentName(v)).toEqual(want);
  });
});

describe('validateLabels', () => {
  const path = new FieldPath('metadata', 'labels');
  it('accepts valid labels and undefined', () => {
    expect(validateLabels({ app: 'web', 'example.com/tier': '', 'a.b/c_d': 'x.y-z' }, path)).toEqual([]);
    expect(validateLabels(undefined, path)).toEqual([]);
  });
  it('reports bad keys and values at the labels path, keys sorted', () => {
    const errs = validateLabels({ 'b/c/d': 'ok', 'bad key': 'v', good: '-bad' }, path).map(fieldErrorToString);
    expect(errs).toEqual([
      `metadata.labels: Invalid value: "b/c/d": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      `metadata.labels: Invalid value: "bad key": ${QNAME_MSG}`,
      `metadata.labels: Invalid value: "-bad": ${LABEL_VALUE_MSG}`,
    ]);
  });
  it('reports non-string values instead of crashing', () => {
    const errs = validateLabels({ a: 5 } as unknown as Record<string, string>, path).map(fieldErrorToString);
    expect(errs).toEqual(['metadata.labels[a]: Invalid value: 5: must be a string']);
  });
});

describe('validateAnnotations', () => {
  const path = new FieldPath('metadata', 'annotations');
  it('accepts any value and upper-case keys', () => {
    expect(validateAnnotations({ 'Example.com/Key': 'anything goes: ü, spaces', a: '' }, path)).toEqual([]);
  });
  it('rejects bad keys', () => {
    expect(validateAnnotations({ 'a b': 'x' }, path).map(fieldErrorToString)).toEqual([
      `metadata.annotations: Invalid value: "a b": ${QNAME_MSG}`,
    ]);
  });
  it('enforces the 256 KiB total', () => {
    expect(validateAnnotations({ a: 'x'.repeat(256 * 1024 - 1) }, path)).toEqual([]);
    expect(validateAnnotations({ a: 'x'.repeat(256 * 1024) }, path).map(fieldErrorToString)).toEqual([
      'metadata.annotations: Too long: must have at most 262144 bytes',
    ]);
    // Sizes are counted in UTF-8 bytes, as Go's len() does.
    expect(validateAnnotations({ a: 'é'.repeat(128 * 1024) }, path)).toHaveLength(1);
  });
});

describe('isFullyQualifiedDomainName', () => {
  const p = new FieldPath('spec', 'host');
  it.each(['example.com', 'a.b.c', 'example.com.', 'x-1.y'])('accepts %s', (v) => {
    expect(isFullyQualifiedDomainName(p, v)).toEqual([]);
  });
  it.each<[string, string]>([
    ['', 'spec.host: Required value'],
    ['example', 'spec.host: Invalid value: "example": should be a domain with at least two segments separated by dots'],
    ['Example.com', `spec.host: Invalid value: "Example.com": ${SUBDOMAIN_MSG}`],
    [`${'a'.repeat(64)}.com`, `spec.host: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`],
  ])('rejects %j', (v, msg) => {
    expect(isFullyQualifiedDomainName(p, v).map(fieldErrorToString)).toEqual([msg]);
  });
});

describe('isDomainPrefixedPath', () => {
  const p = new FieldPath('spec', 'controller');
  it.each(['acme.io/foo', 'example.com/a/b-c_d~e%20', 'a/b'])('accepts %s', (v) => {
    expect(isDomainPrefixedPath(p, v)).toEqual([]);
  });
  it.each<[string, string[]]>([
    ['', ['spec.controller: Required value']],
    ['acme.io', ['spec.controller: Invalid value: "acme.io": must be a domain-prefixed path (such as "acme.io/foo")']],
    ['/foo', ['spec.controller: Invalid value: "/foo": must be a domain-prefixed path (such as "acme.io/foo")']],
    [
      'acme.io/',
      ['spec.controller: Invalid value: "acme.io/": must be a domain-prefixed path (such as "acme.io/foo")'],
    ],
    ['Acme.io/foo', [`spec.controller: Invalid value: "Acme.io": ${SUBDOMAIN_MSG}`]],
    [
      'acme.io/a b',
      [
        "spec.controller: Invalid value: \"a b\": Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
      ],
    ],
  ])('rejects %j', (v, want) => {
    expect(isDomainPrefixedPath(p, v).map(fieldErrorToString)).toEqual(want);
  });
});
