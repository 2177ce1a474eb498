/**
 * The request deadline (model: apiserver `pkg/server/filters/timeout.go`): a request that is not long-running and
 * has not answered within `--request-timeout` gets a 504 Timeout Status; `timeoutSeconds` may ask for less. The
 * handler's signal is aborted so that its work stops, and when the client goes away before the answer.
 *
 * The signal is made only when something asks for it (a handler that listens, a warning added): Node's AbortSignals
 * outlive every young-generation collection (only a mark-compact frees them), so one per request promoted ~0.6 KB
 * per GET to the old space, and the mark-compacts that then collect them were the tail of the get latency (issue
 * 18). A plain GET answered from the watch cache never asks.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { timeout } from '@platform/api';

import { isLongRunning, isMutatingVerb } from '../endpoints/request-info';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { type RequestContext, type UserInfo } from '../registry/rest/rest';
import { getRequestInfo } from './request-info';
import { bindWarningRecorder, unbindWarningRecorder } from './warning';

/**
 * Why a request's work was stopped. One shared value: `abort()` without a reason would build a DOMException (and
 * its stack) on every request.
 */
const REQUEST_ENDED = Object.freeze(new Error('the request ended (deadline passed or client gone)'));

/**
 * The deadline of one request: whether its work must stop (the deadline passed, or the client went away before the
 * answer), and the signal that says so, made at its first read. A signal asked for after the end is aborted already.
 */
export class RequestDeadline {
  private controller: AbortController | undefined;
  private ended = false;
  /**
   * The response whose warning headers the signal carries (`warning.ts`), until it closes: dropped then, so that a
   * context kept past the request's end (which holds this deadline) does not keep the whole request with it.
   */
  private res: ServerResponse | undefined;

  /** @param warnings whether the signal carries the warnings added with it to the headers of `res` */
  constructor(
    res: ServerResponse,
    private readonly warnings: boolean,
  ) {
    this.res = res;
  }

  /** Whether the work of the request must stop (the deadline passed or the client went away before the answer). */
  get aborted(): boolean {
    return this.ended;
  }

  /** The signal of the request's work: made now if nothing asked for it before. */
  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const c = new AbortController();
    this.controller = c;
    if (this.ended) c.abort(REQUEST_ENDED);
    // After the response closed no header can be added: no binding then.
    else if (this.warnings && this.res) bindWarningRecorder(c.signal, this.res);
    return c.signal;
  }

  /** Stops the request's work: aborts the signal if it was made, and any made later. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.controller?.abort(REQUEST_ENDED);
  }

  /** At the response's close: the response and the signal's warning binding go (they would keep it alive). */
  closed(): void {
    this.res = undefined;
    if (this.controller && this.warnings) unbindWarningRecorder(this.controller.signal);
  }
}

/**
 * Starts the deadline of a request; returns it (its signal is aborted when it passes or the client goes away, and
 * is made when first asked for). For mutating requests and reads of resources the signal also carries warnings to
 * the response's headers (`warning.ts`).
 */
export function requestDeadline(
  req: IncomingMessage,
  res: ServerResponse,
  requestTimeoutMs: number,
  s: Serializers,
): RequestDeadline {
  const info = getRequestInfo(req);
  const longRunning = isLongRunning(info);
  // Reads of resources are bound too: a deprecated custom resource version warns on every request (1.21).
  const deadline = new RequestDeadline(res, isMutatingVerb(info.verb) || (info.isResourceRequest && !longRunning));
  let timer: NodeJS.Timeout | undefined;
  // 'close' follows 'finish' and also comes alone when the client leaves first. A long-running request (a watch)
  // always stops its work then; another one only when its answer was not given (after it, nothing listens).
  // `writableEnded`, not `writableFinished`: HTTP/2's compatible response says finished when its stream was reset.
  res.once('close', () => {
    if (timer) clearTimeout(timer);
    if (longRunning || !res.writableEnded) deadline.end();
    deadline.closed();
  });
  if (longRunning || requestTimeoutMs <= 0) return deadline;
  let ms = requestTimeoutMs;
  if (req.url?.includes('timeoutSeconds=')) {
    const asked = Number(new URLSearchParams(req.url!.slice(req.url!.indexOf('?') + 1)).get('timeoutSeconds') ?? NaN);
    if (Number.isInteger(asked) && asked > 0) ms = Math.min(ms, asked * 1000);
  }
  timer = setTimeout(() => {
    timer = undefined;
    deadline.end();
    if (!res.headersSent)
      writeError(res, timeout('request did not complete within requested timeout - context deadline exceeded', 0), s);
  }, ms);
  return deadline;
}

/** Where a context made by {@link deadlineContext} keeps its deadline. */
const DEADLINE = Symbol('platform.deadline');

/**
 * The `signal` of every context made by {@link deadlineContext}: one getter function for all of them. A getter
 * written in the context's object literal would be a new function per request, and V8 keeps such an object's
 * accessor in its map, in the old space: each GET's context, deadline and response then survived every scavenge
 * until a mark-compact (2.4 KB promoted per GET, where a plain object promotes nothing).
 */
const SIGNAL: PropertyDescriptor = {
  get(this: { [DEADLINE]: RequestDeadline }): AbortSignal {
    return this[DEADLINE].signal;
  },
  enumerable: true,
  configurable: true,
};

/**
 * The context of a request whose signal is `deadline`'s, made at its first read. The getter is an own, enumerable
 * property: a spread copy of the context reads it (and so has the signal); {@link withNamespace} keeps it lazy.
 */
export function deadlineContext(
  namespace: string,
  now: () => number,
  user: UserInfo | undefined,
  deadline: RequestDeadline,
): RequestContext {
  const ctx: RequestContext & { [DEADLINE]: RequestDeadline } = { namespace, now, [DEADLINE]: deadline };
  if (user) ctx.user = user;
  return Object.defineProperty(ctx, 'signal', SIGNAL);
}
