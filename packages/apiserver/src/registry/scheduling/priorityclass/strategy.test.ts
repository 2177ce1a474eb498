import { type FieldError, type PriorityClass } from '@platform/api';

import { validatePriorityClass, validatePriorityClassUpdate } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const pc = (name: string, value: number, extra: Partial<PriorityClass> = {}): PriorityClass => ({
  metadata: { name },
  value,
  ...extra,
});

describe('validatePriorityClass', () => {
  it.each<[string, PriorityClass, string[]]>([
    ['a user class', pc('high', 1000), []],
    ['a user class at the maximum', pc('top', 1_000_000_000), []],
    ['a user class above the maximum', pc('top', 1_000_000_001), ['FieldValueForbidden value']],
    ['a known system class', pc('system-node-critical', 2_000_001_000), []],
    ['a system class with another value', pc('system-node-critical', 5), ['FieldValueForbidden metadata.name']],
    ['an unknown system class', pc('system-mine', 5), ['FieldValueForbidden metadata.name']],
  ])('%s', (_name, p, expected) => {
    expect(show(validatePriorityClass(p))).toEqual(expected);
  });

  it('never changes the value or the preemption policy', () => {
    expect(show(validatePriorityClassUpdate(pc('a', 2, { preemptionPolicy: 'Never' }), pc('a', 1)))).toEqual([
      'FieldValueForbidden value',
      'FieldValueInvalid preemptionPolicy',
    ]);
  });
});
