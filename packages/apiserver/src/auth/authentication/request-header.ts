/**
 * Authenticating proxies (model: apiserver `pkg/authentication/request/headerrequest`): a front proxy that has
 * authenticated the user passes the user name, groups and extra attributes in headers
 * (`--requestheader-username-headers`, `-group-headers`, `-extra-headers-prefix`). They are believed only when the
 * connection carries a client certificate signed by `--requestheader-client-ca-file` whose CommonName is one of
 * `--requestheader-allowed-names` (any, when that list is empty). The headers are removed from every request
 * whether believed or not, so nothing further down sees identity headers a client made up.
 */
import { type X509Certificate } from 'node:crypto';
import { type IncomingMessage } from 'node:http';

import { AuthenticationError, type Authenticator, type UserInfo } from '../authenticator';
import { certificateUser, clientChain, verifyChain } from './x509';

/** The request-header configuration. */
export interface RequestHeaderConfig {
  roots: readonly X509Certificate[];
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const v = req.headers[name.toLowerCase()];
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

function decodeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key).toLowerCase();
  } catch {
    return key.toLowerCase();
  }
}

/** Reads the identity headers and removes every one of them from the request. */
function takeHeaders(
  req: IncomingMessage,
  c: RequestHeaderConfig,
): { name?: string; groups: string[]; extra: Record<string, string[]> } {
  let name: string | undefined;
  for (const h of c.usernameHeaders) {
    const v = headerValues(req, h).find((x) => x.length > 0);
    if (name === undefined && v !== undefined) name = v;
    delete req.headers[h.toLowerCase()];
  }
  const groups: string[] = [];
  for (const h of c.groupHeaders) {
    groups.push(...headerValues(req, h));
    delete req.headers[h.toLowerCase()];
  }
  const extra: Record<string, string[]> = {};
  const prefixes = c.extraHeaderPrefixes.map((p) => p.toLowerCase());
  for (const header of Object.keys(req.headers)) {
    const prefix = prefixes.find((p) => header.startsWith(p));
    if (prefix === undefined) continue;
    const key = decodeExtraKey(header.slice(prefix.length));
    if (key !== '') (extra[key] ??= []).push(...headerValues(req, header));
    delete req.headers[header];
  }
  return { ...(name !== undefined ? { name } : {}), groups, extra };
}

/** The request-header authenticator. Without a trusted proxy certificate the headers are dropped and ignored. */
export function requestHeaderAuthenticator(c: RequestHeaderConfig, now: () => number = Date.now): Authenticator {
  return {
    async authenticate(req) {
      const headers = takeHeaders(req, c);
      const chain = clientChain(req);
      if (!chain) return undefined;
      // Not the proxy's certificate: an error, but the client-certificate method after this one may still accept it.
      verifyChain(chain, c.roots, now());
      const proxy = certificateUser(chain).name;
      if (c.allowedNames.length > 0 && !c.allowedNames.includes(proxy))
        throw new AuthenticationError(`request header: client certificate CN ${JSON.stringify(proxy)} is not allowed`);
      if (headers.name === undefined) return undefined;
      const user: UserInfo = { name: headers.name, groups: headers.groups };
      if (Object.keys(headers.extra).length) user.extra = headers.extra;
      return { user };
    },
  };
}
