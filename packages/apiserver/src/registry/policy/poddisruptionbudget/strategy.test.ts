import { type FieldError, type PodDisruptionBudget } from '@platform/api';

import { validatePodDisruptionBudget } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('validatePodDisruptionBudget', () => {
  it.each<[string, PodDisruptionBudget['spec'], string[]]>([
    ['minAvailable', { minAvailable: 1, selector: { matchLabels: { a: 'b' } } }, []],
    ['maxUnavailable as a percentage', { maxUnavailable: '50%' }, []],
    ['both', { minAvailable: 1, maxUnavailable: 1 }, ['FieldValueInvalid spec']],
    ['a negative count', { minAvailable: -1 }, ['FieldValueInvalid spec.minAvailable']],
    ['more than 100%', { maxUnavailable: '101%' }, ['FieldValueInvalid spec.maxUnavailable']],
  ])('%s', (_name, spec, expected) => {
    expect(show(validatePodDisruptionBudget({ metadata: { name: 'p' }, spec }))).toEqual(expected);
  });
});
