/**
 * The beta versions Kubernetes 1.21 still serves by default for kinds whose fields are those of the GA version
 * (their `generated.proto` messages are the same): rbac.authorization.platform, scheduling.platform,
 * coordination.platform, events.platform and authentication.platform (TokenReview) `v1beta1`. Each is its GA kind
 * copied into the version (see `versions.ts`), served from the same storage.
 */
import { TokenReviewKind } from './authentication/v1/token';
import { LeaseKind } from './coordination/v1/lease';
import { EventsV1EventKind } from './events/v1/event';
import { ClusterRoleBindingKind, ClusterRoleKind, RoleBindingKind, RoleKind } from './rbac/v1/rbac';
import { PriorityClassKind } from './scheduling/v1/priority-class';
import { kindInVersion } from './versions';

/** ClusterRole in rbac.authorization.platform/v1beta1. */
export const ClusterRoleV1beta1Kind = kindInVersion(ClusterRoleKind, 'v1beta1');
/** ClusterRoleBinding in rbac.authorization.platform/v1beta1. */
export const ClusterRoleBindingV1beta1Kind = kindInVersion(ClusterRoleBindingKind, 'v1beta1');
/** Role in rbac.authorization.platform/v1beta1. */
export const RoleV1beta1Kind = kindInVersion(RoleKind, 'v1beta1');
/** RoleBinding in rbac.authorization.platform/v1beta1. */
export const RoleBindingV1beta1Kind = kindInVersion(RoleBindingKind, 'v1beta1');
/** PriorityClass in scheduling.platform/v1beta1. */
export const PriorityClassV1beta1Kind = kindInVersion(PriorityClassKind, 'v1beta1');
/** Lease in coordination.platform/v1beta1. */
export const LeaseV1beta1Kind = kindInVersion(LeaseKind, 'v1beta1');
/** Event in events.platform/v1beta1. */
export const EventsV1beta1EventKind = kindInVersion(EventsV1EventKind, 'v1beta1');
/** TokenReview in authentication.platform/v1beta1. */
export const TokenReviewV1beta1Kind = kindInVersion(TokenReviewKind, 'v1beta1');

/** The GA kind (`apiVersion/kind`) each beta copy takes its test sample from. */
export const BETA_COPIES: readonly (readonly [string, string])[] = [
  ClusterRoleV1beta1Kind,
  ClusterRoleBindingV1beta1Kind,
  RoleV1beta1Kind,
  RoleBindingV1beta1Kind,
  PriorityClassV1beta1Kind,
  LeaseV1beta1Kind,
  EventsV1beta1EventKind,
  TokenReviewV1beta1Kind,
].map((k) => [`${k.group}/v1/${k.kind}`, `${k.apiVersion}/${k.kind}`] as const);
