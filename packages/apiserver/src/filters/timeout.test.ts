/**
 * The request deadline over real HTTP/1.1 and HTTP/2 (cleartext) servers: the 504 at the deadline, the signal made
 * only when asked for and aborted whenever it is asked for after the end, client disconnects, and the warnings the
 * signal carries.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createH2Server, type Http2Server } from 'node:http2';
import { type AddressInfo } from 'node:net';

import { builtinScheme, ProtobufCodec } from '@platform/api';

import { type RequestContext, withNamespace } from '../registry/rest/rest';
import { deadlineContext, type RequestDeadline, requestDeadline } from './timeout';
import { addWarning } from './warning';

const serializers = { protobuf: new ProtobufCodec(builtinScheme()) };
const TIMEOUT_MS = 300;
const WAIT_MS = 20_000;

/** What a handler is given: its request's deadline and context, and its response. */
interface Served {
  deadline: RequestDeadline;
  ctx: RequestContext;
  res: ServerResponse;
}

/** The handlers' view of the requests, by the `id` query parameter. */
let served = new Map<string, (s: Served) => void>();

/** Requests whose id starts with `gone` have no deadline: only their client's leaving ends them. */
function handler(req: IncomingMessage, res: ServerResponse): void {
  const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
  const deadline = requestDeadline(req, res, id.startsWith('gone') ? 0 : TIMEOUT_MS, serializers);
  const ctx = deadlineContext('ns', Date.now, undefined, deadline);
  served.get(id)?.({ deadline, ctx, res });
}

/** The request `id` will be served as `then` says. */
function serve(id: string, then: (s: Served) => void): void {
  served.set(id, then);
}

/** Resolves when `check` holds, polling (generous deadline: the machine is shared). */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const path = (id: string): string => `/api/v1/namespaces/ns/configmaps/a?id=${id}`;

let h1: Server;
let h2: Http2Server;
const port = (s: Server | Http2Server): number => (s.address() as AddressInfo).port;

beforeAll(async () => {
  h1 = createServer(handler).listen(0, '127.0.0.1');
  h2 = createH2Server(handler as never).listen(0, '127.0.0.1');
  await Promise.all([once(h1, 'listening'), once(h2, 'listening')]);
});

afterAll(async () => {
  await Promise.all([new Promise((r) => h1.close(r)), new Promise((r) => h2.close(r))]);
});

afterEach(() => {
  served = new Map();
});

/** An HTTP/1.1 GET of `id`: its status and headers, or 'gone' when the client left (`leave` resolves). */
function get1(id: string, leave?: Promise<void>): Promise<{ status: number; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port: port(h1), path: path(id), agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    r.once('error', (err) => (leave ? undefined : reject(err)));
    if (leave) r.once('close', () => resolve({ status: 0, headers: {} }));
    r.end();
    void leave?.then(() => r.destroy());
  });
}

describe('requestDeadline', () => {
  it('answers 504 at the deadline to a handler that never asks for the signal', async () => {
    let d: RequestDeadline | undefined;
    serve('never', (s) => (d = s.deadline));
    const r = await get1('never');
    expect(r.status).toBe(504);
    expect(d!.aborted).toBe(true);
  });

  it('gives a handler that asks after the deadline an aborted signal', async () => {
    let signal: AbortSignal | undefined;
    serve('late', (s) => s.res.once('finish', () => (signal = s.ctx.signal)));
    expect((await get1('late')).status).toBe(504);
    await until(() => signal !== undefined);
    expect(signal!.aborted).toBe(true);
    expect(String(signal!.reason)).toContain('the request ended');
  });

  it('aborts a signal asked for before the deadline when it passes, and keeps a timely answer', async () => {
    let signal: AbortSignal | undefined;
    serve('early', (s) => (signal = s.ctx.signal));
    expect((await get1('early')).status).toBe(504);
    expect(signal!.aborted).toBe(true);
    let answered: AbortSignal | undefined;
    serve('timely', (s) => {
      s.res.end('ok');
      s.res.once('close', () => (answered = s.ctx.signal));
    });
    expect((await get1('timely')).status).toBe(200);
    await until(() => answered !== undefined);
    expect(answered!.aborted).toBe(false);
  });

  it('aborts on a client disconnect a signal asked for before it and one asked for after it', async () => {
    let leave!: () => void;
    const left = new Promise<void>((r) => (leave = r));
    let heard = false;
    let after: AbortSignal | undefined;
    serve('gone-before', (s) => {
      s.ctx.signal!.addEventListener('abort', () => (heard = true), { once: true });
      leave();
    });
    await get1('gone-before', left);
    await until(() => heard);

    let leave2!: () => void;
    const left2 = new Promise<void>((r) => (leave2 = r));
    serve('gone-after', (s) => {
      s.res.once('close', () => (after = s.ctx.signal));
      leave2();
    });
    await get1('gone-after', left2);
    await until(() => after !== undefined);
    expect(after!.aborted).toBe(true);
  });

  it('aborts on an HTTP/2 stream reset, and answers 504 over HTTP/2', async () => {
    const session = connect(`http://127.0.0.1:${port(h2)}`);
    try {
      let signal: AbortSignal | undefined;
      serve('gone-h2', (s) => (signal = s.ctx.signal));
      const stream = session.request({ ':path': path('gone-h2') });
      await until(() => signal !== undefined);
      stream.close();
      await until(() => signal!.aborted);

      let late: AbortSignal | undefined;
      serve('h2late', (s) => s.res.once('close', () => (late = s.ctx.signal)));
      const timed = session.request({ ':path': path('h2late') });
      const [headers] = (await once(timed, 'response')) as [Record<string, unknown>];
      timed.resume();
      expect(headers[':status']).toBe(504);
      await until(() => late !== undefined);
      expect(late!.aborted).toBe(true);
    } finally {
      session.close();
    }
  });

  it('carries warnings added through the context to the response headers', async () => {
    serve('warn', (s) => {
      addWarning(s.ctx, '', 'a warning');
      s.res.end('ok');
    });
    const r = await get1('warn');
    expect([r.status, r.headers.warning]).toEqual([200, '299 - "a warning"']);
  });
});

describe('deadlineContext', () => {
  it('makes the signal at its first read only, and withNamespace keeps it so', async () => {
    let ctx: RequestContext | undefined;
    let inOther: RequestContext | undefined;
    serve('ctx', (s) => {
      ctx = s.ctx;
      inOther = withNamespace(s.ctx, 'other');
      s.res.end('ok');
    });
    expect((await get1('ctx')).status).toBe(200);
    expect(withNamespace(ctx!, 'ns')).toBe(ctx);
    expect(inOther!.namespace).toBe('other');
    expect(typeof Object.getOwnPropertyDescriptor(inOther!, 'signal')?.get).toBe('function');
    // Both read the one signal of the request; a spread copy reads it too.
    expect(inOther!.signal).toBe(ctx!.signal);
    expect({ ...ctx! }.signal).toBe(ctx!.signal);
  });

  it('gives every context the one getter (a getter per request kept each request alive until a mark-compact)', () => {
    const getter = (): unknown =>
      Object.getOwnPropertyDescriptor(deadlineContext('a', Date.now, undefined, {} as RequestDeadline), 'signal')?.get;
    expect(getter()).toBe(getter());
  });
});
