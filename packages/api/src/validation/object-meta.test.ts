import { FieldPath, fieldErrorToString } from './field-errors';
import { nameIsDNSSubdomain, validatePathSegmentName } from './names';
import {
  semanticEqual,
  validateEnum,
  validateFieldManager,
  validateImmutableField,
  validateNoNewFinalizers,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type ObjectMetaLike,
} from './object-meta';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const namespaced = { namespaced: true, nameValidator: nameIsDNSSubdomain };
const cluster = { namespaced: false, nameValidator: nameIsDNSSubdomain };
const msgs = (m: ObjectMetaLike | undefined, o = namespaced): string[] =>
  validateObjectMeta(m, o).map(fieldErrorToString);

describe('validateObjectMeta', () => {
  it.each<[string, ObjectMetaLike, typeof namespaced]>([
    ['minimal namespaced', { name: 'a', namespace: 'default' }, namespaced],
    ['minimal cluster-scoped', { name: 'a' }, cluster],
    ['generateName alone', { generateName: 'web-', name: 'web-x7k2p', namespace: 'ns' }, namespaced],
    [
      'everything set',
      {
        name: 'a.b',
        namespace: 'ns',
        uid: '1234',
        resourceVersion: '42',
        generation: 3,
        labels: { app: 'web' },
        annotations: { 'example.com/x': 'y' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'u2', controller: false },
        ],
        finalizers: ['example.com/cleanup', 'orphan', 'platform'],
        managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1' }],
      },
      namespaced,
    ],
    ['foregroundDeletion finalizer', { name: 'a', finalizers: ['foregroundDeletion'] }, cluster],
    ['path segment names', { name: 'system:admin' }, { namespaced: false, nameValidator: validatePathSegmentName }],
    ['empty namespace on cluster kind', { name: 'a', namespace: '' }, cluster],
    [
      'null optional fields',
      { name: 'a', clusterName: null as unknown as string, labels: null as unknown as Record<string, string> },
      cluster,
    ],
    ['valid clusterName', { name: 'a', clusterName: 'east' }, cluster],
  ])('accepts %s', (_n, meta, opts) => {
    expect(msgs(meta, opts)).toEqual([]);
  });

  it.each<[string, ObjectMetaLike | undefined, typeof namespaced, string[]]>([
    ['missing metadata', undefined, cluster, ['metadata.name: Required value: name or generateName is required']],
    ['no name', { namespace: 'ns' }, namespaced, ['metadata.name: Required value: name or generateName is required']],
    [
      'bad name',
      { name: 'A_B', namespace: 'ns' },
      namespaced,
      [`metadata.name: Invalid value: "A_B": ${SUBDOMAIN_MSG}`],
    ],
    [
      'bad generateName',
      { generateName: 'Web-', name: 'Web-abcde', namespace: 'ns' },
      namespaced,
      [
        `metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_MSG}`,
        `metadata.name: Invalid value: "Web-abcde": ${SUBDOMAIN_MSG}`,
      ],
    ],
    ['namespace required', { name: 'a' }, namespaced, ['metadata.namespace: Required value']],
    [
      'bad namespace',
      { name: 'a', namespace: 'a.b' },
      namespaced,
      [`metadata.namespace: Invalid value: "a.b": ${LABEL_MSG}`],
    ],
    [
      'namespace forbidden',
      { name: 'a', namespace: 'ns' },
      cluster,
      ['metadata.namespace: Forbidden: not allowed on this type'],
    ],
    [
      'negative generation',
      { name: 'a', generation: -1 },
      cluster,
      ['metadata.generation: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'negative resourceVersion',
      { name: 'a', resourceVersion: '-1' },
      cluster,
      ['metadata.resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax'],
    ],
    [
      'non-numeric resourceVersion',
      { name: 'a', resourceVersion: 'abc' },
      cluster,
      ['metadata.resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'],
    ],
    [
      'bad label',
      { name: 'a', labels: { app: 'bad value' } },
      cluster,
      [
        "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ],
    ],
    [
      'labels not a map',
      { name: 'a', labels: ['x'] as unknown as Record<string, string> },
      cluster,
      ['metadata.labels: Invalid value: []string{"x"}: must be a map of strings'],
    ],
    [
      'annotations too big',
      { name: 'a', annotations: { k: 'v'.repeat(262144) } },
      cluster,
      ['metadata.annotations: Too long: must have at most 262144 bytes'],
    ],
    [
      'owner reference missing fields',
      { name: 'a', ownerReferences: [{}] },
      cluster,
      [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
      ],
    ],
    [
      'owner apiVersion without version',
      { name: 'a', ownerReferences: [{ apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }] },
      cluster,
      ['metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty'],
    ],
    [
      'two controllers',
      {
        name: 'a',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'K', name: 'one', uid: '1', controller: true },
          { apiVersion: 'v1', kind: 'K', name: 'two', uid: '2', controller: true },
        ],
      },
      cluster,
      [
        expect.stringContaining(
          'metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"K","name":"one","uid":"1","controller":true},',
        ) as unknown as string,
      ],
    ],
    [
      'event owner banned',
      { name: 'a', ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }] },
      cluster,
      [
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
      ],
    ],
    [
      'bad finalizer',
      { name: 'a', finalizers: ['a/b/c'] },
      cluster,
      [
        "metadata.finalizers: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
    [
      'conflicting finalizers',
      { name: 'a', finalizers: ['orphan', 'foregroundDeletion'] },
      cluster,
      [
        'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
      ],
    ],
    [
      'finalizers not a list',
      { name: 'a', finalizers: 'x' as unknown as string[] },
      cluster,
      ['metadata.finalizers: Invalid value: "x": must be a list'],
    ],
    [
      'bad managed fields',
      { name: 'a', managedFields: [{ manager: 'm', operation: 'Patch', fieldsType: 'FieldsV2' }] },
      cluster,
      [
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
      ],
    ],
    [
      'name of wrong type',
      { name: 5 as unknown as string },
      cluster,
      ['metadata.name: Invalid value: 5: must be a string'],
    ],
    [
      'namespace of wrong type',
      { name: 'a', namespace: 5 as unknown as string },
      namespaced,
      ['metadata.namespace: Invalid value: 5: must be a string'],
    ],
    [
      'generateName of wrong type',
      { name: 'a', generateName: 5 as unknown as string },
      cluster,
      ['metadata.generateName: Invalid value: 5: must be a string'],
    ],
    [
      'bad clusterName',
      { name: 'a', clusterName: 'Bad' },
      cluster,
      [
        "metadata.clusterName: Invalid value: \"Bad\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    [
      'generation of wrong type',
      { name: 'a', generation: '1' as unknown as number },
      cluster,
      ['metadata.generation: Invalid value: "1": must be a number'],
    ],
    [
      'owner reference not an object',
      { name: 'a', ownerReferences: [5 as unknown as object] },
      cluster,
      ['metadata.ownerReferences: Invalid value: 5: must be an object'],
    ],
    [
      'owner references not a list',
      { name: 'a', ownerReferences: {} as unknown as [] },
      cluster,
      ['metadata.ownerReferences: Invalid value: {}: must be a list'],
    ],
    [
      'finalizer not a string',
      { name: 'a', finalizers: [5 as unknown as string] },
      cluster,
      ['metadata.finalizers: Invalid value: 5: must be a string'],
    ],
    [
      'managed fields not a list',
      { name: 'a', managedFields: {} as unknown as [] },
      cluster,
      ['metadata.managedFields: Invalid value: {}: must be a list'],
    ],
    [
      'managed fields entry not an object',
      { name: 'a', managedFields: [null as unknown as object] },
      cluster,
      ['metadata.managedFields[0]: Invalid value: "null": must be an object'],
    ],
  ])('rejects %s', (_n, meta, opts, want) => {
    expect(msgs(meta, opts)).toEqual(want);
  });

  it('uses a custom root path', () => {
    const errs = validateObjectMeta({}, cluster, new FieldPath('spec', 'template', 'metadata'));
    expect(errs.map(fieldErrorToString)).toEqual([
      'spec.template.metadata.name: Required value: name or generateName is required',
    ]);
  });
});

