/**
 * Service account tokens (model: Kubernetes 1.21 `pkg/serviceaccount`): JWTs the API server signs for a service
 * account (the TokenRequest subresource) or that the token controller signs into a Secret (legacy tokens), checked
 * against `--service-account-key-file`.
 *
 * Bound tokens carry `iss` (one of `--service-account-issuer`), `sub`, `aud`, `exp`, `iat`, `nbf` and a private
 * `kubernetes.io` claim naming the namespace, the service account and the object the token is bound to (a Pod or
 * a Secret). They are valid while the service account, and the bound object, still exist with the same UIDs.
 * Legacy tokens carry the issuer `kubernetes/serviceaccount` and flat claims; with `--service-account-lookup`, their
 * Secret must still exist and hold the same token. Either way the user is `system:serviceaccount:<ns>:<name>`, in
 * the groups `system:serviceaccounts` and `system:serviceaccounts:<ns>`.
 */
import { type KeyObject } from 'node:crypto';

import { type Pod, type Secret, type ServiceAccount } from '@platform/api';

import { AuthenticationError, type UserInfo } from '../authenticator';
import { audiencesIntersect, type TokenAuthenticator } from './bearer';
import {
  audiencesOf,
  checkTimes,
  epochSeconds,
  isSupportedAlgorithm,
  JwtError,
  keyId,
  looksLikeJwt,
  type ParsedJwt,
  parseJwt,
  signJwt,
  verifySignature,
} from './jwt';
import { type ObjectReader } from './objects';

/** The issuer of legacy (Secret) tokens. */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';
/** Extra keys of pod-bound tokens' users. */
export const POD_NAME_EXTRA = 'authentication.platform/pod-name';
export const POD_UID_EXTRA = 'authentication.platform/pod-uid';
/** The requested validity that asks for an extended (1 year) token warned about after the hour (Kubernetes). */
export const WARN_ONLY_EXPIRATION_SECONDS = 3607;
export const EXTENDED_EXPIRATION_SECONDS = 365 * 24 * 3600;
/** Clock skew tolerated on `exp` and `nbf`. */
const LEEWAY_SECONDS = 60;

const LEGACY_NAMESPACE = 'kubernetes.io/serviceaccount/namespace';
const LEGACY_SECRET = 'kubernetes.io/serviceaccount/secret.name';
const LEGACY_SA_NAME = 'kubernetes.io/serviceaccount/service-account.name';
const LEGACY_SA_UID = 'kubernetes.io/serviceaccount/service-account.uid';

