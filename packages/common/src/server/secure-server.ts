/**
 * The HTTPS server every daemon runs (Kubernetes' `GenericAPIServer` serving part): an express app on an HTTP/2
 * server that also speaks HTTP/1.1 (ALPN `h2`, `http/1.1`), with SNI, serving `/healthz`, `/livez`, `/readyz` (and
 * `/<endpoint>/<check>`), `/metrics`, `/version` and, with profiling, `/debug/pprof/`.
 *
 * HTTP/2, as Go's servers offer it: clients that ask for `h2` (kubectl, client-go) multiplex their requests and
 * watches over one connection, at most `--http2-max-streams-per-connection` at once (0: 250, Go's default); others,
 * and every upgrade (WebSocket, SPDY), use HTTP/1.1. Handlers see Node's compatibility request and response for
 * HTTP/2 (`httpVersionMajor` 2), which behave as HTTP/1's; the express routes get them through a second express
 * app whose request and response prototypes sit on the HTTP/2 ones and which shares the first app's router.
 *
 * Routing order: the in-flight tracker; then the front handler, when the daemon set one ({@link
 * SecureServer.setFrontHandler}: plain functions, no express routing on the hot path; the API server's filter chain
 * and resource handlers); then, for what it passes on, whatever the daemon adds to {@link SecureServer.app} before
 * `start()`, the built-in routes, and the not-found fallback.
 *
 * Graceful shutdown (`shutdown()`, or SIGTERM/SIGINT after `installSignalHandlers()`): `/readyz` fails at once
 * (check `shutdown`) and the pre-shutdown hooks start; after the shutdown delay (and those hooks) the listener stops
 * accepting, {@link SecureServer.signal} aborts
 * (long-running requests such as watches and the daemon's loops end on it), in-flight requests drain (bounded by
 * the drain timeout, then connections are closed), and the shutdown hooks run in reverse registration order.
 */
import { once, setMaxListeners } from 'node:events';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import {
  createSecureServer,
  Http2ServerRequest,
  Http2ServerResponse,
  type Http2SecureServer,
  type ServerHttp2Session,
} from 'node:http2';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { type Duplex } from 'node:stream';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';

import express, { type Express, type Request, type RequestHandler, type Response, Router } from 'express';

import { type Logger } from '../logging/logger';
import { MetricsRegistry } from '../metrics/registry';
import { type SecureServingInfo } from '../options/secure-serving-options';
import { type CertKeyPair } from '../tls/cert-key';
import { normalizeIP } from '../tls/sni';
import { type VersionInfo, getVersionInfo } from '../version/version';

import { type HealthCheck, HealthRegistry, PING_CHECK, installHealthEndpoint, namedCheck } from './health';
import { abortableDelay, installProfiling } from './profiling';

