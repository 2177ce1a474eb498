/**
 * `--authorization-mode=Webhook` (model: Kubernetes 1.21 `staging/src/k8s.io/apiserver/plugin/pkg/authorizer/webhook`):
 * each decision is a POST of a SubjectAccessReview (`authorization.platform/v1beta1` or `v1`,
 * `--authorization-webhook-version`) to the service of `--authorization-webhook-config-file`. Its `status.allowed`
 * allows, `status.denied` denies, anything else is no opinion; `status.reason` is kept.
 *
 * Answers are cached by the review's spec: allowed ones for `--authorization-webhook-cache-authorized-ttl`, the
 * others for `--authorization-webhook-cache-unauthorized-ttl`. A webhook that fails (unreachable, too slow, an
 * error status, a body that is not a SubjectAccessReview) gives no opinion with the failure as the reason, and is
 * not cached: the request is refused unless a later authorizer allows it, and the server goes on serving.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';

import { type Attributes, type AuthorizationResult, type Authorizer, noRules, type RulesResult } from '../authorizer';
import { type WebhookClientConfig } from './webhook-config';

/** The SubjectAccessReview versions a webhook may speak. */
export type WebhookVersion = 'v1beta1' | 'v1';

/** Options of the webhook authorizer. */
export interface WebhookAuthorizerOptions {
  client: WebhookClientConfig;
  version: WebhookVersion;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  /** How long one call may take, ms (default 30 s). */
  timeoutMs?: number;
  /** Injected clock (tests). */
  now?: () => number;
}

/** At most this many answers are cached (the oldest go first). */
const CACHE_SIZE = 1024;
/** At most this much of an answer is read. */
const MAX_RESPONSE_BYTES = 1 << 20;

/** The body of the review of `a` in `version` (v1beta1 names the groups `group`). */
export function reviewFor(a: Attributes, version: WebhookVersion): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (a.resourceRequest) {
    spec.resourceAttributes = {
      namespace: a.namespace,
      verb: a.verb,
      group: a.apiGroup,
      version: a.apiVersion,
      resource: a.resource,
      subresource: a.subresource,
      name: a.name,
    };
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  spec.user = a.user.name;
  spec[version === 'v1beta1' ? 'group' : 'groups'] = a.user.groups;
  if (a.user.extra) spec.extra = a.user.extra;
  if (a.user.uid) spec.uid = a.user.uid;
  return { apiVersion: `authorization.platform/${version}`, kind: 'SubjectAccessReview', spec };
}

/** See the module comment. */
export class WebhookAuthorizer implements Authorizer {
  private readonly cache = new Map<string, { expires: number; result: AuthorizationResult }>();
  private readonly now: () => number;

  constructor(private readonly o: WebhookAuthorizerOptions) {
    this.now = o.now ?? Date.now;
  }

  async authorize(a: Attributes): Promise<AuthorizationResult> {
    const body = reviewFor(a, this.o.version);
    const key = JSON.stringify(body.spec);
    const hit = this.cache.get(key);
    if (hit && hit.expires > this.now()) return hit.result;
    if (hit) this.cache.delete(key);
    let result: AuthorizationResult;
    try {
      result = this.decisionOf(await this.call(JSON.stringify(body)));
    } catch (err) {
      const message = `webhook authorizer: ${(err as Error).message}`;
      return { decision: 'noOpinion', reason: message, evaluationError: message };
    }
    const ttl = result.decision === 'allow' ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs;
    if (ttl > 0) {
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(key, { expires: this.now() + ttl, result });
    }
    return result;
  }

  private decisionOf(text: string): AuthorizationResult {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new Error('the answer is not JSON');
    }
    const d = (doc ?? {}) as Record<string, unknown>;
    const want = `authorization.platform/${this.o.version}`;
    if (typeof doc !== 'object' || Array.isArray(doc) || d.kind !== 'SubjectAccessReview' || d.apiVersion !== want)
      throw new Error(`the answer is not a ${want} SubjectAccessReview`);
    const status = (d.status ?? {}) as Record<string, unknown>;
    if (typeof status !== 'object') throw new Error('the answer has no status');
    const reason = typeof status.reason === 'string' ? status.reason : '';
    if (status.allowed === true) return { decision: 'allow', reason };
    if (status.denied === true) return { decision: 'deny', reason };
    return { decision: 'noOpinion', reason };
  }

  private call(body: string): Promise<string> {
    const c = this.o.client;
    const timeoutMs = this.o.timeoutMs ?? 30_000;
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
    };
    if (c.token) headers.Authorization = `Bearer ${c.token}`;
    const options: RequestOptions = {
      method: 'POST',
      headers,
      ...(c.ca ? { ca: c.ca } : {}),
      ...(c.cert ? { cert: c.cert } : {}),
      ...(c.key ? { key: c.key } : {}),
      ...(c.serverName ? { servername: c.serverName } : {}),
      rejectUnauthorized: !c.insecureSkipTLSVerify,
    };
    const send = c.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<string>((resolve, reject) => {
      const req = send(c.url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error('the answer is too large'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) reject(new Error(`the webhook answered ${code}`));
          else resolve(text);
        });
        res.on('error', reject);
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  rulesFor(): RulesResult {
    return noRules(true);
  }
}
