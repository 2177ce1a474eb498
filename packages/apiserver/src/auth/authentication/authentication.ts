/**
 * The API server's authentication, assembled from the options (`cmd/authentication-options.ts`): the methods in
 * Kubernetes' order — front-proxy request headers, client certificates, then bearer tokens (token file, service
 * account tokens, bootstrap tokens, OIDC, webhook) from the `Authorization` header or, for WebSocket upgrades, the
 * subprotocol — and the anonymous user for requests without credentials when `--anonymous-auth` is on. Also what the
 * server serves for service accounts: the issuer behind `serviceaccounts/<name>/token` and the issuer discovery
 * documents.
 */
import { type KeyObject, type X509Certificate } from 'node:crypto';

import { type Logger } from '@platform/common';

import {
  AUTHENTICATED_GROUP,
  AuthenticationError,
  type Authenticator,
  requestAuthenticator,
  type UserInfo,
} from '../authenticator';
import { bearerTokenAuthenticator, type TokenAuthenticator, unionTokenAuthenticator } from './bearer';
import { bootstrapTokenAuthenticator } from './bootstrap-token';
import { discoveryDocuments } from './discovery';
import { type ObjectReader } from './objects';
import { OidcAuthenticator, type OidcConfig } from './oidc';
import { type RequestHeaderConfig, requestHeaderAuthenticator } from './request-header';
import { serviceAccountAuthenticator, ServiceAccountTokenIssuer } from './service-account';
import { tokenFileAuthenticator } from './token-file';
import { webhookTokenAuthenticator, type WebhookTokenConfig } from './webhook';
import { webSocketProtocolAuthenticator } from './websocket-protocol';
import { x509Authenticator } from './x509';

/** Service account token settings (`--service-account-*`, `--api-audiences`). */
export interface ServiceAccountConfig {
  /** `--service-account-issuer`: the first issues tokens, all are accepted. Empty: only legacy tokens. */
  issuers: string[];
  /** Keys that verify tokens (`--service-account-key-file`, or the TLS key). */
  publicKeys: KeyObject[];
  /** `--service-account-signing-key-file`: without it the TokenRequest subresource is not served. */
  signingKey?: KeyObject;
  lookup: boolean;
  maxExpirationSeconds?: number;
  extendExpiration: boolean;
  jwksUri?: string;
}

/** Every authentication setting, validated and loaded. */
export interface AuthenticationConfig {
  anonymous: boolean;
  /** `--api-audiences` (defaulted to the first issuer). */
  apiAudiences: string[];
  tokenFile?: Map<string, UserInfo>;
  clientCA?: X509Certificate[];
  requestHeader?: RequestHeaderConfig;
  serviceAccounts?: ServiceAccountConfig;
  bootstrapTokens: boolean;
  oidc?: OidcConfig;
  webhook?: WebhookTokenConfig;
}

/** What a server needs to run authentication. */
export interface AuthenticationRuntime {
  objects: ObjectReader;
  /** Aborted at shutdown (stops background fetches). */
  signal: AbortSignal;
  log: Logger;
  now: () => number;
}

/** Answers TokenReviews with the server's own token methods. */
export interface TokenReviewer {
  /** `audiences` empty: the API's audiences. Never throws for a bad token: `error` says why it was refused. */
  review(
    token: string,
    audiences: string[],
  ): Promise<{ authenticated: boolean; user?: UserInfo; audiences?: string[]; error?: string }>;
}

/** The API server's authentication. */
export class Authentication {
  private tokens: TokenAuthenticator | undefined;

  /** Signs tokens for `serviceaccounts/<name>/token`; undefined when no signing key and issuer are configured. */
  readonly tokenIssuer: ServiceAccountTokenIssuer | undefined;
  /** The issuer discovery documents; undefined when discovery is off. */
  readonly discovery: { configuration: string; jwks: string } | undefined;

