/**
 * The RoleBinding and ClusterRoleBinding strategies (model: Kubernetes 1.21 `ValidateRoleBinding`,
 * `ValidateClusterRoleBinding`, `ValidateRoleBindingSubject`): the roleRef names a Role or ClusterRole of this
 * group (a ClusterRoleBinding only a ClusterRole) and never changes; subjects are users, groups or service accounts,
 * each well formed.
 */
import {
  type ApiObject,
  type ClusterRoleBinding,
  type FieldError,
  FieldPath,
  field,
  isDNS1123Subdomain,
  isValidPathSegmentName,
  type Kind,
  type RoleBinding,
  semanticEqual,
  type Subject,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';

/** The RBAC API group. */
export const RBAC_GROUP = 'rbac.authorization.platform';

/** One subject (model: `ValidateRoleBindingSubject`); a ClusterRoleBinding's service accounts name their namespace. */
export function validateSubject(s: Subject, isNamespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!s.name) errs.push(field.required(path.child('name'), ''));
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.name) errs.push(...field.invalidEach(path.child('name'), s.name, isDNS1123Subdomain(s.name)));
      if (s.apiGroup) errs.push(field.notSupported(path.child('apiGroup'), s.apiGroup, ['']));
      if (!isNamespaced && !s.namespace) errs.push(field.required(path.child('namespace'), ''));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== RBAC_GROUP)
        errs.push(field.notSupported(path.child('apiGroup'), s.apiGroup ?? '', [RBAC_GROUP]));
      break;
    default:
      errs.push(field.notSupported(path.child('kind'), s.kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBinding(b: RoleBinding | ClusterRoleBinding, kinds: string[], isNamespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = new FieldPath('roleRef');
  if (b.roleRef?.apiGroup !== RBAC_GROUP) {
    errs.push(field.notSupported(ref.child('apiGroup'), b.roleRef?.apiGroup ?? '', [RBAC_GROUP]));
  }
  if (!kinds.includes(b.roleRef?.kind ?? ''))
    errs.push(field.notSupported(ref.child('kind'), b.roleRef?.kind ?? '', kinds));
  if (!b.roleRef?.name) errs.push(field.required(ref.child('name'), ''));
  else errs.push(...field.invalidEach(ref.child('name'), b.roleRef.name, isValidPathSegmentName(b.roleRef.name)));
  (b.subjects ?? []).forEach((s, i) =>
    errs.push(...validateSubject(s, isNamespaced, new FieldPath('subjects').index(i))),
  );
  return errs;
}

function roleRefUnchanged(b: ApiObject, old: ApiObject): FieldError[] {
  const ref = (o: ApiObject): unknown => (o as RoleBinding).roleRef;
  return semanticEqual(ref(b), ref(old))
    ? []
    : [field.invalid(new FieldPath('roleRef'), ref(b), 'cannot change roleRef')];
}

/** Validation of a RoleBinding. */
export function validateRoleBinding(b: RoleBinding): FieldError[] {
  return validateBinding(b, ['ClusterRole', 'Role'], true);
}

/** Validation of a ClusterRoleBinding. */
export function validateClusterRoleBinding(b: ClusterRoleBinding): FieldError[] {
  return validateBinding(b, ['ClusterRole'], false);
}

/** The strategy of `rolebindings`. */
export function roleBindingStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateRoleBinding(obj as RoleBinding),
    validateUpdate: (_ctx, obj, old) => [...validateRoleBinding(obj as RoleBinding), ...roleRefUnchanged(obj, old)],
  });
}

/** The strategy of `clusterrolebindings`. */
export function clusterRoleBindingStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateClusterRoleBinding(obj as ClusterRoleBinding),
    validateUpdate: (_ctx, obj, old) => [
      ...validateClusterRoleBinding(obj as ClusterRoleBinding),
      ...roleRefUnchanged(obj, old),
    ],
  });
}