describe('validateFieldManager', () => {
  const p = new FieldPath('metadata', 'fieldManager');
  it('accepts printable names', () => expect(validateFieldManager('kubectl-client-side-apply', p)).toEqual([]));
  it('rejects long names', () => {
    expect(validateFieldManager('x'.repeat(129), p).map(fieldErrorToString)).toEqual([
      'metadata.fieldManager: Too long: must have at most 128 bytes',
    ]);
  });
  it('rejects control characters naming the position', () => {
    expect(validateFieldManager('ab\ncd', p).map(fieldErrorToString)).toEqual([
      'metadata.fieldManager: Invalid value: "ab\\ncd": invalid character U+000A (at position 2)',
    ]);
  });
});

describe('validateObjectMetaUpdate', () => {
  const old: ObjectMetaLike = {
    name: 'a',
    namespace: 'ns',
    uid: 'u1',
    resourceVersion: '5',
    generation: 2,
    creationTimestamp: '2021-01-01T00:00:00Z',
    finalizers: ['example.com/f'],
  };
  const upd = (m: ObjectMetaLike, o: ObjectMetaLike = old, opts = {}): string[] =>
    validateObjectMetaUpdate(m, o, new FieldPath('metadata'), opts).map(fieldErrorToString);

  it.each<[string, ObjectMetaLike]>([
    ['unchanged', { ...old }],
    ['generation increases', { ...old, generation: 3 }],
    ['labels change', { ...old, labels: { a: 'b' } }],
    ['finalizer removed', { ...old, finalizers: [] }],
    ['same instant in another offset', { ...old, creationTimestamp: '2021-01-01T01:00:00+01:00' }],
  ])('accepts %s', (_n, m) => expect(upd(m)).toEqual([]));

  it.each<[string, ObjectMetaLike, string[]]>([
    ['name changed', { ...old, name: 'b' }, ['metadata.name: Invalid value: "b": field is immutable']],
    ['namespace changed', { ...old, namespace: 'x' }, ['metadata.namespace: Invalid value: "x": field is immutable']],
    ['uid changed', { ...old, uid: 'u2' }, ['metadata.uid: Invalid value: "u2": field is immutable']],
    [
      'creationTimestamp changed',
      { ...old, creationTimestamp: '2021-01-02T00:00:00Z' },
      ['metadata.creationTimestamp: Invalid value: "2021-01-02T00:00:00Z": field is immutable'],
    ],
    [
      'deletionTimestamp set by a client',
      { ...old, deletionTimestamp: '2021-01-02T00:00:00Z' },
      ['metadata.deletionTimestamp: Invalid value: "2021-01-02T00:00:00Z": field is immutable'],
    ],
    [
      'resourceVersion missing',
      { ...old, resourceVersion: '' },
      ['metadata.resourceVersion: Invalid value: "": must be specified for an update'],
    ],
    [
      'generation decremented',
      { ...old, generation: 1 },
      ['metadata.generation: Invalid value: 1: must not be decremented'],
    ],
    [
      'bad new label',
      { ...old, labels: { '-x': 'y' } },
      [expect.stringMatching(/^metadata\.labels: Invalid value: "-x": name part must consist/) as unknown as string],
    ],
  ])('rejects %s', (_n, m, want) => expect(upd(m)).toEqual(want));

  describe('during deletion', () => {
    const deleting: ObjectMetaLike = {
      ...old,
      deletionTimestamp: '2021-01-03T00:00:00Z',
      deletionGracePeriodSeconds: 30,
    };
    it('accepts removing finalizers', () => {
      expect(upd({ ...deleting, finalizers: [] }, deleting)).toEqual([]);
    });
    it('forbids adding finalizers', () => {
      expect(upd({ ...deleting, finalizers: ['example.com/f', 'z', 'b'] }, deleting)).toEqual([
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "z"}',
      ]);
    });
    it('forbids changing or clearing the deletionTimestamp and grace period', () => {
      expect(upd({ ...deleting, deletionTimestamp: '2021-01-04T00:00:00Z' }, deleting)).toEqual([
        'metadata.deletionTimestamp: Invalid value: "2021-01-04T00:00:00Z": field is immutable',
      ]);
      expect(upd({ ...deleting, deletionTimestamp: null, deletionGracePeriodSeconds: 0 }, deleting)).toEqual([
        'metadata.deletionTimestamp: Invalid value: "null": field is immutable',
        'metadata.deletionGracePeriodSeconds: Invalid value: 0: field is immutable',
      ]);
    });
    it('lets the registry start deletion once, and only once', () => {
      expect(upd(deleting, old, { allowDeletionStart: true })).toEqual([]);
      expect(
        upd({ ...deleting, deletionTimestamp: '2021-01-05T00:00:00Z' }, deleting, { allowDeletionStart: true }),
      ).toEqual(['metadata.deletionTimestamp: Invalid value: "2021-01-05T00:00:00Z": field is immutable']);
    });
  });
});

