/**
 * Webhook token authentication (model: apiserver `plugin/pkg/authenticator/token/webhook`,
 * `--authentication-token-webhook-config-file`, `-cache-ttl`, `-version`): bearer tokens are sent to a remote
 * service as a TokenReview (`authentication.platform/v1beta1` or `v1`) and its answer is cached for the TTL, keyed by
 * a hash of the token and the audiences (accepted and refused answers alike; failed calls are not cached).
 *
 * The configuration file is in kubeconfig format: the current context's (or the first) cluster gives the URL
 * (`server`, https only) and its authority (`certificate-authority` / `-data`, or `insecure-skip-tls-verify` is
 * refused); the user gives a client certificate (`client-certificate`/`-data`, `client-key`/`-data`) or a `token`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

import * as yaml from 'js-yaml';

import { AuthenticationError, type UserInfo } from '../authenticator';
import { type TokenAuthenticator } from './bearer';
import { httpsJson, type HttpsTls } from './https-json';

/** Where and how to call the webhook. */
export interface WebhookClientConfig {
  server: string;
  tls: HttpsTls;
  token?: string;
}

type Named<T> = { name?: string } & T;
interface KubeconfigFile {
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
  'current-context'?: string;
}

/** Reads a kubeconfig-format client configuration; `option` names the flag in errors. */
export function loadWebhookClientConfig(path: string, option: string): WebhookClientConfig {
  const fail = (m: string): never => {
    throw new Error(`--${option}: ${path}: ${m}`);
  };
  let doc: KubeconfigFile;
  try {
    doc = yaml.load(readFileSync(path, 'utf8')) as KubeconfigFile;
  } catch (err) {
    return fail((err as NodeJS.ErrnoException).code ?? (err as Error).message);
  }
  if (typeof doc !== 'object' || doc === null) return fail('not a kubeconfig file');
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context'])?.context ?? doc.contexts?.[0]?.context;
  const cluster = (ctx?.cluster ? doc.clusters?.find((c) => c.name === ctx.cluster) : doc.clusters?.[0])?.cluster;
  if (!cluster) return fail('no cluster');
  const user = (ctx?.user ? doc.users?.find((u) => u.name === ctx.user) : doc.users?.[0])?.user ?? {};
  const server = cluster.server;
  if (typeof server !== 'string' || !server.startsWith('https://'))
    return fail('the cluster server must be an https URL');
  if (cluster['insecure-skip-tls-verify'] === true) return fail('insecure-skip-tls-verify is not allowed');
  const base = dirname(path);
  const file = (key: string, from: Record<string, unknown>): Buffer | undefined => {
    const data = from[`${key}-data`];
    if (typeof data === 'string') return Buffer.from(data, 'base64');
    const p = from[key];
    if (typeof p !== 'string') return undefined;
    try {
      return readFileSync(isAbsolute(p) ? p : join(base, p));
    } catch (err) {
      return fail(`cannot read ${key} ${p}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const ca = file('certificate-authority', cluster);
  const cert = file('client-certificate', user);
  const key = file('client-key', user);
  if ((cert === undefined) !== (key === undefined)) fail('client-certificate and client-key must be given together');
  const token = typeof user.token === 'string' ? user.token : undefined;
  return {
    server,
    tls: { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
    ...(token ? { token } : {}),
  };
}

/** The webhook method's settings. */
export interface WebhookTokenConfig {
  client: WebhookClientConfig;
  /** `v1beta1` or `v1`. */
  version: string;
  cacheTtlMs: number;
  timeoutMs?: number;
}

interface CacheEntry {
  expires: number;
  result: { user: UserInfo; audiences?: string[] } | undefined;
}

const MAX_CACHE_ENTRIES = 10_000;

function userOf(u: unknown): UserInfo | undefined {
  if (typeof u !== 'object' || u === null) return undefined;
  const r = u as Record<string, unknown>;
  if (typeof r.username !== 'string' || r.username === '') return undefined;
  const groups = Array.isArray(r.groups) ? r.groups.filter((g): g is string => typeof g === 'string') : [];
  const user: UserInfo = { name: r.username, groups };
  if (typeof r.uid === 'string' && r.uid !== '') user.uid = r.uid;
  if (typeof r.extra === 'object' && r.extra !== null) {
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(r.extra as Record<string, unknown>))
      if (Array.isArray(v)) extra[k] = v.filter((x): x is string => typeof x === 'string');
    if (Object.keys(extra).length) user.extra = extra;
  }
  return user;
}

/** The webhook token authenticator, with its cache. */
export function webhookTokenAuthenticator(c: WebhookTokenConfig, now: () => number = Date.now): TokenAuthenticator {
  const cache = new Map<string, CacheEntry>();
  const apiVersion = `authentication.platform/${c.version}`;
  return {
    async authenticateToken(token, audiences) {
      const key = createHash('sha256').update(token).update('\0').update(audiences.join('\0')).digest('hex');
      const t = now();
      const hit = cache.get(key);
      if (hit && hit.expires > t) {
        if (!hit.result) throw new AuthenticationError('webhook: token not authenticated');
        return hit.result;
      }
      cache.delete(key);
      const review = {
        apiVersion,
        kind: 'TokenReview',
        metadata: { creationTimestamp: null },
        spec: { token, ...(audiences.length ? { audiences } : {}) },
      };
      let answer: { status: number; json: unknown };
      try {
        answer = await httpsJson(c.client.server, {
          method: 'POST',
          body: review,
          tls: c.client.tls,
          timeoutMs: c.timeoutMs ?? 10_000,
          ...(c.client.token ? { headers: { authorization: `Bearer ${c.client.token}` } } : {}),
        });
      } catch (err) {
        throw new AuthenticationError(`webhook: ${(err as Error).message}`);
      }
      if (answer.status < 200 || answer.status >= 300)
        throw new AuthenticationError(`webhook: the service answered ${answer.status}`);
      const body = answer.json as { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> };
      if (body?.kind !== 'TokenReview' || body.apiVersion !== apiVersion)
        throw new AuthenticationError(`webhook: the answer is not a ${apiVersion} TokenReview`);
      const status = body.status ?? {};
      let result: CacheEntry['result'];
      if (status.authenticated === true) {
        const user = userOf(status.user);
        if (!user) throw new AuthenticationError('webhook: authenticated without a user name');
        const auds = Array.isArray(status.audiences)
          ? status.audiences.filter((a): a is string => typeof a === 'string')
          : undefined;
        if (audiences.length && auds && !auds.some((a) => audiences.includes(a)))
          throw new AuthenticationError("webhook: the token is not valid for this server's audiences");
        result = { user, ...(auds ? { audiences: auds } : {}) };
      }
      if (cache.size >= MAX_CACHE_ENTRIES) {
        for (const [k, e] of cache) if (e.expires <= t) cache.delete(k);
        if (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      }
      if (c.cacheTtlMs > 0) cache.set(key, { expires: t + c.cacheTtlMs, result });
      if (!result) throw new AuthenticationError('webhook: token not authenticated');
      return result;
    },
  };
}
