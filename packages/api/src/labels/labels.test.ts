import {
  convertSelectorToLabelsMap,
  labelsInAllowList,
  cloneAndAddLabel,
  cloneAndRemoveLabel,
  cloneSelectorAndAddLabel,
  formatLabels,
  labelsConflict,
  labelsEqual,
  labelsToString,
  mergeLabels,
  selectorHasLabel,
} from './labels';
import { type LabelSelector } from './label-selector';

describe('label sets', () => {
  it.each<[Record<string, string> | undefined, string, string]>([
    [undefined, '', '<none>'],
    [{}, '', '<none>'],
    [{ b: '2', a: '1' }, 'a=1,b=2', 'a=1,b=2'],
    [{ 'example.com/x': '' }, 'example.com/x=', 'example.com/x='],
  ])('%j prints as %j / %j', (labels, str, formatted) => {
    expect(labelsToString(labels)).toBe(str);
    expect(formatLabels(labels)).toBe(formatted);
  });

  it('merges with the second set winning', () => {
    expect(mergeLabels({ a: '1', b: '2' }, { b: '3', c: '4' })).toEqual({ a: '1', b: '3', c: '4' });
    expect(mergeLabels(undefined, undefined)).toEqual({});
  });

  it.each<[Record<string, string> | undefined, Record<string, string> | undefined, boolean]>([
    [{ a: '1' }, { a: '2' }, true],
    [{ a: '1' }, { a: '1', b: '2' }, false],
    [{ a: '1', b: '2', c: '3' }, { c: '4' }, true],
    [{}, { a: '1' }, false],
    [undefined, { a: '1' }, false],
  ])('conflict %j %j → %p', (a, b, want) => {
    expect(labelsConflict(a, b)).toBe(want);
    expect(labelsConflict(b, a)).toBe(want);
  });

  it.each<[Record<string, string> | undefined, Record<string, string> | undefined, boolean]>([
    [{ a: '1' }, { a: '1' }, true],
    [{ a: '1' }, { a: '2' }, false],
    [{ a: '1' }, { b: '1' }, false],
    [{ a: '1' }, { a: '1', b: '2' }, false],
    [undefined, {}, true],
    [{}, undefined, true],
  ])('equal %j %j → %p', (a, b, want) => {
    expect(labelsEqual(a, b)).toBe(want);
  });

  it('adds and removes labels on copies', () => {
    const base = { app: 'web' };
    const added = cloneAndAddLabel(base, 'pod-template-hash', 'abc');
    expect(added).toEqual({ app: 'web', 'pod-template-hash': 'abc' });
    expect(base).toEqual({ app: 'web' });
    expect(cloneAndAddLabel(base, '', 'x')).toEqual({ app: 'web' });
    expect(cloneAndAddLabel(undefined, 'a', 'b')).toEqual({ a: 'b' });
    expect(cloneAndRemoveLabel(added, 'app')).toEqual({ 'pod-template-hash': 'abc' });
    expect(added).toEqual({ app: 'web', 'pod-template-hash': 'abc' });
  });

  it('adds a label to a selector copy', () => {
    const sel: LabelSelector = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'a', operator: 'Exists' }] };
    const out = cloneSelectorAndAddLabel(sel, 'pod-template-hash', 'abc');
    expect(out).toEqual({
      matchLabels: { app: 'web', 'pod-template-hash': 'abc' },
      matchExpressions: [{ key: 'a', operator: 'Exists' }],
    });
    expect(sel.matchLabels).toEqual({ app: 'web' });
    expect(out.matchExpressions).not.toBe(sel.matchExpressions);
    expect(cloneSelectorAndAddLabel(undefined, 'k', 'v')).toEqual({ matchLabels: { k: 'v' } });
    expect(cloneSelectorAndAddLabel(sel, '', 'v')).toEqual(sel);
    expect(selectorHasLabel(out, 'pod-template-hash')).toBe(true);
    expect(selectorHasLabel(sel, 'pod-template-hash')).toBe(false);
    expect(selectorHasLabel(undefined, 'x')).toBe(false);
  });
});

describe('convertSelectorToLabelsMap', () => {
  it.each<[string, Record<string, string>]>([
    ['', {}],
    ['a=b', { a: 'b' }],
    [' a = b , c=d', { a: 'b', c: 'd' }],
    ['node.platform/role=worker,zone=', { 'node.platform/role': 'worker', zone: '' }],
  ])('%j', (s, want) => expect(convertSelectorToLabelsMap(s)).toEqual(want));

  it.each<[string, string | RegExp]>([
    ['a', 'invalid selector: [a]'],
    ['a=b=c', 'invalid selector: [a b c]'],
    ['a=b,', 'invalid selector: []'],
    ['a b=c', /^invalid label key "a b": /],
    ['a=b c', /^invalid label value: "b c": at key: "a": /],
  ])('rejects %j', (s, msg) => {
    expect(() => convertSelectorToLabelsMap(s)).toThrow(msg);
  });
});

describe('labelsInAllowList', () => {
  it.each<[Record<string, string> | undefined, Record<string, string> | undefined, boolean]>([
    [{ a: '1' }, {}, true],
    [{ a: '1' }, undefined, true],
    [{ a: '1' }, { a: '1', b: '2' }, true],
    [{}, { a: '1' }, true],
    [undefined, { a: '1' }, true],
    [{ a: '2' }, { a: '1' }, false],
    [{ c: '1' }, { a: '1' }, false],
  ])('%j in %j → %p', (labels, allow, want) => expect(labelsInAllowList(labels, allow)).toBe(want));
});
