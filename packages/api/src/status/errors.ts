/**
 * API errors: a `StatusError` carries the `Status` object that goes on the wire. The constructors below build
 * each error the way Kubernetes' `apimachinery/pkg/api/errors` words it, so clients that match on reasons,
 * codes or messages behave the same against this server. Checks use a brand, not `instanceof`, so they hold
 * across duplicate copies of this package (STYLE.md §4).
 */
import { type FieldError, fieldErrorBody, fieldErrorToString } from '../validation/field-errors';
import { type Status, type StatusCause, type StatusDetails } from '../meta/v1/types';

/** The `reason` values of a failure Status. */
export type StatusReason =
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable'
  | '';

/** A group and resource, as errors name them (`deployments.apps`, or `pods` in the core group). */
export interface GroupResource {
  group: string;
  resource: string;
}

/** A group and kind (`Deployment.apps`). */
export interface GroupKind {
  group: string;
  kind: string;
}

const BRAND = Symbol.for('platform.api.StatusError');

/** An error that is an API Status. Thrown by the registry and handlers; produced by the client from responses. */
export class StatusError extends Error {
  readonly [BRAND] = true;
  readonly status: Status & { code: number; reason: StatusReason };

  constructor(status: Status & { code: number; reason: StatusReason }) {
    super(status.message ?? status.reason);
    this.name = 'StatusError';
    this.status = { apiVersion: 'v1', kind: 'Status', metadata: {}, ...status, status: 'Failure' };
  }

  /** The HTTP status code. */
  get code(): number {
    return this.status.code;
  }

  get reason(): StatusReason {
    return this.status.reason;
  }
}

