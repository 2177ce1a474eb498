/**
 * JSON Web Tokens in compact form (RFC 7519, JWS RFC 7515) with node:crypto: signing with RS256/384/512,
 * PS256/384/512 and ES256/384/512, verification against a set of public keys, and the key IDs and JWK forms the
 * discovery documents publish. Parsing never throws anything but {@link JwtError}, whatever the input.
 */
import {
  constants,
  createHash,
  createPublicKey,
  createSign,
  createVerify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';

/** The signing algorithms this module knows (the JOSE names). */
export const SUPPORTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
] as const;
export type JwtAlgorithm = (typeof SUPPORTED_ALGORITHMS)[number];

/** A token that cannot be read or verified; the message says why (logged, never sent to the client). */
export class JwtError extends Error {
  override readonly name = 'JwtError';
}

export function isSupportedAlgorithm(alg: unknown): alg is JwtAlgorithm {
  return typeof alg === 'string' && (SUPPORTED_ALGORITHMS as readonly string[]).includes(alg);
}

/** The decoded parts of a compact JWS, before its signature is checked. */
export interface ParsedJwt {
  header: { alg?: unknown; kid?: unknown; typ?: unknown; [k: string]: unknown };
  claims: Record<string, unknown>;
  /** `<header>.<payload>`, the signed bytes. */
  signingInput: string;
  signature: Buffer;
}

/** Longest token read: beyond this nothing is decoded (headers are limited well below it anyway). */
const MAX_TOKEN_LENGTH = 64 * 1024;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

function decodeSegment(s: string, what: string): Buffer {
  if (!BASE64URL.test(s) || s.length % 4 === 1) throw new JwtError(`malformed token: ${what} is not base64url`);
  return Buffer.from(s, 'base64url');
}

function decodeJsonObject(s: string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(decodeSegment(s, what).toString('utf8'));
  } catch (err) {
    if (err instanceof JwtError) throw err;
    throw new JwtError(`malformed token: ${what} is not JSON`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new JwtError(`malformed token: ${what} is not a JSON object`);
  return v as Record<string, unknown>;
}

/** Whether a string looks like a compact JWS at all (three dot-separated segments), without decoding it. */
export function looksLikeJwt(token: string): boolean {
  if (token.length > MAX_TOKEN_LENGTH) return false;
  const parts = token.split('.');
  return parts.length === 3 && parts.every((p) => p.length > 0 && BASE64URL.test(p));
}

/** Decodes a compact JWS without verifying it. Throws {@link JwtError}. */
export function parseJwt(token: string): ParsedJwt {
  if (token.length > MAX_TOKEN_LENGTH) throw new JwtError('malformed token: too long');
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtError('malformed token: not three segments');
  const [h, p, s] = parts as [string, string, string];
  return {
    header: decodeJsonObject(h, 'header'),
    claims: decodeJsonObject(p, 'payload'),
    signingInput: `${h}.${p}`,
    signature: decodeSegment(s, 'signature'),
  };
}

function digestOf(alg: JwtAlgorithm): string {
  return `sha${alg.slice(2)}`;
}

/** Whether `key` can verify (or sign) with `alg`. */
export function keyFitsAlgorithm(key: KeyObject, alg: JwtAlgorithm): boolean {
  const type = key.asymmetricKeyType;
  if (alg.startsWith('RS') || alg.startsWith('PS')) return type === 'rsa';
  if (type !== 'ec') return false;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return (
    (alg === 'ES256' && curve === 'prime256v1') ||
    (alg === 'ES384' && curve === 'secp384r1') ||
    (alg === 'ES512' && curve === 'secp521r1')
  );
}

/** The algorithm a key signs with by default: RS256 for RSA, ES256/384/512 by curve for ECDSA. */
export function defaultAlgorithm(key: KeyObject): JwtAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
    if (curve === 'secp521r1') return 'ES512';
    throw new Error(`unsupported ECDSA curve ${String(curve)}`);
  }
  throw new Error(`unsupported key type ${String(key.asymmetricKeyType)}: RSA or ECDSA keys only`);
}

function padding(alg: JwtAlgorithm): { padding?: number; saltLength?: number; dsaEncoding?: 'ieee-p1363' } {
  if (alg.startsWith('PS'))
    return { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };
  if (alg.startsWith('ES')) return { dsaEncoding: 'ieee-p1363' };
  return {};
}

/** Checks a signature; false for any mismatch (wrong key type, bad length, bad signature). */
export function verifySignature(jwt: ParsedJwt, alg: JwtAlgorithm, key: KeyObject): boolean {
  if (!keyFitsAlgorithm(key, alg)) return false;
  try {
    const v = createVerify(digestOf(alg));
    v.update(jwt.signingInput);
    return v.verify({ key, ...padding(alg) }, jwt.signature);
  } catch {
    return false;
  }
}

/** Signs `claims` with `key` (a private key) as a compact JWS. */
export function signJwt(
  claims: Record<string, unknown>,
  key: KeyObject,
  o: { alg?: JwtAlgorithm; kid?: string } = {},
): string {
  const alg = o.alg ?? defaultAlgorithm(key);
  const header = { alg, ...(o.kid !== undefined ? { kid: o.kid } : {}) };
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const s = createSign(digestOf(alg));
  s.update(input);
  return `${input}.${s.sign({ key, ...padding(alg) }).toString('base64url')}`;
}

/** The key ID of a public key, as Kubernetes computes it: base64url of the SHA-256 of its PKIX DER. */
export function keyId(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(pub.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/** A public key as a JWK with `kid`, `use: sig` and `alg`. */
export function publicJwk(key: KeyObject): JsonWebKey {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return { ...pub.export({ format: 'jwk' }), kid: keyId(pub), use: 'sig', alg: defaultAlgorithm(pub) };
}

/** A key from a JWK (RSA or EC public keys); undefined when it is not one this module can use. */
export function keyFromJwk(jwk: unknown): KeyObject | undefined {
  if (typeof jwk !== 'object' || jwk === null) return undefined;
  const k = jwk as JsonWebKey;
  if (k.kty !== 'RSA' && k.kty !== 'EC') return undefined;
  if (k.use !== undefined && k.use !== 'sig') return undefined;
  try {
    return createPublicKey({ key: { kty: k.kty, n: k.n, e: k.e, crv: k.crv, x: k.x, y: k.y }, format: 'jwk' });
  } catch {
    return undefined;
  }
}

/** Seconds since the epoch. */
export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/**
 * Checks the time claims: `exp` must be in the future and `nbf` (when present) in the past, both with `leewaySeconds`.
 * A missing `exp` is accepted only when `requireExp` is false.
 */
export function checkTimes(
  claims: Record<string, unknown>,
  nowMs: number,
  o: { leewaySeconds: number; requireExp: boolean },
): void {
  const now = epochSeconds(nowMs);
  const { exp, nbf } = claims;
  if (exp === undefined) {
    if (o.requireExp) throw new JwtError('token has no expiry (exp)');
  } else {
    if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new JwtError('malformed token: exp is not a number');
    if (now > exp + o.leewaySeconds) throw new JwtError('token has expired');
  }
  if (nbf !== undefined) {
    if (typeof nbf !== 'number' || !Number.isFinite(nbf)) throw new JwtError('malformed token: nbf is not a number');
    if (now + o.leewaySeconds < nbf) throw new JwtError('token is not valid yet (nbf)');
  }
}

/** The `aud` claim as a list (a single string is one audience). */
export function audiencesOf(claims: Record<string, unknown>): string[] {
  const aud = claims.aud;
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud)) return aud.filter((a): a is string => typeof a === 'string');
  return [];
}