/** The user name of a service account. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;
}

/** The user of a service account. */
export function serviceAccountUser(
  namespace: string,
  name: string,
  uid?: string,
  extra?: Record<string, string[]>,
): UserInfo {
  return {
    name: serviceAccountUsername(namespace, name),
    ...(uid ? { uid } : {}),
    groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${namespace}`],
    ...(extra && Object.keys(extra).length ? { extra } : {}),
  };
}

/** A reference to an object a token names (service account, pod, secret). */
export interface NamedRef {
  name: string;
  uid: string;
}

/** What a bound token is issued for. */
export interface TokenClaimsInput {
  namespace: string;
  serviceAccount: NamedRef;
  audiences: string[];
  /** Validity requested, seconds (after `--service-account-max-token-expiration`). */
  expirationSeconds: number;
  pod?: NamedRef;
  secret?: NamedRef;
}

/** Signs bound tokens (the TokenRequest subresource). */
export class ServiceAccountTokenIssuer {
  private readonly kid: string;

  constructor(
    readonly c: {
      issuer: string;
      signingKey: KeyObject;
      apiAudiences: string[];
      maxExpirationSeconds?: number;
      extendExpiration: boolean;
    },
    private readonly now: () => number = Date.now,
  ) {
    this.kid = keyId(c.signingKey);
  }

  get apiAudiences(): string[] {
    return this.c.apiAudiences;
  }

  /** Signs a token; resolves the token and its expiry (epoch ms). */
  issue(i: TokenClaimsInput): { token: string; expiresAtMs: number } {
    let seconds = i.expirationSeconds;
    const max = this.c.maxExpirationSeconds;
    if (max !== undefined && max > 0 && seconds > max) seconds = max;
    let warnAfter: number | undefined;
    const iat = epochSeconds(this.now());
    if (this.c.extendExpiration && i.pod && seconds === WARN_ONLY_EXPIRATION_SECONDS) {
      warnAfter = iat + seconds;
      seconds = EXTENDED_EXPIRATION_SECONDS;
    }
    const exp = iat + seconds;
    const priv: Record<string, unknown> = {
      namespace: i.namespace,
      serviceaccount: { name: i.serviceAccount.name, uid: i.serviceAccount.uid },
      ...(i.pod ? { pod: { name: i.pod.name, uid: i.pod.uid } } : {}),
      ...(i.secret ? { secret: { name: i.secret.name, uid: i.secret.uid } } : {}),
      ...(warnAfter !== undefined ? { warnafter: warnAfter } : {}),
    };
    const claims = {
      aud: i.audiences,
      exp,
      iat,
      iss: this.c.issuer,
      'kubernetes.io': priv,
      nbf: iat,
      sub: serviceAccountUsername(i.namespace, i.serviceAccount.name),
    };
    return { token: signJwt(claims, this.c.signingKey, { kid: this.kid }), expiresAtMs: exp * 1000 };
  }

  /** Signs a legacy token for a Secret (what the token controller stores; used by tests and tools). */
  issueLegacy(namespace: string, secretName: string, serviceAccount: NamedRef): string {
    return signLegacyToken(this.c.signingKey, namespace, secretName, serviceAccount);
  }
}

/** Signs a legacy service account token (no expiry, no audience), as the token controller does. */
export function signLegacyToken(
  key: KeyObject,
  namespace: string,
  secretName: string,
  serviceAccount: NamedRef,
): string {
  return signJwt(
    {
      iss: LEGACY_ISSUER,
      [LEGACY_NAMESPACE]: namespace,
      [LEGACY_SECRET]: secretName,
      [LEGACY_SA_NAME]: serviceAccount.name,
      [LEGACY_SA_UID]: serviceAccount.uid,
      sub: serviceAccountUsername(namespace, serviceAccount.name),
    },
    key,
    { kid: keyId(key) },
  );
}

/** The verification side. */
export interface ServiceAccountVerifyConfig {
  /** Issuers of bound tokens (`--service-account-issuer`); empty: only legacy tokens are read. */
  issuers: string[];
  publicKeys: KeyObject[];
  /** `--service-account-lookup`: legacy tokens' Secrets and service accounts must exist. */
  lookup: boolean;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function ref(v: unknown): NamedRef | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const name = str((v as Record<string, unknown>).name);
  const uid = str((v as Record<string, unknown>).uid);
  return name && uid ? { name, uid } : undefined;
}

function invalid(message: string): AuthenticationError {
  return new AuthenticationError(`service account token: ${message}`);
}

/**
 * The service account token authenticator: tokens whose `iss` is one of the issuers (or the legacy issuer) are
 * its own; anything else is left to the next method.
 */
export function serviceAccountAuthenticator(
  c: ServiceAccountVerifyConfig,
  objects: ObjectReader,
  now: () => number = Date.now,
): TokenAuthenticator {
  const keys = c.publicKeys.map((key) => ({ key, kid: keyId(key) }));

  function checkSignature(jwt: ParsedJwt): void {
    const alg = jwt.header.alg;
    if (!isSupportedAlgorithm(alg)) throw invalid(`unsupported signing algorithm ${JSON.stringify(alg)}`);
    const byKid = typeof jwt.header.kid === 'string' ? keys.filter((k) => k.kid === jwt.header.kid) : [];
    const candidates = byKid.length ? byKid : keys;
    if (!candidates.some((k) => verifySignature(jwt, alg, k.key))) throw invalid('invalid signature');
  }

  async function serviceAccount(namespace: string, name: string, uid: string): Promise<ServiceAccount> {
    const sa = await objects.get<ServiceAccount>('serviceaccounts', namespace, name);
    if (!sa || sa.metadata?.deletionTimestamp) throw invalid(`service account ${namespace}/${name} has been deleted`);
    if (sa.metadata?.uid !== uid)
      throw invalid(`service account UID (${String(sa.metadata?.uid)}) does not match claim (${uid})`);
    return sa;
  }

  async function bound(jwt: ParsedJwt, audiences: readonly string[]): Promise<UserInfo> {
    const claims = jwt.claims;
    checkTimes(claims, now(), { leewaySeconds: LEEWAY_SECONDS, requireExp: true });
    const tokenAudiences = audiencesOf(claims);
    if (audiencesIntersect(tokenAudiences, audiences).length === 0)
      throw invalid(`token audiences ${JSON.stringify(tokenAudiences)} are invalid for the target audiences`);
    const priv = claims['kubernetes.io'] as Record<string, unknown> | undefined;
    if (typeof priv !== 'object' || priv === null) throw invalid('the kubernetes.io claim is missing');
    const namespace = str(priv.namespace);
    const sa = ref(priv.serviceaccount);
    if (!namespace || !sa) throw invalid('the namespace or service account claim is missing');
    if (claims.sub !== serviceAccountUsername(namespace, sa.name)) throw invalid('the subject does not match');
    await serviceAccount(namespace, sa.name, sa.uid);
    const extra: Record<string, string[]> = {};
    if (priv.pod !== undefined) {
      const p = ref(priv.pod);
      if (!p) throw invalid('malformed pod claim');
      const pod = await objects.get<Pod>('pods', namespace, p.name);
      if (!pod || pod.metadata?.deletionTimestamp) throw invalid(`pod ${namespace}/${p.name} has been deleted`);
      if (pod.metadata?.uid !== p.uid) throw invalid(`pod UID (${String(pod.metadata?.uid)}) does not match claim`);
      extra[POD_NAME_EXTRA] = [p.name];
      extra[POD_UID_EXTRA] = [p.uid];
    }
    if (priv.secret !== undefined) {
      const s = ref(priv.secret);
      if (!s) throw invalid('malformed secret claim');
      const secret = await objects.get<Secret>('secrets', namespace, s.name);
      if (!secret || secret.metadata?.deletionTimestamp)
        throw invalid(`secret ${namespace}/${s.name} has been deleted`);
      if (secret.metadata?.uid !== s.uid) throw invalid('secret UID does not match claim');
    }
    return serviceAccountUser(namespace, sa.name, sa.uid, extra);
  }

  async function legacy(jwt: ParsedJwt, token: string): Promise<UserInfo> {
    const claims = jwt.claims;
    checkTimes(claims, now(), { leewaySeconds: LEEWAY_SECONDS, requireExp: false });
    const namespace = str(claims[LEGACY_NAMESPACE]);
    const secretName = str(claims[LEGACY_SECRET]);
    const name = str(claims[LEGACY_SA_NAME]);
    const uid = str(claims[LEGACY_SA_UID]);
    if (!namespace || !secretName || !name || !uid) throw invalid('a legacy claim is missing');
    if (claims.sub !== serviceAccountUsername(namespace, name)) throw invalid('the subject does not match');
    if (c.lookup) {
      const secret = await objects.get<Secret>('secrets', namespace, secretName);
      if (!secret || secret.metadata?.deletionTimestamp) throw invalid('token has been invalidated');
      const stored = secret.data?.token;
      if (typeof stored !== 'string' || Buffer.from(stored, 'base64').toString('utf8') !== token)
        throw invalid("token does not match the server's copy");
      await serviceAccount(namespace, name, uid);
    }
    return serviceAccountUser(namespace, name, uid);
  }

  return {
    async authenticateToken(token, audiences) {
      if (!looksLikeJwt(token)) return undefined;
      let jwt: ParsedJwt;
      try {
        jwt = parseJwt(token);
      } catch {
        return undefined;
      }
      const iss = jwt.claims.iss;
      const isLegacy = iss === LEGACY_ISSUER;
      if (!isLegacy && !(typeof iss === 'string' && c.issuers.includes(iss))) return undefined;
      try {
        checkSignature(jwt);
        const user = isLegacy ? await legacy(jwt, token) : await bound(jwt, audiences);
        return { user, ...(isLegacy ? {} : { audiences: audiencesIntersect(audiencesOf(jwt.claims), audiences) }) };
      } catch (err) {
        if (err instanceof JwtError) throw invalid(err.message);
        throw err;
      }
    },
  };
}
