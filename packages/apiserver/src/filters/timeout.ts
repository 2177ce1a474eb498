/**
 * The request deadline (model: apiserver `pkg/server/filters/timeout.go`): a request that is not long-running and
 * has not answered within `--request-timeout` gets a 504 Timeout Status; `timeoutSeconds` may ask for less. The
 * handler's signal is aborted so that its work stops.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { timeout } from '@platform/api';

import { isLongRunning } from '../endpoints/request-info';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { getRequestInfo } from './request-info';

/** Starts the deadline of a request; returns the signal aborted when it passes (or the client goes away). */
export function requestDeadline(
  req: IncomingMessage,
  res: ServerResponse,
  requestTimeoutMs: number,
  s: Serializers,
): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const info = getRequestInfo(req);
  if (isLongRunning(info) || requestTimeoutMs <= 0) return abort.signal;
  let ms = requestTimeoutMs;
  const asked = Number(new URLSearchParams(req.url?.split('?')[1] ?? '').get('timeoutSeconds') ?? NaN);
  if (Number.isInteger(asked) && asked > 0) ms = Math.min(ms, asked * 1000);
  const timer = setTimeout(() => {
    abort.abort();
    if (!res.headersSent)
      writeError(res, timeout('request did not complete within requested timeout - context deadline exceeded', 0), s);
  }, ms);
  res.on('close', () => clearTimeout(timer));
  res.on('finish', () => clearTimeout(timer));
  return abort.signal;
}
