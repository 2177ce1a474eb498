/**
 * Service account issuer discovery (model: Kubernetes 1.21 `pkg/serviceaccount/openidmetadata.go`): the OpenID
 * provider configuration at `/.well-known/openid-configuration` and the public keys at `/openid/v1/jwks`, so other
 * systems can verify this server's service account tokens. Served only when the issuer is an https URL (or
 * `--service-account-jwks-uri` names the key set); both documents are public and cacheable for an hour, and pass the
 * same authentication and authorization as any other path.
 */
import { type KeyObject } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';

import { defaultAlgorithm, publicJwk } from './jwt';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

/** What the discovery documents are built from. */
export interface DiscoveryConfig {
  issuer: string;
  /** `--service-account-jwks-uri`; unset: `<issuer>/openid/v1/jwks`. */
  jwksUri?: string;
  publicKeys: KeyObject[];
}

/** The two documents, or undefined when discovery is off (the issuer is not an https URL and no key set URI). */
export function discoveryDocuments(c: DiscoveryConfig): { configuration: string; jwks: string } | undefined {
  let issuerUrl: URL | undefined;
  try {
    issuerUrl = new URL(c.issuer);
  } catch {
    issuerUrl = undefined;
  }
  const httpsIssuer = issuerUrl?.protocol === 'https:' && !issuerUrl.search && !issuerUrl.hash;
  if (!httpsIssuer && !c.jwksUri) return undefined;
  const jwksUri = c.jwksUri || `${c.issuer.replace(/\/+$/, '')}${JWKS_PATH}`;
  const algs = [...new Set(c.publicKeys.map((k) => defaultAlgorithm(k)))].sort();
  const configuration = JSON.stringify({
    issuer: c.issuer,
    jwks_uri: jwksUri,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algs,
  });
  const seen = new Set<string>();
  const keys = c.publicKeys
    .map((k) => publicJwk(k))
    .filter((k) => !seen.has(k.kid as string) && seen.add(k.kid as string));
  return { configuration, jwks: JSON.stringify({ keys }) };
}

/**
 * A middleware serving the two documents on GET (and HEAD); other paths go on. `docs` undefined: nothing served.
 */
export function discoveryHandler(
  docs: { configuration: string; jwks: string } | undefined,
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    if (!docs || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    const path = (req.url ?? '').split('?')[0];
    let body: string;
    let type: string;
    if (path === OPENID_CONFIGURATION_PATH) {
      body = docs.configuration;
      type = 'application/json';
    } else if (path === JWKS_PATH) {
      body = docs.jwks;
      type = 'application/jwk-set+json';
    } else return next();
    res.statusCode = 200;
    res.setHeader('Content-Type', type);
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
