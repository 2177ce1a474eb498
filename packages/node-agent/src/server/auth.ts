/**
 * Authentication and authorization of requests to a node's server (model: kubelet `server/auth.go`): x509 client
 * certificates of `--client-ca-file`, bearer tokens through the TokenReview API (`--authentication-token-webhook`),
 * anonymous requests when `--anonymous-auth`; then `AlwaysAllow`, or `Webhook`: a SubjectAccessReview on
 * `nodes/<subresource>` of the node, with the kubelet's verbs and subresources. Answers are cached for the TTLs of
 * the options. Shared by the agent's server and the servers of simulated nodes.
 */
import { type IncomingMessage } from 'node:http';
import { type TLSSocket } from 'node:tls';

import { type ApiObject } from '@platform/api';
import { type Clientset } from '@platform/client';
import { type Logger } from '@platform/common';

import { type AgentValues } from '../cmd/options';

/** Who sent a request. */
export interface User {
  name: string;
  groups: string[];
}

interface CacheEntry<T> {
  value: T;
  until: number;
}

/** What the checks need. */
export interface RequestAuthDeps {
  values: AgentValues;
  clientset?: Clientset;
  log: Logger;
  /** The PEM of `--client-ca-file`, when client certificates are accepted. */
  clientCa?: string;
}

/** The subresource of `nodes` a path is authorized as (kubelet `auth.go` `GetRequestAttributes`). */
export function nodeSubresourceOf(path: string): string {
  if (path.startsWith('/stats')) return 'stats';
  if (path.startsWith('/metrics')) return 'metrics';
  if (path.startsWith('/logs')) return 'log';
  if (path.startsWith('/spec')) return 'spec';
  return 'proxy';
}

/** The checks, with their caches. */
export class RequestAuth {
  private readonly tokenCache = new Map<string, CacheEntry<User | null>>();
  private readonly sarCache = new Map<string, CacheEntry<boolean>>();

  constructor(private readonly d: RequestAuthDeps) {}

  /** The user of a request, or null (401) when it proves none and anonymous requests are off. */
  async authenticate(req: IncomingMessage): Promise<User | null> {
    const v = this.d.values;
    const sock = req.socket as TLSSocket;
    if (this.d.clientCa && typeof sock.getPeerCertificate === 'function' && sock.authorized) {
      const cert = sock.getPeerCertificate();
      if (cert && cert.subject) {
        const org = cert.subject.O;
        return { name: String(cert.subject.CN ?? ''), groups: Array.isArray(org) ? org : org ? [org] : [] };
      }
    }
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && v.authenticationTokenWebhook && this.d.clientset) {
      const token = auth.slice(7).trim();
      const hit = this.tokenCache.get(token);
      if (hit && hit.until > Date.now()) return hit.value;
      let user: User | null = null;
      try {
        const review = (await this.d.clientset.rest.request<ApiObject>({
          method: 'POST',
          path: '/apis/authentication.platform/v1/tokenreviews',
          body: {
            apiVersion: 'authentication.platform/v1',
            kind: 'TokenReview',
            spec: { token },
          } as unknown as ApiObject,
          contentType: 'application/json',
        })) as unknown as { status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] } } };
        if (review.status?.authenticated)
          user = { name: review.status.user?.username ?? '', groups: review.status.user?.groups ?? [] };
      } catch (err) {
        this.d.log.info('TokenReview failed', { err: String(err) });
        return null;
      }
      this.tokenCache.set(token, { value: user, until: Date.now() + v.authenticationTokenWebhookCacheTtl });
      if (user) return user;
    }
    if (v.anonymousAuth) return { name: 'system:anonymous', groups: ['system:unauthenticated'] };
    return null;
  }

  /** Whether `user` may make the request on node `nodeName`: the verb from the method, `nodes/<sub>` from the path. */
  async authorize(user: User, req: IncomingMessage, nodeName: string): Promise<boolean> {
    const v = this.d.values;
    if (v.authorizationMode !== 'Webhook') return true;
    if (!this.d.clientset) return false;
    const path = (req.url ?? '/').split('?')[0]!;
    const verb =
      { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[
        req.method ?? 'GET'
      ] ?? 'get';
    const sub = nodeSubresourceOf(path);
    const key = `${user.name}|${user.groups.join(',')}|${verb}|${sub}|${nodeName}`;
    const hit = this.sarCache.get(key);
    if (hit && hit.until > Date.now()) return hit.value;
    let allowed = false;
    try {
      const sar = (await this.d.clientset.rest.request<ApiObject>({
        method: 'POST',
        path: '/apis/authorization.platform/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.platform/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.name,
            groups: user.groups,
            resourceAttributes: { verb, resource: 'nodes', subresource: sub, name: nodeName },
          },
        } as unknown as ApiObject,
        contentType: 'application/json',
      })) as unknown as { status?: { allowed?: boolean } };
      allowed = sar.status?.allowed === true;
    } catch (err) {
      this.d.log.info('SubjectAccessReview failed', { err: String(err) });
      return false;
    }
    this.sarCache.set(key, {
      value: allowed,
      until:
        Date.now() + (allowed ? v.authorizationWebhookCacheAuthorizedTtl : v.authorizationWebhookCacheUnauthorizedTtl),
    });
    return allowed;
  }
}
