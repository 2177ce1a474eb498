import { type FieldError, type PolicyRule } from '@platform/api';

import { validateClusterRole, validateRole } from './strategy';

const show = (errs: FieldError[]): string[] =>
  errs.map((e) => `${e.type} ${e.field}${e.detail ? `: ${e.detail}` : ''}`);

describe('ClusterRole rules (Document 1)', () => {
  it.each<[string, PolicyRule, string[]]>([
    ['a resource rule', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, []],
    ['a non-resource rule', { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*', '*'] }, []],
    [
      'no verbs',
      { verbs: [], apiGroups: [''], resources: ['pods'] },
      ['FieldValueRequired rules[0].verbs: verbs must contain at least one value'],
    ],
    [
      'both resources and non-resource URLs',
      { verbs: ['get'], resources: ['pods'], nonResourceURLs: ['/x'] },
      [
        'FieldValueInvalid rules[0].nonResourceURLs: rules cannot apply to both regular resources and non-resource URLs',
      ],
    ],
    [
      '* inside a step',
      { verbs: ['get'], nonResourceURLs: ['/api*', '/*/x'] },
      [
        'FieldValueInvalid rules[0].nonResourceURLs[0]: `*` is allowed only as the full final step of the path',
        'FieldValueInvalid rules[0].nonResourceURLs[1]: `*` is allowed only as the full final step of the path',
      ],
    ],
    [
      'a resource rule without groups or resources',
      { verbs: ['get'] },
      [
        'FieldValueRequired rules[0].apiGroups: resource rules must supply at least one api group',
        'FieldValueRequired rules[0].resources: resource rules must supply at least one resource',
      ],
    ],
  ])('%s', (_name, rule, expected) => {
    expect(show(validateClusterRole({ metadata: { name: 'r' }, rules: [rule] }))).toEqual(expected);
  });

  it('requires selectors in an aggregation rule', () => {
    expect(
      show(validateClusterRole({ metadata: { name: 'r' }, aggregationRule: { clusterRoleSelectors: [] } })),
    ).toEqual([
      'FieldValueRequired aggregationRule.clusterRoleSelectors: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ]);
  });

  it('forbids non-resource URLs in a Role', () => {
    expect(
      show(validateRole({ metadata: { name: 'r' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }] })),
    ).toEqual(['FieldValueInvalid rules[0].nonResourceURLs: namespaced rules cannot apply to non-resource URLs']);
  });
});
