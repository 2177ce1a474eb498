import { FieldPath, fieldErrorToString } from '../validation/field-errors';
import {
  formatLabelSelector,
  labelSelectorAsSelector,
  matchesLabelSelector,
  parseToLabelSelector,
  validateLabelSelector,
  type LabelSelector,
  type LabelSelectorOperator,
} from './label-selector';
import { isLabelSelectorParseError, type Labels } from './selector';

describe('labelSelectorAsSelector', () => {
  it.each<[string, LabelSelector | null | undefined, string]>([
    ['null selects nothing', null, ''],
    ['empty selects everything', {}, ''],
    ['empty parts select everything', { matchLabels: {}, matchExpressions: [] }, ''],
    ['match labels', { matchLabels: { b: '2', a: '1' } }, 'a=1,b=2'],
    [
      'expressions',
      {
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['web', 'api'] },
          { key: 'env', operator: 'NotIn', values: ['dev'] },
          { key: 'canary', operator: 'DoesNotExist' },
          { key: 'app', operator: 'Exists' },
        ],
      },
      'app,!canary,env notin (dev),tier in (api,web)',
    ],
    [
      'labels and expressions together',
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'app', operator: 'Exists' }] },
      'app=web,app',
    ],
  ])('%s', (_n, ls, want) => {
    expect(labelSelectorAsSelector(ls).toString()).toBe(want);
  });

  it('null and empty differ in matching', () => {
    expect(labelSelectorAsSelector(null).matches({ a: 'b' })).toBe(false);
    expect(labelSelectorAsSelector(undefined).isSelectable()).toBe(false);
    expect(labelSelectorAsSelector({}).matches({ a: 'b' })).toBe(true);
  });

  it.each<[string, LabelSelector, string | RegExp]>([
    [
      'unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'Gt' as LabelSelectorOperator, values: ['1'] }] },
      '"Gt" is not a valid pod selector operator',
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      "for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      'values set must be empty for exists and does not exist',
    ],
    ['bad key', { matchLabels: { 'a b': 'x' } }, /^invalid label key "a b": /],
    ['bad value', { matchLabels: { a: 'x y' } }, /^invalid label value: "x y": at key: "a": /],
  ])('rejects %s', (_n, ls, msg) => {
    let caught: unknown;
    try {
      labelSelectorAsSelector(ls);
    } catch (err) {
      caught = err;
    }
    expect(isLabelSelectorParseError(caught)).toBe(true);
    if (typeof msg === 'string') expect((caught as Error).message).toBe(msg);
    else expect((caught as Error).message).toMatch(msg);
  });
});

describe('formatLabelSelector', () => {
  it.each<[LabelSelector | null, string]>([
    [null, '<none>'],
    [{}, '<none>'],
    [{ matchLabels: { a: 'b' } }, 'a=b'],
    [{ matchExpressions: [{ key: 'a', operator: 'In' }] }, '<error>'],
  ])('%j → %s', (ls, want) => expect(formatLabelSelector(ls)).toBe(want));
});

describe('matchesLabelSelector', () => {
  it.each<[LabelSelector | null, Labels | undefined, boolean]>([
    [null, { a: 'b' }, false],
    [{}, { a: 'b' }, true],
    [{}, undefined, true],
    [{ matchLabels: { a: 'b' } }, { a: 'b', c: 'd' }, true],
    [{ matchLabels: { a: 'b' } }, { a: 'c' }, false],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['x', 'y'] }] }, { a: 'y' }, true],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['x'] }] }, {}, true],
    [{ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: '' }, false],
    [{ matchExpressions: [{ key: 'a', operator: 'In' }] }, { a: 'x' }, false],
  ])('%j with %j → %p', (ls, labels, want) => expect(matchesLabelSelector(ls, labels)).toBe(want));
});

describe('parseToLabelSelector', () => {
  it('splits requirements into matchLabels and matchExpressions', () => {
    expect(parseToLabelSelector('a=1,b==2,c!=3,d in (x,y),e notin (z),f,!g')).toEqual({
      matchLabels: { a: '1', b: '2' },
      matchExpressions: [
        { key: 'c', operator: 'NotIn', values: ['3'] },
        { key: 'd', operator: 'In', values: ['x', 'y'] },
        { key: 'e', operator: 'NotIn', values: ['z'] },
        { key: 'f', operator: 'Exists' },
        { key: 'g', operator: 'DoesNotExist' },
      ],
    });
  });
  it('round-trips through labelSelectorAsSelector', () => {
    const s = 'a=1,d in (x,y),!g';
    expect(labelSelectorAsSelector(parseToLabelSelector(s)).toString()).toBe(s);
  });
  it('rejects gt/lt and bad syntax', () => {
    expect(() => parseToLabelSelector('a>1')).toThrow('"gt" isn\'t supported in label selectors');
    expect(() => parseToLabelSelector('a in')).toThrow(/^unable to parse requirement/);
  });
});

describe('validateLabelSelector', () => {
  const path = new FieldPath('spec', 'selector');
  const v = (ls: LabelSelector | null | undefined): string[] => validateLabelSelector(ls, path).map(fieldErrorToString);

  it.each<[string, LabelSelector | null | undefined]>([
    ['null', null],
    ['undefined', undefined],
    ['empty', {}],
    [
      'full',
      {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'a', operator: 'In', values: ['b', ''] },
          { key: 'c', operator: 'Exists' },
        ],
      },
    ],
  ])('accepts %s', (_n, ls) => expect(v(ls)).toEqual([]));

  it.each<[string, LabelSelector, string[]]>([
    [
      'In without values',
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
    ],
    [
      'NotIn with empty values',
      { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] },
      [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      [
        "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ],
    ],
    [
      'DoesNotExist with values',
      { matchExpressions: [{ key: 'a', operator: 'DoesNotExist', values: ['x'] }] },
      [
        "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ],
    ],
    [
      'bad operator',
      { matchExpressions: [{ key: 'a', operator: 'Equals' as LabelSelectorOperator, values: ['x'] }] },
      ['spec.selector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'],
    ],
    [
      'bad key',
      { matchExpressions: [{ key: '', operator: 'Exists' }] },
      [
        'spec.selector.matchExpressions[0].key: Invalid value: "": name part must be non-empty',
        expect.stringMatching(
          /^spec\.selector\.matchExpressions\[0\]\.key: Invalid value: "": name part must consist of/,
        ) as unknown as string,
      ],
    ],
    [
      'bad value',
      { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', 'not ok'] }] },
      [
        expect.stringMatching(
          /^spec\.selector\.matchExpressions\[0\]\.values\[1\]: Invalid value: "not ok": a valid label must be/,
        ) as unknown as string,
      ],
    ],
    [
      'bad matchLabels',
      { matchLabels: { a: '-' } },
      [expect.stringMatching(/^spec\.selector\.matchLabels: Invalid value: "-": a valid label/) as unknown as string],
    ],
    [
      'matchLabels not a map',
      { matchLabels: 'a=b' as unknown as Record<string, string> },
      ['spec.selector.matchLabels: Invalid value: "a=b": must be a map of strings'],
    ],
    [
      'matchExpressions not a list',
      { matchExpressions: {} as unknown as [] },
      ['spec.selector.matchExpressions: Invalid value: {}: must be a list'],
    ],
  ])('rejects %s', (_n, ls, want) => expect(v(ls)).toEqual(want));
});
