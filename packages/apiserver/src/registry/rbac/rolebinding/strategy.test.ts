import { type ApiObject, type FieldError, type RoleBinding, RoleBindingKind, type Subject } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { RBAC_GROUP, roleBindingStrategy, validateClusterRoleBinding, validateRoleBinding } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const ctx: RequestContext = { namespace: 'default', now: () => 0 };

const binding = (roleRef: Partial<RoleBinding['roleRef']>, subjects: Subject[] = []): RoleBinding => ({
  metadata: { name: 'b' },
  roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: 'r', ...roleRef },
  subjects,
});

describe('role bindings', () => {
  it.each<[string, RoleBinding, string[]]>([
    ['a valid binding', binding({}, [{ kind: 'User', apiGroup: RBAC_GROUP, name: 'alice' }]), []],
    ['another group', binding({ apiGroup: 'rbac.authorization.k8s.io' }), ['FieldValueNotSupported roleRef.apiGroup']],
    ['another kind', binding({ kind: 'Pod' }), ['FieldValueNotSupported roleRef.kind']],
    ['no role name', binding({ name: '' }), ['FieldValueRequired roleRef.name']],
    [
      'bad subjects',
      binding({}, [
        { kind: 'User', name: 'u' },
        { kind: 'ServiceAccount', apiGroup: RBAC_GROUP, name: 'Bad_Name' },
        { kind: 'Robot', name: 'r' },
      ]),
      [
        'FieldValueNotSupported subjects[0].apiGroup',
        'FieldValueInvalid subjects[1].name',
        'FieldValueNotSupported subjects[1].apiGroup',
        'FieldValueNotSupported subjects[2].kind',
      ],
    ],
  ])('%s', (_name, b, expected) => {
    expect(show(validateRoleBinding(b))).toEqual(expected);
  });

  it('binds cluster roles only from a ClusterRoleBinding, and service accounts with their namespace', () => {
    expect(
      show(validateClusterRoleBinding({ ...binding({}), subjects: [{ kind: 'ServiceAccount', name: 'sa' }] })),
    ).toEqual(['FieldValueNotSupported roleRef.kind', 'FieldValueRequired subjects[0].namespace']);
  });

  it('never changes the roleRef', () => {
    const strategy = roleBindingStrategy(RoleBindingKind);
    const old = binding({});
    expect(show(strategy.validateUpdate(ctx, binding({ name: 'other' }) as ApiObject, old as ApiObject))).toEqual([
      'FieldValueInvalid roleRef',
    ]);
  });
});
