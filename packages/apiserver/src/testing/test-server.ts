/**
 * An in-process API server for integration tests: the embedded SQLite store in a temporary directory, a generated
 * certificate, real HTTPS on 127.0.0.1 with a port chosen by the OS, and a small client that trusts it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureSelfSignedCertKey, type Logger, SniCertificateMap } from '@platform/common';

import { ApiServer, type ApiServerConfig } from '../server/api-server';

/** A logger that keeps errors (tests may assert there were none) and drops the rest. */
export function testLogger(errors: unknown[] = []): Logger {
  const logger: Logger = {
    error: (msg, fields) => errors.push({ msg, ...fields }),
    warn: () => {},
    info: () => {},
    debug: () => {},
    v: () => ({ info: () => {}, enabled: false }) as unknown as ReturnType<Logger['v']>,
    child: () => logger,
  };
  return logger;
}

/** One HTTP response, body decoded as text and (when it parses) JSON. */
export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded test responses are read freely
  json: any;
}

/** A running test server. */
export interface TestServer {
  url: string;
  /** The PEM the server's certificate verifies against. */
  ca: string;
  server: ApiServer;
  /** Errors the server logged (bugs). */
  errors: unknown[];
  request(
    method: string,
    path: string,
    o?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  stop(): Promise<void>;
}

/** Starts a server; `configure` may change the configuration first. Waits until it is ready. */
export async function startTestServer(configure: (c: ApiServerConfig) => void = () => {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-test-'));
  const pair = await ensureSelfSignedCertKey(join(dir, 'pki'), 'apiserver', {
    host: '127.0.0.1',
    alternateIPs: ['127.0.0.1'],
  });
  const errors: unknown[] = [];
  const config: ApiServerConfig = {
    serving: {
      bindAddress: '127.0.0.1',
      port: 0,
      cert: pair,
      sni: new SniCertificateMap([]),
      permitPortSharing: false,
      permitAddressSharing: false,
      http2MaxStreamsPerConnection: 0,
      generatedSelfSigned: true,
    },
    logger: testLogger(errors),
    storage: {
      servers: [`sqlite://${join(dir, 'state.db')}`],
      prefix: '/registry',
      mediaType: 'application/vnd.platform.protobuf',
      healthcheckTimeoutMs: 2000,
    },
    watchCache: { enabled: true, defaultSize: 100, sizes: {} },
    limits: {
      maxRequestsInFlight: 400,
      maxMutatingRequestsInFlight: 200,
      requestTimeoutMs: 60_000,
      minRequestTimeoutSeconds: 1800,
      maxRequestBodyBytes: 3 * 1024 * 1024,
      deleteCollectionWorkers: 1,
    },
    eventTtlSeconds: 3600,
    advertiseAddress: '127.0.0.1',
    enableProfiling: false,
    shutdownDelayMs: 0,
  };
  configure(config);
  const server = await ApiServer.create(config);
  const { port } = await server.start();
  const url = `https://127.0.0.1:${port}`;
  const request: TestServer['request'] = (method, path, o = {}) =>
    new Promise((resolve, reject) => {
      const payload =
        o.body === undefined
          ? undefined
          : Buffer.isBuffer(o.body)
            ? o.body
            : Buffer.from(typeof o.body === 'string' ? o.body : JSON.stringify(o.body));
      const req = httpsRequest(
        `${url}${path}`,
        {
          method,
          ca: pair.certPem,
          headers: {
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
            ...o.headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            const text = body.toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body, json });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  // Ready once the post-start hooks (watch caches, bootstrap namespaces) are done.
  for (let i = 0; i < 200; i++) {
    const r = await request('GET', '/readyz');
    if (r.status === 200) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  return {
    url,
    ca: pair.certPem,
    server,
    errors,
    request,
    stop: async () => {
      await server.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
