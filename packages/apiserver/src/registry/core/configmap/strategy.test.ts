import { type ApiObject, type ConfigMap, ConfigMapKind, type FieldError } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { configMapStrategy, validateConfigMap } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const ctx: RequestContext = { namespace: 'default', now: () => 0 };

describe('validateConfigMap', () => {
  it.each<[string, Partial<ConfigMap>, string[]]>([
    ['valid keys', { data: { 'a.b_c-d': 'x' }, binaryData: { bin: 'AAE=' } }, []],
    ['bad keys', { data: { 'a/b': 'x', '..': 'y' } }, ['FieldValueInvalid data[a/b]', 'FieldValueInvalid data[..]']],
    ['a key in both maps', { data: { k: 'x' }, binaryData: { k: 'AA==' } }, ['FieldValueInvalid binaryData[k]']],
    ['more than 1 MiB', { data: { big: 'x'.repeat(1024 * 1024) } }, ['FieldValueTooLong ']],
  ])('%s', (_name, cm, expected) => {
    expect(show(validateConfigMap({ metadata: { name: 'c' }, ...cm }))).toEqual(expected);
  });
});

describe('immutable config maps', () => {
  const strategy = configMapStrategy(ConfigMapKind);
  const old: ConfigMap = { metadata: { name: 'c' }, immutable: true, data: { a: '1' } };
  it.each<[string, ConfigMap, string[]]>([
    ['metadata changes', { ...old, metadata: { name: 'c', labels: { x: 'y' } } }, []],
    ['data changes', { ...old, data: { a: '2' } }, ['FieldValueForbidden data']],
    ['turning immutability off', { ...old, immutable: false }, ['FieldValueForbidden immutable']],
  ])('%s', (_name, next, expected) => {
    expect(show(strategy.validateUpdate(ctx, next as ApiObject, old as ApiObject))).toEqual(expected);
  });
});
