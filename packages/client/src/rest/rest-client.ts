/**
 * The REST client (model: client-go `rest/request.go`): one HTTPS connection pool to one API server, every request
 * through a token bucket (`--api-qps`, `--api-burst`), bodies in `--api-content-type` (Protobuf by default, JSON
 * for kinds that have no Protobuf form and for patches), responses decoded by their Content-Type.
 *
 * Errors: a response that is not 2xx becomes a `StatusError` (the Status body when there is one, else one built
 * from the code, as client-go's `newUnstructuredResponseError`), so callers branch on `isNotFound(err)`,
 * `isConflict(err)`... A request that takes longer than its time-out fails with a 504 `Timeout` StatusError naming
 * the request. Network errors are passed through (`ECONNREFUSED`...).
 *
 * Retries: 429 and 5xx answers that carry `Retry-After` are retried for any verb after that delay (the server
 * did not act on them); other 500/502/503/504 answers and network errors are retried only for GET, with
 * exponential back-off and jitter. At most `maxRetries` times.
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';

import {
  type ApiObject,
  builtinScheme,
  fromStatus,
  JSON_MEDIA_TYPE,
  jsonCodec,
  PROTOBUF_MEDIA_TYPE,
  KUBERNETES_PROTOBUF_MEDIA_TYPE,
  isProtobufMediaType,
  ProtobufCodec,
  type Scheme,
  type Status,
  type StatusReason,
  StatusError,
} from '@platform/api';
import { type Logger, NOP_LOGGER } from '@platform/common';

import { DEFAULT_CLIENT_SETTINGS, type RestConfig } from '../config/client-config';
import { type Clock, REAL_CLOCK } from '../util/clock';
import { type RateLimiter, TokenBucket } from '../util/token-bucket';

/** Query parameters; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** One request. */
export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under the server URL, starting with `/`. */
  path: string;
  query?: Query;
  /** An API object (encoded in the configured content type) or raw bytes with `contentType`. */
  body?: ApiObject | Buffer;
  /** Content type of a raw `body`; forces JSON encoding of an object body when `application/json`. */
  contentType?: string;
  signal?: AbortSignal;
  /** Overrides the client's time-out (ms); 0 disables it (watches). */
  timeoutMs?: number;
  /** Overrides the Accept header. */
  accept?: string;
}

/** What the client is built with beyond the configuration. */
export interface RestClientOptions {
  scheme?: Scheme;
  clock?: Clock;
  logger?: Logger;
  /** Replaces the token bucket built from `qps`/`burst` (share one limiter between clients). */
  rateLimiter?: RateLimiter;
  /** Retries of one request (default 5). */
  maxRetries?: number;
  /** Random source of the back-off jitter. */
  random?: () => number;
  /** Hears of every answered request (metrics: `rest_client_requests_total`, `rest_client_request_duration_seconds`). */
  onResponse?: (method: string, code: number, durationMs: number) => void;
}

const REASON_BY_CODE: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
} as Record<number, StatusReason>;

/** The StatusError of a non-2xx response whose body is not a Status (client-go `newUnstructuredResponseError`). */
export function unstructuredResponseError(code: number, method: string, path: string, text: string): StatusError {
  const reason = (REASON_BY_CODE[code] ?? (code >= 500 ? 'InternalError' : 'Unknown')) as StatusReason;
  const snippet = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return new StatusError({
    code,
    reason,
    message: `the server responded with status ${code} to ${method} ${path}${snippet ? `: ${snippet.trim()}` : ''}`,
  });
}

function isRetriableNetworkError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return (
    code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT' || code === 'EAI_AGAIN'
  );
}

/** Seconds of a `Retry-After` header (delta-seconds form only, as client-go). */
export function parseRetryAfter(v: string | string[] | undefined): number | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || !/^\d+$/.test(s.trim())) return undefined;
  return Number(s.trim());
}