  constructor(
    readonly config: AuthenticationConfig,
    now: () => number = Date.now,
  ) {
    const sa = config.serviceAccounts;
    const issuer = sa?.issuers[0];
    this.tokenIssuer =
      sa?.signingKey && issuer
        ? new ServiceAccountTokenIssuer(
            {
              issuer,
              signingKey: sa.signingKey,
              apiAudiences: config.apiAudiences,
              ...(sa.maxExpirationSeconds !== undefined ? { maxExpirationSeconds: sa.maxExpirationSeconds } : {}),
              extendExpiration: sa.extendExpiration,
            },
            now,
          )
        : undefined;
    this.discovery =
      sa && issuer
        ? discoveryDocuments({ issuer, publicKeys: sa.publicKeys, ...(sa.jwksUri ? { jwksUri: sa.jwksUri } : {}) })
        : undefined;
  }

  /** The token methods in order (also what a TokenReview asks). */
  tokenAuthenticator(rt: AuthenticationRuntime): TokenAuthenticator | undefined {
    const c = this.config;
    const tokens: TokenAuthenticator[] = [];
    if (c.tokenFile) tokens.push(tokenFileAuthenticator(c.tokenFile));
    if (c.serviceAccounts && c.serviceAccounts.publicKeys.length > 0)
      tokens.push(
        serviceAccountAuthenticator(
          {
            issuers: c.serviceAccounts.issuers,
            publicKeys: c.serviceAccounts.publicKeys,
            lookup: c.serviceAccounts.lookup,
          },
          rt.objects,
          rt.now,
        ),
      );
    if (c.bootstrapTokens) tokens.push(bootstrapTokenAuthenticator(rt.objects, rt.now));
    if (c.oidc) {
      const oidc = new OidcAuthenticator(c.oidc, rt.now);
      oidc.start(rt.signal, (err) =>
        rt.log.warn('Unable to fetch the OIDC key set; will retry', { err: (err as Error).message }),
      );
      tokens.push(oidc);
    }
    if (c.webhook) tokens.push(webhookTokenAuthenticator(c.webhook, rt.now));
    return tokens.length ? unionTokenAuthenticator(tokens) : undefined;
  }

  /** The request authenticator (call once per server). */
  requestAuthenticator(rt: AuthenticationRuntime): Authenticator {
    const c = this.config;
    const methods: Authenticator[] = [];
    if (c.requestHeader) methods.push(requestHeaderAuthenticator(c.requestHeader, rt.now));
    if (c.clientCA) methods.push(x509Authenticator(c.clientCA, rt.now));
    const tokens = this.tokenAuthenticator(rt);
    this.tokens = tokens;
    // As in Kubernetes, the same token methods read the Authorization header and (WebSocket only) the subprotocol.
    if (tokens)
      methods.push(
        bearerTokenAuthenticator(tokens, c.apiAudiences),
        webSocketProtocolAuthenticator(tokens, c.apiAudiences),
      );
    return requestAuthenticator(methods, c.anonymous);
  }

  /**
   * The TokenReview side of the token methods built by {@link requestAuthenticator} (call it first): users get
   * `system:authenticated`, as on requests. Undefined when no token method is configured.
   */
  tokenReviewer(): TokenReviewer | undefined {
    const tokens = this.tokens;
    if (!tokens) return undefined;
    const apiAudiences = this.config.apiAudiences;
    return {
      async review(token, audiences) {
        const wanted = audiences.length ? audiences : apiAudiences;
        try {
          const r = await tokens.authenticateToken(token, wanted);
          if (!r) return { authenticated: false, error: 'invalid bearer token' };
          const groups = r.user.groups.includes(AUTHENTICATED_GROUP)
            ? r.user.groups
            : [...r.user.groups, AUTHENTICATED_GROUP];
          return { authenticated: true, user: { ...r.user, groups }, audiences: r.audiences ?? [...wanted] };
        } catch (err) {
          if (err instanceof AuthenticationError) return { authenticated: false, error: err.message };
          throw err;
        }
      },
    };
  }

  /** PEM of every authority the secure server should ask client certificates of (client CA and proxy CA). */
  clientCAPem(): string | undefined {
    const certs = [...(this.config.clientCA ?? []), ...(this.config.requestHeader?.roots ?? [])];
    return certs.length ? certs.map((c) => c.toString()).join('\n') : undefined;
  }
}
