/**
 * The local cluster's credentials, kept in its state directory so that restarts reuse them: the API server's
 * serving certificate (with its CA), the admin token, and the admin client configuration in kubeconfig format.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ensureSelfSignedCertKey } from '@platform/common';
import * as yaml from 'js-yaml';

/** The files of a local cluster. */
export interface ClusterFiles {
  dir: string;
  pkiDir: string;
  /** `<pki>/apiserver.crt`: the serving certificate followed by its CA. */
  caFile: string;
  tokenFile: string;
  /** The API server's `--token-auth-file`: the admin token, user `admin` in group `system:masters`. */
  tokenAuthFile: string;
  kubeconfig: string;
  store: string;
}

/** The paths of a cluster kept in `dir`. */
export function clusterFiles(dir: string): ClusterFiles {
  return {
    dir,
    pkiDir: join(dir, 'pki'),
    caFile: join(dir, 'pki', 'apiserver.crt'),
    tokenFile: join(dir, 'admin.token'),
    tokenAuthFile: join(dir, 'tokens.csv'),
    kubeconfig: join(dir, 'admin.conf'),
    store: join(dir, 'state.db'),
  };
}

/** Makes (or reuses) the serving certificate and the admin token; returns the token. */
export async function ensureCredentials(f: ClusterFiles, host: string): Promise<string> {
  await ensureSelfSignedCertKey(f.pkiDir, 'apiserver', {
    host,
    alternateDNS: ['localhost'],
    alternateIPs: ['127.0.0.1'],
  });
  if (!existsSync(f.tokenFile)) writeFileSync(f.tokenFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const token = readFileSync(f.tokenFile, 'utf8').trim();
  // Rewritten at every start, so it always names the current admin token.
  writeFileSync(f.tokenAuthFile, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  return token;
}

/** Writes the admin client configuration (kubeconfig format) for `server`. */
export function writeKubeconfig(f: ClusterFiles, server: string, token: string): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'platform',
        cluster: { server, 'certificate-authority-data': Buffer.from(readFileSync(f.caFile)).toString('base64') },
      },
    ],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'admin@platform', context: { cluster: 'platform', user: 'admin' } }],
    'current-context': 'admin@platform',
    preferences: {},
  };
  writeFileSync(f.kubeconfig, yaml.dump(config), { mode: 0o600 });
}
