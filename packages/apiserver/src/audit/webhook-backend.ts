/**
 * The webhook sink (`--audit-webhook-*`; model: apiserver `plugin/pkg/audit/webhook` and `util/webhook`): each
 * batch is POSTed as an `audit.platform/v1` EventList (JSON) to the server of a client configuration file in
 * kubeconfig format (its current context, or the only cluster and user). Connection failures, 429 and 5xx answers
 * are retried with exponential back-off from `--audit-webhook-initial-backoff` (factor 1.5, jitter 0.2, 5 tries, as
 * Kubernetes' default webhook back-off); other answers fail at once. A batch that still fails is lost and logged; the
 * server goes on.
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { dirname, isAbsolute, resolve } from 'node:path';

import { type Logger } from '@platform/common';
import * as yaml from 'js-yaml';

import { type AuditBackend } from './backend';
import { inVersion } from './event';
import { type AuditEventList } from './types';

/** Where a webhook is and how to authenticate to it. */
export interface WebhookTarget {
  server: string;
  ca?: Buffer;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  username?: string;
  password?: string;
}

/** A webhook configuration file that cannot be used; the message names the file and the field. */
export class WebhookConfigError extends Error {
  override readonly name = 'WebhookConfigError';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The named entry of a kubeconfig list (`clusters`, `users`, `contexts`), or the only one when `name` is empty. */
function pick(
  doc: Record<string, unknown>,
  list: string,
  inner: string,
  name: string | undefined,
  fail: (m: string) => never,
): Record<string, unknown> | undefined {
  const items = doc[list];
  if (items === undefined || items === null) return undefined;
  if (!Array.isArray(items)) fail(`${list}: must be a list`);
  const entries = (items as unknown[]).filter(isObject);
  const found = name ? entries.find((e) => e.name === name) : entries.length === 1 ? entries[0] : undefined;
  if (!found) {
    if (name) fail(`${list}: no entry named ${JSON.stringify(name)}`);
    return undefined;
  }
  const body = found[inner];
  if (body !== undefined && !isObject(body)) fail(`${list}[${JSON.stringify(found.name)}].${inner}: must be an object`);
  return (body as Record<string, unknown> | undefined) ?? {};
}

/**
 * Reads a client configuration file in kubeconfig format into the webhook's target. Relative paths are resolved
 * against the file's directory; `-data` fields (base64) win over paths. Throws {@link WebhookConfigError}.
 */
export function loadWebhookConfig(path: string, option = '--audit-webhook-config-file'): WebhookTarget {
  const fail = (m: string): never => {
    throw new WebhookConfigError(`${option}: ${path}: ${m}`);
  };
  let doc: unknown;
  try {
    doc = yaml.load(readFileSync(path, 'utf8'), { json: true });
  } catch (err) {
    fail(`cannot be read: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  if (!isObject(doc)) return fail('must hold a client configuration (kubeconfig) object');
  const current = typeof doc['current-context'] === 'string' ? doc['current-context'] : '';
  const context = pick(doc, 'contexts', 'context', current || undefined, fail) ?? {};
  const cluster = pick(
    doc,
    'clusters',
    'cluster',
    typeof context.cluster === 'string' ? context.cluster : undefined,
    fail,
  );
  if (!cluster) return fail('no cluster to use (set current-context or give exactly one cluster)');
  const user = pick(doc, 'users', 'user', typeof context.user === 'string' ? context.user : undefined, fail) ?? {};
  const dir = dirname(path);
  const file = (obj: Record<string, unknown>, field: string, where: string): Buffer | undefined => {
    const data = obj[`${field}-data`];
    if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
    const p = obj[field];
    if (typeof p !== 'string' || p === '') return undefined;
    const full = isAbsolute(p) ? p : resolve(dir, p);
    try {
      return readFileSync(full);
    } catch (err) {
      return fail(`${where}.${field}: cannot read ${full}: ${(err as Error).message}`);
    }
  };
  const server = cluster.server;
  if (typeof server !== 'string' || server === '') return fail('cluster.server: Required value');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return fail(`cluster.server: invalid URL ${JSON.stringify(server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    fail(`cluster.server: unsupported scheme ${JSON.stringify(url.protocol)}: expected https or http`);
  const target: WebhookTarget = { server };
  const ca = file(cluster, 'certificate-authority', 'cluster');
  if (ca) target.ca = ca;
  if (cluster['insecure-skip-tls-verify'] === true) target.insecureSkipTlsVerify = true;
  if (typeof cluster['tls-server-name'] === 'string') target.tlsServerName = cluster['tls-server-name'];
  const cert = file(user, 'client-certificate', 'user');
  const key = file(user, 'client-key', 'user');
  if ((cert === undefined) !== (key === undefined))
    fail('user: client-certificate and client-key must be given together');
  if (cert && key) {
    target.cert = cert;
    target.key = key;
  }
  if (typeof user.token === 'string' && user.token !== '') target.token = user.token;
  else if (typeof user.tokenFile === 'string' && user.tokenFile !== '') {
    const tf = isAbsolute(user.tokenFile) ? user.tokenFile : resolve(dir, user.tokenFile);
    try {
      target.token = readFileSync(tf, 'utf8').trim();
    } catch (err) {
      fail(`user.tokenFile: cannot read ${tf}: ${(err as Error).message}`);
    }
  }
  if (typeof user.username === 'string' && typeof user.password === 'string') {
    target.username = user.username;
    target.password = user.password;
  }
  return target;
}

/** A failed call, and whether trying again may help. */
class WebhookCallError extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
  ) {
    super(message);
  }
}

/** Back-off of the retries. */
export interface WebhookRetry {
  initialBackoffMs: number;
  factor?: number;
  jitter?: number;
  steps?: number;
  /** Per-call time-out; Kubernetes' webhook client uses 30 s. */
  timeoutMs?: number;
  /** Injected waiting (tests). */
  delay?: (ms: number) => Promise<void>;
}

/** The webhook sink. */
export function webhookBackend(
  target: WebhookTarget,
  apiVersion: string,
  retry: WebhookRetry,
  log: Logger,
): AuditBackend & { readonly calls: number } {
  const url = new URL(target.server);
  const isHttps = url.protocol === 'https:';
  const agent = isHttps
    ? new Agent({
        keepAlive: true,
        ...(target.ca ? { ca: target.ca } : {}),
        ...(target.cert ? { cert: target.cert, key: target.key } : {}),
        ...(target.tlsServerName ? { servername: target.tlsServerName } : {}),
        rejectUnauthorized: !target.insecureSkipTlsVerify,
      })
    : undefined;
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
  if (target.token) headers.Authorization = `Bearer ${target.token}`;
  else if (target.username !== undefined)
    headers.Authorization = `Basic ${Buffer.from(`${target.username}:${target.password ?? ''}`).toString('base64')}`;
  const timeoutMs = retry.timeoutMs ?? 30_000;
  const delay = retry.delay ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let calls = 0;

  const post = (body: Buffer): Promise<void> =>
    new Promise((resolvePost, reject) => {
      calls++;
      const send = isHttps ? httpsRequest : httpRequest;
      const req = send(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'Content-Length': String(body.length) },
          timeout: timeoutMs,
          ...(agent ? { agent } : {}),
        },
        (res) => {
          const code = res.statusCode ?? 0;
          res.resume();
          res.on('end', () => {
            if (code >= 200 && code < 300) resolvePost();
            else reject(new WebhookCallError(`the webhook answered ${code}`, code === 429 || code >= 500));
          });
          res.on('error', (err) => reject(new WebhookCallError(err.message, true)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (err) => reject(new WebhookCallError(err.message, true)));
      req.end(body);
    });

  return {
    get calls() {
      return calls;
    },
    async processEvents(events) {
      const list: AuditEventList = {
        kind: 'EventList',
        apiVersion,
        metadata: {},
        items: events.map((e) => inVersion(e, apiVersion)),
      };
      const body = Buffer.from(JSON.stringify(list));
      const steps = retry.steps ?? 5;
      const factor = retry.factor ?? 1.5;
      const jitter = retry.jitter ?? 0.2;
      let wait = retry.initialBackoffMs;
      for (let attempt = 1; ; attempt++) {
        try {
          await post(body);
          return true;
        } catch (err) {
          const e = err as WebhookCallError;
          if (!e.retriable || attempt >= steps) {
            log.error('Unable to send audit events to the webhook', {
              server: target.server,
              events: events.length,
              attempts: attempt,
              err: e.message,
            });
            return false;
          }
          log.v(2).info('Audit webhook call failed; retrying', { server: target.server, err: e.message, attempt });
          await delay(wait * (1 + Math.random() * jitter));
          wait *= factor;
        }
      }
    },
    async shutdown() {
      agent?.destroy();
    },
  };
}
