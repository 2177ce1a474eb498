/**
 * OpenID Connect ID tokens (model: apiserver `plugin/pkg/authenticator/token/oidc`, `--oidc-*`): JWTs issued by
 * `--oidc-issuer-url` for `--oidc-client-id`, verified with the key set named by the issuer's discovery document
 * (`<issuer>/.well-known/openid-configuration` → `jwks_uri`), fetched over HTTPS trusting `--oidc-ca-file` (or the
 * host's roots). Until the key set has been fetched once, tokens of this issuer fail ("not initialized"); fetching
 * retries in the background. A token signed by a key the set lacks refetches it, at most once per
 * {@link REFRESH_INTERVAL_MS}, so made-up key IDs cannot make the server hammer the issuer.
 *
 * The user name is the `--oidc-username-claim` (default `sub`), prefixed with `--oidc-username-prefix`; unset,
 * claims other than `email` get `<issuer>#`, and `-` means no prefix. An `email` claim needs `email_verified` true
 * when present. Groups come from `--oidc-groups-claim` (a string or an array of strings) with `--oidc-groups-prefix`.
 * Every `--oidc-required-claim` must be present with its value.
 */
import { type KeyObject } from 'node:crypto';

import { AuthenticationError, type UserInfo } from '../authenticator';
import { type TokenAuthenticator } from './bearer';
import { httpsJson } from './https-json';
import {
  audiencesOf,
  checkTimes,
  isSupportedAlgorithm,
  JwtError,
  keyFromJwk,
  looksLikeJwt,
  type ParsedJwt,
  parseJwt,
  verifySignature,
} from './jwt';

/** Shortest time between two fetches of the key set. */
export const REFRESH_INTERVAL_MS = 10_000;
const RETRY_MS = 10_000;
const FETCH_TIMEOUT_MS = 10_000;

/** The `--oidc-*` configuration. */
export interface OidcConfig {
  issuerUrl: string;
  clientId: string;
  /** PEM of the issuer's authorities (`--oidc-ca-file`); unset: the host's roots. */
  caPem?: string;
  usernameClaim: string;
  /** `--oidc-username-prefix` as given ('' = unset). */
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  requiredClaims: Map<string, string>;
  signingAlgs: string[];
}

interface KeySet {
  keys: { key: KeyObject; kid?: string }[];
  fetchedAt: number;
}

function invalid(message: string): AuthenticationError {
  return new AuthenticationError(`oidc: ${message}`);
}

/** The OIDC authenticator; `start` begins fetching keys (call once; stops on `signal`). */
export class OidcAuthenticator implements TokenAuthenticator {
  private keySet: KeySet | undefined;
  private fetching: Promise<KeySet> | undefined;
  private lastAttempt = 0;
  private readonly usernamePrefix: string;

  constructor(
    private readonly c: OidcConfig,
    private readonly now: () => number = Date.now,
  ) {
    const p = c.usernamePrefix;
    this.usernamePrefix = p === '-' ? '' : p !== '' ? p : c.usernameClaim === 'email' ? '' : `${c.issuerUrl}#`;
  }

  /** Fetches the key set now, then again every {@link RETRY_MS} until it succeeds or `signal` aborts. */
  start(signal: AbortSignal, onError: (err: unknown) => void = () => {}): void {
    const attempt = (): void => {
      if (signal.aborted || this.keySet) return;
      this.refresh().catch((err: unknown) => {
        onError(err);
        const t = setTimeout(attempt, RETRY_MS);
        t.unref();
        signal.addEventListener('abort', () => clearTimeout(t), { once: true });
      });
    };
    attempt();
  }

  /** Whether the key set has been fetched. */
  get initialized(): boolean {
    return this.keySet !== undefined;
  }

