/**
 * `--max-connection-bytes-per-sec`: the body of a long-running response (watch, logs, proxy) is written at most
 * that many bytes per second (Kubernetes throttles its long-running connections with a flow-rate writer). Writes are
 * queued in order and released as the budget allows, with a burst of one second's worth; `end` waits for the queue.
 * Other responses are not throttled.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { isLongRunning } from '../endpoints/request-info';
import { getRequestInfo } from './request-info';

type Callback = (err?: Error | null) => void;

interface Pending {
  chunk: Buffer;
  cb?: Callback;
}

/** Throttles one response's body writes to `bytesPerSec`. */
export function throttleResponse(res: ServerResponse, bytesPerSec: number): void {
  const write = res.write.bind(res) as (chunk: Buffer, cb?: Callback) => boolean;
  const end = res.end.bind(res) as (cb?: () => void) => ServerResponse;
  const queue: Pending[] = [];
  let budget = bytesPerSec;
  let last = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let endRequested: { cb?: () => void } | undefined;

  const pump = (): void => {
    timer = undefined;
    const now = performance.now();
    budget = Math.min(bytesPerSec, budget + ((now - last) / 1000) * bytesPerSec);
    last = now;
    while (queue.length > 0 && !res.destroyed) {
      const head = queue[0]!;
      if (budget < 1) break;
      const n = Math.min(head.chunk.length, Math.floor(budget));
      budget -= n;
      if (n === head.chunk.length) {
        queue.shift();
        write(head.chunk, head.cb);
      } else {
        write(head.chunk.subarray(0, n));
        head.chunk = head.chunk.subarray(n);
      }
    }
    if (queue.length > 0 && !res.destroyed) {
      const need = Math.min(queue[0]!.chunk.length, bytesPerSec) - budget;
      timer = setTimeout(pump, Math.max(1, Math.ceil((need / bytesPerSec) * 1000)));
      return;
    }
    if (endRequested) {
      const e = endRequested;
      endRequested = undefined;
      end(e.cb);
    }
  };

  res.write = function (chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
    if (typeof encoding === 'function') {
      cb = encoding;
      encoding = undefined;
    }
    const buf = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk as string, (encoding as BufferEncoding | undefined) ?? 'utf8');
    // Headers go out with the first byte as usual; only the body is paced.
    if (!res.headersSent) res.flushHeaders();
    queue.push({ chunk: buf, ...(cb ? { cb: cb as Callback } : {}) });
    if (!timer) pump();
    return true;
  } as ServerResponse['write'];

  res.end = function (chunk?: unknown, encoding?: unknown, cb?: unknown): ServerResponse {
    if (typeof chunk === 'function') {
      cb = chunk;
      chunk = undefined;
    } else if (typeof encoding === 'function') {
      cb = encoding;
      encoding = undefined;
    }
    if (chunk !== undefined && chunk !== null) (res.write as (c: unknown, e?: unknown) => boolean)(chunk, encoding);
    endRequested = cb ? { cb: cb as () => void } : {};
    if (!timer) pump();
    return res;
  } as ServerResponse['end'];

  res.once('close', () => {
    if (timer) clearTimeout(timer);
    queue.length = 0;
  });
}

/** The filter; undefined when the option is 0 (no limit). */
export function connectionThrottle(
  bytesPerSec: number,
): ((req: IncomingMessage, res: ServerResponse, next: () => void) => void) | undefined {
  if (bytesPerSec <= 0) return undefined;
  return (req, res, next) => {
    if (isLongRunning(getRequestInfo(req))) throttleResponse(res, bytesPerSec);
    next();
  };
}
