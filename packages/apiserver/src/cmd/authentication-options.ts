/**
 * The authentication options of `platform-apiserver` (Document 2, "Authentication"; model: kube-apiserver's
 * `pkg/kubeapiserver/options/authentication.go`): anonymous requests, static tokens, client certificates, service
 * account tokens, OIDC, front-proxy request headers, the token webhook and bootstrap tokens. `validate` checks the
 * values and their combinations; `applyTo` reads the files (a bad file stops the start with a message naming the
 * option) and builds the server's {@link Authentication}.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';

import {
  boolFlag,
  durationFlag,
  type FlagDef,
  mapFlag,
  OptionGroupBase,
  type SecureServingInfo,
  stringArrayFlag,
  stringFlag,
  stringsFlag,
} from '@platform/common';

import { Authentication, type AuthenticationConfig } from '../auth/authentication/authentication';
import { SUPPORTED_ALGORITHMS } from '../auth/authentication/jwt';
import { parseCertificates, parsePrivateKey, parsePublicKeys, readOptionFile } from '../auth/authentication/keys';
import { parseTokenFile } from '../auth/authentication/token-file';
import { loadWebhookClientConfig } from '../auth/authentication/webhook';

/** What this family adds to the configuration main assembles. */
export interface AuthenticationFlagsConfig {
  authentication?: Authentication;
  /** PEM of the authorities the secure server asks client certificates of. */
  clientCA?: string;
  /** Filled by the secure serving family (applied first): its key is the default service account key. */
  secureServing?: SecureServingInfo;
}

const HOUR_MS = 3600_000;
const MAX_EXPIRATION_MS = 2 ** 32 * 1000;

/** `--anonymous-auth`, `--token-auth-file`, `--client-ca-file`, `--service-account-*`, `--oidc-*`, `--requestheader-*`, … */
export class AuthenticationOptions extends OptionGroupBase<AuthenticationFlagsConfig> {
  anonymousAuth = true;
  apiAudiences: string[] = [];
  webhookConfigFile = '';
  webhookCacheTtlMs = 2 * 60_000;
  webhookVersion = 'v1beta1';
  clientCAFile = '';
  enableBootstrapTokenAuth = false;
  tokenAuthFile = '';
  oidcIssuerUrl = '';
  oidcClientId = '';
  oidcCAFile = '';
  oidcUsernameClaim = 'sub';
  oidcUsernamePrefix = '';
  oidcGroupsClaim = '';
  oidcGroupsPrefix = '';
  oidcRequiredClaims = new Map<string, string>();
  oidcSigningAlgs: string[] = ['RS256'];
  serviceAccountIssuers: string[] = [];
  serviceAccountKeyFiles: string[] = [];
  serviceAccountSigningKeyFile = '';
  serviceAccountLookup = true;
  serviceAccountMaxTokenExpirationMs = 0;
  serviceAccountExtendTokenExpiration = true;
  serviceAccountJwksUri = '';
  requestHeaderClientCAFile = '';
  requestHeaderAllowedNames: string[] = [];
  requestHeaderUsernameHeaders: string[] = [];
  requestHeaderGroupHeaders: string[] = [];
  requestHeaderExtraHeadersPrefix: string[] = [];

  constructor() {
    super('Authentication');
  }

