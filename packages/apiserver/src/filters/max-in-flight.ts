/**
 * In-flight limits (model: apiserver `pkg/server/filters/maxinflight.go`): at most `--max-requests-inflight`
 * non-mutating and `--max-mutating-requests-inflight` mutating requests at once; beyond that, 429 with
 * `Retry-After: 1`. Long-running requests (watches, streams) are not counted. 0 means no limit.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { tooManyRequests } from '@platform/api';

import { isLongRunning, isMutatingVerb } from '../endpoints/request-info';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { getRequestInfo } from './request-info';

/** The limits. */
export interface InFlightLimits {
  maxRequestsInFlight: number;
  maxMutatingRequestsInFlight: number;
}

/** Counts requests in flight and rejects those over the limits. Returns a connect-style middleware. */
export function maxInFlight(
  limits: InFlightLimits,
  s: Serializers,
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  let readOnly = 0;
  let mutating = 0;
  return (req, res, next) => {
    const info = getRequestInfo(req);
    if (isLongRunning(info)) return next();
    const isMutating =
      isMutatingVerb(info.verb) || (!info.isResourceRequest && req.method !== 'GET' && req.method !== 'HEAD');
    const limit = isMutating ? limits.maxMutatingRequestsInFlight : limits.maxRequestsInFlight;
    const current = isMutating ? mutating : readOnly;
    if (limit > 0 && current >= limit) {
      writeError(res, tooManyRequests('Too many requests, please try again later.', 1), s);
      return;
    }
    if (isMutating) mutating++;
    else readOnly++;
    // 'close' follows 'finish' and comes alone when the client leaves first: one listener sees every end.
    res.once('close', () => {
      if (isMutating) mutating--;
      else readOnly--;
    });
    next();
  };
}
