/**
 * The one place storage errors become API errors (model: apiserver `pkg/storage/errors/storage.go`). Anything that
 * is neither a StorageError nor already a StatusError passes through, and the handler turns it into a 500.
 */
import {
  alreadyExists,
  badRequest,
  conflict,
  type GroupResource,
  internalError,
  isStatusError,
  notFound,
  requestEntityTooLarge,
  resourceExpired,
  serverTimeout,
  timeout,
  tooLargeResourceVersion,
} from '@platform/api';

import { isStorageError } from '../../storage/errors';

/** Seconds a client is told to wait before retrying when storage is unreachable or too slow. */
const STORAGE_RETRY_SECONDS = 2;

/**
 * Translates an error from storage for a request on `gr`/`name` (`operation` names the verb in ServerTimeout
 * messages). Returns what to throw.
 */
export function interpretStorageError(err: unknown, gr: GroupResource, name: string, operation: string): unknown {
  if (isStatusError(err) || !isStorageError(err)) return err;
  switch (err.code) {
    case 'KeyNotFound':
      return notFound(gr, name);
    case 'KeyExists':
      return alreadyExists(gr, name);
    case 'Conflict':
      return conflict(
        gr,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    case 'Unreachable': {
      // Kubernetes' answer (500 ServerTimeout with Retry-After), with the store's own words as its cause.
      const e = serverTimeout(gr, operation, STORAGE_RETRY_SECONDS);
      e.status.details = { ...e.status.details, causes: [{ message: err.message }] };
      return e;
    }
    case 'Timeout': {
      // The store did not answer within its deadline: 504 Timeout, as the request deadline answers, in the store's
      // words. For a write the outcome is unknown (the store's message says when it was certainly not applied).
      const e = timeout(err.message, STORAGE_RETRY_SECONDS);
      e.status.details = {
        ...e.status.details,
        name,
        group: gr.group,
        kind: gr.resource,
        causes: [{ message: err.message }],
      };
      return e;
    }
    case 'Compacted':
      return resourceExpired(`The resourceVersion for the provided ${operation} is too old.`);
    case 'RevisionTooLarge':
      return tooLargeResourceVersion(err.message);
    case 'TooLarge':
      return requestEntityTooLarge(err.message);
    case 'InvalidRequest':
      return badRequest(err.message);
    case 'InvalidObject':
      // Storage reports failed preconditions this way; Kubernetes answers them with 409.
      if (err.message.startsWith('Precondition failed')) return conflict(gr, name, err.message);
      return internalError(err);
    default:
      return internalError(err);
  }
}