  protected flagDefs(): FlagDef[] {
    return [
      boolFlag(
        'anonymous-auth',
        'Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.',
        this.anonymousAuth,
        (v) => (this.anonymousAuth = v),
      ),
      stringsFlag(
        'api-audiences',
        'Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. If the --service-account-issuer flag is configured and this flag is not, this field defaults to a single element list containing the issuer URL.',
        this.apiAudiences,
        (v) => (this.apiAudiences = v),
      ),
      stringFlag(
        'authentication-token-webhook-config-file',
        'File with webhook configuration for token authentication in kubeconfig format. The API server will query the remote service to determine authentication for bearer tokens.',
        this.webhookConfigFile,
        (v) => (this.webhookConfigFile = v),
      ),
      durationFlag(
        'authentication-token-webhook-cache-ttl',
        'The duration to cache responses from the webhook token authenticator.',
        this.webhookCacheTtlMs,
        (v) => (this.webhookCacheTtlMs = v),
      ),
      stringFlag(
        'authentication-token-webhook-version',
        'The API version of the authentication.platform TokenReview to send to and expect from the webhook.',
        this.webhookVersion,
        (v) => (this.webhookVersion = v),
        {
          validate: (v) => {
            if (v !== 'v1beta1' && v !== 'v1') throw new Error('supported values: v1beta1, v1');
          },
        },
      ),
      stringFlag(
        'client-ca-file',
        'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.',
        this.clientCAFile,
        (v) => (this.clientCAFile = v),
      ),
      boolFlag(
        'enable-bootstrap-token-auth',
        "Enable to allow secrets of type 'bootstrap.platform/token' in the 'system' namespace to be used for TLS bootstrapping authentication.",
        this.enableBootstrapTokenAuth,
        (v) => (this.enableBootstrapTokenAuth = v),
      ),
      stringFlag(
        'token-auth-file',
        'If set, the file that will be used to secure the secure port of the API server via token authentication.',
        this.tokenAuthFile,
        (v) => (this.tokenAuthFile = v),
      ),
      stringFlag(
        'oidc-issuer-url',
        'The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC JSON Web Token (JWT).',
        this.oidcIssuerUrl,
        (v) => (this.oidcIssuerUrl = v),
      ),
      stringFlag(
        'oidc-client-id',
        'The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.',
        this.oidcClientId,
        (v) => (this.oidcClientId = v),
      ),
      stringFlag(
        'oidc-ca-file',
        "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be used.",
        this.oidcCAFile,
        (v) => (this.oidcCAFile = v),
      ),
      stringFlag(
        'oidc-username-claim',
        "The OpenID claim to use as the user name. Note that claims other than the default ('sub') is not guaranteed to be unique and immutable. This flag is experimental, please see the authentication documentation for further details.",
        this.oidcUsernameClaim,
        (v) => (this.oidcUsernameClaim = v),
      ),
      stringFlag(
        'oidc-username-prefix',
        "If provided, all usernames will be prefixed with this value. If not provided, username claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'.",
        this.oidcUsernamePrefix,
        (v) => (this.oidcUsernamePrefix = v),
      ),
      stringFlag(
        'oidc-groups-claim',
        'If provided, the name of a custom OpenID Connect claim for specifying user groups. The claim value is expected to be a string or array of strings. This flag is experimental, please see the authentication documentation for further details.',
        this.oidcGroupsClaim,
        (v) => (this.oidcGroupsClaim = v),
      ),
      stringFlag(
        'oidc-groups-prefix',
        'If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.',
        this.oidcGroupsPrefix,
        (v) => (this.oidcGroupsPrefix = v),
      ),
      mapFlag(
        'oidc-required-claim',
        'A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present in the ID Token with a matching value. Repeat this flag to specify multiple claims.',
        this.oidcRequiredClaims,
        (v) => (this.oidcRequiredClaims = v),
      ),
      stringsFlag(
        'oidc-signing-algs',
        `Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a 'alg' header value not in this list will be rejected. Values are defined by RFC 7518 https://tools.ietf.org/html/rfc7518#section-3.1 (supported: ${SUPPORTED_ALGORITHMS.join(', ')}).`,
        this.oidcSigningAlgs,
        (v) => (this.oidcSigningAlgs = v),
      ),
      stringArrayFlag(
        'service-account-issuer',
        'Identifier of the service account token issuer. The issuer will assert this identifier in "iss" claim of issued tokens. This value is a string or URI. If this option is not a valid URI per the OpenID Discovery 1.0 spec, the ServiceAccountIssuerDiscovery feature will remain disabled, even if the feature gate is set to true. When this flag is specified multiple times, the first is used to generate tokens and all are used to determine which issuers are accepted.',
        this.serviceAccountIssuers,
        (v) => (this.serviceAccountIssuers = v),
      ),
      stringArrayFlag(
        'service-account-key-file',
        'File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. The specified file can contain multiple keys, and the flag can be specified multiple times with different files. If unspecified, --tls-private-key-file is used. Must be specified when --service-account-signing-key-file is provided',
        this.serviceAccountKeyFiles,
        (v) => (this.serviceAccountKeyFiles = v),
      ),
      stringFlag(
        'service-account-signing-key-file',
        'Path to the file that contains the current private key of the service account token issuer. The issuer will sign issued ID tokens with this private key.',
        this.serviceAccountSigningKeyFile,
        (v) => (this.serviceAccountSigningKeyFile = v),
      ),
      boolFlag(
        'service-account-lookup',
        'If true, validate ServiceAccount tokens exist in the backing store as part of authentication.',
        this.serviceAccountLookup,
        (v) => (this.serviceAccountLookup = v),
      ),
      durationFlag(
        'service-account-max-token-expiration',
        'The maximum validity duration of a token created by the service account token issuer. If an otherwise valid TokenRequest with a validity duration larger than this value is requested, a token will be issued with a validity duration of this value.',
        undefined,
        (v) => (this.serviceAccountMaxTokenExpirationMs = v),
      ),
      boolFlag(
        'service-account-extend-token-expiration',
        'Turns on projected service account expiration extension during token generation, which helps safe transition from legacy token to bound service account token feature. If this flag is enabled, admission injected tokens would be extended up to 1 year to prevent unexpected failure during transition, ignoring value of service-account-max-token-expiration.',
        this.serviceAccountExtendTokenExpiration,
        (v) => (this.serviceAccountExtendTokenExpiration = v),
      ),
      stringFlag(
        'service-account-jwks-uri',
        "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration. This flag is useful if the discovery doc and key set are served to relying parties from a URL other than the API server's external (as auto-detected or overridden with external-hostname). Only valid if the ServiceAccountIssuerDiscovery feature gate is enabled.",
        this.serviceAccountJwksUri,
        (v) => (this.serviceAccountJwksUri = v),
      ),
      stringFlag(
        'requestheader-client-ca-file',
        'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.',
        this.requestHeaderClientCAFile,
        (v) => (this.requestHeaderClientCAFile = v),
      ),
      stringsFlag(
        'requestheader-allowed-names',
        'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.',
        this.requestHeaderAllowedNames,
        (v) => (this.requestHeaderAllowedNames = v),
      ),
      stringsFlag(
        'requestheader-username-headers',
        'List of request headers to inspect for usernames. X-Remote-User is common.',
        this.requestHeaderUsernameHeaders,
        (v) => (this.requestHeaderUsernameHeaders = v),
      ),
      stringsFlag(
        'requestheader-group-headers',
        'List of request headers to inspect for groups. X-Remote-Group is suggested.',
        this.requestHeaderGroupHeaders,
        (v) => (this.requestHeaderGroupHeaders = v),
      ),
      stringsFlag(
        'requestheader-extra-headers-prefix',
        'List of request header prefixes to inspect. X-Remote-Extra- is suggested.',
        this.requestHeaderExtraHeadersPrefix,
        (v) => (this.requestHeaderExtraHeadersPrefix = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: string[] = [];
    if (this.oidcIssuerUrl !== '' || this.oidcClientId !== '') {
      if (this.oidcIssuerUrl === '' || this.oidcClientId === '')
        errs.push('--oidc-issuer-url and --oidc-client-id should be specified together');
      if (this.oidcIssuerUrl !== '') {
        let u: URL | undefined;
        try {
          u = new URL(this.oidcIssuerUrl);
        } catch {
          errs.push(`--oidc-issuer-url: ${JSON.stringify(this.oidcIssuerUrl)} is not a URL`);
        }
        if (u && u.protocol !== 'https:')
          errs.push(`--oidc-issuer-url: ${JSON.stringify(this.oidcIssuerUrl)} must use the https scheme`);
      }
      if (this.oidcUsernameClaim === '') errs.push('--oidc-username-claim must not be empty');
    }
    for (const alg of this.oidcSigningAlgs)
      if (!(SUPPORTED_ALGORITHMS as readonly string[]).includes(alg))
        errs.push(
          `--oidc-signing-algs: unsupported signing algorithm ${JSON.stringify(alg)} (supported: ${SUPPORTED_ALGORITHMS.join(', ')})`,
        );
    for (const a of this.apiAudiences) if (a.trim() === '') errs.push('--api-audiences: an audience is empty');
    for (const iss of this.serviceAccountIssuers) {
      if (iss === '') errs.push('--service-account-issuer: an issuer is empty');
      else if (iss.includes(':')) {
        try {
          new URL(iss);
        } catch {
          errs.push(`--service-account-issuer: ${JSON.stringify(iss)} contained a ':' but was not a valid URL`);
        }
      }
    }
    const max = this.serviceAccountMaxTokenExpirationMs;
    if (max !== 0 && (max < HOUR_MS || max > MAX_EXPIRATION_MS))
      errs.push('--service-account-max-token-expiration: the expiration must be between 1 hour and 2^32 seconds');
    if (this.serviceAccountSigningKeyFile !== '' && this.serviceAccountIssuers.length === 0)
      errs.push('--service-account-signing-key-file requires --service-account-issuer');
    if (this.serviceAccountJwksUri !== '') {
      let u: URL | undefined;
      try {
        u = new URL(this.serviceAccountJwksUri);
      } catch {
        errs.push(`--service-account-jwks-uri: ${JSON.stringify(this.serviceAccountJwksUri)} is not a URL`);
      }
      if (u && u.protocol !== 'https:') errs.push('--service-account-jwks-uri requires the https scheme');
      if (this.serviceAccountIssuers.length === 0)
        errs.push('--service-account-jwks-uri requires --service-account-issuer');
    }
    if (this.requestHeaderClientCAFile !== '' && this.requestHeaderUsernameHeaders.length === 0)
      errs.push(
        '--requestheader-username-headers must name at least one header when --requestheader-client-ca-file is set',
      );
    for (const h of [
      ...this.requestHeaderUsernameHeaders,
      ...this.requestHeaderGroupHeaders,
      ...this.requestHeaderExtraHeadersPrefix,
    ])
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h))
        errs.push(`--requestheader-*: ${JSON.stringify(h)} is not a valid header name`);
    return errs.map((m) => new Error(m));
  }

  /** Loads the files and builds the configuration; throws naming the option of a file it cannot use. */
  buildConfig(tlsKeyPem?: string): AuthenticationConfig {
    const c: AuthenticationConfig = {
      anonymous: this.anonymousAuth,
      apiAudiences: this.apiAudiences.length ? [...this.apiAudiences] : this.serviceAccountIssuers.slice(0, 1),
      bootstrapTokens: this.enableBootstrapTokenAuth,
    };
    if (this.tokenAuthFile)
      c.tokenFile = parseTokenFile(
        readOptionFile('token-auth-file', this.tokenAuthFile),
        `--token-auth-file ${this.tokenAuthFile}`,
      );
    if (this.clientCAFile)
      c.clientCA = parseCertificates(
        readOptionFile('client-ca-file', this.clientCAFile),
        `--client-ca-file ${this.clientCAFile}`,
      );
    if (this.requestHeaderClientCAFile)
      c.requestHeader = {
        roots: parseCertificates(
          readOptionFile('requestheader-client-ca-file', this.requestHeaderClientCAFile),
          `--requestheader-client-ca-file ${this.requestHeaderClientCAFile}`,
        ),
        allowedNames: [...this.requestHeaderAllowedNames],
        usernameHeaders: [...this.requestHeaderUsernameHeaders],
        groupHeaders: [...this.requestHeaderGroupHeaders],
        extraHeaderPrefixes: [...this.requestHeaderExtraHeadersPrefix],
      };
    let publicKeys: KeyObject[] = [];
    for (const f of this.serviceAccountKeyFiles)
      publicKeys.push(
        ...parsePublicKeys(readOptionFile('service-account-key-file', f), `--service-account-key-file ${f}`),
      );
    if (publicKeys.length === 0 && tlsKeyPem) {
      try {
        publicKeys = parsePublicKeys(tlsKeyPem, '--tls-private-key-file');
      } catch {
        publicKeys = []; // a TLS key of another type cannot verify tokens; service account tokens stay off
      }
    }
    let signingKey: KeyObject | undefined;
    if (this.serviceAccountSigningKeyFile) {
      signingKey = parsePrivateKey(
        readOptionFile('service-account-signing-key-file', this.serviceAccountSigningKeyFile),
        `--service-account-signing-key-file ${this.serviceAccountSigningKeyFile}`,
      );
      if (publicKeys.length === 0)
        throw new Error('--service-account-key-file is required when --service-account-signing-key-file is given');
      const pub = createPublicKey(signingKey).export({ type: 'spki', format: 'der' });
      if (!publicKeys.some((k) => k.export({ type: 'spki', format: 'der' }).equals(pub)))
        throw new Error(
          '--service-account-signing-key-file: its public key is not among the --service-account-key-file keys, so the tokens it signs could not be verified',
        );
    }
    if (this.serviceAccountIssuers.length > 0 && publicKeys.length === 0)
      throw new Error(
        '--service-account-issuer needs keys to verify tokens: give --service-account-key-file (or --tls-private-key-file)',
      );
    if (publicKeys.length > 0 || this.serviceAccountIssuers.length > 0)
      c.serviceAccounts = {
        issuers: [...this.serviceAccountIssuers],
        publicKeys,
        ...(signingKey ? { signingKey } : {}),
        lookup: this.serviceAccountLookup,
        ...(this.serviceAccountMaxTokenExpirationMs
          ? { maxExpirationSeconds: Math.floor(this.serviceAccountMaxTokenExpirationMs / 1000) }
          : {}),
        extendExpiration: this.serviceAccountExtendTokenExpiration,
        ...(this.serviceAccountJwksUri ? { jwksUri: this.serviceAccountJwksUri } : {}),
      };
    if (this.oidcIssuerUrl)
      c.oidc = {
        issuerUrl: this.oidcIssuerUrl,
        clientId: this.oidcClientId,
        ...(this.oidcCAFile
          ? {
              caPem: (() => {
                const pem = readOptionFile('oidc-ca-file', this.oidcCAFile);
                parseCertificates(pem, `--oidc-ca-file ${this.oidcCAFile}`);
                return pem;
              })(),
            }
          : {}),
        usernameClaim: this.oidcUsernameClaim,
        usernamePrefix: this.oidcUsernamePrefix,
        groupsClaim: this.oidcGroupsClaim,
        groupsPrefix: this.oidcGroupsPrefix,
        requiredClaims: new Map(this.oidcRequiredClaims),
        signingAlgs: [...this.oidcSigningAlgs],
      };
    if (this.webhookConfigFile)
      c.webhook = {
        client: loadWebhookClientConfig(this.webhookConfigFile, 'authentication-token-webhook-config-file'),
        version: this.webhookVersion,
        cacheTtlMs: this.webhookCacheTtlMs,
      };
    return c;
  }

  applyTo(config: AuthenticationFlagsConfig): void {
    // As in Kubernetes, the serving key (given, or generated into --cert-dir) verifies tokens when no key file is given.
    const auth = new Authentication(this.buildConfig(config.secureServing?.cert.keyPem));
    config.authentication = auth;
    const ca = auth.clientCAPem();
    if (ca) config.clientCA = ca;
  }
}
