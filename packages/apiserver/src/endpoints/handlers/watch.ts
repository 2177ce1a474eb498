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
import { constants as http2Constants } from 'node:http2';
import { type Socket } from 'node:net';
import { type ApiObject, errorToStatus, isStatusError, methodNotSupported, type Status } from '@platform/api';

import { type WebSocket } from 'ws';

import { capabilities, type WatchEvent } from '../../registry/rest/rest';
import { respellObject, responseGroupAlias } from '../group-alias';
import { encodeJsonWatchEvent, encodeProtobufWatchEvent } from '../responses/encode-cache';
import { parseListOptions } from './options';
import { type VerbRequest } from './verbs';
import { checkViewOptions, objectView } from './views';

/**
 * Encodes one event as a frame of the negotiated stream format; a watch whose path spelled the group the Kubernetes
 * way gets its objects in that spelling (a copy: the cached frames of other watchers are not touched).
 */
function frame(r: VerbRequest, e: WatchEvent): Buffer {
  const view =
    e.type === 'ERROR' || e.type === 'BOOKMARK'
      ? e.object
      : objectView(e.object as ApiObject, r.output, r.scope, r.query);
  const alias = responseGroupAlias(r.res);
  const object = alias ? respellObject(view, alias) : view;
  if (r.output.format === 'protobuf') {
    return encodeProtobufWatchEvent(r.scope.serializers.protobuf, e.type, object as ApiObject);
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

/**
 * A watcher that falls behind is closed, as Kubernetes closes one whose buffer stays full: when its stream has not
 * drained for `STALL_MS` while events wait, or when more than `MAX_HELD` events wait for it. The client re-watches
 * from the last resourceVersion it read (what it was not sent, it never saw).
 */
export const WATCH_LIMITS = { STALL_MS: 10_000, MAX_HELD: 10_000, END_GRACE_MS: 5000 };

/** Open watch streams, and those closed for falling behind (read by tests and the soak benchmark). */
export const watchStats = { open: 0, tooSlow: 0 };

/**
 * Turns off Nagle's algorithm on the connection of a watch (HTTP/1.1: its own; HTTP/2: the session's, which its
 * other streams share): an event is one small write, and with Nagle on it waits until the client acknowledged the
 * one before, which a watch client, never writing back, delays (delayed ACK, up to 40 ms). WebSockets: `ws` does
 * the same.
 */
function sendEventsAtOnce(res: VerbRequest['res']): void {
  const socket = res.socket as (Socket & { setNoDelay?: (on: boolean) => unknown }) | null;
  try {
    socket?.setNoDelay?.(true);
  } catch {
    // an HTTP/2 socket proxy that does not allow it: the session's own setting stands
  }
}

function httpSink(r: VerbRequest): Sink {
  const res = r.res;
  return {
    start: () => {
      sendEventsAtOnce(res);
      res.statusCode = 200;
      res.setHeader(
        'Content-Type',
        r.output.format === 'protobuf' ? `${r.output.contentType};stream=watch` : 'application/json',
      );
      res.setHeader('Transfer-Encoding', 'chunked');
      res.setHeader('Cache-Control', 'no-cache, private');
      res.flushHeaders();
    },
    write: (chunk) => res.write(chunk),
    end: () => {
      res.end();
      if (res.writableFinished || res.destroyed) return;
      // A client that does not read never takes the end: its connection is reset after a grace period.
      const t = setTimeout(() => resetConnection(res), WATCH_LIMITS.END_GRACE_MS);
      t.unref();
      res.once('finish', () => clearTimeout(t));
      res.once('close', () => clearTimeout(t));
    },
    onClose: (f) => res.on('close', f),
    drained: () => new Promise((resolve) => res.once('drain', resolve)),
  };
}

/** Drops the connection (HTTP/1) or the stream (HTTP/2) of a response whose data cannot be delivered. */
function resetConnection(res: VerbRequest['res']): void {
  const stream = (res as unknown as { stream?: { close(code: number): void } }).stream;
  if (stream) {
    stream.close(http2Constants.NGHTTP2_CANCEL);
    return;
  }
  // A TCP reset where the socket allows it (plain TCP); a TLS socket is destroyed (the kernel drops it later).
  const socket = res.socket as (Socket & { resetAndDestroy?: () => void }) | null;
  try {
    socket?.resetAndDestroy?.();
  } catch {
    // not a plain TCP socket
  }
  res.destroy();
}

function wsSink(ws: WebSocket, binary: boolean): Sink {
  const full = (): boolean => ws.bufferedAmount >= 1 << 20;
  return {
    start: () => {},
    write: (chunk) => {
      ws.send(binary ? chunk : chunk.toString('utf8').trimEnd(), { binary });
      return !full();
    },
    end: () => ws.close(1000),
    onClose: (f) => ws.on('close', f),
    // ws has no drain event: poll until what it buffers is under the mark again.
    drained: () =>
      new Promise((resolve) => {
        const poll = (): void => {
          if (!full() || ws.readyState !== ws.OPEN) resolve();
          else setTimeout(poll, 10);
        };
        setTimeout(poll, 10);
      }),
  };
}

/**
 * Serves a watch over the HTTP response, or over `ws` when the request was upgraded to a WebSocket.
 *
 * Memory: a watch may live for an hour and carry millions of events, so nothing may be kept per event. Each wait is
 * on promises that settle (the next event, the sink draining, the stall deadline of one full episode), and a single
 * abort listener wakes whichever wait is current — never a race of each wait against a promise that lives as long
 * as the watch: each `Promise.race` with such a promise adds a reaction to it, which kept every delivered event
 * reachable until the watch ended (the leak of issue 17, ~500 bytes per event and watcher).
 *
 * Back-pressure: while the sink is full, events are still taken from the storage (so a storage's own buffer does not
 * grow) and held here, in order, until it drains; a watcher that falls behind is closed (`WATCH_LIMITS`).
 */
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
  const onRequestAbort = (): void => abort.abort();
  if (r.ctx.signal?.aborted) abort.abort();
  else r.ctx.signal?.addEventListener('abort', onRequestAbort, { once: true });
  // The wait in progress, woken by the abort; each wait replaces it, so there is never more than one.
  let wake: (() => void) | undefined;
  abort.signal.addEventListener('abort', () => wake?.(), { once: true });
  type Woken = 'event' | 'drained' | 'stalled' | 'ended';
  const wait = (ps: Promise<Woken>[]): Promise<Woken> => {
    if (abort.signal.aborted) return Promise.resolve('ended');
    return new Promise<Woken>((resolve) => {
      wake = () => resolve('ended');
      for (const p of ps) void p.then(resolve);
    }).finally(() => (wake = undefined));
  };
  // The watch is set up (its options are good): the 200 and its headers go out now, as Kubernetes flushes them,
  // so that a client's watch call returns before the first event (a quiet collection may have none for long).
  sink.start();
  watchStats.open++;
  /** The event being waited for. */
  let pending: Promise<IteratorResult<WatchEvent>> | undefined;
  let pendingSettled: Promise<Woken> | undefined;
  /** While the sink is full: its drain; once events wait for it, the stall deadline. */
  let full: { drained: Promise<Woken>; stalled?: Promise<Woken>; timer?: NodeJS.Timeout } | undefined;
  /** The events taken while the sink was full, in order. */
  const held: WatchEvent[] = [];
  const markFull = (): void => {
    full = { drained: sink.drained().then(() => 'drained' as const) };
  };
  const armStall = (f: NonNullable<typeof full>): void => {
    if (!f.stalled)
      f.stalled = new Promise((resolve) => (f.timer = setTimeout(resolve, WATCH_LIMITS.STALL_MS, 'stalled')));
  };
  try {
    for (;;) {
      if (!pending) {
        pending = events.next();
        pendingSettled = pending.then(
          () => 'event' as const,
          () => 'event' as const,
        );
      }
      const woken = await wait(
        full ? [pendingSettled!, full.drained, ...(full.stalled ? [full.stalled] : [])] : [pendingSettled!],
      );
      if (woken === 'ended') break;
      if (woken === 'stalled') {
        watchStats.tooSlow++;
        break;
      }
      if (woken === 'drained') {
        clearTimeout(full!.timer);
        full = undefined;
        while (held.length > 0 && !full) if (sink.write(frame(r, held.shift()!)) === false) markFull();
        if (full && held.length > 0) armStall(full);
        continue;
      }
      let next: IteratorResult<WatchEvent>;
      try {
        next = await pending;
      } catch (err) {
        if (!isStatusError(err)) r.scope.logBug?.(err);
        held.length = 0;
        if (!full) sink.write(frame(r, { type: 'ERROR', object: errorToStatus(err).status as Status }));
        break;
      } finally {
        pending = undefined;
        pendingSettled = undefined;
      }
      if (next.done) break;
      if (full) {
        held.push(next.value);
        armStall(full);
        if (held.length > WATCH_LIMITS.MAX_HELD) {
          watchStats.tooSlow++;
          break;
        }
      } else if (sink.write(frame(r, next.value)) === false) markFull();
    }
  } finally {
    watchStats.open--;
    if (full) clearTimeout(full.timer);
    held.length = 0;
    clearTimeout(timer);
    r.ctx.signal?.removeEventListener('abort', onRequestAbort);
    abort.abort();
    void events.return?.();
    sink.end();
  }
}