describe('validateEnum', () => {
  it('lists the supported values', () => {
    const p = new FieldPath('spec', 'policy');
    expect(validateEnum('A', ['A', 'B'], p)).toEqual([]);
    expect(validateEnum('C', ['A', 'B'], p).map(fieldErrorToString)).toEqual([
      'spec.policy: Unsupported value: "C": supported values: "A", "B"',
    ]);
  });
});

class Box {
  constructor(readonly v: number) {}
  equals(o: Box): boolean {
    return o.v === this.v;
  }
}

describe('semanticEqual and validateImmutableField', () => {
  it.each<[unknown, unknown, boolean]>([
    [1, 1, true],
    [1, 2, false],
    ['a', 'a', true],
    [null, undefined, true],
    [undefined, null, true],
    [null, 0, false],
    ['', undefined, false],
    [NaN, NaN, true],
    [{ a: 1, b: undefined }, { a: 1 }, true],
    [{ a: 1, b: null }, { a: 1 }, true],
    [{ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] }, true],
    [{ a: [1, { b: 'x' }] }, { a: [1, { b: 'y' }] }, false],
    [[1, 2], [2, 1], false],
    [[1], { 0: 1 }, false],
    [[], undefined, false],
    [new Box(1), new Box(1), true],
    [new Box(1), new Box(2), false],
    [new Box(1), { v: 1 }, false],
  ])('%p vs %p → %p', (a, b, want) => {
    expect(semanticEqual(a, b)).toBe(want);
    expect(semanticEqual(b, a)).toBe(want);
  });

  it('reports a changed immutable field with the new value', () => {
    const p = new FieldPath('spec', 'selector');
    expect(validateImmutableField({ a: 'b' }, { a: 'b' }, p)).toEqual([]);
    expect(validateImmutableField({ a: 'c' }, { a: 'b' }, p).map(fieldErrorToString)).toEqual([
      'spec.selector: Invalid value: {"a":"c"}: field is immutable',
    ]);
    expect(validateImmutableField('x', undefined, p).map(fieldErrorToString)).toEqual([
      'spec.selector: Invalid value: "x": field is immutable',
    ]);
  });

  it('forbids new finalizers', () => {
    const p = new FieldPath('metadata', 'finalizers');
    expect(validateNoNewFinalizers(['a'], ['a', 'b'], p)).toEqual([]);
    expect(validateNoNewFinalizers(undefined, undefined, p)).toEqual([]);
    expect(validateNoNewFinalizers(['c', 'a', 'c'], ['a'], p).map(fieldErrorToString)).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"c"}',
    ]);
  });
});
