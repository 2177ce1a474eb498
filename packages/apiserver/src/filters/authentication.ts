/**
 * The authentication filter (model: apiserver `pkg/endpoints/filters/authentication.go`): asks the authenticator who
 * sent the request and records the user on it; a request without a user gets a 401 Status that says nothing about
 * why (the reason is logged at a verbose level). The `Authorization` header is removed once read, so nothing
 * further down the chain sees the credential.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { unauthorized } from '@platform/api';
import { type Logger } from '@platform/common';

import { type Authenticator, isAuthenticationError } from '../auth/authenticator';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { setUser } from './request-info';

/**
 * Authenticates `req`. Resolves true when a user was recorded; otherwise the 401 has been written (or, for an
 * upgrade, `reject` was called) and resolves false.
 */
export async function authenticateRequest(
  authenticator: Authenticator,
  req: IncomingMessage,
  reject: (err: unknown) => void,
  log: Logger,
): Promise<boolean> {
  try {
    const r = await authenticator.authenticate(req);
    if (!r) {
      reject(unauthorized());
      return false;
    }
    setUser(req, r.user);
    delete req.headers.authorization;
    return true;
  } catch (err) {
    if (!isAuthenticationError(err)) {
      log.error('Authentication failed with an internal error', { err });
    } else {
      log.v(2).info('Unable to authenticate the request', { err: err.message, path: req.url });
    }
    reject(unauthorized());
    return false;
  }
}

/** The filter as middleware; `onRejected` runs after a 401 was written (audit of failed authentication). */
export function authentication(
  authenticator: Authenticator,
  serializers: Serializers,
  log: Logger,
  onRejected?: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  const reject = (req: IncomingMessage, res: ServerResponse, err: unknown): void => {
    writeError(res, err, serializers);
    onRejected?.(req, res);
  };
  return (req, res, next) => {
    void authenticateRequest(authenticator, req, (err) => reject(req, res, err), log).then((ok) => {
      if (ok) next();
    }, next);
  };
}
