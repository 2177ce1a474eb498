/**
 * Delegated authentication and authorization option families of the controller manager and the scheduler
 * (Document 2, "Controller manager (and scheduler)"). Values only: the token review / access review clients that
 * act on them live in the client package.
 */
import { existsSync } from 'node:fs';

import { type FlagDef, OptionGroupBase, boolFlag, durationFlag, stringFlag, stringsFlag } from './flags';
import { FlagValueError } from './parsers';

/** Request-header (front proxy) authentication settings. */
export interface RequestHeaderConfig {
  clientCAFile: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** Delegated authentication settings (durations in milliseconds). */
export interface DelegatedAuthenticationConfig {
  remoteKubeConfigFile: string;
  skipLookup: boolean;
  tokenWebhookCacheTTLMs: number;
  tolerateLookupFailure: boolean;
  clientCAFile: string;
  requestHeader: RequestHeaderConfig;
}

/** Delegated authorization settings (durations in milliseconds). */
export interface DelegatedAuthorizationConfig {
  remoteKubeConfigFile: string;
  alwaysAllowPaths: string[];
  allowCacheTTLMs: number;
  denyCacheTTLMs: number;
}

function fileMustExist(flag: string, path: string): Error[] {
  return path !== '' && !existsSync(path) ? [new Error(`--${flag}: file ${JSON.stringify(path)} does not exist`)] : [];
}

/** The delegated authentication option family. `tolerateLookupFailure` defaults per daemon (scheduler: true). */
export class DelegatedAuthenticationOptions extends OptionGroupBase<{
  authentication?: DelegatedAuthenticationConfig;
}> {
  readonly config: DelegatedAuthenticationConfig;

  constructor(defaults: { tolerateLookupFailure?: boolean } = {}) {
    super('Authentication');
    this.config = {
      remoteKubeConfigFile: '',
      skipLookup: false,
      tokenWebhookCacheTTLMs: 10_000,
      tolerateLookupFailure: defaults.tolerateLookupFailure ?? false,
      clientCAFile: '',
      requestHeader: {
        clientCAFile: '',
        allowedNames: [],
        usernameHeaders: ['x-remote-user'],
        groupHeaders: ['x-remote-group'],
        extraHeaderPrefixes: ['x-remote-extra-'],
      },
    };
  }

  protected flagDefs(): FlagDef[] {
    const c = this.config;
    const rh = c.requestHeader;
    const header = (s: string): string => {
      if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(s))
        throw new FlagValueError(`${JSON.stringify(s)} is not a valid HTTP header name`);
      return s;
    };
    return [
      stringFlag(
        'authentication-clientconfig',
        "client configuration file pointing to the 'core' server with enough rights to create tokenreviews.authentication.platform. This is optional. If empty, all token requests are considered to be anonymous and no client CA is looked up in the cluster.",
        c.remoteKubeConfigFile,
        (v) => (c.remoteKubeConfigFile = v),
      ),
      boolFlag(
        'authentication-skip-lookup',
        'If false, the authentication-clientconfig will be used to lookup missing authentication configuration from the cluster.',
        c.skipLookup,
        (v) => (c.skipLookup = v),
      ),
      durationFlag(
        'authentication-token-webhook-cache-ttl',
        'The duration to cache responses from the webhook token authenticator.',
        c.tokenWebhookCacheTTLMs,
        (v) => (c.tokenWebhookCacheTTLMs = v),
      ),
      boolFlag(
        'authentication-tolerate-lookup-failure',
        'If true, failures to look up missing authentication configuration from the cluster are not considered fatal. Note that this can result in authentication that treats all requests as anonymous.',
        c.tolerateLookupFailure,
        (v) => (c.tolerateLookupFailure = v),
      ),
      stringFlag(
        'client-ca-file',
        'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.',
        c.clientCAFile,
        (v) => (c.clientCAFile = v),
      ),
      stringFlag(
        'requestheader-client-ca-file',
        'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being already done for incoming requests.',
        rh.clientCAFile,
        (v) => (rh.clientCAFile = v),
      ),
      stringsFlag(
        'requestheader-allowed-names',
        'List of client certificate common names to allow to provide usernames in headers specified by --requestheader-username-headers. If empty, any client certificate validated by the authorities in --requestheader-client-ca-file is allowed.',
        rh.allowedNames,
        (v) => (rh.allowedNames = v),
      ),
      stringsFlag(
        'requestheader-extra-headers-prefix',
        'List of request header prefixes to inspect. X-Remote-Extra- is suggested.',
        rh.extraHeaderPrefixes,
        (v) => (rh.extraHeaderPrefixes = v),
        { item: header },
      ),
      stringsFlag(
        'requestheader-group-headers',
        'List of request headers to inspect for groups. X-Remote-Group is suggested.',
        rh.groupHeaders,
        (v) => (rh.groupHeaders = v),
        { item: header },
      ),
      stringsFlag(
        'requestheader-username-headers',
        'List of request headers to inspect for usernames. X-Remote-User is common.',
        rh.usernameHeaders,
        (v) => (rh.usernameHeaders = v),
        { item: header },
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const c = this.config;
    return [
      ...fileMustExist('authentication-clientconfig', c.remoteKubeConfigFile),
      ...fileMustExist('client-ca-file', c.clientCAFile),
      ...fileMustExist('requestheader-client-ca-file', c.requestHeader.clientCAFile),
      ...(c.requestHeader.clientCAFile !== '' && c.requestHeader.usernameHeaders.length === 0
        ? [new Error('--requestheader-username-headers must not be empty when --requestheader-client-ca-file is set')]
        : []),
    ];
  }

  applyTo(config: { authentication?: DelegatedAuthenticationConfig }): void {
    config.authentication = structuredClone(this.config);
  }
}

/** The delegated authorization option family. */
export class DelegatedAuthorizationOptions extends OptionGroupBase<{ authorization?: DelegatedAuthorizationConfig }> {
  readonly config: DelegatedAuthorizationConfig = {
    remoteKubeConfigFile: '',
    alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
    allowCacheTTLMs: 10_000,
    denyCacheTTLMs: 10_000,
  };

  constructor() {
    super('Authorization');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.config;
    return [
      stringsFlag(
        'authorization-always-allow-paths',
        "A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the 'core' server.",
        c.alwaysAllowPaths,
        (v) => (c.alwaysAllowPaths = v),
        {
          item: (s) => {
            if (!s.startsWith('/')) throw new FlagValueError(`path ${JSON.stringify(s)} must start with "/"`);
            return s;
          },
        },
      ),
      stringFlag(
        'authorization-clientconfig',
        "client configuration file pointing to the 'core' server with enough rights to create subjectaccessreviews.authorization.platform. This is optional. If empty, all requests not skipped by authorization are forbidden.",
        c.remoteKubeConfigFile,
        (v) => (c.remoteKubeConfigFile = v),
      ),
      durationFlag(
        'authorization-webhook-cache-authorized-ttl',
        "The duration to cache 'authorized' responses from the webhook authorizer.",
        c.allowCacheTTLMs,
        (v) => (c.allowCacheTTLMs = v),
      ),
      durationFlag(
        'authorization-webhook-cache-unauthorized-ttl',
        "The duration to cache 'unauthorized' responses from the webhook authorizer.",
        c.denyCacheTTLMs,
        (v) => (c.denyCacheTTLMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return fileMustExist('authorization-clientconfig', this.config.remoteKubeConfigFile);
  }

  applyTo(config: { authorization?: DelegatedAuthorizationConfig }): void {
    config.authorization = structuredClone(this.config);
  }
}
