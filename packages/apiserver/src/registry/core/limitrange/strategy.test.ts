import { type FieldError, type LimitRange } from '@platform/api';

import { validateLimitRange } from './strategy';

const show = (errs: FieldError[]): string[] =>
  errs.map((e) => `${e.type} ${e.field}${e.detail ? `: ${e.detail}` : ''}`);

describe('validateLimitRange', () => {
  it.each<[string, NonNullable<LimitRange['spec']>['limits'], string[]]>([
    [
      'container defaults within bounds',
      [
        {
          type: 'Container',
          min: { cpu: '100m' },
          max: { cpu: '2' },
          default: { cpu: '1' },
          defaultRequest: { cpu: '500m' },
        },
      ],
      [],
    ],
    [
      'min above max',
      [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }],
      ['FieldValueInvalid spec.limits[0].min[cpu]: min value 2 is greater than max value 1'],
    ],
    [
      'an unknown type and a duplicate',
      [{ type: 'Node' }, { type: 'Container' }, { type: 'Container' }],
      [
        'FieldValueNotSupported spec.limits[0].type: supported values: "Container", "PersistentVolumeClaim", "Pod"',
        'FieldValueDuplicate spec.limits[2].type',
      ],
    ],
    [
      'defaults on a Pod item',
      [{ type: 'Pod', default: { cpu: '1' } }],
      ["FieldValueForbidden spec.limits[0].default: may not be specified when `type` is 'Pod'"],
    ],
    [
      'a claim item without storage',
      [{ type: 'PersistentVolumeClaim', max: { cpu: '1' } }],
      [
        'FieldValueRequired spec.limits[0].limits: either minimum or maximum storage value is required, but neither was provided',
      ],
    ],
  ])('%s', (_name, limits, expected) => {
    expect(show(validateLimitRange({ metadata: { name: 'l' }, spec: { limits } }))).toEqual(expected);
  });
});
