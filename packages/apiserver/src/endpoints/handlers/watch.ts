/**
 * The watch handler (model: apiserver `pkg/endpoints/handlers/watch.go`): a 200 response whose body is a stream of
 * `{type, object}` events, each flushed as it happens. JSON streams are newline-delimited objects; Protobuf streams
 * are length-prefixed `WatchEvent` messages (4-byte big-endian length, no envelope) whose `object.raw` is the
 * object in its usual Protobuf envelope, which is what client-go reads.
 *
 * The stream ends when the client goes away, when storage ends it, or at the time-out: `timeoutSeconds`, else a
 * random time between `--min-request-timeout` and twice it (so that watches of many clients do not all end at
 * once). The response starts (200, headers flushed) as soon as the watch is set up; an error after that (a compacted
 * resource version: 410) is sent as an ERROR event carrying a Status, then the stream ends.
 */
import {
  type ApiObject,
  errorToStatus,
  isStatusError,
  methodNotSupported,
  protoType,
  type Status,
  WatchEventSchema,
} from '@platform/api';
import { type WebSocket } from 'ws';

import { capabilities, type WatchEvent } from '../../registry/rest/rest';
import { encodeJsonWatchEvent, encodeProtobuf } from '../responses/encode-cache';
import { parseListOptions } from './options';
import { type VerbRequest } from './verbs';
import { checkViewOptions, objectView } from './views';

/** Encodes one event as a frame of the negotiated stream format. */
function frame(r: VerbRequest, e: WatchEvent): Buffer {
  const object =
    e.type === 'ERROR' || e.type === 'BOOKMARK'
      ? e.object
      : objectView(e.object as ApiObject, r.output, r.scope, r.query);
  if (r.output.format === 'protobuf') {
    const raw = encodeProtobuf(r.scope.serializers.protobuf, object as ApiObject);
    const msg = protoType(WatchEventSchema.$id as string)
      .encode({ type: e.type, object: { raw } })
      .finish();
    const head = Buffer.alloc(4);
    head.writeUInt32BE(msg.length, 0);
    return Buffer.concat([head, msg]);
  }
  return encodeJsonWatchEvent(e.type, object as ApiObject);
}

/** The lifetime of a watch in milliseconds. */
export function watchTimeoutMs(
  timeoutSeconds: number | undefined,
  minRequestTimeoutSeconds: number,
  random = Math.random,
): number {
  if (timeoutSeconds !== undefined && timeoutSeconds > 0) return timeoutSeconds * 1000;
  return Math.floor((1 + random()) * minRequestTimeoutSeconds * 1000);
}

/** Something events can be written to: the HTTP response, or a WebSocket. */
interface Sink {
  start(): void;
  write(chunk: Buffer): boolean | void;
  end(): void;
  onClose(f: () => void): void;
  /** Resolves when the sink can take more (back-pressure). */
  drained(): Promise<void>;
}

function httpSink(r: VerbRequest): Sink {
  const res = r.res;
  return {
    start: () => {
      res.statusCode = 200;
      res.setHeader(
        'Content-Type',
        r.output.format === 'protobuf' ? 'application/vnd.platform.protobuf;stream=watch' : 'application/json',
      );
      res.setHeader('Transfer-Encoding', 'chunked');
      res.setHeader('Cache-Control', 'no-cache, private');
      res.flushHeaders();
    },
    write: (chunk) => res.write(chunk),
    end: () => res.end(),
    onClose: (f) => res.on('close', f),
    drained: () => new Promise((resolve) => res.once('drain', resolve)),
  };
}

function wsSink(ws: WebSocket, binary: boolean): Sink {
  return {
    start: () => {},
    write: (chunk) => {
      ws.send(binary ? chunk : chunk.toString('utf8').trimEnd(), { binary });
      return ws.bufferedAmount < 1 << 20;
    },
    end: () => ws.close(1000),
    onClose: (f) => ws.on('close', f),
    drained: () => new Promise((resolve) => setTimeout(resolve, 10)),
  };
}

/** Serves a watch over the HTTP response, or over `ws` when the request was upgraded to a WebSocket. */
export async function watchHandler(r: VerbRequest, ws?: WebSocket): Promise<void> {
  const s = r.scope.storage;
  if (!capabilities.watcher(s))
    throw methodNotSupported({ group: r.scope.kind.group, resource: r.scope.resource }, 'watch');
  const o = parseListOptions(r.query, true);
  checkViewOptions(r.output, r.query);
  const abort = new AbortController();
  const ctx = { ...r.ctx, signal: abort.signal };
  // Starting the watch validates its options (selectors): those errors are plain Status responses.
  const events = s.watch(ctx, o)[Symbol.asyncIterator]();
  const sink = ws ? wsSink(ws, r.output.format === 'protobuf') : httpSink(r);
  const timer = setTimeout(() => abort.abort(), watchTimeoutMs(o.timeoutSeconds, r.scope.minRequestTimeoutSeconds));
  sink.onClose(() => abort.abort());
  // The request's own signal: the client went away, or the server is shutting down.
  if (r.ctx.signal?.aborted) abort.abort();
  else r.ctx.signal?.addEventListener('abort', () => abort.abort(), { once: true });
  // The watch is set up (its options are good): the 200 and its headers go out now, as Kubernetes flushes them,
  // so that a client's watch call returns before the first event (a quiet collection may have none for long).
  sink.start();
  const ended = new Promise<IteratorResult<WatchEvent>>((resolve) => {
    if (abort.signal.aborted) resolve({ done: true, value: undefined });
    abort.signal.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true });
  });
  try {
    for (;;) {
      let next: IteratorResult<WatchEvent>;
      try {
        next = await Promise.race([events.next(), ended]);
      } catch (err) {
        if (!isStatusError(err)) r.scope.logBug?.(err);
        sink.write(frame(r, { type: 'ERROR', object: errorToStatus(err).status as Status }));
        break;
      }
      if (next.done) break;
      if (sink.write(frame(r, next.value)) === false) await Promise.race([sink.drained(), ended]);
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
    void events.return?.();
    sink.end();
  }
}
