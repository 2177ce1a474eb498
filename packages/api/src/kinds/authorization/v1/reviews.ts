/**
 * authorization.platform/v1: SubjectAccessReview, SelfSubjectAccessReview, LocalSubjectAccessReview and
 * SelfSubjectRulesReview. Virtual kinds: only `create` is served and nothing is stored.
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { object, opt, ref, req, t } from '../../../schema/schema';
import { defineKind, type Kind, OBJECT_HEAD, schemaPrefix, type Scope } from '../../../scheme/kind';

/** The authorization API group. */
export const AUTHORIZATION_GROUP = 'authorization.platform';
const P = schemaPrefix(AUTHORIZATION_GROUP, 'v1');

/** ResourceAttributes, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ResourceAttributesSchema = object(`${P}ResourceAttributes`, {
  namespace: opt(1, t.string(), 'Namespace of the action; "" for cluster-scoped resources or all namespaces.'),
  verb: opt(2, t.string(), 'A Kubernetes resource API verb, or "*".'),
  group: opt(3, t.string(), 'API group of the resource, or "*".'),
  version: opt(4, t.string(), 'API version of the resource, or "*".'),
  resource: opt(5, t.string(), 'An existing resource type, or "*".'),
  subresource: opt(6, t.string(), 'An existing subresource, or "".'),
  name: opt(7, t.string(), 'Name of the resource; "" means all.'),
});

/** NonResourceAttributes, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NonResourceAttributesSchema = object(`${P}NonResourceAttributes`, {
  path: opt(1, t.string(), 'URL path of the request.'),
  verb: opt(2, t.string(), 'Standard HTTP verb.'),
});

/** SubjectAccessReviewSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SubjectAccessReviewSpecSchema = object(`${P}SubjectAccessReviewSpec`, {
  resourceAttributes: opt(1, ref(ResourceAttributesSchema), 'Attributes of a resource request.'),
  nonResourceAttributes: opt(2, ref(NonResourceAttributesSchema), 'Attributes of a non-resource request.'),
  user: opt(3, t.string(), 'The user to test for.'),
  groups: opt(4, t.array(t.string()), 'The groups to test for.'),
  extra: opt(5, t.map(t.array(t.string())), 'Extra information of the user (authenticator specific).'),
  uid: opt(6, t.string(), 'UID of the user.'),
});

/** SubjectAccessReviewStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SubjectAccessReviewStatusSchema = object(`${P}SubjectAccessReviewStatus`, {
  allowed: req(1, t.bool(), 'Whether the action is allowed.'),
  denied: opt(4, t.bool(), 'Whether the action is denied (no other authorizer may allow it).'),
  reason: opt(2, t.string(), 'Why the action was allowed or denied.'),
  evaluationError: opt(3, t.string(), 'An error of the authorization check, if any.'),
});

/** SelfSubjectAccessReviewSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SelfSubjectAccessReviewSpecSchema = object(`${P}SelfSubjectAccessReviewSpec`, {
  resourceAttributes: opt(1, ref(ResourceAttributesSchema)),
  nonResourceAttributes: opt(2, ref(NonResourceAttributesSchema)),
});

/** SubjectAccessReview, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SubjectAccessReviewSchema = object(
  `${P}SubjectAccessReview`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(SubjectAccessReviewSpecSchema), 'The request being evaluated.'),
    status: opt(3, ref(SubjectAccessReviewStatusSchema), 'Whether the request is allowed. Set by the server.'),
  },
  { description: 'SubjectAccessReview checks whether or not a user or group can perform an action.' },
);
/** A SubjectAccessReview object in its JSON form. */
export type SubjectAccessReview = Static<typeof SubjectAccessReviewSchema>;

