/**
 * TokenReview (model: Kubernetes 1.21 `pkg/registry/authentication/tokenreview/storage.go`): a create-only storage
 * that stores nothing and answers whether a bearer token authenticates, with the server's own token methods (token
 * file, service account tokens, bootstrap tokens, OIDC, webhook) for `spec.audiences` (the API's audiences when
 * empty). Without any token method configured, every review answers `authenticated: false` with an error saying so.
 */
import { type ApiObject, badRequest, type Kind, type TokenReview } from '@platform/api';

import { type TokenReviewer } from '../../../auth/authentication/authentication';
import {
  type Creater,
  type RequestContext,
  type RestStorage,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';

/** The error of every review until token authentication is configured. */
export const TOKEN_AUTHENTICATION_NOT_CONFIGURED = 'token authentication is not configured on this server';

/** The storage of `tokenreviews`. */
export class TokenReviewREST implements Creater, RestStorage {
  constructor(
    readonly kind: Kind,
    private readonly reviewer?: TokenReviewer,
  ) {}

  async create(
    _ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    _o: WriteOptions,
  ): Promise<ApiObject> {
    const review = obj as TokenReview;
    if (!review.spec?.token) throw badRequest('token is required for TokenReview in authentication');
    if (validate) await validate(review);
    if (!this.reviewer) {
      review.status = { authenticated: false, error: TOKEN_AUTHENTICATION_NOT_CONFIGURED };
    } else {
      const r = await this.reviewer.review(review.spec.token, review.spec.audiences ?? []);
      review.status = { authenticated: r.authenticated };
      if (r.user)
        review.status.user = {
          username: r.user.name,
          ...(r.user.uid ? { uid: r.user.uid } : {}),
          groups: r.user.groups,
          ...(r.user.extra ? { extra: r.user.extra } : {}),
        };
      if (r.authenticated && r.audiences) review.status.audiences = r.audiences;
      if (r.error) review.status.error = r.error;
    }
    review.apiVersion = this.kind.apiVersion;
    review.kind = this.kind.kind;
    return review;
  }
}
