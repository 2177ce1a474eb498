/**
 * The retry and error policy of the REST client against a real HTTP server on 127.0.0.1 that answers what each
 * case needs (429 with Retry-After, 503, a non-Status error body, a slow answer).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isInternalError, isNotFound, isServiceUnavailable, isTimeout, isTooManyRequests } from '@platform/api';

import { FakeClock } from '../util/clock';
import { RestClient } from './rest-client';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

let server: Server;
let url: string;
let handler: Handler;
let calls: { method?: string; url?: string; auth?: string; accept?: string; contentType?: string; at: number }[];

beforeAll(async () => {
  server = createServer((req, res) => {
    calls.push({
      method: req.method,
      url: req.url,
      auth: req.headers.authorization,
      accept: req.headers.accept,
      contentType: req.headers['content-type'],
      at: Date.now(),
    });
    req.resume();
    req.on('end', () => handler(req, res, calls.length));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
  calls = [];
});

const json = (res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } };

function client(o: { timeoutMs?: number; maxRetries?: number } = {}): RestClient {
  return new RestClient(
    { server: url, token: 'secret', contentType: 'application/json', qps: 0, timeoutMs: o.timeoutMs },
    { maxRetries: o.maxRetries, random: () => 0 },
  );
}

it('retries a 429 after its Retry-After, for any verb, and sends the bearer token', async () => {
  handler = (_req, res, n) =>
    n === 1
      ? json(
          res,
          429,
          { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429 },
          { 'retry-after': '1' },
        )
      : json(res, 201, cm);
  const c = client();
  const got = await c.request({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: cm });
  c.close();
  expect(got.metadata?.name).toBe('x');
  expect(calls).toHaveLength(2);
  const gap = (calls[1]?.at ?? 0) - (calls[0]?.at ?? 0);
  expect(gap).toBeGreaterThanOrEqual(990);
  expect(calls[0]?.auth).toBe('Bearer secret');
  expect(calls[0]?.contentType).toBe('application/json');
});

it('retries a GET on 503 with back-off, and gives up after maxRetries with the typed error', async () => {
  handler = (_req, res) =>
    json(res, 503, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'ServiceUnavailable',
      code: 503,
      message: 'down',
    });
  const c = client({ maxRetries: 2 });
  const err = await c.request({ method: 'GET', path: '/api/v1/configmaps' }).catch((e: unknown) => e);
  c.close();
  expect(isServiceUnavailable(err)).toBe(true);
  expect(calls).toHaveLength(3);
});

it('does not retry a POST on a 500 without Retry-After', async () => {
  handler = (_req, res) =>
    json(res, 500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500 });
  const c = client();
  const err = await c
    .request({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: cm })
    .catch((e: unknown) => e);
  c.close();
  expect(isInternalError(err)).toBe(true);
  expect(calls).toHaveLength(1);
});

it('turns a non-Status error body into a StatusError of the code', async () => {
  handler = (_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404 page not found');
  };
  const c = client();
  const err = await c.request({ method: 'GET', path: '/nope' }).catch((e: unknown) => e);
  c.close();
  expect(isNotFound(err)).toBe(true);
  expect((err as Error).message).toContain('404 page not found');
});

it('gives up on a 429 after maxRetries, keeping the server-suggested delay on the error', async () => {
  handler = (_req, res) =>
    json(
      res,
      429,
      { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429 },
      { 'retry-after': '0' },
    );
  const c = client({ maxRetries: 3 });
  const err = await c.request({ method: 'GET', path: '/api/v1/pods' }).catch((e: unknown) => e);
  c.close();
  expect(isTooManyRequests(err)).toBe(true);
  expect(calls).toHaveLength(4);
});

it('times out a slow request with a Timeout error naming it', async () => {
  handler = (_req, res) => void setTimeout(() => json(res, 200, cm), 2000).unref();
  const c = client({ timeoutMs: 200, maxRetries: 0 });
  const err = await c
    .request({ method: 'GET', path: '/api/v1/namespaces/default/configmaps/x' })
    .catch((e: unknown) => e);
  c.close();
  expect(isTimeout(err)).toBe(true);
  expect((err as Error).message).toMatch(
    /client time-out after 200 ms: GET \/api\/v1\/namespaces\/default\/configmaps\/x/,
  );
});

it('rejects an unsupported content type', () => {
  expect(() => new RestClient({ server: url, contentType: 'text/yaml' })).toThrow(
    /--api-content-type: unsupported content type "text\/yaml"/,
  );
});

it('re-reads a rotated token file at most once a minute', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'token-')), 'token');
  writeFileSync(file, 'first\n');
  const clock = new FakeClock();
  const c = new RestClient({ server: url, tokenFile: file }, { clock });
  expect(c.authHeaders().Authorization).toBe('Bearer first');
  writeFileSync(file, 'second\n');
  await clock.advance(59_000);
  expect(c.authHeaders().Authorization).toBe('Bearer first');
  await clock.advance(1_000);
  expect(c.authHeaders().Authorization).toBe('Bearer second');
  c.close();
});

it('reports an undecodable success body as a 500 naming the request, not a crash', async () => {
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.platform.protobuf' });
    res.end(Buffer.from('not an envelope'));
  };
  const c = client();
  const err = await c
    .request({ method: 'GET', path: '/api/v1/namespaces/default/configmaps/x' })
    .catch((e: unknown) => e);
  c.close();
  expect(isInternalError(err)).toBe(true);
  expect((err as Error).message).toMatch(
    /cannot decode the response to GET \/api\/v1\/namespaces\/default\/configmaps\/x \(application\/vnd\.platform\.protobuf\)/,
  );
});

it('retries a GET on a refused connection, then fails with the network error', async () => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const c = new RestClient({ server: `http://127.0.0.1:${port}`, qps: 0 }, { maxRetries: 2, random: () => 0 });
  const t0 = Date.now();
  const err = await c.request({ method: 'GET', path: '/api/v1/pods' }).catch((e: unknown) => e);
  c.close();
  expect((err as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  expect(Date.now() - t0).toBeGreaterThanOrEqual(200 + 400 - 20); // two back-offs: 200 ms and 400 ms
});
