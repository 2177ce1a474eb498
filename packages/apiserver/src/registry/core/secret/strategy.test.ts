import { type ApiObject, type FieldError, type Secret, SecretKind } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { secretStrategy, validateSecret } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const ctx: RequestContext = { namespace: 'default', now: () => 0 };
const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('validateSecret', () => {
  it.each<[string, Partial<Secret>, string[]]>([
    ['an Opaque secret', { type: 'Opaque', data: { a: b64('x') } }, []],
    ['a bad key', { type: 'Opaque', data: { 'a b': b64('x') } }, ['FieldValueInvalid data[a b]']],
    [
      'a TLS secret without its key',
      { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') } },
      ['FieldValueRequired data[tls.key]'],
    ],
    [
      'a service account token without its annotation',
      { type: 'kubernetes.io/service-account-token' },
      ['FieldValueRequired metadata.annotations[kubernetes.io/service-account.name]'],
    ],
    [
      'a docker config that is not JSON',
      { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{') } },
      ['FieldValueInvalid data[.dockerconfigjson]'],
    ],
    ['more than 1 MiB', { data: { big: b64('x'.repeat(1024 * 1024 + 1)) } }, ['FieldValueTooLong data']],
  ])('%s', (_name, s, expected) => {
    expect(show(validateSecret({ metadata: { name: 's' }, ...s }))).toEqual(expected);
  });
});

describe('secret strategy', () => {
  const strategy = secretStrategy(SecretKind);
  it('merges stringData into data', () => {
    const s: Secret = { metadata: { name: 's' }, data: { a: b64('1') }, stringData: { b: 'two' } };
    strategy.prepareForCreate(ctx, s as ApiObject);
    expect(s).toEqual({ metadata: { name: 's' }, data: { a: b64('1'), b: b64('two') } });
  });

  it('keeps the type and the data of an immutable secret', () => {
    const old: Secret = { metadata: { name: 's' }, type: 'Opaque', immutable: true, data: { a: b64('1') } };
    const next: Secret = { ...old, type: 'kubernetes.io/basic-auth', data: { username: b64('u') } };
    expect(show(strategy.validateUpdate(ctx, next as ApiObject, old as ApiObject))).toEqual([
      'FieldValueInvalid type',
      'FieldValueForbidden data',
    ]);
  });
});
