/**
 * `platform init`: the credentials of a cluster whose daemons run elsewhere (docker compose, systemd units): the
 * API servers' serving certificate, the service account key, a token per identity (`tokens.csv` for
 * `--token-auth-file`), a client configuration per daemon, and the aggregation layer's and the metrics server's
 * certificates, all in one directory that the daemons mount. Running
 * it again keeps what exists (tokens, keys, a certificate still valid).
 */
import { mkdirSync } from 'node:fs';

import {
  ADMIN,
  clusterFiles,
  CONTROLLER_MANAGER,
  ensureClusterCa,
  ensureCredentials,
  ensureFrontProxyCa,
  ensureIssued,
  FRONT_PROXY_CLIENT,
  type Identity,
  kubeconfigPath,
  METRICS_SERVER_USER,
  nodeIdentity,
  SCHEDULER,
  writeCertKubeconfig,
  writeKubeconfig,
} from './pki';

/** What `platform init` writes. */
export interface InitOptions {
  dir: string;
  /** The API server URL written in the client configurations (a daemon may override it with `--master`). */
  server: string;
  /** Host names the certificate is valid for, besides the server's own and localhost. */
  sans: string[];
  /** Node names: each gets a `system:node:<name>` identity. */
  nodes: string[];
}

/** Writes the files; returns the client configurations written, by identity name. */
export async function init(o: InitOptions): Promise<Map<string, string>> {
  let url: URL;
  try {
    url = new URL(o.server);
  } catch {
    throw new Error(`--server ${JSON.stringify(o.server)} is not a URL (https://host:port)`);
  }
  if (url.protocol !== 'https:') throw new Error(`--server must be an https:// URL, not ${o.server}`);
  for (const n of o.nodes)
    if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(n))
      throw new Error(`--node ${JSON.stringify(n)} is not a valid node name (a DNS-1123 subdomain)`);
  mkdirSync(o.dir, { recursive: true });
  const f = clusterFiles(o.dir);
  const identities: Identity[] = [ADMIN, CONTROLLER_MANAGER, SCHEDULER, ...o.nodes.map(nodeIdentity)];
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const tokens = await ensureCredentials(f, host, identities, o.sans);
  const written = new Map<string, string>();
  for (const id of identities) {
    writeKubeconfig(f, o.server, tokens.get(id.name)!, id);
    written.set(id.name, kubeconfigPath(f, id));
  }
  // The aggregation layer and the metrics server, as `platform up` has them: the front proxy's CA and the API
  // servers' client certificate of it, the metrics server's serving certificate (for `metrics-server` and its
  // Service's name) and client certificate (system:metrics-server) of the cluster CA.
  const ca = await ensureClusterCa(f);
  await ensureIssued(await ensureFrontProxyCa(f), f.frontProxyClient, { ...FRONT_PROXY_CLIENT, usage: 'client' });
  await ensureIssued(ca, f.metricsServerServing, {
    commonName: 'metrics-server',
    usage: 'server',
    dns: ['metrics-server', 'metrics-server.system.svc', 'localhost'],
    ips: ['127.0.0.1'],
  });
  await ensureIssued(ca, f.metricsServerClient, { commonName: METRICS_SERVER_USER, usage: 'client' });
  written.set('metrics-server', writeCertKubeconfig(f, o.server, 'metrics-server', f.metricsServerClient));
  return written;
}
