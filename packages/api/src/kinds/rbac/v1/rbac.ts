/**
 * rbac.authorization.platform/v1: Role, ClusterRole (Document 1's fields: aggregationRule.clusterRoleSelectors,
 * rules of apiGroups, resources, verbs, resourceNames, nonResourceURLs), RoleBinding and ClusterRoleBinding.
 */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../../meta/v1/types';
import { object, opt, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN, type TableColumn } from '../../../table/table';

/** The RBAC API group. */
export const RBAC_GROUP = 'rbac.authorization.platform';
const P = schemaPrefix(RBAC_GROUP, 'v1');

/** PolicyRule, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PolicyRuleSchema = object(`${P}PolicyRule`, {
  verbs: req(1, t.array(t.string()), "Verbs that apply to all the resources of the rule; '*' means all."),
  apiGroups: opt(2, t.array(t.string()), 'API groups of the resources; "" is the core group.'),
  resources: opt(3, t.array(t.string()), "Resources the rule applies to; '*' means all."),
  resourceNames: opt(4, t.array(t.string()), 'Allow-list of object names; every name when empty.'),
  nonResourceURLs: opt(5, t.array(t.string()), "Partial URLs; '*' only as the full final step."),
});
/** A PolicyRule object in its JSON form. */
export type PolicyRule = Static<typeof PolicyRuleSchema>;

/** AggregationRule, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const AggregationRuleSchema = object(`${P}AggregationRule`, {
  clusterRoleSelectors: opt(
    1,
    t.array(ref(LabelSelectorSchema)),
    "Selectors of ClusterRoles whose rules are added to this role's.",
  ),
});

/** Role, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RoleSchema = object(
  `${P}Role`,
  {
    ...OBJECT_HEAD,
    rules: opt(2, t.array(ref(PolicyRuleSchema)), 'All policy rules of this role.'),
  },
  {
    description:
      'Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.',
  },
);
/** A Role object in its JSON form. */
export type Role = Static<typeof RoleSchema>;

/** ClusterRole, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ClusterRoleSchema = object(
  `${P}ClusterRole`,
  {
    ...OBJECT_HEAD,
    rules: opt(2, t.array(ref(PolicyRuleSchema)), 'All policy rules of this role.'),
    aggregationRule: opt(
      3,
      ref(AggregationRuleSchema),
      'How the rules are built; when set, the rules are controller-managed.',
    ),
  },
  {
    description:
      'ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.',
  },
);
/** A ClusterRole object in its JSON form. */
export type ClusterRole = Static<typeof ClusterRoleSchema>;

/** Subject, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SubjectSchema = object(`${P}Subject`, {
  kind: req(1, t.string(), 'User, Group or ServiceAccount.'),
  apiGroup: opt(2, t.string(), `"" for ServiceAccount, "${RBAC_GROUP}" for User and Group.`),
  name: req(3, t.string(), 'Name of the subject.'),
  namespace: opt(4, t.string(), 'Namespace of a ServiceAccount subject.'),
});
/** A Subject object in its JSON form. */
export type Subject = Static<typeof SubjectSchema>;

/** RoleRef, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RoleRefSchema = object(`${P}RoleRef`, {
  apiGroup: req(1, t.string(), 'Group of the referenced role.'),
  kind: req(2, t.string(), 'Role or ClusterRole.'),
  name: req(3, t.string(), 'Name of the referenced role.'),
});

/** RoleBinding, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RoleBindingSchema = object(
  `${P}RoleBinding`,
  {
    ...OBJECT_HEAD,
    subjects: opt(2, t.array(ref(SubjectSchema)), 'The subjects the role applies to.'),
    roleRef: req(3, ref(RoleRefSchema), 'A Role in the namespace or a ClusterRole.'),
  },
  {
    description:
      'RoleBinding references a Role in the same namespace or a ClusterRole, and binds it to subjects in its namespace.',
  },
);
/** A RoleBinding object in its JSON form. */
export type RoleBinding = Static<typeof RoleBindingSchema>;

/** ClusterRoleBinding, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ClusterRoleBindingSchema = object(
  `${P}ClusterRoleBinding`,
  {
    ...OBJECT_HEAD,
    subjects: opt(2, t.array(ref(SubjectSchema)), 'The subjects the role applies to.'),
    roleRef: req(3, ref(RoleRefSchema), 'A ClusterRole.'),
  },
  { description: 'ClusterRoleBinding references a ClusterRole and binds it to subjects cluster-wide.' },
);
/** A ClusterRoleBinding object in its JSON form. */
export type ClusterRoleBinding = Static<typeof ClusterRoleBindingSchema>;

function defaultBinding(b: RoleBinding | ClusterRoleBinding): void {
  // Binding without a namespace or unset role group: the RBAC group (SetDefaults_*Binding, SetDefaults_Subject).
  if (b.roleRef) b.roleRef.apiGroup ||= RBAC_GROUP;
  for (const s of b.subjects ?? []) {
    if (s.apiGroup) continue;
    if (s.kind === 'ServiceAccount') s.apiGroup = '';
    else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP;
  }
}

function bindingColumns<T extends RoleBinding | ClusterRoleBinding>(): TableColumn<T>[] {
  const subjects = (o: T, kind: string): string =>
    (o.subjects ?? [])
      .filter((s) => s.kind === kind)
      .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name))
      .join(', ');
  return [
    {
      name: 'Role',
      type: 'string',
      description: 'The role bound.',
      cell: (o) => `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`,
    },
    AGE_COLUMN,
    { name: 'Users', type: 'string', priority: 1, description: 'Bound users.', cell: (o) => subjects(o, 'User') },
    { name: 'Groups', type: 'string', priority: 1, description: 'Bound groups.', cell: (o) => subjects(o, 'Group') },
    {
      name: 'ServiceAccounts',
      type: 'string',
      priority: 1,
      description: 'Bound service accounts.',
      cell: (o) => subjects(o, 'ServiceAccount'),
    },
  ];
}

/** The Role kind: discovery facts, defaults, printer columns and field selectors. */
export const RoleKind = defineKind({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'Role',
  plural: 'roles',
  scope: 'Namespaced',
  schema: RoleSchema,
});

/** The ClusterRole kind: discovery facts, defaults, printer columns and field selectors. */
export const ClusterRoleKind = defineKind({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'ClusterRole',
  plural: 'clusterroles',
  scope: 'Cluster',
  schema: ClusterRoleSchema,
});

/** The RoleBinding kind: discovery facts, defaults, printer columns and field selectors. */
export const RoleBindingKind = defineKind({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'RoleBinding',
  plural: 'rolebindings',
  scope: 'Namespaced',
  schema: RoleBindingSchema,
  defaults: defaultBinding,
  columns: bindingColumns<RoleBinding>(),
});

/** The ClusterRoleBinding kind: discovery facts, defaults, printer columns and field selectors. */
export const ClusterRoleBindingKind = defineKind({
  group: RBAC_GROUP,
  version: 'v1',
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
  scope: 'Cluster',
  schema: ClusterRoleBindingSchema,
  defaults: defaultBinding,
  columns: bindingColumns<ClusterRoleBinding>(),
});
