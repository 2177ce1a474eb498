/**
 * Delegated authentication and authorization of the secure port (model: apiserver's `DelegatingAuthenticator` and
 * `DelegatingAuthorizer` as kube-controller-manager configures them): the `--authorization-always-allow-paths` pass;
 * any other request needs a bearer token the API server accepts (TokenReview) for a user it allows to `get` the
 * path (SubjectAccessReview). Answers are cached for the configured TTLs. Without `--authorization-clientconfig`
 * every other request is forbidden; without `--authentication-clientconfig` every token request is anonymous.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type TLSSocket } from 'node:tls';

import { SubjectAccessReviewKind, TokenReviewKind } from '@platform/api';
import { type Clientset } from '@platform/client';
import {
  type DelegatedAuthenticationConfig,
  type DelegatedAuthorizationConfig,
  type FrontHandler,
  type Logger,
} from '@platform/common';

/** The front handler of the secure server. */
export function delegatedAuth(
  authn: { client?: Clientset; config: DelegatedAuthenticationConfig },
  authz: { client?: Clientset; config: DelegatedAuthorizationConfig },
  log: Logger,
): FrontHandler {
  const allowed = new Set(authz.config.alwaysAllowPaths);
  const users = new Map<string, { user?: { username?: string; groups?: string[]; uid?: string }; until: number }>();
  const decisions = new Map<string, { ok: boolean; until: number }>();
  const deny = (res: ServerResponse, code: number, msg: string): void => {
    res.statusCode = code;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(`${msg}\n`);
  };
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (!(req.socket as TLSSocket).encrypted || allowed.has(path)) return next();
    const auth = String(req.headers.authorization ?? '');
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    void (async () => {
      try {
        let user: { username?: string; groups?: string[]; uid?: string } = {
          username: 'system:anonymous',
          groups: ['system:unauthenticated'],
        };
        if (token && authn.client) {
          const hit = users.get(token);
          if (hit && hit.until > Date.now()) {
            if (!hit.user) return deny(res, 401, 'Unauthorized');
            user = hit.user;
          } else {
            const tr = (await authn.client.resource(TokenReviewKind).create({ spec: { token } } as never)) as {
              status?: { authenticated?: boolean; user?: { username?: string; groups?: string[]; uid?: string } };
            };
            const u = tr.status?.authenticated ? (tr.status.user ?? {}) : undefined;
            users.set(token, { user: u, until: Date.now() + authn.config.tokenWebhookCacheTTLMs });
            if (!u) return deny(res, 401, 'Unauthorized');
            user = u;
          }
        } else if (token) return deny(res, 401, 'Unauthorized');
        if (!authz.client) return deny(res, 403, `Forbidden: user "${user.username ?? ''}" cannot get path "${path}"`);
        const verb = (req.method ?? 'GET').toLowerCase();
        const key = `${user.username ?? ''}\0${(user.groups ?? []).join(',')}\0${verb}\0${path}`;
        const hit = decisions.get(key);
        let ok: boolean;
        if (hit && hit.until > Date.now()) ok = hit.ok;
        else {
          const sar = (await authz.client.resource(SubjectAccessReviewKind).create({
            spec: { user: user.username, groups: user.groups, uid: user.uid, nonResourceAttributes: { path, verb } },
          } as never)) as { status?: { allowed?: boolean } };
          ok = !!sar.status?.allowed;
          decisions.set(key, {
            ok,
            until: Date.now() + (ok ? authz.config.allowCacheTTLMs : authz.config.denyCacheTTLMs),
          });
        }
        if (ok) return next();
        deny(res, 403, `Forbidden: user "${user.username ?? ''}" cannot ${verb} path "${path}"`);
      } catch (err) {
        log.warn('Delegated authentication or authorization failed', { error: String(err) });
        deny(res, 500, 'Internal Server Error');
      }
    })();
  };
}
