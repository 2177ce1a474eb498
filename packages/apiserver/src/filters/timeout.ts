/**
 * The request deadline (model: apiserver `pkg/server/filters/timeout.go`): a request that is not long-running and
 * has not answered within `--request-timeout` gets a 504 Timeout Status; `timeoutSeconds` may ask for less. The
 * handler's signal is aborted so that its work stops, and when the client goes away before the answer.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { timeout } from '@platform/api';

import { isLongRunning, isMutatingVerb } from '../endpoints/request-info';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { getRequestInfo } from './request-info';
import { bindWarningRecorder, unbindWarningRecorder } from './warning';

/**
 * Why a request's work was stopped. One shared value: `abort()` without a reason would build a DOMException (and
 * its stack) on every request.
 */
const REQUEST_ENDED = Object.freeze(new Error('the request ended (deadline passed or client gone)'));

/**
 * Starts the deadline of a request; returns the signal aborted when it passes (or the client goes away). For a
 * mutating request the signal also carries warnings to the response's headers (`warning.ts`).
 */
export function requestDeadline(
  req: IncomingMessage,
  res: ServerResponse,
  requestTimeoutMs: number,
  s: Serializers,
): AbortSignal {
  const abort = new AbortController();
  const info = getRequestInfo(req);
  const longRunning = isLongRunning(info);
  // Reads of resources are bound too: a deprecated custom resource version warns on every request (1.21).
  if (isMutatingVerb(info.verb) || (info.isResourceRequest && !longRunning)) bindWarningRecorder(abort.signal, res);
  let timer: NodeJS.Timeout | undefined;
  // 'close' follows 'finish' and also comes alone when the client leaves first. A long-running request (a watch)
  // always stops its work then; another one only when its answer was not sent (after it, nothing listens).
  res.once('close', () => {
    if (timer) clearTimeout(timer);
    if (longRunning || !res.writableFinished) abort.abort(REQUEST_ENDED);
    unbindWarningRecorder(abort.signal);
  });
  if (longRunning || requestTimeoutMs <= 0) return abort.signal;
  let ms = requestTimeoutMs;
  if (req.url?.includes('timeoutSeconds=')) {
    const asked = Number(new URLSearchParams(req.url!.slice(req.url!.indexOf('?') + 1)).get('timeoutSeconds') ?? NaN);
    if (Number.isInteger(asked) && asked > 0) ms = Math.min(ms, asked * 1000);
  }
  timer = setTimeout(() => {
    timer = undefined;
    abort.abort(REQUEST_ENDED);
    if (!res.headersSent)
      writeError(res, timeout('request did not complete within requested timeout - context deadline exceeded', 0), s);
  }, ms);
  return abort.signal;
}