/** What a {@link SecureServer} is built from. */
export interface SecureServerOptions {
  serving: SecureServingInfo;
  logger: Logger;
  /** Default: a registry with Node's default process metrics. */
  metrics?: MetricsRegistry;
  enableProfiling?: boolean;
  versionInfo?: VersionInfo;
  /** When given, the `log` check flushes it (Kubernetes' `LogHealthz`). */
  logging?: { flush(): void };
  /** Time between failing `/readyz` and closing the listener (`--shutdown-delay-duration`). Default 0. */
  shutdownDelayMs?: number;
  /**
   * `--livez-grace-period`: for this long after `start()`, `/livez` counts unfinished post-start hooks as healthy
   * (Document 2, "starting" state). Default 0.
   */
  livezGracePeriodMs?: number;
  /** Clock for the grace period (epoch ms). */
  now?: () => number;
  /**
   * `--goaway-chance`: after this fraction of HTTP/2 requests (picked at random), the connection gets a GOAWAY: its
   * streams finish and the client opens a new connection, which a load balancer may send to another server
   * (Kubernetes' `WithProbabilisticGoaway`). HTTP/1.1 connections are left alone. Default 0.
   */
  goawayChance?: number;
  /** Longest wait for in-flight requests before connections are closed. Default 60 s. */
  drainTimeoutMs?: number;
  /** Replaces the 404 fallback (the API server answers with a `Status`). */
  notFound?: RequestHandler;
  /** Injected waiting (tests). */
  delay?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** The stream limit of an HTTP/2 connection when `--http2-max-streams-per-connection` is 0 (Go's default). */
export const DEFAULT_HTTP2_MAX_STREAMS = 250;

/** Headers of HTTP/1 connections, which HTTP/2 forbids (RFC 9113 §8.2.2): Node refuses to send a response with one. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/**
 * The response of an HTTP/2 request: handlers written for HTTP/1 set `Transfer-Encoding: chunked` (a watch) or
 * `Connection: close`; HTTP/2 frames its streams itself, so those headers are dropped here instead of failing the
 * response.
 */
class Http2Response extends Http2ServerResponse {
  override setHeader(name: string, value: number | string | readonly string[]): this {
    if (!CONNECTION_HEADERS.has(name.toLowerCase())) super.setHeader(name, value);
    return this;
  }

  override writeHead(statusCode: number, ...rest: unknown[]): this {
    const last = rest.length - 1;
    const headers = rest[last];
    if (headers && typeof headers === 'object' && !Array.isArray(headers))
      rest[last] = Object.fromEntries(
        Object.entries(headers).filter(([k]) => !CONNECTION_HEADERS.has(k.toLowerCase())),
      );
    return (super.writeHead as (code: number, ...args: unknown[]) => this)(statusCode, ...rest);
  }
}

/** A listen or startup failure, naming the address. */
export class ServingError extends Error {
  readonly isServingError = true;
}

/** Brand check for {@link ServingError}. */
export function isServingError(err: unknown): err is ServingError {
  return typeof err === 'object' && err !== null && (err as { isServingError?: unknown }).isServingError === true;
}

type Hook = (signal: AbortSignal) => Promise<void> | void;

/** Handles an HTTP upgrade request (WebSocket): the request, its socket and the first bytes after the headers. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * Handles a request before the express app; calls `next` to pass it on to the app (routes, built-ins, not found).
 */
export type FrontHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** The HTTPS server of a daemon. Configure (routes, checks, hooks) before `start()`; call `start()` once. */
export class SecureServer {
  /** Add routes and middleware here before `start()`; they run before the built-in routes. */
  readonly app: Express;
  readonly health = new HealthRegistry();
  readonly metrics: MetricsRegistry;
  private readonly log: Logger;
  /**
   * Every informer, reflector and controller loop of the server listens for shutdown on its signal: a dozen or more
   * is the normal case, not a leak (Node warns past 10).
   */
  private readonly controller = unlimitedListeners(new AbortController());
  private readonly postStartHooks: { name: string; hook: Hook }[] = [];
  private readonly shutdownHooks: { name: string; hook: () => Promise<void> | void }[] = [];
  private readonly preShutdownHooks: { name: string; hook: () => Promise<void> | void }[] = [];
  private readonly delay: (ms: number, signal: AbortSignal) => Promise<void>;
  private front: NetServer | undefined;
  private servers: Http2SecureServer[] = [];
  /** The HTTP/2 sessions open: shutdown sends each a GOAWAY, so clients stop opening streams on them. */
  private readonly sessions = new Set<ServerHttp2Session>();
  /** The express app HTTP/2 requests go through: {@link SecureServer.app}'s routes on HTTP/2 prototypes. */
  private h2app: Express | undefined;
  /** Every accepted socket until it closes, whatever its TLS/HTTP state: shutdown destroys what remains. */
  private readonly sockets = new Set<Socket>();
  private inFlight = 0;
  /** When `start()` ran (the clock of the livez grace period). */
  private startedAt: number | undefined;
  private drained: (() => void) | undefined;
  private isShuttingDown = false;
  private shutdownPromise: Promise<void> | undefined;
  private started = false;
  private upgradeHandler: UpgradeHandler | undefined;
  private frontHandler: FrontHandler | undefined;

  constructor(private readonly o: SecureServerOptions) {
    this.log = o.logger;
    this.metrics = o.metrics ?? new MetricsRegistry();
    this.delay = o.delay ?? abortableDelay;
    this.app = express();
    this.app.disable('x-powered-by');
    this.app.set('etag', false);
    this.health.addHealthChecks(PING_CHECK);
    if (o.logging) {
      const logging = o.logging;
      this.health.addHealthChecks(namedCheck('log', () => logging.flush()));
    }
  }

  /** Aborted when shutdown begins draining: long-running handlers and loops stop on it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True from the moment shutdown starts. */
  get shuttingDown(): boolean {
    return this.isShuttingDown;
  }

  /**
   * Registers a hook run after the server listens; until it resolves, the check `poststarthook/<name>` fails
   * ("not finished") on all three endpoints. A hook that fails keeps its check failing with its error (logged).
   * Throws on a duplicate name or after `start()`.
   */
  addPostStartHook(name: string, hook: Hook): void {
    if (this.started) throw new Error(`cannot add post-start hook ${JSON.stringify(name)} after the server started`);
    if (this.postStartHooks.some((h) => h.name === name))
      throw new Error(`post-start hook ${JSON.stringify(name)} is already registered`);
    this.postStartHooks.push({ name, hook });
  }

  /**
   * Handles HTTP upgrades (WebSocket requests), which do not go through the express app. Without a handler an
   * upgrade request is answered like any other request. Call before `start()`.
   */
  onUpgrade(handler: UpgradeHandler): void {
    if (this.started) throw new Error('cannot add an upgrade handler after the server started');
    this.upgradeHandler = handler;
  }

  /**
   * Sets the handler every request goes through first (after the in-flight tracker); what it passes on reaches
   * the express app. Call before `start()`.
   */
  setFrontHandler(handler: FrontHandler): void {
    if (this.started) throw new Error('cannot set the front handler after the server started');
    this.frontHandler = handler;
  }

  /**
   * Registers a hook run as soon as shutdown begins, while the server still serves (during the shutdown delay);
   * the listener closes only after every such hook has finished (Kubernetes' pre-shutdown hooks: the API server
   * takes itself out of its Service's Endpoints there). Errors are logged.
   */
  addPreShutdownHook(name: string, hook: () => Promise<void> | void): void {
    this.preShutdownHooks.push({ name, hook });
  }

  /**
   * Adds a check of the start-up sequence (1.21's `AddBootSequenceHealthChecks`, e.g. `autoregister-completion`):
   * in `/healthz` and `/readyz` as it is, and in `/livez` passing during `--livez-grace-period`, like an unfinished
   * post-start hook.
   */
  addBootSequenceHealthCheck(check: HealthCheck): void {
    this.health.addHealthzChecks(check);
    this.health.addReadyzChecks(check);
    const grace = this.o.livezGracePeriodMs ?? 0;
    const now = this.o.now ?? Date.now;
    this.health.addLivezOnlyChecks(
      grace > 0
        ? namedCheck(check.name, () =>
            this.startedAt !== undefined && now() - this.startedAt < grace ? undefined : check.check(),
          )
        : check,
    );
  }

  /** Registers a hook run at the end of shutdown (reverse registration order), e.g. closing storage. */
  addShutdownHook(name: string, hook: () => Promise<void> | void): void {
    this.shutdownHooks.push({ name, hook });
  }

  /** The bound address, after `start()`. */
  address(): AddressInfo {
    const a = this.front?.address();
    if (!a || typeof a === 'string') throw new Error('server is not listening');
    return a;
  }

  /** The request listener: counts the request in flight until its response ends, then hands it on. */
  private readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    this.inFlight++;
    const h2 = req.httpVersionMajor === 2;
    // HTTP/2 has no Connection header: shutdown sends its sessions a GOAWAY instead.
    if (this.isShuttingDown && !h2) res.setHeader('Connection', 'close');
    // 'close' follows 'finish', and comes alone when the client leaves first: one listener sees every end.
    res.once('close', this.requestEnded);
    // The GOAWAY goes out before this response, so the client knows not to send more on the connection.
    if (h2 && this.o.goawayChance && Math.random() < this.o.goawayChance)
      (req as unknown as Http2ServerRequest).stream.session?.close();
    const app = h2 ? this.http2App() : this.app;
    const front = this.frontHandler;
    if (front) front(req, res, () => app(req, res));
    else app(req, res);
  };

  /**
   * The express app for HTTP/2 requests. Express moves every request and response onto its own prototypes, which
   * derive from HTTP/1's; the compatibility objects of HTTP/2 keep their state behind their own prototypes, so
   * they get a copy of express's methods on top of those, and the first app's router and settings.
   */
  private http2App(): Express {
    if (this.h2app) return this.h2app;
    const app = express();
    const onto = (from: object, proto: object): object =>
      Object.create(proto, Object.getOwnPropertyDescriptors(Object.getPrototypeOf(from) as object));
    app.request = Object.create(onto(this.app.request, Http2ServerRequest.prototype), {
      app: { configurable: true, enumerable: true, writable: true, value: app },
    }) as Express['request'];
    app.response = Object.create(onto(this.app.response, Http2Response.prototype), {
      app: { configurable: true, enumerable: true, writable: true, value: app },
    }) as Express['response'];
    const main = this.app as unknown as { settings: object; router: unknown };
    Object.assign((app as unknown as { settings: object }).settings, main.settings);
    Object.defineProperty(app, 'router', { configurable: true, get: () => main.router });
    this.h2app = app;
    return app;
  }

  private readonly requestEnded = (): void => {
    this.inFlight--;
    if (this.inFlight === 0) this.drained?.();
  };

  private contextOptions(pair: CertKeyPair): SecureContextOptions {
    const s = this.o.serving;
    return {
      cert: pair.certPem,
      key: pair.keyPem,
      ...(s.ciphers !== undefined ? { ciphers: s.ciphers } : {}),
      ...(s.minVersion !== undefined ? { minVersion: s.minVersion } : {}),
      ...(s.clientCA !== undefined ? { ca: s.clientCA } : {}),
    };
  }

  private installBuiltins(): void {
    const router = Router();
    const postStart = this.postStartHooks.map(({ name, hook }) => {
      let state: { done: boolean; err?: Error } = { done: false };
      const check: HealthCheck = namedCheck(`poststarthook/${name}`, () => {
        if (state.err) throw state.err;
        if (!state.done) throw new Error('not finished');
      });
      return { name, hook, check, finish: (err?: Error) => (state = err ? { done: false, err } : { done: true }) };
    });
    const now = this.o.now ?? Date.now;
    const startedAt = now();
    this.startedAt = startedAt;
    const grace = this.o.livezGracePeriodMs ?? 0;
    for (const p of postStart) {
      this.health.addHealthzChecks(p.check);
      this.health.addReadyzChecks(p.check);
      this.health.addLivezOnlyChecks(
        grace > 0 ? namedCheck(p.check.name, () => (now() - startedAt < grace ? undefined : p.check.check())) : p.check,
      );
    }
    this.health.addReadyzChecks(
      namedCheck('shutdown', () => {
        if (this.isShuttingDown) throw new Error('process is shutting down');
      }),
    );
    installHealthEndpoint(router, 'healthz', () => this.health.healthz, this.log);
    installHealthEndpoint(router, 'livez', () => this.health.livez, this.log);
    installHealthEndpoint(router, 'readyz', () => this.health.readyz, this.log);
    router.get('/metrics', (_req, res) => {
      void this.metrics.exposition().then(
        ({ contentType, body }) => res.type(contentType).send(body),
        (err: unknown) => {
          this.log.error('Collecting metrics failed', { err });
          res.status(500).type('text/plain; charset=utf-8').send('error collecting metrics\n');
        },
      );
    });
    // Computed at the first request, not at start: without the build's environment it runs `git` twice, a tenth of
    // a second or more of every daemon's way to ready.
    router.get('/version', (_req, res) => {
      const version = this.o.versionInfo ?? getVersionInfo();
      res.type('application/json').send(`${JSON.stringify(version, null, 2)}\n`);
    });
    if (this.o.enableProfiling) installProfiling(router, this.signal, this.delay);
    this.app.use(router);
    this.app.use(
      this.o.notFound ??
        ((_req: Request, res: Response) => {
          res.status(404).type('text/plain; charset=utf-8').send('404 page not found\n');
        }),
    );
    this.runPostStartHooks = () => {
      for (const p of postStart) {
        void (async () => {
          try {
            await p.hook(this.signal);
            p.finish();
          } catch (err) {
            const e = err instanceof Error ? err : new Error(String(err));
            p.finish(e);
            this.log.error('Post-start hook failed', { hook: p.name, err: e });
          }
        })();
      }
    };
  }

  private runPostStartHooks: () => void = () => {};

  /**
   * Listens on the configured address and runs the post-start hooks. Resolves with the bound address. Throws
   * {@link ServingError} when the address cannot be bound (e.g. in use).
   */
  async start(): Promise<AddressInfo> {
    if (this.started) throw new Error('server already started');
    this.started = true;
    this.installBuiltins();
    const s = this.o.serving;
    const contexts = new Map<CertKeyPair, SecureContext>();
    const contextFor = (pair: CertKeyPair): SecureContext => {
      let c = contexts.get(pair);
      if (!c) {
        c = createSecureContext(this.contextOptions(pair));
        contexts.set(pair, c);
      }
      return c;
    };
    const makeServer = (pair: CertKeyPair): Http2SecureServer =>
      createSecureServer(
        {
          ...this.contextOptions(pair),
          allowHTTP1: true,
          Http2ServerResponse: Http2Response as unknown as typeof Http2ServerResponse,
          settings: { maxConcurrentStreams: s.http2MaxStreamsPerConnection || DEFAULT_HTTP2_MAX_STREAMS },
          // Client certificates are asked for, never required: the daemon checks the chain against its own CAs.
          ...(s.clientCA !== undefined ? { requestCert: true, rejectUnauthorized: false } : {}),
          SNICallback: (servername, cb) => {
            // A client that names a server gets the default certificate when nothing matches, whichever local
            // IP it connected to (the IP rule is only for clients that send no name).
            const chosen = s.sni.select(servername);
            try {
              cb(null, contextFor(chosen ?? s.cert));
            } catch (err) {
              cb(err as Error, undefined);
            }
          },
        },
        // HTTP/1 requests come as IncomingMessage/ServerResponse; HTTP/2 ones as their compatible counterparts.
        this.onRequest as unknown as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
      );
    const main = makeServer(s.cert);
    // Clients that send no server name get the certificate of the local IP they connected to, when one is named.
    const byIP = new Map<string, Http2SecureServer>();
    for (const ip of s.sni.ipNames()) byIP.set(ip, makeServer(s.sni.select(undefined, ip)!));
    this.servers = [main, ...byIP.values()];
    const upgrade = this.upgradeHandler;
    if (upgrade) for (const srv of this.servers) srv.on('upgrade', upgrade);
    for (const srv of this.servers) {
      srv.on('tlsClientError', (err: Error) => this.log.v(4).info('TLS handshake error', { err }));
      srv.on('session', (session: ServerHttp2Session) => {
        this.sessions.add(session);
        session.once('close', () => this.sessions.delete(session));
        // A session error (a client's protocol violation) ends that session only.
        session.on('error', (err: Error) => this.log.v(4).info('HTTP/2 session error', { err }));
      });
      // These servers never listen themselves (the front listener hands them sockets); Node's HTTP server starts
      // its connection tracking, which closeIdleConnections/closeAllConnections need, on 'listening'.
      srv.emit('listening');
    }
    // Nagle's algorithm off on every connection, as Go's servers have it: with it on, the last small write of a
    // response (a chunked body's terminator, an event) waits for the client's ACK of the data before it, which a
    // client that does not write back delays by up to 40 ms (delayed ACK).
    const front = createNetServer({ pauseOnConnect: false, noDelay: true }, (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      const target = byIP.size > 0 ? (byIP.get(normalizeIP(socket.localAddress ?? '')) ?? main) : main;
      target.emit('connection', socket);
    });
    this.front = front;
    const host = s.bindAddress === '' ? '::' : s.bindAddress;
    try {
      front.listen({ host, port: s.port, ...(s.permitPortSharing ? { reusePort: true } : {}) });
      await once(front, 'listening');
    } catch (err) {
      throw new ServingError(
        `failed to listen on ${host.includes(':') ? `[${host}]` : host}:${s.port}: ${(err as Error).message}`,
      );
    }
    const addr = this.address();
    this.log.info('Serving securely', { address: `${addr.address}:${addr.port}` });
    this.runPostStartHooks();
    return addr;
  }

  /**
   * Shuts down gracefully (see the module comment); idempotent, every call returns the same promise. Errors of
   * shutdown hooks are logged, not thrown.
   */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    this.isShuttingDown = true;
    this.log.info('Shutdown initiated: /readyz now fails');
    const preShutdown = Promise.all(
      this.preShutdownHooks.map(async ({ name, hook }) => {
        try {
          await hook();
        } catch (err) {
          this.log.error('Pre-shutdown hook failed', { hook: name, err });
        }
      }),
    );
    const never = new AbortController().signal;
    if ((this.o.shutdownDelayMs ?? 0) > 0) await this.delay(this.o.shutdownDelayMs!, never);
    await preShutdown;
    const closed = this.front ? new Promise<void>((r) => this.front!.close(() => r())) : Promise.resolve();
    // close() stops the HTTP/1 side and its idle keep-alive connections; HTTP/2 clients get a GOAWAY and open no
    // more streams on their sessions, which close once their streams end.
    for (const srv of this.servers) srv.close();
    for (const session of this.sessions) session.close();
    this.controller.abort();
    if (this.inFlight > 0) {
      const timeout = new AbortController();
      const drained = new Promise<void>((r) => (this.drained = r));
      await Promise.race([drained, this.delay(this.o.drainTimeoutMs ?? 60_000, timeout.signal)]);
      timeout.abort();
      if (this.inFlight > 0)
        this.log.warn('Closing connections with requests still in flight', { inFlight: this.inFlight });
    }
    for (const session of this.sessions) session.destroy();
    // Sockets still in their TLS handshake are not the HTTP servers' yet; without this, close() could wait forever.
    for (const socket of this.sockets) socket.destroy();
    await closed;
    for (const { name, hook } of [...this.shutdownHooks].reverse()) {
      try {
        await hook();
      } catch (err) {
        this.log.error('Shutdown hook failed', { hook: name, err });
      }
    }
    this.log.info('Shutdown complete');
  }

  /**
   * Shuts down on SIGTERM or SIGINT; a second signal exits at once with status 1 (as Kubernetes does). Returns a
   * function that removes the handlers. `signals` is the process (tests pass an emitter).
   */
  installSignalHandlers(
    onSecondSignal: () => void = () => process.exit(1),
    signals: Pick<NodeJS.EventEmitter, 'on' | 'off'> = process,
  ): () => void {
    let count = 0;
    const handler = (sig: NodeJS.Signals): void => {
      count++;
      if (count > 1) {
        onSecondSignal();
        return;
      }
      this.log.info('Received signal, shutting down', { signal: sig });
      void this.shutdown();
    };
    signals.on('SIGTERM', handler);
    signals.on('SIGINT', handler);
    return () => {
      signals.off('SIGTERM', handler);
      signals.off('SIGINT', handler);
    };
  }
}

function unlimitedListeners(controller: AbortController): AbortController {
  setMaxListeners(0, controller.signal);
  return controller;
}
