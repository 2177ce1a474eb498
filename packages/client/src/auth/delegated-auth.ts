/**
 * Delegated authentication and authorization of a daemon's secure port (model: apiserver's `DelegatingAuthenticator`
 * and `DelegatingAuthorizer` as kube-scheduler and extension API servers such as metrics-server configure them),
 * shared by the daemons that delegate (the scheduler, the metrics server). The `--authorization-always-allow-paths` pass. Any
 * other request is authenticated, in this order, by a front proxy's client certificate (signed by
 * `--requestheader-client-ca-file`, CommonName in `--requestheader-allowed-names` when that is set) with the user in
 * `--requestheader-username-headers` (groups and extra from their headers); by a client certificate signed by
 * `--client-ca-file` (CommonName the user, Organizations the groups); or by a bearer token the API server accepts
 * (TokenReview). Without any credential: 401. The user must then be allowed to use the path, or, for a daemon that
 * serves API resources, the resource the request names (SubjectAccessReview). Node verifies the client's chain against both bundles during the handshake; which bundle
 * it ended at decides what the certificate may do. Answers are cached for the configured TTLs.
 */
import { X509Certificate } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type PeerCertificate, type TLSSocket } from 'node:tls';

import { type ConfigMap, ConfigMapKind, SubjectAccessReviewKind, TokenReviewKind } from '@platform/api';
import {
  type DelegatedAuthenticationConfig,
  type DelegatedAuthorizationConfig,
  type Logger,
  type RequestHeaderConfig,
} from '@platform/common';

import { type Clientset } from '../rest/resource-client';

