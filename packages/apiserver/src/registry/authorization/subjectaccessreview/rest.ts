/**
 * The authorization reviews (model: Kubernetes 1.21 `pkg/registry/authorization/<review>/rest.go`): create-only
 * storages that store nothing and answer with the decision of the server's authorizer chain (the one that guards
 * its requests, `--authorization-mode`): `allowed` when it allows, `denied` when one of its authorizers denies,
 * and its reason.
 *
 * - SubjectAccessReview: names a user or groups; resource or non-resource attributes, exactly one.
 * - LocalSubjectAccessReview: the same within the request's namespace (resource attributes only, same namespace).
 * - SelfSubjectAccessReview: about the requesting user.
 * - SelfSubjectRulesReview: the rules of the requesting user in `spec.namespace`.
 *
 * The v1beta1 reviews are answered as v1 ones: the body is converted to v1 on the way in and back on the way out.
 */
import {
  type ApiObject,
  badRequest,
  type FieldError,
  FieldPath,
  field,
  invalid,
  type Kind,
  reviewFromV1,
  reviewToV1,
  type SubjectAccessReview,
} from '@platform/api';

import { ALWAYS_ALLOW, type Attributes, type Authorizer } from '../../../auth/authorizer';
import {
  type Creater,
  type RequestContext,
  type RestStorage,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

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
  constructor(
    readonly kind: Kind,
    private readonly authorizer: Authorizer = ALWAYS_ALLOW,
  ) {}

  async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    _o: WriteOptions,
  ): Promise<ApiObject> {
    // A v1beta1 review is answered as v1 (its `spec.group` is v1's `spec.groups`) and returned in v1beta1.
    const beta = this.kind.version !== 'v1';
    const review = (beta ? reviewToV1(obj as Review) : obj) as Review;
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
    if (validate) await validate(beta ? reviewFromV1(review) : review);
    review.status =
      this.kind.kind === 'SelfSubjectRulesReview'
        ? this.rulesStatus(ctx, spec.namespace ?? '')
        : await this.accessStatus(review.spec as NonNullable<Review['spec']>);
    review.kind = this.kind.kind;
    return beta ? reviewFromV1(review) : { ...review, apiVersion: this.kind.apiVersion };
  }

  private async accessStatus(spec: NonNullable<Review['spec']>): Promise<Record<string, unknown>> {
    const r = await this.authorizer.authorize(attributesOfReview(spec));
    const status: Record<string, unknown> = { allowed: r.decision === 'allow' };
    if (r.decision === 'deny') status.denied = true;
    if (r.reason) status.reason = r.reason;
    if (r.evaluationError) status.evaluationError = r.evaluationError;
    return status;
  }

  private rulesStatus(ctx: RequestContext, namespace: string): Record<string, unknown> {
    const user = ctx.user ?? { name: '', groups: [] };
    const r = this.authorizer.rulesFor ? this.authorizer.rulesFor(user, namespace) : undefined;
    if (!r) return { resourceRules: [], nonResourceRules: [], incomplete: true };
    const status: Record<string, unknown> = {
      resourceRules: r.resourceRules.map((x) => ({
        verbs: x.verbs,
        apiGroups: x.apiGroups,
        resources: x.resources,
        ...(x.resourceNames.length ? { resourceNames: x.resourceNames } : {}),
      })),
      nonResourceRules: r.nonResourceRules,
      incomplete: r.incomplete,
    };
    if (r.errors.length) status.evaluationError = r.errors.join(', ');
    return status;
  }
}

/** The attributes an access review asks about (model: `authorizationutil.ResourceAttributesFrom`). */
export function attributesOfReview(spec: NonNullable<Review['spec']>): Attributes {
  // The body is the client's: every field is read defensively (a wrong type reads as empty).
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const strings = (v: unknown): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  const user = { name: str(spec.user), groups: strings(spec.groups), ...(str(spec.uid) ? { uid: str(spec.uid) } : {}) };
  const extra: Record<string, string[]> = {};
  if (spec.extra && typeof spec.extra === 'object') {
    for (const [k, v] of Object.entries(spec.extra)) extra[k] = strings(v);
  }
  const withExtra = Object.keys(extra).length ? { ...user, extra } : user;
  const ra = spec.resourceAttributes;
  if (ra) {
    return {
      user: withExtra,
      verb: str(ra.verb),
      resourceRequest: true,
      namespace: str(ra.namespace),
      apiGroup: str(ra.group),
      apiVersion: str(ra.version),
      resource: str(ra.resource),
      subresource: str(ra.subresource),
      name: str(ra.name),
      path: '',
    };
  }
  const nra = spec.nonResourceAttributes ?? {};
  return {
    user: withExtra,
    verb: str(nra.verb),
    resourceRequest: false,
    namespace: '',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    name: '',
    path: str(nra.path),
  };
}
