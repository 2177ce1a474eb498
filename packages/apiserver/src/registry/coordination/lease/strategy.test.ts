import { type FieldError } from '@platform/api';

import { validateLease } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('validateLease', () => {
  it.each<[string, object, string[]]>([
    ['a valid lease', { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 }, []],
    ['a zero duration', { leaseDurationSeconds: 0 }, ['FieldValueInvalid spec.leaseDurationSeconds']],
    ['negative transitions', { leaseTransitions: -1 }, ['FieldValueInvalid spec.leaseTransitions']],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateLease({ metadata: { name: 'l' }, spec }))).toEqual(expected);
  });
});