/** A client of one API server. Safe to share; call {@link close} when done to free sockets. */
export class RestClient {
  readonly scheme: Scheme;
  readonly protobuf: ProtobufCodec;
  readonly contentType: string;
  readonly baseUrl: URL;
  private readonly agent: HttpAgent;
  private readonly limiter: RateLimiter;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly maxRetries: number;
  private readonly random: () => number;
  private readonly timeoutMs: number;
  private tokenCache?: { token: string; readAt: number };
  private readonly onResponse?: (method: string, code: number, durationMs: number) => void;

  constructor(
    readonly config: RestConfig,
    o: RestClientOptions = {},
  ) {
    this.baseUrl = new URL(config.server);
    this.scheme = o.scheme ?? builtinScheme();
    this.protobuf = new ProtobufCodec(this.scheme);
    this.contentType = config.contentType ?? DEFAULT_CLIENT_SETTINGS.contentType;
    if (this.contentType !== JSON_MEDIA_TYPE && !isProtobufMediaType(this.contentType))
      throw new Error(
        `--api-content-type: unsupported content type ${JSON.stringify(this.contentType)}: want ${JSON_MEDIA_TYPE}, ${PROTOBUF_MEDIA_TYPE} or ${KUBERNETES_PROTOBUF_MEDIA_TYPE}`,
      );
    this.clock = o.clock ?? REAL_CLOCK;
    this.log = o.logger ?? NOP_LOGGER;
    this.maxRetries = o.maxRetries ?? 5;
    this.random = o.random ?? Math.random;
    this.onResponse = o.onResponse;
    this.timeoutMs = config.timeoutMs ?? DEFAULT_CLIENT_SETTINGS.timeoutMs;
    this.limiter =
      o.rateLimiter ??
      new TokenBucket(
        config.qps ?? DEFAULT_CLIENT_SETTINGS.qps,
        config.burst ?? DEFAULT_CLIENT_SETTINGS.burst,
        this.clock,
      );
    const tls = {
      ...(config.ca ? { ca: config.ca } : {}),
      ...(config.cert && config.key ? { cert: config.cert, key: config.key } : {}),
      ...(config.tlsServerName ? { servername: config.tlsServerName } : {}),
      rejectUnauthorized: !config.insecureSkipTlsVerify,
    };
    this.agent =
      this.baseUrl.protocol === 'https:'
        ? new Agent({ keepAlive: true, maxSockets: 100, ...tls })
        : new HttpAgent({ keepAlive: true, maxSockets: 100 });
  }

  /** Frees the connection pool. Streams still open keep their sockets until they end. */
  close(): void {
    this.agent.destroy();
  }

  private bearerToken(): string | undefined {
    if (this.config.token) return this.config.token;
    const file = this.config.tokenFile;
    if (!file) return undefined;
    const now = this.clock.now();
    // Re-read a rotated token at most once a minute (client-go's cachingTokenSource).
    if (this.tokenCache && now - this.tokenCache.readAt < 60_000) return this.tokenCache.token;
    try {
      const token = readFileSync(file, 'utf8').trim();
      this.tokenCache = { token, readAt: now };
      return token;
    } catch (err) {
      if (this.tokenCache) return this.tokenCache.token;
      throw new Error(`cannot read the bearer token file ${file}: ${(err as Error).message}`);
    }
  }

  /** The headers every request carries: credentials and user agent. */
  authHeaders(): Record<string, string> {
    const h: Record<string, string> = { 'User-Agent': this.config.userAgent ?? 'platform-client/v0.1.0' };
    const token = this.bearerToken();
    if (token) h.Authorization = `Bearer ${token}`;
    else if (this.config.username !== undefined)
      h.Authorization = `Basic ${Buffer.from(`${this.config.username}:${this.config.password ?? ''}`).toString('base64')}`;
    return h;
  }

