/**
 * authentication.platform/v1: TokenReview (virtual, create only) and TokenRequest (the body of
 * `serviceaccounts/token`, served only as that subresource).
 */
import { type Static } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';

/** The authentication API group. */
export const AUTHENTICATION_GROUP = 'authentication.platform';
const P = schemaPrefix(AUTHENTICATION_GROUP, 'v1');

/** UserInfo, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const UserInfoSchema = object(`${P}UserInfo`, {
  username: opt(1, t.string(), 'Name that uniquely identifies this user among all active users.'),
  uid: opt(2, t.string(), 'Unique value identifying this user across time.'),
  groups: opt(3, t.array(t.string()), 'Groups this user is a part of.'),
  extra: opt(4, t.map(t.array(t.string())), 'Additional information provided by the authenticator.'),
});
/** A UserInfo object in its JSON form. */
export type UserInfo = Static<typeof UserInfoSchema>;

/** TokenReviewSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const TokenReviewSpecSchema = object(`${P}TokenReviewSpec`, {
  token: opt(1, t.string(), 'The opaque bearer token.'),
  audiences: opt(2, t.array(t.string()), 'Audiences the token must be valid for.'),
});

/** TokenReviewStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const TokenReviewStatusSchema = object(`${P}TokenReviewStatus`, {
  authenticated: opt(1, t.bool(), 'The token is associated with a known user.'),
  user: opt(2, ref(UserInfoSchema), 'The user associated with the token.'),
  audiences: opt(4, t.array(t.string()), 'Audiences the token is valid for.'),
  error: opt(3, t.string(), 'Why the token could not be checked.'),
});

/** TokenReview, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const TokenReviewSchema = object(
  `${P}TokenReview`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(TokenReviewSpecSchema), 'The token being reviewed.'),
    status: opt(3, ref(TokenReviewStatusSchema), 'Whether the token can be authenticated. Set by the server.'),
  },
  { description: 'TokenReview attempts to authenticate a token to a known user.' },
);
/** A TokenReview object in its JSON form. */
export type TokenReview = Static<typeof TokenReviewSchema>;

/** The TokenReview kind: discovery facts, defaults, printer columns and field selectors. */
export const TokenReviewKind = defineKind({
  group: AUTHENTICATION_GROUP,
  version: 'v1',
  kind: 'TokenReview',
  plural: 'tokenreviews',
  scope: 'Cluster',
  verbs: ['create'],
  persisted: false,
  schema: TokenReviewSchema,
});

/** BoundObjectReference, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const BoundObjectReferenceSchema = object(`${P}BoundObjectReference`, {
  kind: opt(1, t.string(), 'Kind of the referent: Pod or Secret.'),
  apiVersion: opt(2, t.string(), 'API version of the referent.'),
  name: opt(3, t.string(), 'Name of the referent.'),
  uid: opt(4, t.string(), 'UID of the referent.'),
});

/** TokenRequestSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const TokenRequestSpecSchema = object(`${P}TokenRequestSpec`, {
  // Not required: client-go sends `null` for "the API server's audiences".
  audiences: opt(1, t.array(t.string()), 'Intended audiences of the token; the API server when empty.'),
  expirationSeconds: opt(4, ptr(t.int64()), 'Requested validity of the token. Defaults to 1 hour.'),
  boundObjectRef: opt(3, ref(BoundObjectReferenceSchema), 'An object the token is bound to.'),
});

/** TokenRequestStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const TokenRequestStatusSchema = object(`${P}TokenRequestStatus`, {
  token: req(1, t.string(), 'The opaque bearer token.'),
  expirationTimestamp: req(2, t.time(), 'When the token expires.'),
});

/** TokenRequest, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const TokenRequestSchema = object(
  `${P}TokenRequest`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(TokenRequestSpecSchema), 'The token requested.'),
    status: opt(3, ref(TokenRequestStatusSchema), 'The token issued. Set by the server.'),
  },
  { description: 'TokenRequest requests a token for a given service account.' },
);
/** A TokenRequest object in its JSON form. */
export type TokenRequest = Static<typeof TokenRequestSchema>;

/** The TokenRequest kind: discovery facts, defaults, printer columns and field selectors. */
export const TokenRequestKind = defineKind({
  group: AUTHENTICATION_GROUP,
  version: 'v1',
  kind: 'TokenRequest',
  plural: 'tokenrequests',
  scope: 'Namespaced',
  verbs: [],
  persisted: false,
  schema: TokenRequestSchema,
  defaults(tr) {
    if (tr.spec) tr.spec.expirationSeconds ??= 3600;
  },
});
