/**
 * The audit filters (model: apiserver `pkg/endpoints/filters/audit.go` and `authn_audit.go`).
 *
 * - {@link auditReceived} runs first: it notes when the request arrived and, for a request that authentication
 *   turns away, writes one event at stage ResponseStarted with the 401 (its user empty).
 * - {@link audit} runs after authentication: the policy gives the level; an audited request gets an `Audit-Id`
 *   response header and its RequestReceived event, then ResponseStarted (long-running requests, when the headers
 *   go out) and ResponseComplete (when the response ends). In blocking modes the handler waits for RequestReceived
 *   to be stored and the response waits for ResponseComplete; a blocking-strict sink that fails at RequestReceived
 *   fails the request with a 500, as Kubernetes does.
 * - {@link auditPanics} is the error handler of the chain: an unexpected failure is written as a Panic event and a
 *   500 Status.
 * - {@link auditUpgrade} does the same for WebSocket watches.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type TLSSocket } from 'node:tls';

import { errorToStatus, internalError } from '@platform/api';
import { type Logger } from '@platform/common';

import { type Auditor, objectRefOf } from '../audit/auditor';
import { type AuditRecord, getAuditRecord, getReceivedTime, setReceivedTime } from '../audit/context';
import { microTime, preciseNow, sourceIPs } from '../audit/event';
import { AUDIT_V1, type AuditEvent } from '../audit/types';
import { isLongRunning } from '../endpoints/request-info';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { getRequestInfo, getUser, type Middleware } from './request-info';

type Next = (err?: unknown) => void;

/** The methods a rejected request tried, as Kubernetes words it in the event. */
function attemptedMethods(req: IncomingMessage): string {
  const methods: string[] = [];
  const auth = req.headers.authorization ?? '';
  if (/^basic /i.test(auth)) methods.push('basic');
  if (/^bearer /i.test(auth)) methods.push('bearer');
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate === 'function') {
    const cert = socket.getPeerCertificate();
    if (cert && Object.keys(cert).length > 0) methods.push('x509');
  }
  return methods.length === 0
    ? 'Authentication failed, no credentials provided'
    : `Authentication failed, attempted: ${methods.join(', ')}`;
}

/** Writes the event of a request that authentication rejected. */
function auditFailedAuthentication(
  auditor: Auditor,
  req: IncomingMessage,
  res: ServerResponse,
  received: number,
): void {
  const info = getRequestInfo(req);
  const { level, omitStages } = auditor.decide({
    user: { name: '', groups: [] },
    verb: info.verb,
    resourceRequest: info.isResourceRequest,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
    path: info.path,
  });
  if (level === 'None' || omitStages.has('ResponseStarted')) return;
  const userAgent = req.headers['user-agent'];
  const ev: AuditEvent = {
    kind: 'Event',
    apiVersion: AUDIT_V1,
    level,
    auditID: randomUUID(),
    stage: 'ResponseStarted',
    requestURI: req.url ?? '/',
    verb: info.verb,
    user: {},
    sourceIPs: sourceIPs(req),
    ...(userAgent ? { userAgent } : {}),
    objectRef: objectRefOf(info),
    responseStatus: { metadata: {}, message: attemptedMethods(req), code: res.statusCode },
    requestReceivedTimestamp: microTime(received),
    stageTimestamp: auditor.stamp(),
  };
  void auditor.emitEvent(ev);
}

/** The first filter: the arrival time. */
export function auditReceived(now: () => number = preciseNow): Middleware {
  return (req, _res, next) => {
    setReceivedTime(req, now());
    next();
  };
}

/**
 * What the authentication filter calls after writing a 401: the event of the rejected request (its credentials are
 * still in the headers: authentication removes them only on success).
 */
export function auditRejected(auditor: Auditor): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => auditFailedAuthentication(auditor, req, res, getReceivedTime(req) ?? preciseNow());
}

/**
 * Hooks the response of an audited request: ResponseStarted for long-running requests, ResponseComplete when it
 * ends (the end waits for the sink in blocking modes).
 */