  /** The URL of a path and query. */
  url(path: string, query?: Query): URL {
    const u = new URL(this.baseUrl.toString());
    u.pathname = `${this.baseUrl.pathname.replace(/\/$/, '')}${path}`;
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  /** Whether an object of this apiVersion/kind can travel as Protobuf (else JSON is used). */
  private protobufFor(obj: ApiObject): boolean {
    if (!obj.apiVersion || !obj.kind) return false;
    const k = this.scheme.kindFor(obj.apiVersion, obj.kind);
    if (k) return k.spec.persisted !== false;
    const s = this.scheme.schemaFor(obj.apiVersion, obj.kind);
    return s !== undefined && typeof s.$id === 'string';
  }

  private encodeBody(o: RequestOptions): { body?: Buffer; contentType?: string } {
    if (o.body === undefined) return {};
    if (Buffer.isBuffer(o.body)) return { body: o.body, contentType: o.contentType ?? JSON_MEDIA_TYPE };
    const obj = o.body;
    if (isProtobufMediaType(this.contentType) && o.contentType !== JSON_MEDIA_TYPE && this.protobufFor(obj))
      return { body: this.protobuf.encode(obj), contentType: this.contentType };
    return { body: jsonCodec.encode(obj), contentType: JSON_MEDIA_TYPE };
  }

  private accept(o: RequestOptions): string {
    if (o.accept) return o.accept;
    if (this.contentType === KUBERNETES_PROTOBUF_MEDIA_TYPE) return `${KUBERNETES_PROTOBUF_MEDIA_TYPE}, */*`; // client-go's
    return this.contentType === PROTOBUF_MEDIA_TYPE ? `${PROTOBUF_MEDIA_TYPE}, ${JSON_MEDIA_TYPE}` : JSON_MEDIA_TYPE;
  }

  /** Decodes a response body by its Content-Type. Throws a 500 StatusError when it cannot. */
  decode(contentType: string | undefined, body: Buffer, what: string): ApiObject {
    const ct = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    try {
      if (isProtobufMediaType(ct)) return this.protobuf.decode(body);
      return jsonCodec.decode(body);
    } catch (err) {
      throw new StatusError({
        code: 500,
        reason: 'InternalError',
        message: `cannot decode the response to ${what} (${ct || 'no content type'}): ${(err as Error).message}`,
      });
    }
  }

  private errorOf(res: IncomingMessage, body: Buffer, method: string, path: string): StatusError {
    const code = res.statusCode ?? 0;
    let obj: ApiObject | undefined;
    try {
      obj = body.length > 0 ? this.decode(res.headers['content-type'], body, `${method} ${path}`) : undefined;
    } catch {
      obj = undefined;
    }
    let err: StatusError;
    if (obj && obj.kind === 'Status') {
      const s = obj as Status;
      err = fromStatus({ ...s, code: s.code || code });
    } else err = unstructuredResponseError(code, method, path, body.toString('utf8'));
    const retryAfter = parseRetryAfter(res.headers['retry-after']);
    if (retryAfter !== undefined && err.status.details?.retryAfterSeconds === undefined)
      err.status.details = { ...err.status.details, retryAfterSeconds: retryAfter };
    return err;
  }

  /**
   * Sends one request (rate-limited, retried as the module header says) and returns the response head and the
   * whole body. Throws a StatusError for non-2xx answers.
   */
  async do(o: RequestOptions): Promise<{ res: IncomingMessage; body: Buffer }> {
    const { body, contentType } = this.encodeBody(o);
    const what = `${o.method} ${o.path}`;
    for (let attempt = 0; ; attempt++) {
      await this.limiter.wait(o.signal);
      let delayMs: number | undefined;
      try {
        const sentAt = this.clock.now();
        const { res, body: data } = await this.send(o, body, contentType);
        const code = res.statusCode ?? 0;
        this.onResponse?.(o.method, code, this.clock.now() - sentAt);
        if (code >= 200 && code < 300) return { res, body: data };
        const err = this.errorOf(res, data, o.method, o.path);
        const retryAfter = parseRetryAfter(res.headers['retry-after']);
        if (attempt < this.maxRetries) {
          if ((code === 429 || code >= 500) && retryAfter !== undefined) delayMs = retryAfter * 1000;
          else if (o.method === 'GET' && [500, 502, 503, 504].includes(code)) delayMs = this.backoff(attempt);
        }
        if (delayMs === undefined) throw err;
        this.log.v(2).info('Retrying request', { request: what, code, attempt: attempt + 1, delayMs });
      } catch (err) {
        if (delayMs !== undefined) throw err;
        if (o.signal?.aborted) throw err;
        if (!(o.method === 'GET' && isRetriableNetworkError(err) && attempt < this.maxRetries)) throw err;
        delayMs = this.backoff(attempt);
        this.log.v(2).info('Retrying request', { request: what, error: String(err), attempt: attempt + 1, delayMs });
      }
      await this.clock.sleep(delayMs, o.signal);
    }
  }

  /** Exponential back-off with jitter: 200 ms × 2^attempt, at most 5 s, plus up to 50 % more. */
  private backoff(attempt: number): number {
    const base = Math.min(5000, 200 * 2 ** attempt);
    return Math.round(base * (1 + 0.5 * this.random()));
  }

  private send(
    o: RequestOptions,
    body: Buffer | undefined,
    contentType: string | undefined,
  ): Promise<{ res: IncomingMessage; body: Buffer }> {
    return new Promise((resolve, reject) => {
      this.open(o, body, contentType, (err, res, req) => {
        if (err || !res) return reject(err);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
        res.on('error', reject);
        res.on('aborted', () => reject(req?.errored ?? new Error(`${o.method} ${o.path}: response aborted`)));
      });
    });
  }

  /**
   * Opens a request and hands over the response head as soon as it arrives (watches read the body as a stream).
   * The time-out (unless 0) covers the whole exchange; the signal aborts it.
   */
  private open(
    o: RequestOptions,
    body: Buffer | undefined,
    contentType: string | undefined,
    cb: (err: Error | undefined, res?: IncomingMessage, req?: ReturnType<typeof httpsRequest>) => void,
  ): void {
    const url = this.url(o.path, o.query);
    const headers: Record<string, string> = { ...this.authHeaders(), Accept: this.accept(o) };
    if (body) {
      headers['Content-Type'] = contentType ?? JSON_MEDIA_TYPE;
      headers['Content-Length'] = String(body.length);
    }
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    const what = `${o.method} ${url.pathname}`;
    let done = false;
    const finish = (err: Error | undefined, res?: IncomingMessage): void => {
      if (done) return;
      done = true;
      cb(err, res, req);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: o.method, headers, agent: this.agent, signal: o.signal }, (res) =>
      finish(undefined, res),
    );
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        const err = new StatusError({
          code: 504,
          reason: 'Timeout',
          message: `client time-out after ${timeoutMs} ms: ${what}`,
        });
        req.destroy(err);
        finish(err);
      }, timeoutMs);
      req.on('close', () => clearTimeout(timer));
    }
    req.on('error', (err) => finish(err));
    req.end(body);
  }

  /** Sends a request and decodes the response object. */
  async request<T extends ApiObject = ApiObject>(o: RequestOptions): Promise<T> {
    const { res, body } = await this.do(o);
    if (body.length === 0) return {} as T;
    return this.decode(res.headers['content-type'], body, `${o.method} ${o.path}`) as T;
  }

  /**
   * Opens a long-running GET (a watch) and resolves with the streaming response once its head arrived with 2xx.
   * Rate-limited like every request; not retried (the caller re-watches). Non-2xx answers become StatusErrors.
   */
  async stream(o: Omit<RequestOptions, 'method' | 'body'>): Promise<IncomingMessage> {
    await this.limiter.wait(o.signal);
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      this.open({ ...o, method: 'GET', timeoutMs: o.timeoutMs ?? 0 }, undefined, undefined, (err, r) =>
        err || !r ? reject(err) : resolve(r),
      ),
    );
    const code = res.statusCode ?? 0;
    if (code >= 200 && code < 300) return res;
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve) => {
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', resolve);
      res.on('error', () => resolve());
    });
    throw this.errorOf(res, Buffer.concat(chunks), 'GET', o.path);
  }

  /** TLS settings for other transports (the WebSocket watch). */
  tlsOptions(): { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean; servername?: string } {
    const c = this.config;
    return {
      ...(c.ca ? { ca: c.ca } : {}),
      ...(c.cert && c.key ? { cert: c.cert, key: c.key } : {}),
      ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
      rejectUnauthorized: !c.insecureSkipTlsVerify,
    };
  }
}
