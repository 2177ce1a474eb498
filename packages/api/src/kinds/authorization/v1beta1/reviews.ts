/**
 * authorization.platform/v1beta1: the four access reviews of v1, field for field, but for the groups of the subject
 * of a SubjectAccessReview and a LocalSubjectAccessReview, which v1beta1 calls `spec.group` (v1: `spec.groups`;
 * same Protobuf field number). The server answers them as v1 reviews (`reviewToV1` / `reviewFromV1`).
 */
import { type Static } from '@sinclair/typebox';

import { schemaInVersion } from '../../../schema/retarget';
import { object, opt, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { kindInVersion } from '../../versions';
import {
  AUTHORIZATION_GROUP,
  LocalSubjectAccessReviewKind,
  NonResourceAttributesSchema,
  ResourceAttributesSchema,
  SelfSubjectAccessReviewKind,
  SelfSubjectRulesReviewKind,
  SubjectAccessReviewKind,
  SubjectAccessReviewStatusSchema,
} from '../v1/reviews';

const V1 = schemaPrefix(AUTHORIZATION_GROUP, 'v1');
const P = schemaPrefix(AUTHORIZATION_GROUP, 'v1beta1');

/** SubjectAccessReviewSpec in v1beta1, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const SubjectAccessReviewSpecV1beta1Schema = object(`${P}SubjectAccessReviewSpec`, {
  resourceAttributes: opt(
    1,
    ref(schemaInVersion(ResourceAttributesSchema, V1, P)),
    'Attributes of a resource request.',
  ),
  nonResourceAttributes: opt(
    2,
    ref(schemaInVersion(NonResourceAttributesSchema, V1, P)),
    'Attributes of a non-resource request.',
  ),
  user: opt(3, t.string(), 'The user to test for.'),
  group: opt(4, t.array(t.string()), 'The groups to test for.'),
  extra: opt(5, t.map(t.array(t.string())), 'Extra information of the user (authenticator specific).'),
  uid: opt(6, t.string(), 'UID of the user.'),
});

const STATUS = schemaInVersion(SubjectAccessReviewStatusSchema, V1, P);

/** SubjectAccessReview in v1beta1, as in Kubernetes 1.21. */
export const SubjectAccessReviewV1beta1Schema = object(
  `${P}SubjectAccessReview`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(SubjectAccessReviewSpecV1beta1Schema), 'The request being evaluated.'),
    status: opt(3, ref(STATUS), 'Whether the request is allowed. Set by the server.'),
  },
  { description: 'SubjectAccessReview checks whether or not a user or group can perform an action.' },
);
/** A v1beta1 SubjectAccessReview (or LocalSubjectAccessReview) in its JSON form. */
export type SubjectAccessReviewV1beta1 = Static<typeof SubjectAccessReviewV1beta1Schema>;

/** LocalSubjectAccessReview in v1beta1, as in Kubernetes 1.21. */
export const LocalSubjectAccessReviewV1beta1Schema = object(
  `${P}LocalSubjectAccessReview`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(SubjectAccessReviewSpecV1beta1Schema), 'The request being evaluated; its namespace must match.'),
    status: opt(3, ref(STATUS), 'Whether the request is allowed. Set by the server.'),
  },
  {
    description:
      'LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given namespace.',
  },
);

/** The SubjectAccessReview kind in authorization.platform/v1beta1. */
export const SubjectAccessReviewV1beta1Kind = defineKind({
  ...SubjectAccessReviewKind.spec,
  version: 'v1beta1',
  schema: SubjectAccessReviewV1beta1Schema,
});
/** The LocalSubjectAccessReview kind in authorization.platform/v1beta1. */
export const LocalSubjectAccessReviewV1beta1Kind = defineKind({
  ...LocalSubjectAccessReviewKind.spec,
  version: 'v1beta1',
  schema: LocalSubjectAccessReviewV1beta1Schema,
});
/** The SelfSubjectAccessReview kind in authorization.platform/v1beta1 (v1's fields). */
export const SelfSubjectAccessReviewV1beta1Kind = kindInVersion(SelfSubjectAccessReviewKind, 'v1beta1');
/** The SelfSubjectRulesReview kind in authorization.platform/v1beta1 (v1's fields). */
export const SelfSubjectRulesReviewV1beta1Kind = kindInVersion(SelfSubjectRulesReviewKind, 'v1beta1');

interface Review {
  apiVersion?: string;
  spec?: Record<string, unknown>;
}

/** A copy of `review` in `apiVersion`, its spec field `from` renamed `to` when present. */
function renameSpecField<T extends Review>(review: T, from: string, to: string, apiVersion: string): T {
  const out: T = { ...review, apiVersion };
  if (review.spec && from in review.spec) {
    const { [from]: value, ...rest } = review.spec;
    out.spec = { ...rest, [to]: value };
  }
  return out;
}

/**
 * A v1beta1 access review as v1 (`spec.group` → `spec.groups`; reviews without that field only change apiVersion).
 * Returns a copy; reads the body as the client sent it, so it never fails.
 */
export function reviewToV1<T extends Review>(review: T): T {
  return renameSpecField(review, 'group', 'groups', `${AUTHORIZATION_GROUP}/v1`);
}

/** A v1 access review as v1beta1 (`spec.groups` → `spec.group`). Returns a copy. */
export function reviewFromV1<T extends Review>(review: T): T {
  return renameSpecField(review, 'groups', 'group', `${AUTHORIZATION_GROUP}/v1beta1`);
}
