/**
 * The API server's admission, from its configuration: the chain of the enabled plugins, each reaching the
 * server's own stores through the installed resources.
 */
import { type Scheme } from '@platform/api';
import { type Logger } from '@platform/common';

import { type Authorizer } from '../auth/authorizer';

import { type ApiInstaller } from '../endpoints/installer';
import { type AdmissionChain } from './chain';
import { type PluginConfigs } from './config';
import { RegistryClient } from './internal-client';
import { type AdmissionSettings } from './interfaces';
import { buildAdmissionChain } from './registry';

/** The admission part of the server configuration (what the admission options produce). */
export interface AdmissionConfig {
  /** The enabled plugins, in chain order. */
  plugins: string[];
  /** Per-plugin configuration of `--admission-control-config-file`. */
  configs?: PluginConfigs;
  settings: AdmissionSettings;
}

/** The settings plugins get when the configuration leaves them out. */
export const DEFAULT_ADMISSION_SETTINGS: AdmissionSettings = {
  defaultNotReadyTolerationSeconds: 300,
  defaultUnreachableTolerationSeconds: 300,
  boundServiceAccountTokenVolume: true,
};

/** Builds the chain of a server. Throws an Error naming a plugin whose configuration is wrong. */
export function serverAdmission(
  config: AdmissionConfig,
  server: {
    scheme: Scheme;
    installer: ApiInstaller;
    logger: Logger;
    now: () => number;
    signal?: AbortSignal;
    authorizer?: Authorizer;
  },
): AdmissionChain {
  const client = new RegistryClient(
    server.scheme,
    (apiGroup, apiVersion, resource, subresource) =>
      server.installer.scopeFor({ apiGroup, apiVersion, resource, subresource } as Parameters<
        ApiInstaller['scopeFor']
      >[0]),
    server.now,
  );
  const logger = server.logger.child('admission');
  return buildAdmissionChain(
    { plugins: config.plugins, ...(config.configs ? { configs: config.configs } : {}), logger },
    {
      client,
      logger,
      settings: config.settings,
      scheme: server.scheme,
      now: server.now,
      ...(server.signal ? { signal: server.signal } : {}),
      ...(server.authorizer ? { authorizer: server.authorizer } : {}),
    },
  );
}
