/**
 * Legacy service account tokens, as 1.21's token controller signs them (`pkg/serviceaccount/jwt.go`,
 * `legacy.go`): a JWS with issuer `kubernetes/serviceaccount`, the flat `kubernetes.io/serviceaccount/*` claims
 * naming the namespace, Secret and account, no expiry; RS256 for RSA keys, ES256/384/512 by curve for ECDSA keys;
 * `kid` the base64url SHA-256 of the public key's PKIX DER. The API server's service account authenticator checks
 * them against `--service-account-key-file`.
 */
import { createHash, createPrivateKey, createPublicKey, createSign, type KeyObject } from 'node:crypto';

/** The issuer of legacy tokens. */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

const ALGORITHMS: Record<string, { alg: string; digest: string }> = {
  rsa: { alg: 'RS256', digest: 'sha256' },
  prime256v1: { alg: 'ES256', digest: 'sha256' },
  secp384r1: { alg: 'ES384', digest: 'sha384' },
  secp521r1: { alg: 'ES512', digest: 'sha512' },
};

function algorithmOf(key: KeyObject): { alg: string; digest: string } {
  const name = key.asymmetricKeyType === 'ec' ? key.asymmetricKeyDetails?.namedCurve : key.asymmetricKeyType;
  const a = name ? ALGORITHMS[name] : undefined;
  if (!a) throw new Error(`unsupported key (${String(name)}): RSA or ECDSA (P-256, P-384, P-521) keys only`);
  return a;
}

/** Reads a PEM private key that can sign tokens; throws saying why not. */
export function loadSigningKey(pem: string | Buffer): KeyObject {
  const key = createPrivateKey(pem);
  algorithmOf(key);
  return key;
}

/** The token of the Secret `secretName` for the account. */
export function signLegacyToken(
  key: KeyObject,
  namespace: string,
  secretName: string,
  account: { name: string; uid: string },
): string {
  const { alg, digest } = algorithmOf(key);
  const kid = createHash('sha256')
    .update(createPublicKey(key).export({ type: 'spki', format: 'der' }))
    .digest('base64url');
  const claims = {
    iss: LEGACY_ISSUER,
    'kubernetes.io/serviceaccount/namespace': namespace,
    'kubernetes.io/serviceaccount/secret.name': secretName,
    'kubernetes.io/serviceaccount/service-account.name': account.name,
    'kubernetes.io/serviceaccount/service-account.uid': account.uid,
    sub: `system:serviceaccount:${namespace}:${account.name}`,
  };
  const enc = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg, kid })}.${enc(claims)}`;
  const signature = createSign(digest)
    .update(input)
    .sign({ key, ...(alg.startsWith('ES') ? { dsaEncoding: 'ieee-p1363' as const } : {}) });
  return `${input}.${signature.toString('base64url')}`;
}
