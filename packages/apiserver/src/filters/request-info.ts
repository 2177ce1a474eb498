/**
 * Per-request data read through typed accessors backed by a module-private symbol (STYLE.md §3.3), never ad-hoc
 * properties on the request.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { type UserInfo } from '../registry/rest/rest';
import { parseRequestInfo, type RequestInfo } from '../endpoints/request-info';

/** A filter of the chain: connect-style, `next(err)` for an unexpected failure. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

const STATE = Symbol('platform.request');

/**
 * What the filters and handlers keep about a request: one object of a fixed shape, attached once (adding several
 * properties to every request object, each changing its shape, cost more than the rest of a cheap request's
 * bookkeeping).
 */
export class RequestState {
  info: RequestInfo | undefined = undefined;
  user: UserInfo | undefined = undefined;
  /** The audit filter's record (audit/context). */
  audit: unknown = undefined;
  /** When the request arrived (epoch ms, fractional), for audit. */
  received: number | undefined = undefined;
}

type Tagged = IncomingMessage & { [STATE]?: RequestState };

/** The state of a request, created on first use. */
export function requestState(req: IncomingMessage): RequestState {
  return ((req as Tagged)[STATE] ??= new RequestState());
}

/** The request info, computed on first use from the method and URL. */
export function getRequestInfo(req: IncomingMessage): RequestInfo {
  const st = requestState(req);
  return (st.info ??= parseRequestInfo(req.method ?? 'GET', req.url ?? '/'));
}

/** The authenticated user, once authentication has run. */
export function getUser(req: IncomingMessage): UserInfo | undefined {
  return (req as Tagged)[STATE]?.user;
}

/** Records the authenticated user (authentication only). */
export function setUser(req: IncomingMessage, user: UserInfo): void {
  requestState(req).user = user;
}
