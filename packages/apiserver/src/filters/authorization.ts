/**
 * The authorization filter (model: apiserver `pkg/endpoints/filters/authorization.go`): the authorizer chain decides
 * from the request's attributes; anything but an allow is a 403 Status naming the user, verb, resource and namespace
 * as Kubernetes words it.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { forbidden, StatusError } from '@platform/api';
import { type Logger } from '@platform/common';

import { ANONYMOUS } from '../auth/authenticator';
import { type Attributes, attributesOf, type Authorizer, forbiddenMessage } from '../auth/authorizer';
import { addAuditAnnotation } from '../audit/context';
import { DECISION_ANNOTATION, REASON_ANNOTATION } from '../audit/types';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { getRequestInfo, getUser } from './request-info';

/** The 403 of a request the chain did not allow. */
export function forbiddenError(a: Attributes, reason: string): StatusError {
  const detail = forbiddenMessage(a, reason);
  if (!a.resourceRequest) return new StatusError({ code: 403, reason: 'Forbidden', message: `forbidden: ${detail}` });
  // As Kubernetes: the Status names the resource without its subresource (`pods "x" is forbidden: ...`); the
  // message says `pods/log`.
  return forbidden({ group: a.apiGroup, resource: a.resource }, a.name, detail);
}

/** Authorizes `req`; resolves true when allowed, otherwise calls `reject` with the 403 and resolves false. */
export async function authorizeRequest(
  authorizer: Authorizer,
  req: IncomingMessage,
  reject: (err: unknown) => void,
  log: Logger,
): Promise<boolean> {
  const a = attributesOf(getRequestInfo(req), getUser(req) ?? ANONYMOUS);
  const r = await authorizer.authorize(a);
  // Audit annotations, as Kubernetes records the decision and the authorizer's reason.
  addAuditAnnotation(req, DECISION_ANNOTATION, r.decision === 'allow' ? 'allow' : 'forbid');
  if (r.reason) addAuditAnnotation(req, REASON_ANNOTATION, r.reason);
  if (r.decision === 'allow') return true;
  log.v(4).info('Forbidden', { user: a.user.name, verb: a.verb, resource: a.resource, path: a.path, reason: r.reason });
  reject(forbiddenError(a, r.reason));
  return false;
}

/** The filter as middleware. */
export function authorization(
  authorizer: Authorizer,
  serializers: Serializers,
  log: Logger,
): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  return (req, res, next) => {
    void authorizeRequest(authorizer, req, (err) => writeError(res, err, serializers), log).then((ok) => {
      if (ok) next();
    }, next);
  };
}
