/**
 * Bearer tokens in the WebSocket subprotocol (model: apiserver `pkg/authentication/request/websocket/protocol.go`).
 * Browsers cannot set an `Authorization` header on a WebSocket, so a client may offer the token as one of the
 * subprotocols of the upgrade request instead: `base64url.bearer.authorization.platform.<token>`, the token
 * base64url-encoded without padding (the Kubernetes spelling `base64url.bearer.authorization.k8s.io.` is read too, so
 * clients written for Kubernetes work unchanged). Only WebSocket upgrade requests are looked at.
 *
 * The token goes to the same token methods as an `Authorization: Bearer` header. Two bearer entries, an entry whose
 * token is empty, not base64url or not UTF-8, or an entry that is the only subprotocol offered (the server must be
 * able to echo another one back) fail the request (401). On success the bearer entry is removed from
 * `Sec-WebSocket-Protocol`, so the upgrade never selects it and the token is not echoed back.
 */
import { isUtf8 } from 'node:buffer';
import { type IncomingMessage } from 'node:http';

import { AuthenticationError, type Authenticator } from '../authenticator';
import { type TokenAuthenticator } from './bearer';

/** The subprotocol prefix that carries a bearer token. */
export const BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.platform.';
/** Kubernetes' spelling of {@link BEARER_PROTOCOL_PREFIX}, also accepted. */
export const KUBERNETES_BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';
const PREFIXES = [BEARER_PROTOCOL_PREFIX, KUBERNETES_BEARER_PROTOCOL_PREFIX];

/** Unpadded base64url, as Go's `base64.RawURLEncoding` decodes it (a length of 4n+1 cannot be produced). */
const RAW_BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Whether `req` asks for a WebSocket upgrade (`Upgrade: websocket` and an `upgrade` token in `Connection`). */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  if (typeof upgrade !== 'string' || upgrade.trim().toLowerCase() !== 'websocket') return false;
  const connection = req.headers.connection;
  if (typeof connection !== 'string') return false;
  return connection.split(',').some((t) => t.trim().toLowerCase() === 'upgrade');
}

/** What the subprotocol header of a request carries. */
export interface ProtocolToken {
  /** The decoded token. */
  token: string;
  /** The other subprotocols offered, in order. */
  others: string[];
}

/**
 * The bearer token of a WebSocket request's subprotocols: undefined when the request is not a WebSocket upgrade or
 * offers no bearer entry; throws {@link AuthenticationError} when the entry cannot be a credential.
 */
export function webSocketProtocolToken(req: IncomingMessage): ProtocolToken | undefined {
  if (!isWebSocketRequest(req)) return undefined;
  const header = req.headers['sec-websocket-protocol'];
  if (header === undefined) return undefined;
  let token: string | undefined;
  const others: string[] = [];
  // RFC 6455 §11.3.4: repeated headers are one list (Node has already joined them with commas).
  for (const raw of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const protocol = raw.trim();
    const prefix = PREFIXES.find((p) => protocol.startsWith(p));
    if (!prefix) {
      if (protocol !== '') others.push(protocol);
      continue;
    }
    if (token !== undefined) throw new AuthenticationError('multiple base64url.bearer.authorization tokens specified');
    const encoded = protocol.slice(prefix.length);
    if (!RAW_BASE64URL.test(encoded) || encoded.length % 4 === 1)
      throw new AuthenticationError('invalid base64url.bearer.authorization token encoding');
    const decoded = Buffer.from(encoded, 'base64url');
    if (!isUtf8(decoded)) throw new AuthenticationError('invalid base64url.bearer.authorization token');
    token = decoded.toString('utf8');
    // Kubernetes treats an empty token as no credential; a bearer entry without a token is refused here instead,
    // so that it can never quietly become the anonymous user.
    if (token === '') throw new AuthenticationError('empty base64url.bearer.authorization token');
  }
  if (token === undefined) return undefined;
  // The server must echo one of the offered subprotocols; once the bearer entry is removed there must be another.
  if (others.length === 0) throw new AuthenticationError('missing additional subprotocol');
  return { token, others };
}

/**
 * The request authenticator of subprotocol bearer tokens: no such token → no opinion; a token no method accepts →
 * 401. On success it rewrites `Sec-WebSocket-Protocol` to the other subprotocols (so call it before the upgrade
 * is answered).
 */
export function webSocketProtocolAuthenticator(
  tokens: TokenAuthenticator,
  apiAudiences: readonly string[],
): Authenticator {
  return {
    async authenticate(req) {
      const found = webSocketProtocolToken(req);
      if (!found) return undefined;
      const r = await tokens.authenticateToken(found.token, apiAudiences);
      if (!r) throw new AuthenticationError('invalid bearer token');
      req.headers['sec-websocket-protocol'] = found.others.join(', ');
      return r;
    },
  };
}
