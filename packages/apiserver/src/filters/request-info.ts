/**
 * Per-request data read through typed accessors backed by a module-private symbol (STYLE.md §3.3), never ad-hoc
 * properties on the request.
 */
import { type IncomingMessage } from 'node:http';

import { type UserInfo } from '../registry/rest/rest';
import { parseRequestInfo, type RequestInfo } from '../endpoints/request-info';

const INFO = Symbol('platform.requestInfo');
const USER = Symbol('platform.user');

type Tagged = IncomingMessage & { [INFO]?: RequestInfo; [USER]?: UserInfo };

/** The request info, computed on first use from the method and URL. */
export function getRequestInfo(req: IncomingMessage): RequestInfo {
  const t = req as Tagged;
  if (!t[INFO]) t[INFO] = parseRequestInfo(req.method ?? 'GET', req.url ?? '/');
  return t[INFO];
}

/** The authenticated user, once authentication has run. */
export function getUser(req: IncomingMessage): UserInfo | undefined {
  return (req as Tagged)[USER];
}

/** Records the authenticated user (authentication only). */
export function setUser(req: IncomingMessage, user: UserInfo): void {
  (req as Tagged)[USER] = user;
}