/** The authenticated user, as TokenReview and SubjectAccessReview name it. */
export interface DelegatedUser {
  username: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

/** What a SubjectAccessReview asks about a request: a resource (`resourceAttributes`) or a path. */
export interface AccessAttributes {
  resourceAttributes?: {
    verb: string;
    group: string;
    version: string;
    resource: string;
    subresource?: string;
    namespace?: string;
    name?: string;
  };
  nonResourceAttributes?: { verb: string; path: string };
}

/** How a daemon that serves API resources describes and refuses its requests. */
export interface DelegatedAuthHooks {
  /** The attributes of a request (default: its path and the lowercased method as a non-resource request). */
  attributesOf?(req: IncomingMessage, path: string): AccessAttributes;
  /** Writes a refusal (401, 403); default: a line of text. */
  deny?(res: ServerResponse, code: 401 | 403, user: DelegatedUser | undefined, attributes: AccessAttributes): void;
}

/** What the secure port authenticates with: the CA bundles (PEM) and the request-header settings. */
export interface AuthenticationSetup {
  clientCA: string;
  requestHeader: RequestHeaderConfig & { ca: string };
  tokenTTLMs: number;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The SHA-256 fingerprints (Node's `AA:BB:…` form) of the certificates of a PEM bundle. */
function fingerprints(pem: string, source: string): Set<string> {
  const out = new Set<string>();
  for (const block of pem.match(PEM_BLOCK) ?? []) {
    try {
      out.add(new X509Certificate(block).fingerprint256);
    } catch (err) {
      throw new Error(`${source}: not a valid certificate: ${(err as Error).message}`);
    }
  }
  if (pem.trim() && out.size === 0) throw new Error(`${source}: no certificate found`);
  return out;
}

/** The verified client certificate and the root its chain ended at; undefined when none or not verified. */
function verifiedClient(req: IncomingMessage): { leaf: PeerCertificate; root: string } | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
  const leaf = socket.getPeerCertificate(true);
  if (!leaf?.raw) return undefined;
  let cur: PeerCertificate & { issuerCertificate?: PeerCertificate } = leaf;
  for (let i = 0; i < 10 && cur.issuerCertificate && cur.issuerCertificate !== cur; i++) cur = cur.issuerCertificate;
  return { leaf, root: cur.fingerprint256 };
}

function first(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

function all(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/**
 * The CA bundles and request-header settings: from the options, with what they leave out looked up in the
 * `extension-apiserver-authentication` ConfigMap of `system` when an authentication client is given and lookup is
 * not skipped. A failed lookup is fatal unless `--authentication-tolerate-lookup-failure`.
 */
export async function authenticationSetup(
  c: DelegatedAuthenticationConfig,
  readFile: (path: string) => string,
  lookupClient: Clientset | undefined,
  log: Logger,
): Promise<AuthenticationSetup> {
  const rh = c.requestHeader;
  const out: AuthenticationSetup = {
    clientCA: c.clientCAFile ? readFile(c.clientCAFile) : '',
    requestHeader: { ...rh, ca: rh.clientCAFile ? readFile(rh.clientCAFile) : '' },
    tokenTTLMs: c.tokenWebhookCacheTTLMs,
  };
  if (lookupClient && !c.skipLookup && (!out.clientCA || !out.requestHeader.ca)) {
    try {
      const cm = (await lookupClient
        .resource(ConfigMapKind, 'system')
        .get('extension-apiserver-authentication')) as ConfigMap;
      const d = cm.data ?? {};
      const list = (k: string): string[] => (d[k] ? (JSON.parse(d[k]) as string[]) : []);
      if (!out.clientCA) out.clientCA = d['client-ca-file'] ?? '';
      if (!out.requestHeader.ca && d['requestheader-client-ca-file']) {
        out.requestHeader = {
          ca: d['requestheader-client-ca-file'],
          clientCAFile: '',
          allowedNames: list('requestheader-allowed-names'),
          usernameHeaders: list('requestheader-username-headers'),
          groupHeaders: list('requestheader-group-headers'),
          extraHeaderPrefixes: list('requestheader-extra-headers-prefix'),
        };
      }
    } catch (err) {
      const msg = `unable to load the authentication configuration from the cluster (configmap system/extension-apiserver-authentication): ${(err as Error).message}`;
      if (!c.tolerateLookupFailure) throw new Error(msg);
      log.warn(`${msg}; continuing without it (--authentication-tolerate-lookup-failure)`);
    }
  }
  return out;
}

/**
 * The front handler of the secure server: passes what is allowed on (`next`), answers the rest with 401 or 403
 * (`hooks.deny`), and 500 when the API server cannot be asked.
 */
export function delegatedAuth(
  authn: AuthenticationSetup,
  tokenClient: Clientset | undefined,
  authz: { client?: Clientset; config: DelegatedAuthorizationConfig },
  log: Logger,
  hooks: DelegatedAuthHooks = {},
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const allowed = new Set(authz.config.alwaysAllowPaths);
  const clientRoots = fingerprints(authn.clientCA, '--client-ca-file');
  const rh = authn.requestHeader;
  const proxyRoots = fingerprints(rh.ca, '--requestheader-client-ca-file');
  const lower = (hs: string[]): string[] => hs.map((h) => h.toLowerCase());
  const userHeaders = lower(rh.usernameHeaders);
  const groupHeaders = lower(rh.groupHeaders);
  const extraPrefixes = lower(rh.extraHeaderPrefixes);
  const tokens = new Map<string, { user?: DelegatedUser; until: number }>();
  const decisions = new Map<string, { ok: boolean; until: number }>();
  const deny = (
    res: ServerResponse,
    code: 401 | 403 | 500,
    user?: DelegatedUser,
    attrs: AccessAttributes = {},
  ): void => {
    if (code !== 500 && hooks.deny) return hooks.deny(res, code, user, attrs);
    const nr = attrs.nonResourceAttributes;
    const ra = attrs.resourceAttributes;
    const msg =
      code === 401
        ? 'Unauthorized'
        : code === 500
          ? 'Internal Server Error'
          : `Forbidden: user "${user?.username ?? ''}" cannot ${nr ? `${nr.verb} path "${nr.path}"` : `${ra?.verb ?? ''} resource "${ra?.resource ?? ''}"`}`;
    res.statusCode = code;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(`${msg}\n`);
  };

  /** The user of a request, undefined when it has no credential, or an Error when its credential is refused. */
  const authenticate = async (req: IncomingMessage): Promise<DelegatedUser | Error | undefined> => {
    const cert = verifiedClient(req);
    if (cert && proxyRoots.has(cert.root)) {
      const cn = first(cert.leaf.subject?.CN);
      if (rh.allowedNames.length && !rh.allowedNames.includes(cn))
        return new Error(`request header: client certificate ${JSON.stringify(cn)} is not an allowed name`);
      const username = userHeaders.map((h) => first(req.headers[h])).find((v) => v) ?? '';
      if (username) {
        // A front proxy sends a header per group (and per extra value): Node joins repeated headers with ", " in
        // `headers`; `headersDistinct` keeps them apart (HTTP/1.1 requests, which is how proxies call).
        const headers = req.headersDistinct ?? req.headers;
        const extra: Record<string, string[]> = {};
        for (const [k, v] of Object.entries(headers)) {
          const p = extraPrefixes.find((x) => k.startsWith(x));
          if (p) extra[decodeURIComponent(k.slice(p.length))] = all(v);
        }
        return { username, groups: groupHeaders.flatMap((h) => all(headers[h])), extra };
      }
    }
    if (cert && clientRoots.has(cert.root)) {
      const cn = first(cert.leaf.subject?.CN);
      if (!cn) return new Error('x509: the certificate has no common name');
      return { username: cn, groups: all(cert.leaf.subject?.O) };
    }
    const auth = String(req.headers.authorization ?? '');
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!token) return undefined;
    if (!tokenClient) return new Error('no token authenticator');
    const hit = tokens.get(token);
    if (hit && hit.until > Date.now()) return hit.user ?? new Error('invalid bearer token');
    const tr = (await tokenClient.resource(TokenReviewKind).create({ spec: { token } } as never)) as {
      status?: { authenticated?: boolean; user?: { username?: string; groups?: string[]; uid?: string } };
    };
    const u = tr.status?.authenticated ? tr.status.user : undefined;
    const user = u ? { username: u.username ?? '', groups: u.groups ?? [], uid: u.uid } : undefined;
    tokens.set(token, { user, until: Date.now() + authn.tokenTTLMs });
    return user ?? new Error('invalid bearer token');
  };

  return (req, res, next) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (!(req.socket as TLSSocket).encrypted || allowed.has(path)) return next();
    void (async () => {
      try {
        const user = await authenticate(req);
        if (!user || user instanceof Error) return deny(res, 401);
        if (!user.groups.includes('system:authenticated')) user.groups = [...user.groups, 'system:authenticated'];
        const attrs = hooks.attributesOf?.(req, path) ?? {
          nonResourceAttributes: { path, verb: (req.method ?? 'GET').toLowerCase() },
        };
        if (!authz.client) return deny(res, 403, user, attrs);
        const key = JSON.stringify([user.username, user.groups, user.extra ?? {}, attrs]);
        const hit = decisions.get(key);
        let ok: boolean;
        if (hit && hit.until > Date.now()) ok = hit.ok;
        else {
          const sar = (await authz.client.resource(SubjectAccessReviewKind).create({
            spec: { user: user.username, groups: user.groups, uid: user.uid, extra: user.extra, ...attrs },
          } as never)) as { status?: { allowed?: boolean } };
          ok = !!sar.status?.allowed;
          const ttl = ok ? authz.config.allowCacheTTLMs : authz.config.denyCacheTTLMs;
          decisions.set(key, { ok, until: Date.now() + ttl });
        }
        if (ok) return next();
        deny(res, 403, user, attrs);
      } catch (err) {
        log.warn('Delegated authentication or authorization failed', { err: String(err) });
        deny(res, 500);
      }
    })();
  };
}
