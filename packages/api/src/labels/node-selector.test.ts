import {
  matchesNodeSelectorMap,
  matchNodeSelector,
  nodeSelectorRequirementsAsFieldSelector,
  nodeSelectorRequirementsAsSelector,
  NodeSelectorMatcher,
  type NodeLike,
  type NodeSelectorLike,
  type NodeSelectorOperator,
  type NodeSelectorRequirementLike,
} from './node-selector';
import { isLabelSelectorParseError } from './selector';

const node = (name: string, labels: Record<string, string> = {}): NodeLike => ({ metadata: { name, labels } });
const n1 = node('n1', { zone: 'a', 'cpu-count': '8', gpu: '' });

describe('nodeSelectorRequirementsAsSelector', () => {
  it.each<[NodeSelectorRequirementLike[], string]>([
    [[{ key: 'zone', operator: 'In', values: ['b', 'a'] }], 'zone in (a,b)'],
    [[{ key: 'zone', operator: 'NotIn', values: ['c'] }], 'zone notin (c)'],
    [[{ key: 'gpu', operator: 'Exists' }], 'gpu'],
    [[{ key: 'gpu', operator: 'DoesNotExist' }], '!gpu'],
    [
      [
        { key: 'cpu-count', operator: 'Gt', values: ['4'] },
        { key: 'cpu-count', operator: 'Lt', values: ['16'] },
      ],
      'cpu-count>4,cpu-count<16',
    ],
  ])('%j → %s', (reqs, want) => {
    expect(nodeSelectorRequirementsAsSelector(reqs).toString()).toBe(want);
  });

  it('no requirements select nothing', () => {
    expect(nodeSelectorRequirementsAsSelector([]).matches({})).toBe(false);
    expect(nodeSelectorRequirementsAsSelector(undefined).isSelectable()).toBe(false);
  });

  it.each<[NodeSelectorRequirementLike, string]>([
    [
      { key: 'a', operator: 'Equals' as NodeSelectorOperator, values: ['x'] },
      '"Equals" is not a valid node selector operator',
    ],
    [{ key: 'a', operator: 'Gt', values: ['x'] }, "for 'Gt', 'Lt' operators, the value must be an integer"],
    [{ key: 'a', operator: 'Gt', values: ['1', '2'] }, "for 'Gt', 'Lt' operators, exactly one value is required"],
    [{ key: 'a', operator: 'In', values: [] }, "for 'in', 'notin' operators, values set can't be empty"],
    [{ key: 'a b', operator: 'Exists' }, expect.stringMatching(/^invalid label key "a b"/) as unknown as string],
  ])('rejects %j', (req, msg) => {
    let caught: unknown;
    try {
      nodeSelectorRequirementsAsSelector([req]);
    } catch (err) {
      caught = err;
    }
    expect(isLabelSelectorParseError(caught)).toBe(true);
    expect((caught as Error).message).toEqual(msg);
  });
});

describe('nodeSelectorRequirementsAsFieldSelector', () => {
  it('supports In and NotIn on metadata.name with one value', () => {
    const s = nodeSelectorRequirementsAsFieldSelector([{ key: 'metadata.name', operator: 'In', values: ['n1'] }]);
    expect(s.toString()).toBe('metadata.name=n1');
    expect(s.matches({ 'metadata.name': 'n1' })).toBe(true);
    const t = nodeSelectorRequirementsAsFieldSelector([{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }]);
    expect(t.toString()).toBe('metadata.name!=n1');
    expect(nodeSelectorRequirementsAsFieldSelector([]).matches({})).toBe(false);
  });

  it.each<[NodeSelectorRequirementLike, string]>([
    [
      { key: 'metadata.name', operator: 'In', values: ['a', 'b'] },
      'unexpected number of value (2) for node field selector operator "In"',
    ],
    [
      { key: 'metadata.name', operator: 'NotIn' },
      'unexpected number of value (0) for node field selector operator "NotIn"',
    ],
    [{ key: 'metadata.name', operator: 'Exists' }, '"Exists" is not a valid node field selector operator'],
    [
      { key: 'spec.unschedulable', operator: 'In', values: ['true'] },
      '"spec.unschedulable" is not a valid field selector key',
    ],
  ])('rejects %j', (req, msg) => {
    expect(() => nodeSelectorRequirementsAsFieldSelector([req])).toThrow(msg);
  });
});

describe('NodeSelectorMatcher', () => {
  it.each<[string, NodeSelectorLike | null | undefined, NodeLike | undefined, boolean]>([
    ['null selector', null, n1, false],
    ['no terms', { nodeSelectorTerms: [] }, n1, false],
    ['empty term', { nodeSelectorTerms: [{}] }, n1, false],
    ['empty lists', { nodeSelectorTerms: [{ matchExpressions: [], matchFields: [] }] }, n1, false],
    [
      'label In',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] },
      n1,
      true,
    ],
    [
      'label In miss',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }] },
      n1,
      false,
    ],
    [
      'Gt',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'cpu-count', operator: 'Gt', values: ['4'] }] }] },
      n1,
      true,
    ],
    [
      'Lt',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'cpu-count', operator: 'Lt', values: ['4'] }] }] },
      n1,
      false,
    ],
    [
      'Exists on empty value',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }] },
      n1,
      true,
    ],
    [
      'field name',
      { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] },
      n1,
      true,
    ],
    [
      'field name miss',
      { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }] },
      n1,
      false,
    ],
    [
      'labels and fields ANDed',
      {
        nodeSelectorTerms: [
          {
            matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }],
            matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }],
          },
        ],
      },
      n1,
      false,
    ],
    [
      'terms ORed',
      {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
        ],
      },
      n1,
      true,
    ],
    [
      'an invalid term does not stop a valid one',
      {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'zone', operator: 'Bad' as NodeSelectorOperator }] },
          { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
        ],
      },
      n1,
      true,
    ],
    [
      'node without labels',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }] },
      { metadata: { name: 'x' } },
      true,
    ],
    [
      'undefined node',
      { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }] },
      undefined,
      false,
    ],
  ])('%s', (_n, selector, nd, want) => {
    expect(new NodeSelectorMatcher(selector).matches(nd)).toBe(want);
    expect(matchNodeSelector(selector, nd)).toBe(want);
  });

  it('reports why terms were dropped', () => {
    const m = new NodeSelectorMatcher({
      nodeSelectorTerms: [
        { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
        { matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['x'] }] },
      ],
    });
    expect(m.errors).toEqual(['nodeSelectorTerms[1]: "metadata.uid" is not a valid field selector key']);
    expect(m.matchesLabelsAndFields({ zone: 'a' }, { 'metadata.name': 'n' })).toBe(true);
  });
});

describe('matchesNodeSelectorMap', () => {
  it.each<[Record<string, string> | undefined, Record<string, string> | undefined, boolean]>([
    [undefined, { a: '1' }, true],
    [{}, undefined, true],
    [{ a: '1' }, { a: '1', b: '2' }, true],
    [{ a: '1' }, { a: '2' }, false],
    [{ a: '1' }, undefined, false],
    [{ a: '1', b: '2' }, { a: '1' }, false],
    [{ constructor: 'x' }, {}, false],
  ])('%j on %j → %p', (sel, labels, want) => expect(matchesNodeSelectorMap(sel, labels)).toBe(want));
});
