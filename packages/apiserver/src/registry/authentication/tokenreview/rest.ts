/**
 * TokenReview (model: Kubernetes 1.21 `pkg/registry/authentication/tokenreview/storage.go`): a create-only storage
 * that stores nothing and answers whether a bearer token authenticates. Token authentication is not configured yet
 * (the security issue brings it): every review answers `authenticated: false` with an error saying so.
 */
import { type ApiObject, badRequest, type Kind, type TokenReview } from '@platform/api';

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
  constructor(readonly kind: Kind) {}

  async create(
    _ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    _o: WriteOptions,
  ): Promise<ApiObject> {
    const review = obj as TokenReview;
    if (!review.spec?.token) throw badRequest('token is required for TokenReview in authentication');
    if (validate) await validate(review);
    review.status = { authenticated: false, error: TOKEN_AUTHENTICATION_NOT_CONFIGURED };
    review.apiVersion = this.kind.apiVersion;
    review.kind = this.kind.kind;
    return review;
  }
}