  /** Fetches discovery and key set (one fetch at a time). */
  refresh(): Promise<KeySet> {
    this.fetching ??= this.fetchKeySet().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchKeySet(): Promise<KeySet> {
    this.lastAttempt = this.now();
    const tls = this.c.caPem ? { ca: this.c.caPem } : {};
    const base = this.c.issuerUrl.replace(/\/+$/, '');
    const d = await httpsJson(`${base}/.well-known/openid-configuration`, { tls, timeoutMs: FETCH_TIMEOUT_MS });
    if (d.status !== 200) throw new Error(`oidc: discovery answered ${d.status}`);
    const doc = d.json as { issuer?: unknown; jwks_uri?: unknown };
    if (doc?.issuer !== this.c.issuerUrl)
      throw new Error(
        `oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.c.issuerUrl)} got ${JSON.stringify(doc?.issuer)}`,
      );
    if (typeof doc.jwks_uri !== 'string') throw new Error('oidc: the discovery document has no jwks_uri');
    const j = await httpsJson(doc.jwks_uri, { tls, timeoutMs: FETCH_TIMEOUT_MS });
    if (j.status !== 200) throw new Error(`oidc: key set answered ${j.status}`);
    const raw = (j.json as { keys?: unknown })?.keys;
    if (!Array.isArray(raw)) throw new Error('oidc: the key set has no keys');
    const keys: KeySet['keys'] = [];
    for (const k of raw) {
      const key = keyFromJwk(k);
      if (!key) continue;
      const kid = (k as { kid?: unknown }).kid;
      keys.push({ key, ...(typeof kid === 'string' ? { kid } : {}) });
    }
    const set = { keys, fetchedAt: this.now() };
    this.keySet = set;
    return set;
  }

  private async verify(jwt: ParsedJwt): Promise<void> {
    const alg = jwt.header.alg;
    if (!isSupportedAlgorithm(alg) || !this.c.signingAlgs.includes(alg))
      throw invalid(`signing algorithm ${JSON.stringify(alg)} is not allowed`);
    const kid = typeof jwt.header.kid === 'string' ? jwt.header.kid : undefined;
    const tryKeys = (set: KeySet): boolean | undefined => {
      const candidates = kid === undefined ? set.keys : set.keys.filter((k) => k.kid === kid);
      if (candidates.length === 0) return undefined;
      return candidates.some((k) => verifySignature(jwt, alg, k.key));
    };
    let set = this.keySet;
    if (!set) throw invalid('authenticator not initialized');
    let ok = tryKeys(set);
    if (ok === undefined && this.now() - this.lastAttempt >= REFRESH_INTERVAL_MS) {
      try {
        set = await this.refresh();
        ok = tryKeys(set);
      } catch {
        // keep the old set
      }
    }
    if (!ok) throw invalid('failed to verify signature');
  }

  private username(claims: Record<string, unknown>): string {
    const claim = this.c.usernameClaim;
    const v = claims[claim];
    if (typeof v !== 'string' || v === '') throw invalid(`claim ${JSON.stringify(claim)} not present or not a string`);
    if (claim === 'email' && claims.email_verified !== undefined && claims.email_verified !== true)
      throw invalid(`email not verified`);
    return `${this.usernamePrefix}${v}`;
  }

  private groups(claims: Record<string, unknown>): string[] {
    if (!this.c.groupsClaim) return [];
    const v = claims[this.c.groupsClaim];
    if (v === undefined) return [];
    const list = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((g) => typeof g === 'string') ? v : null;
    if (!list) throw invalid(`groups claim ${JSON.stringify(this.c.groupsClaim)} is not a string or array of strings`);
    return (list as string[]).map((g) => `${this.c.groupsPrefix}${g}`);
  }

  async authenticateToken(token: string): Promise<{ user: UserInfo } | undefined> {
    if (!looksLikeJwt(token)) return undefined;
    let jwt: ParsedJwt;
    try {
      jwt = parseJwt(token);
    } catch {
      return undefined;
    }
    if (jwt.claims.iss !== this.c.issuerUrl) return undefined;
    try {
      await this.verify(jwt);
      const claims = jwt.claims;
      checkTimes(claims, this.now(), { leewaySeconds: 0, requireExp: true });
      if (!audiencesOf(claims).includes(this.c.clientId))
        throw invalid(`expected audience ${JSON.stringify(this.c.clientId)}`);
      for (const [k, want] of this.c.requiredClaims) {
        const got = claims[k];
        if (got === undefined) throw invalid(`required claim ${k} not present in ID token`);
        if (got !== want) throw invalid(`required claim ${k} value does not match`);
      }
      return { user: { name: this.username(claims), groups: this.groups(claims) } };
    } catch (err) {
      if (err instanceof JwtError) throw invalid(err.message);
      throw err;
    }
  }
}