function hookResponse(
  auditor: Auditor,
  rec: AuditRecord,
  req: IncomingMessage,
  res: ServerResponse,
  log: Logger,
): void {
  if (isLongRunning(getRequestInfo(req)) && !rec.omitStages.has('ResponseStarted')) {
    const writeHead = res.writeHead;
    let started = false;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      if (!started) {
        started = true;
        const code = typeof args[0] === 'number' ? args[0] : res.statusCode;
        void auditor.emit(rec, 'ResponseStarted', code);
      }
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
  }
  // ResponseComplete when the response closes ('close' follows 'finish', and comes alone when the client leaves
  // first; a response closes once: `on`, not `once` and its wrapper). In blocking modes the wrapped `end` below
  // writes it first, so that the response waits for the sink; then this one sees a completed record.
  res.on('close', () => {
    if (!rec.completed) void auditor.emit(rec, 'ResponseComplete', res.statusCode);
  });
  // Batch mode: nothing waits for the sink, and the response's methods are left unwrapped.
  if (auditor.backend.synchronous) return;
  const end = res.end;
  let ending = false;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    const finish = (): ServerResponse => (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    if (rec.completed) return finish();
    if (ending) return this; // a second answer while the first waits for the sink (a time-out): dropped
    const r = auditor.emit(rec, 'ResponseComplete', res.statusCode);
    if (typeof r === 'boolean') return finish();
    ending = true;
    r.then(
      () => finish(),
      (err: unknown) => {
        log.error('Audit failed at ResponseComplete', { err });
        finish();
      },
    );
    return this;
  } as ServerResponse['end'];
}

/** Starts auditing an authenticated request; calls `proceed` when the handler may run. */
function startAudit(
  auditor: Auditor,
  req: IncomingMessage,
  res: ServerResponse,
  s: Serializers,
  log: Logger,
  proceed: () => void,
): void {
  const rec = auditor.begin(req, getRequestInfo(req), getUser(req));
  if (!rec) return proceed();
  res.setHeader('Audit-Id', rec.event.auditID);
  const r = auditor.emit(rec, 'RequestReceived');
  const go = (ok: boolean): void => {
    if (!ok) {
      // blocking-strict: a request whose arrival could not be recorded is not served.
      rec.completed = true;
      writeError(res, internalError('failed to store audit event'), s);
      return;
    }
    hookResponse(auditor, rec, req, res, log);
    proceed();
  };
  if (typeof r === 'boolean') go(r);
  else
    r.then(go, (err: unknown) => {
      log.error('Audit failed at RequestReceived', { err });
      go(false);
    });
}

/** The audit filter (after authentication). */
export function audit(auditor: Auditor, s: Serializers, log: Logger): Middleware {
  return (req, res, next) => startAudit(auditor, req, res, s, log, () => next());
}

/** The chain's error handler: an unexpected failure is a Panic event and a 500 Status. */
export function auditPanics(
  auditor: Auditor | undefined,
  s: Serializers,
  log: Logger,
): (err: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void {
  return (err, req, res, _next) => {
    log.error('Internal error serving a request', { err });
    const answer = (): void =>
      writeError(res, internalError('an unexpected error occurred while serving the request'), s);
    const rec = getAuditRecord(req);
    if (auditor && rec && !rec.completed) {
      rec.responseStatus = {
        status: 'Failure',
        message: `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}`,
        reason: 'InternalError',
      };
      // In blocking modes the answer waits for the event, as every other stage's does.
      const r = auditor.emit(rec, 'Panic', 500);
      if (typeof r !== 'boolean') {
        r.then(answer, answer);
        return;
      }
    }
    answer();
  };
}

/**
 * Audits a WebSocket watch once it is authenticated. Resolves false when the request was refused (a blocking-strict
 * sink failed at RequestReceived; `refuse` has been called with the 500). Otherwise resolves the hooks: `refuse` to
 * use for a later refusal (it writes ResponseComplete with the refusal's code), and `started` for the accepted
 * socket (ResponseStarted with 101 now, ResponseComplete when it closes).
 */
export async function auditUpgrade(
  auditor: Auditor,
  req: IncomingMessage,
  refuse: (err: unknown) => void,
): Promise<
  false | { refuse: (err: unknown) => void; started: (ws: { once(e: 'close', f: () => void): unknown }) => void }
> {
  const rec = auditor.begin(req, getRequestInfo(req), getUser(req));
  if (!rec) return { refuse, started: () => {} };
  if (!(await auditor.emit(rec, 'RequestReceived'))) {
    rec.completed = true;
    refuse(internalError('failed to store audit event'));
    return false;
  }
  return {
    refuse: (err) => {
      const status = errorToStatus(err).status;
      noteStatus(rec, status);
      void auditor.emit(rec, 'ResponseComplete', status.code);
      refuse(err);
    },
    started: (ws) => {
      void auditor.emit(rec, 'ResponseStarted', 101);
      ws.once('close', () => {
        if (!rec.completed) void auditor.emit(rec, 'ResponseComplete', 101);
      });
    },
  };
}

/** Keeps a refusal's Status on the record, as the response writer would. */
function noteStatus(rec: AuditRecord, status: Record<string, unknown>): void {
  const { apiVersion: _v, kind: _k, metadata: _m, ...rest } = status;
  rec.responseStatus = rest;
}
