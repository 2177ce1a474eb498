/**
 * A watch: an async iterable of typed events over one server stream — chunked HTTP (JSON or Protobuf) or a
 * WebSocket. ERROR events are thrown from the iterator as `StatusError`s (a 410 `Expired` means: list again);
 * a stream cut off mid-frame throws {@link WatchDecodeError}; a stream that ends cleanly (server time-out) just
 * ends the iteration. {@link Watch.stop} ends it from the client side at any time.
 */
import { type IncomingMessage } from 'node:http';

import { type ApiObject, fromStatus, isProtobufMediaType, type Status } from '@platform/api';
import { WebSocket } from 'ws';

import { type RestClient } from '../rest/rest-client';
import { JsonWatchDecoder, ProtobufWatchDecoder, WatchDecodeError, type WatchDecoder } from './decoder';

/** One event of a watch (never ERROR: those are thrown). */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: T;
}

/** A running watch. Iterate it once. */
export interface Watch<T> extends AsyncIterable<WatchEvent<T>> {
  /** Ends the watch; the iteration then ends without error. Idempotent. */
  stop(): void;
}

type Item<T> = { event: WatchEvent<T> } | { error: Error } | { end: true };

/** An async queue fed by a transport; shared by the HTTP and WebSocket watches. */
class EventPipe<T> implements Watch<T> {
  private items: Item<T>[] = [];
  private waiter?: () => void;
  private ended = false;
  private iterated = false;

  constructor(
    private readonly decoder: WatchDecoder,
    private readonly onStop: () => void,
  ) {}

  /** Feeds transport bytes; a malformed stream ends the watch with the decode error. */
  push(chunk: Uint8Array): void {
    if (this.ended) return;
    try {
      for (const e of this.decoder.push(chunk)) {
        if (e.type === 'ERROR') {
          this.fail(fromStatus(e.object as Status));
          return;
        }
        this.put({ event: { type: e.type, object: e.object as T } });
      }
    } catch (err) {
      this.fail(err as Error);
    }
  }

  /** Pushes one already-framed event (WebSocket text message). */
  pushFrame(text: string): void {
    this.push(Buffer.from(`${text}\n`));
  }

  fail(err: Error): void {
    if (this.ended) return;
    this.put({ error: err });
    this.ended = true;
    this.onStop();
  }

  /** The transport ended; a partial frame left over is an error. */
  end(): void {
    if (this.ended) return;
    if (this.decoder.pending > 0) return this.fail(new WatchDecodeError('watch stream ended in the middle of a frame'));
    this.put({ end: true });
    this.ended = true;
  }

  stop(): void {
    if (this.ended) return;
    this.ended = true;
    this.items = [{ end: true }];
    this.wake();
    this.onStop();
  }

  private put(i: Item<T>): void {
    this.items.push(i);
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent<T>> {
    if (this.iterated) throw new Error('a watch can be iterated only once');
    this.iterated = true;
    try {
      for (;;) {
        const i = this.items.shift();
        if (!i) {
          await new Promise<void>((resolve) => (this.waiter = resolve));
          continue;
        }
        if ('end' in i) return;
        if ('error' in i) throw i.error;
        yield i.event;
      }
    } finally {
      this.stop();
    }
  }
}

function decoderFor(client: RestClient, contentType: string | undefined): WatchDecoder {
  return isProtobufMediaType(contentType) ? new ProtobufWatchDecoder(client.protobuf) : new JsonWatchDecoder();
}

/** Wraps a streaming watch response. */
export function watchFromResponse<T extends ApiObject>(client: RestClient, res: IncomingMessage): Watch<T> {
  const pipe = new EventPipe<T>(decoderFor(client, res.headers['content-type']), () => res.destroy());
  res.on('data', (c: Buffer) => pipe.push(c));
  res.on('end', () => pipe.end());
  res.on('error', (err) => pipe.fail(err));
  res.on('aborted', () => pipe.fail(new Error('watch connection aborted')));
  res.on('close', () => {
    // A connection dropped without a clean end of the chunked body.
    if (!res.complete) pipe.fail(new Error('watch connection closed before the stream ended'));
  });
  return pipe;
}

/**
 * Opens a watch over a WebSocket (`wss://.../path?watch=true`), as kubectl and client libraries may. Each
 * message is one frame: a JSON event (text), or a length-prefixed Protobuf event (binary).
 */
export function watchOverWebSocket<T extends ApiObject>(
  client: RestClient,
  path: string,
  query: Record<string, string>,
  signal?: AbortSignal,
): Promise<Watch<T>> {
  const url = client.url(path, { ...query, watch: 'true' });
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url, {
    ...client.tlsOptions(),
    headers: { ...client.authHeaders(), Accept: client.contentType },
  });
  const isProtobuf = isProtobufMediaType(client.contentType);
  const pipe = new EventPipe<T>(isProtobuf ? new ProtobufWatchDecoder(client.protobuf) : new JsonWatchDecoder(), () =>
    ws.close(1000),
  );
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      ws.terminate();
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        signal?.removeEventListener('abort', onAbort);
        reject(
          new Error(
            `WebSocket watch refused with status ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`,
          ),
        );
      });
    });
    ws.once('open', () => {
      signal?.removeEventListener('abort', onAbort);
      signal?.addEventListener('abort', () => pipe.stop(), { once: true });
      resolve(pipe);
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) pipe.push(data);
      else pipe.pushFrame(data.toString('utf8'));
    });
    ws.on('close', (code) => {
      if (code === 1000 || code === 1005) pipe.end();
      else pipe.fail(new Error(`WebSocket watch closed with code ${code}`));
    });
    ws.on('error', (err) => {
      pipe.fail(err);
      reject(err);
    });
  });
}