/** Brand check: true for a StatusError from any copy of this package. */
export function isStatusError(err: unknown): err is StatusError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** Builds a StatusError from a Status received from a server (the client's side of the wire). */
export function fromStatus(status: Status): StatusError {
  return new StatusError({
    ...status,
    code: status.code ?? 500,
    reason: (status.reason ?? '') as StatusReason,
  });
}

function grString(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function gkString(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

function make(code: number, reason: StatusReason, message: string, details?: StatusDetails): StatusError {
  return new StatusError(details ? { code, reason, message, details } : { code, reason, message });
}

/** 404 NotFound: `pods "x" not found`. */
export function notFound(gr: GroupResource, name: string): StatusError {
  return make(404, 'NotFound', `${grString(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource });
}

/** 409 AlreadyExists: `pods "x" already exists`. */
export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return make(409, 'AlreadyExists', `${grString(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

/** 409 AlreadyExists for a generated name that collided: the client should retry. */
export function generateNameConflict(gr: GroupResource, name: string, retryAfterSeconds: number): StatusError {
  return make(
    409,
    'AlreadyExists',
    `${grString(gr)} "${name}" already exists, the server was not able to generate a unique name for the object`,
    { name, group: gr.group, kind: gr.resource, retryAfterSeconds },
  );
}

/** 409 Conflict: `Operation cannot be fulfilled on pods "x": <detail>`. */
export function conflict(gr: GroupResource, name: string, detail: string): StatusError {
  return make(409, 'Conflict', `Operation cannot be fulfilled on ${grString(gr)} "${name}": ${detail}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

/** The `details.causes` entry of a field error: reason = its type, message = its text without the field path. */
export function fieldErrorCause(e: FieldError): StatusCause {
  return { reason: e.type, message: fieldErrorBody(e), field: e.field };
}

/** 422 Invalid: `Pod "x" is invalid: <field errors>`, with one cause per field error. */
export function invalid(gk: GroupKind, name: string, errs: FieldError[]): StatusError {
  const texts = errs.map(fieldErrorToString);
  const joined = texts.length === 1 ? (texts[0] as string) : `[${texts.join(', ')}]`;
  return make(422, 'Invalid', `${gkString(gk)} "${name}" is invalid: ${joined}`, {
    name,
    group: gk.group,
    kind: gk.kind,
    causes: errs.map(fieldErrorCause),
  });
}

/** 400 BadRequest with the given message. */
export function badRequest(message: string): StatusError {
  return make(400, 'BadRequest', message);
}

/** 401 Unauthorized. */
export function unauthorized(message = 'Unauthorized'): StatusError {
  return make(401, 'Unauthorized', message);
}

/** 403 Forbidden: `pods "x" is forbidden: <detail>` (the name is left out when empty). */
export function forbidden(gr: GroupResource, name: string, detail: string): StatusError {
  const what = name ? `${grString(gr)} "${name}"` : grString(gr);
  return make(403, 'Forbidden', `${what} is forbidden: ${detail}`, { name, group: gr.group, kind: gr.resource });
}

/** 405 MethodNotAllowed: `<verb> is not supported on resources of kind "<resource>"`. */
export function methodNotSupported(gr: GroupResource, verb: string): StatusError {
  return make(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${grString(gr)}"`, {
    group: gr.group,
    kind: gr.resource,
  });
}

/** 406 NotAcceptable: no representation the client accepts. */
export function notAcceptable(accepted: string[]): StatusError {
  return make(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

/** 415 UnsupportedMediaType: the request body's content type is not supported. */
export function unsupportedMediaType(contentType: string, supported: string[]): StatusError {
  return make(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}` +
      (contentType ? ` (got ${JSON.stringify(contentType)})` : ''),
  );
}

/** 413 RequestEntityTooLarge. */
export function requestEntityTooLarge(detail: string): StatusError {
  return make(413, 'RequestEntityTooLarge', `Request entity too large: ${detail}`);
}

/** 410 Expired: a resource version or continue token is too old. */
export function resourceExpired(message: string): StatusError {
  return make(410, 'Expired', message);
}

/** 410 Gone. */
export function gone(message: string): StatusError {
  return make(410, 'Gone', message);
}

/** 429 TooManyRequests, with the seconds to wait in `details.retryAfterSeconds`. */
export function tooManyRequests(message: string, retryAfterSeconds: number): StatusError {
  return make(429, 'TooManyRequests', message, { retryAfterSeconds });
}

/** 504 Timeout: `Timeout: <message>`, with `details.retryAfterSeconds` when given. */
export function timeout(message: string, retryAfterSeconds = 0): StatusError {
  return make(504, 'Timeout', `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : undefined);
}

/**
 * 504 Timeout for a read "not older than" a resourceVersion the server has not reached in time (1.21's
 * `NewTooLargeResourceVersionError`), with the `ResourceVersionTooLarge` cause that tells it from other timeouts.
 */
export function tooLargeResourceVersion(detail: string): StatusError {
  return make(504, 'Timeout', `Timeout: Too large resource version: ${detail}`, {
    retryAfterSeconds: 1,
    causes: [{ reason: RESOURCE_VERSION_TOO_LARGE, message: 'Too large resource version' }],
  });
}

const RESOURCE_VERSION_TOO_LARGE = 'ResourceVersionTooLarge';

/** True for a {@link tooLargeResourceVersion} error (client-go's `isTooLargeResourceVersionError`). */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!isStatusError(err) || err.code !== 504) return false;
  const causes = err.status.details?.causes ?? [];
  return (
    causes.some((c) => c.reason === RESOURCE_VERSION_TOO_LARGE) ||
    // Servers before the cause was added: the message says it.
    causes.some((c) => c.message?.includes('Too large resource version')) ||
    err.message.includes('Too large resource version')
  );
}

/** 500 ServerTimeout: an operation could not complete in time; the client may retry. */
export function serverTimeout(gr: GroupResource, operation: string, retryAfterSeconds: number): StatusError {
  return make(
    500,
    'ServerTimeout',
    `The ${operation} operation against ${grString(gr)} could not be completed at this time, please try again.`,
    { name: operation, group: gr.group, kind: gr.resource, retryAfterSeconds },
  );
}

/** 503 ServiceUnavailable. */
export function serviceUnavailable(message: string): StatusError {
  return make(503, 'ServiceUnavailable', message);
}

/** 500 InternalError: `Internal error occurred: <err>`. */
export function internalError(err: unknown): StatusError {
  const text = err instanceof Error ? err.message : String(err);
  return make(500, 'InternalError', `Internal error occurred: ${text}`, { causes: [{ message: text }] });
}

/**
 * The Status for any thrown value: a StatusError passes through; anything else is a bug and becomes a 500
 * InternalError (the caller logs it).
 */
export function errorToStatus(err: unknown): StatusError {
  return isStatusError(err) ? err : internalError(err);
}

/** A Success Status (the answer of some deletes). */
export function successStatus(details?: StatusDetails): Status {
  return { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Success', ...(details ? { details } : {}) };
}

function reasonIs(reason: StatusReason, code?: number) {
  return (err: unknown): boolean =>
    isStatusError(err) && (err.reason === reason || (code !== undefined && err.reason === '' && err.code === code));
}

/** True for a 404 NotFound StatusError. */
export const isNotFound = reasonIs('NotFound', 404);
/** True for a 409 AlreadyExists StatusError. */
export const isAlreadyExists = reasonIs('AlreadyExists');
/** True for a 409 Conflict StatusError. */
export const isConflict = reasonIs('Conflict', 409);
/** True for a 422 Invalid StatusError. */
export const isInvalid = reasonIs('Invalid', 422);
/** True for a 400 BadRequest StatusError. */
export const isBadRequest = reasonIs('BadRequest', 400);
/** True for a 401 Unauthorized StatusError. */
export const isUnauthorized = reasonIs('Unauthorized', 401);
/** True for a 403 Forbidden StatusError. */
export const isForbidden = reasonIs('Forbidden', 403);
/** True for a 410 Gone StatusError. */
export const isGone = reasonIs('Gone', 410);
/** True for a 410 Expired StatusError. */
export const isResourceExpired = reasonIs('Expired');
/** True for a 429 TooManyRequests StatusError. */
export const isTooManyRequests = reasonIs('TooManyRequests', 429);
/** True for a 504 Timeout StatusError. */
export const isTimeout = reasonIs('Timeout', 504);
/** True for a 500 ServerTimeout StatusError. */
export const isServerTimeout = reasonIs('ServerTimeout');
/** True for a 500 InternalError StatusError. */
export const isInternalError = reasonIs('InternalError', 500);
/** True for a 503 ServiceUnavailable StatusError. */
export const isServiceUnavailable = reasonIs('ServiceUnavailable', 503);
/** True for a 406 NotAcceptable StatusError. */
export const isNotAcceptable = reasonIs('NotAcceptable', 406);
/** True for a 415 UnsupportedMediaType StatusError. */
export const isUnsupportedMediaType = reasonIs('UnsupportedMediaType', 415);
/** True for a 405 MethodNotAllowed StatusError. */
export const isMethodNotSupported = reasonIs('MethodNotAllowed', 405);
/** True for a 413 RequestEntityTooLarge StatusError. */
export const isRequestEntityTooLarge = reasonIs('RequestEntityTooLarge', 413);

/** The seconds a client should wait before retrying, when the error says so. */
export function suggestsClientDelay(err: unknown): number | undefined {
  if (!isStatusError(err)) return undefined;
  const s = err.status.details?.retryAfterSeconds;
  return s && s > 0 ? s : undefined;
}
