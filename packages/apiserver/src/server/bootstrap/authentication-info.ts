/**
 * `poststarthook/start-cluster-authentication-info-controller` (model: Kubernetes 1.21
 * `pkg/controlplane/controller/clusterauthenticationtrust`): publishes how this server authenticates clients in the
 * ConfigMap `extension-apiserver-authentication` of `system`, so components that delegate authentication (the
 * controller manager, the scheduler, extension servers) trust the same client CA and front proxy. Readable by the
 * bootstrap Role `extension-apiserver-authentication-reader`.
 *
 * Keys, present only when configured: `client-ca-file` (PEM), and with `--requestheader-client-ca-file`
 * `requestheader-client-ca-file` (PEM) and the JSON arrays `requestheader-allowed-names`,
 * `requestheader-username-headers`, `requestheader-group-headers`, `requestheader-extra-headers-prefix`.
 * The ConfigMap is kept so: a pass every interval puts back what was changed or deleted.
 */
import { type ConfigMap } from '@platform/api';

import { type AuthenticationConfig } from '../../auth/authentication/authentication';
import { createIfMissing, requireStore, type StoreLookup, systemContext, updateIfNeeded } from './objects';

export const AUTHENTICATION_INFO_NAMESPACE = 'system';
export const AUTHENTICATION_INFO_NAME = 'extension-apiserver-authentication';

/** The data of the ConfigMap for an authentication configuration. */
export function authenticationInfoData(a: AuthenticationConfig | undefined): Record<string, string> {
  const data: Record<string, string> = {};
  const pem = (certs: readonly { toString(): string }[]): string =>
    certs.map((c) => c.toString().trim()).join('\n') + '\n';
  if (a?.clientCA?.length) data['client-ca-file'] = pem(a.clientCA);
  const rh = a?.requestHeader;
  if (rh?.roots.length) {
    data['requestheader-client-ca-file'] = pem(rh.roots);
    data['requestheader-allowed-names'] = JSON.stringify(rh.allowedNames);
    data['requestheader-username-headers'] = JSON.stringify(rh.usernameHeaders);
    data['requestheader-group-headers'] = JSON.stringify(rh.groupHeaders);
    data['requestheader-extra-headers-prefix'] = JSON.stringify(rh.extraHeaderPrefixes);
  }
  return data;
}

function sameData(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ka = Object.keys(a ?? {});
  return ka.length === Object.keys(b).length && ka.every((k) => a?.[k] === b[k]);
}

/** Creates the ConfigMap, or puts its data back as configured. */
export async function ensureAuthenticationInfo(
  lookup: StoreLookup,
  now: () => number,
  data: Record<string, string>,
): Promise<void> {
  const configMaps = requireStore(lookup, '', 'configmaps');
  const ctx = systemContext(AUTHENTICATION_INFO_NAMESPACE, now);
  const wanted: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: AUTHENTICATION_INFO_NAME, namespace: AUTHENTICATION_INFO_NAMESPACE },
    data,
  };
  if (await createIfMissing(configMaps, ctx, wanted)) return;
  await updateIfNeeded(configMaps, ctx, AUTHENTICATION_INFO_NAME, (current) => {
    const cm = current as ConfigMap;
    if (sameData(cm.data, data)) return undefined;
    cm.data = { ...data };
    return cm;
  });
}
