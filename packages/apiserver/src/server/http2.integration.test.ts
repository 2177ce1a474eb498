/**
 * HTTP/2 beside HTTP/1.1 on the API server's port (ALPN `h2`): the verbs, a watch and errors over one multiplexed
 * connection, the stream limit of `--http2-max-streams-per-connection`, `--goaway-chance`, and HTTP/1.1 clients
 * (and their WebSocket watches) unchanged.
 */
import { once } from 'node:events';
import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { request as httpsRequest } from 'node:https';

import WebSocket from 'ws';

import { startTestServer, type TestServer } from '../testing/test-server';

interface H2Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded test responses are read freely
  json: any;
}

function h2Connect(t: TestServer): Promise<ClientHttp2Session> {
  const session = connect(t.url, { ca: t.ca });
  // Connected once the server's SETTINGS (its stream limit) have arrived.
  return new Promise((resolve, reject) => {
    session.once('remoteSettings', () => resolve(session));
    session.once('error', reject);
  });
}

function h2Request(
  session: ClientHttp2Session,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<H2Response> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const stream = session.request({
    ':method': method,
    ':path': path,
    ...(payload ? { 'content-type': 'application/json' } : {}),
    ...headers,
  });
  return new Promise((resolve, reject) => {
    let head: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (head = h as typeof head));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(head[':status']), headers: head, text, json });
    });
    stream.on('error', reject);
    stream.end(payload);
  });
}

const NS = '/api/v1/namespaces/default/configmaps';

describe('HTTP/2 on the API server', () => {
  let t: TestServer;
  let session: ClientHttp2Session;

  beforeAll(async () => {
    t = await startTestServer((c) => {
      c.serving.http2MaxStreamsPerConnection = 7;
    });
    session = await h2Connect(t);
  }, 90_000);

  afterAll(async () => {
    session?.close();
    await t?.stop();
  });

  it('negotiates h2 by ALPN and advertises the stream limit of --http2-max-streams-per-connection', () => {
    expect(session.alpnProtocol).toBe('h2');
    expect(session.remoteSettings.maxConcurrentStreams).toBe(7);
  });

  it('serves create, get, list, patch and delete over one connection, with Status errors', async () => {
    const created = await h2Request(session, 'POST', NS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'h2-a' },
      data: { k: 'v' },
    });
    expect(`${created.status} ${created.text}`).toMatch(/^201 /);
    expect(created.headers['content-type']).toMatch(/^application\/json/);
    const got = await h2Request(session, 'GET', `${NS}/h2-a`);
    expect(got.status).toBe(200);
    expect(got.json.data).toEqual({ k: 'v' });
    const patched = await h2Request(
      session,
      'PATCH',
      `${NS}/h2-a`,
      { data: { k: 'w' } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(patched.status).toBe(200);
    expect(patched.json.data).toEqual({ k: 'w' });
    const list = await h2Request(session, 'GET', NS);
    expect(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('h2-a');
    const missing = await h2Request(session, 'GET', `${NS}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
    const deleted = await h2Request(session, 'DELETE', `${NS}/h2-a`);
    expect(deleted.status).toBe(200);
    // Non-resource paths go through the express routes.
    const healthz = await h2Request(session, 'GET', '/healthz');
    expect([healthz.status, healthz.text]).toEqual([200, 'ok']);
    const version = await h2Request(session, 'GET', '/version');
    expect(version.json.gitVersion).toEqual(expect.any(String));
    const unknown = await h2Request(session, 'GET', '/no/such/path');
    expect(unknown.status).toBe(404);
  });

  it('runs many requests at once on the connection, queueing those beyond the stream limit', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `h2-many-${i}`);
    const results = await Promise.all(
      names.map((name) => h2Request(session, 'POST', NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })),
    );
    expect(results.map((r) => r.status)).toEqual(names.map(() => 201));
  });

  it('delivers a watch as a stream while other requests share the connection', async () => {
    const list = await h2Request(session, 'GET', NS);
    const stream = session.request({
      ':method': 'GET',
      ':path': `${NS}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`,
    });
    const events: { type: string; object: { metadata: { name: string } } }[] = [];
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buf += chunk;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        events.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    });
    const [head] = (await once(stream, 'response')) as [Record<string, string>];
    expect(head[':status']).toBe(200);
    expect(head['transfer-encoding']).toBeUndefined();
    for (const name of ['h2-w1', 'h2-w2'])
      expect((await h2Request(session, 'POST', NS, { metadata: { name } })).status).toBe(201);
    for (const deadline = Date.now() + 30_000; events.length < 2 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'h2-w1'],
      ['ADDED', 'h2-w2'],
    ]);
    stream.close(constants.NGHTTP2_CANCEL);
  });

  it('still serves HTTP/1.1 clients, and WebSocket watches over HTTP/1.1', async () => {
    const r = await t.request('GET', `${NS}?limit=1`);
    expect(r.status).toBe(200);
    const ws = new WebSocket(`${t.url.replace('https', 'wss')}${NS}?watch=1&fieldSelector=metadata.name%3Dh2-ws`, {
      ca: t.ca,
    });
    const first = new Promise<string>((resolve, reject) => {
      ws.once('message', (m) => resolve(String(m)));
      ws.once('error', reject);
    });
    await once(ws, 'open');
    expect((await t.request('POST', NS, { body: { metadata: { name: 'h2-ws' } } })).status).toBe(201);
    expect(JSON.parse(await first)).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'h2-ws' } } });
    ws.close();
  });
});

describe('--goaway-chance', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer((c) => {
      c.goawayChance = 0.02;
    });
  }, 90_000);

  afterAll(() => t?.stop());

  it('answers some HTTP/2 requests with a GOAWAY, and every request still succeeds', async () => {
    let goaways = 0;
    let goaway = false;
    const open = async (): Promise<ClientHttp2Session> => {
      const s = await h2Connect(t);
      goaway = false;
      s.once('goaway', () => (goaway = true));
      return s;
    };
    let session = await open();
    const statuses: number[] = [];
    // At 2% per request, 600 requests see at least one GOAWAY with probability 1 - 0.98^600 (1 - 5e-6).
    for (let i = 0; i < 600; i++) {
      // The GOAWAY precedes the response that drew it: the next request goes on a new connection.
      if (goaway || session.closed || session.destroyed) {
        goaways++;
        session.close();
        session = await open();
      }
      statuses.push((await h2Request(session, 'GET', '/api/v1/namespaces/default')).status);
    }
    session.close();
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(goaways).toBeGreaterThan(0);
  });

  it('never sends one to HTTP/1.1 clients (their connection stays open)', async () => {
    const agent = new (await import('node:https')).Agent({ keepAlive: true, maxSockets: 1, ca: t.ca });
    const sockets = new Set<unknown>();
    for (let i = 0; i < 200; i++) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest(`${t.url}/api/v1/namespaces/default`, { agent }, (res) => {
          sockets.add(res.socket);
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
    }
    agent.destroy();
    expect(sockets.size).toBe(1);
  });
});

describe('shutdown with HTTP/2 clients connected', () => {
  it('sends connected sessions a GOAWAY and finishes (an idle session does not hold it up)', async () => {
    const t = await startTestServer();
    let stopped = false;
    try {
      const session = await h2Connect(t);
      expect((await h2Request(session, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
      const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
      await t.stop();
      stopped = true;
      // The server's GOAWAY (or its closing the connection) ends the session on the client's side too.
      await closed;
      expect(session.closed || session.destroyed).toBe(true);
    } finally {
      if (!stopped) await t.stop();
    }
  }, 90_000);
});
