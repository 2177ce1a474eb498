/**
 * The authorization reviews (model: Kubernetes 1.21 `pkg/registry/authorization/<review>/rest.go`): create-only
 * storages that store nothing and answer with the decision of the authorizer in force. Until the authorizer of the
 * security issue is configured, that is AlwaysAllow: every access review is allowed, and a rules review lists
 * every verb on every resource and every non-resource URL.
 *
 * - SubjectAccessReview: names a user or groups; resource or non-resource attributes, exactly one.
 * - LocalSubjectAccessReview: the same within the request's namespace (resource attributes only, same namespace).
 * - SelfSubjectAccessReview: about the requesting user.
 * - SelfSubjectRulesReview: the rules of the requesting user in `spec.namespace`.
 */
import {
  type ApiObject,
  badRequest,
  type FieldError,
  FieldPath,
  field,
  invalid,
  type Kind,
  type SubjectAccessReview,
} from '@platform/api';

import {
  type Creater,
  type RequestContext,
  type RestStorage,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

/** The reason of an AlwaysAllow decision. */
export const ALWAYS_ALLOW_REASON = 'the AlwaysAllow authorization mode allows every request';

type Review = ApiObject & {
  spec?: SubjectAccessReview['spec'] & { namespace?: string };
  status?: Record<string, unknown>;
};

/** Validation of an access review's spec (model: `ValidateSubjectAccessReviewSpec`); `kind` picks the extra rules. */
export function validateAccessReview(review: Review, kind: string): FieldError[] {
  const errs: FieldError[] = [];
  const spec = new FieldPath('spec');
  const s = review.spec ?? {};
  if (s.resourceAttributes && s.nonResourceAttributes) {
    errs.push(
      field.invalid(
        spec.child('nonResourceAttributes'),
        s.nonResourceAttributes,
        'cannot be specified in combination with resourceAttributes',
      ),
    );
  }
  if (!s.resourceAttributes && !s.nonResourceAttributes) {
    errs.push(
      field.invalid(
        spec.child('resourceAttributes'),
        null,
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    );
  }
  if (kind === 'SubjectAccessReview' || kind === 'LocalSubjectAccessReview') {
    if (!s.user && (s.groups ?? []).length === 0) {
      errs.push(field.invalid(spec.child('user'), s.user ?? '', 'at least one of user or group must be specified'));
    }
  }
  if (kind === 'LocalSubjectAccessReview') {
    if (s.nonResourceAttributes) {
      errs.push(
        field.invalid(
          spec.child('nonResourceAttributes'),
          s.nonResourceAttributes,
          'disallowed on this kind of request',
        ),
      );
    }
    const ns = review.metadata?.namespace ?? '';
    if (s.resourceAttributes && (s.resourceAttributes.namespace ?? '') !== ns) {
      errs.push(
        field.invalid(
          spec.child('resourceAttributes', 'namespace'),
          s.resourceAttributes.namespace ?? '',
          'must match metadata.namespace',
        ),
      );
    }
  }
  return errs;
}

/** The storage of one review kind. */
export class AccessReviewREST implements Creater, RestStorage {
  constructor(readonly kind: Kind) {}

  async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    _o: WriteOptions,
  ): Promise<ApiObject> {
    const review = obj as Review;
    const m = (review.metadata ??= {});
    if (this.kind.namespaced) {
      if (m.namespace && m.namespace !== ctx.namespace) {
        throw badRequest(
          `namespace of the request (${ctx.namespace}) does not match the namespace of the object (${m.namespace})`,
        );
      }
      m.namespace = ctx.namespace;
    }
    const spec = (review.spec ??= {});
    if (this.kind.kind === 'SelfSubjectAccessReview' && ctx.user) {
      spec.user = ctx.user.name;
      spec.groups = [...ctx.user.groups];
      if (ctx.user.uid) spec.uid = ctx.user.uid;
    }
    if (this.kind.kind === 'SelfSubjectRulesReview') {
      if (!spec.namespace) throw badRequest('no namespace on request');
    } else {
      const errs = validateAccessReview(review, this.kind.kind);
      if (errs.length) throw invalid({ group: this.kind.group, kind: this.kind.kind }, m.name ?? '', errs);
    }
    if (validate) await validate(review);
    review.status =
      this.kind.kind === 'SelfSubjectRulesReview'
        ? {
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
            incomplete: false,
          }
        : { allowed: true, reason: ALWAYS_ALLOW_REASON };
    review.apiVersion = this.kind.apiVersion;
    review.kind = this.kind.kind;
    return review;
  }
}
