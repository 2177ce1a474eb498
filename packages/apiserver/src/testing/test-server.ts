/**
 * An in-process API server for integration tests: the embedded SQLite store in a temporary directory (or a real etcd,
 * with `{ store: 'etcd' }`), a generated certificate, real HTTPS on 127.0.0.1 with a port chosen by the OS, and a small
 * client that trusts it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureSelfSignedCertKey, type Logger, SniCertificateMap } from '@platform/common';

import { ApiServer, type ApiServerConfig } from '../server/api-server';
import { startEtcd, type EtcdCluster } from '../storage/testing/etcd';

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
  /** The store the server runs on. */
  store: TestStore;
}

/** The stores a test server can run on. */
export type TestStore = 'sqlite' | 'etcd';

/** Options of `startTestServer`. */
export interface TestServerOptions {
  /** `sqlite` (default): a database file in a temporary directory; `etcd`: a throwaway etcd (see below). */
  store?: TestStore;
  /** Changes the configuration before the server is built. */
  configure?: (c: ApiServerConfig) => void;
  /**
   * The etcd to use with `store: 'etcd'`. Unset: one etcd shared by every etcd-backed test server of this module
   * instance (that is, of one Jest test file), started with the first such server and stopped with the last.
   * Each server gets its own `--store-prefix` on it, so servers never see each other's objects.
   */
  etcd?: EtcdCluster;
  /** Headers of the readiness probe: credentials, for a server that refuses anonymous requests. */
  readyzHeaders?: Record<string, string>;
}

/** How long a test server may take to become ready (a busy CI machine is slow; a broken server never is). */
const READY_TIMEOUT_MS = 60_000;

/** The serving certificate, generated once per module instance (an RSA key takes a second or two). */
let certificate: ReturnType<typeof ensureSelfSignedCertKey> | undefined;

function servingCertificate(): ReturnType<typeof ensureSelfSignedCertKey> {
  if (!certificate) {
    const dir = mkdtempSync(join(tmpdir(), 'apiserver-test-pki-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    certificate = ensureSelfSignedCertKey(dir, 'apiserver', { host: '127.0.0.1', alternateIPs: ['127.0.0.1'] });
    certificate.catch(() => (certificate = undefined));
  }
  return certificate;
}

/** The shared etcd and how many running servers use it. */
let sharedEtcd: { cluster: Promise<EtcdCluster>; users: number } | undefined;

function acquireSharedEtcd(): Promise<EtcdCluster> {
  if (!sharedEtcd) {
    const cluster = startEtcd();
    sharedEtcd = { cluster, users: 0 };
    cluster.catch(() => (sharedEtcd = undefined));
  }
  sharedEtcd.users++;
  return sharedEtcd.cluster;
}

async function releaseSharedEtcd(): Promise<void> {
  if (!sharedEtcd) return;
  if (--sharedEtcd.users > 0) return;
  const { cluster } = sharedEtcd;
  sharedEtcd = undefined;
  await (await cluster).stop();
}

/**
 * Starts a server; `configure` (or `options.configure`) may change the configuration first. Waits until it is ready.
 * `startTestServer(configure)` runs on SQLite; `startTestServer({ store: 'etcd' })` on etcd.
 */
export async function startTestServer(
  configureOrOptions: ((c: ApiServerConfig) => void) | TestServerOptions = {},
): Promise<TestServer> {
  const options: TestServerOptions =
    typeof configureOrOptions === 'function' ? { configure: configureOrOptions } : configureOrOptions;
  const store = options.store ?? 'sqlite';
  const configure = options.configure ?? (() => {});
  let etcd: EtcdCluster | undefined;
  let ownsEtcdShare = false;
  if (store === 'etcd') {
    if (options.etcd) {
      etcd = options.etcd;
    } else {
      ownsEtcdShare = true;
      // A failed start forgets the shared etcd (the next server tries again), so there is no share to give back.
      etcd = await acquireSharedEtcd();
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'apiserver-test-'));
  const pair = await servingCertificate();
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
      servers: etcd ? etcd.endpoints : [`sqlite://${join(dir, 'state.db')}`],
      // A prefix of its own on a shared etcd (Kubernetes' default otherwise).
      prefix: etcd ? `/registry-${randomBytes(6).toString('hex')}` : '/registry',
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
  const cleanup = async (): Promise<void> => {
    rmSync(dir, { recursive: true, force: true });
    if (ownsEtcdShare) {
      ownsEtcdShare = false;
      await releaseSharedEtcd();
    }
  };
  let server: ApiServer;
  let port: number;
  try {
    server = await ApiServer.create(config);
    ({ port } = await server.start());
  } catch (err) {
    await cleanup();
    throw err;
  }
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
  // Ready once the post-start hooks (watch caches, bootstrap namespaces) are done. A server that never gets there
  // fails the start (with what /readyz says), rather than letting tests run against half a server.
  for (const deadline = Date.now() + READY_TIMEOUT_MS; ;) {
    const r = await request('GET', '/readyz', { headers: options.readyzHeaders ?? {} });
    if (r.status === 200) break;
    if (Date.now() > deadline) {
      const verbose = await request('GET', '/readyz?verbose', { headers: options.readyzHeaders ?? {} }).catch(
        () => undefined,
      );
      await server.shutdown().catch(() => {});
      await cleanup();
      throw new Error(`the test server was not ready in ${READY_TIMEOUT_MS} ms:\n${verbose?.text ?? ''}`);
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  return {
    url,
    ca: pair.certPem,
    server,
    errors,
    request,
    store,
    stop: async () => {
      try {
        await server.shutdown();
      } finally {
        await cleanup();
      }
    },
  };
}