/** LocalSubjectAccessReview, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const LocalSubjectAccessReviewSchema = object(
  `${P}LocalSubjectAccessReview`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(SubjectAccessReviewSpecSchema), 'The request being evaluated; its namespace must match.'),
    status: opt(3, ref(SubjectAccessReviewStatusSchema), 'Whether the request is allowed. Set by the server.'),
  },
  {
    description:
      'LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given namespace.',
  },
);

/** SelfSubjectAccessReview, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SelfSubjectAccessReviewSchema = object(
  `${P}SelfSubjectAccessReview`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(SelfSubjectAccessReviewSpecSchema), 'The request being evaluated for the caller.'),
    status: opt(3, ref(SubjectAccessReviewStatusSchema), 'Whether the request is allowed. Set by the server.'),
  },
  { description: 'SelfSubjectAccessReview checks whether the current user can perform an action.' },
);

/** ResourceRule, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ResourceRuleSchema = object(`${P}ResourceRule`, {
  verbs: opt(1, t.array(t.string())),
  apiGroups: opt(2, t.array(t.string())),
  resources: opt(3, t.array(t.string())),
  resourceNames: opt(4, t.array(t.string())),
});

/** NonResourceRule, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const NonResourceRuleSchema = object(`${P}NonResourceRule`, {
  verbs: opt(1, t.array(t.string())),
  nonResourceURLs: opt(2, t.array(t.string())),
});

/** SelfSubjectRulesReviewSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SelfSubjectRulesReviewSpecSchema = object(`${P}SelfSubjectRulesReviewSpec`, {
  namespace: opt(1, t.string(), 'Namespace to evaluate rules for.'),
});

/** SubjectRulesReviewStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SubjectRulesReviewStatusSchema = object(`${P}SubjectRulesReviewStatus`, {
  resourceRules: opt(1, t.array(ref(ResourceRuleSchema)), 'What the subject may do with resources.'),
  nonResourceRules: opt(2, t.array(ref(NonResourceRuleSchema)), 'What the subject may do with non-resource URLs.'),
  incomplete: opt(3, t.bool(), 'The list is incomplete (an authorizer cannot enumerate its rules).'),
  evaluationError: opt(4, t.string()),
});

/** SelfSubjectRulesReview, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SelfSubjectRulesReviewSchema = object(
  `${P}SelfSubjectRulesReview`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(SelfSubjectRulesReviewSpecSchema), 'The namespace to list the rules of.'),
    status: opt(3, ref(SubjectRulesReviewStatusSchema), 'The rules. Set by the server.'),
  },
  {
    description:
      'SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace.',
  },
);

function reviewKind<S extends TObject>(kind: string, plural: string, scope: Scope, schema: S): Kind<S> {
  return defineKind({
    group: AUTHORIZATION_GROUP,
    version: 'v1',
    kind,
    plural,
    scope,
    verbs: ['create'],
    persisted: false,
    schema,
  });
}

/** The SubjectAccessReview kind: discovery facts, defaults, printer columns and field selectors. */
export const SubjectAccessReviewKind = reviewKind(
  'SubjectAccessReview',
  'subjectaccessreviews',
  'Cluster',
  SubjectAccessReviewSchema,
);
/** The SelfSubjectAccessReview kind: discovery facts, defaults, printer columns and field selectors. */
export const SelfSubjectAccessReviewKind = reviewKind(
  'SelfSubjectAccessReview',
  'selfsubjectaccessreviews',
  'Cluster',
  SelfSubjectAccessReviewSchema,
);
/** The LocalSubjectAccessReview kind: discovery facts, defaults, printer columns and field selectors. */
export const LocalSubjectAccessReviewKind = reviewKind(
  'LocalSubjectAccessReview',
  'localsubjectaccessreviews',
  'Namespaced',
  LocalSubjectAccessReviewSchema,
);
/** The SelfSubjectRulesReview kind: discovery facts, defaults, printer columns and field selectors. */
export const SelfSubjectRulesReviewKind = reviewKind(
  'SelfSubjectRulesReview',
  'selfsubjectrulesreviews',
  'Cluster',
  SelfSubjectRulesReviewSchema,
);
