/**
 * The local cluster's credentials, kept in its state directory so that restarts reuse them: the API server's
 * serving certificate (with its CA), the service account signing key, one token per identity (the admin, the
 * controller manager, the scheduler, each node agent), and a client configuration in kubeconfig format for each.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IssueOptions, PemPair } from '@platform/common';
import * as yaml from 'js-yaml';

/** The files of a local cluster. */
export interface ClusterFiles {
  dir: string;
  pkiDir: string;
  /** `<pki>/apiserver.crt`: the serving certificate followed by its CA. */
  caFile: string;
  /** The admin token (kept across restarts). */
  tokenFile: string;
  /** The API server's `--token-auth-file`: one line per identity. */
  tokenAuthFile: string;
  /** The admin client configuration. */
  kubeconfig: string;
  store: string;
  /**
   * The cluster's CA (`ca.crt`, `ca.key`): it signs each node agent's serving certificate and the API server's client
   * certificate for the agents, so each side verifies the other (the agents' `--client-ca-file`, the API server's
   * `--agent-certificate-authority`).
   */
  clusterCa: { certFile: string; keyFile: string };
  /** The API server's client certificate for the node agents (`--agent-client-certificate`, `--agent-client-key`). */
  agentClient: { certFile: string; keyFile: string };
  /** The key that signs service account tokens (`--service-account-signing-key-file`). */
  serviceAccountKey: string;
  /**
   * The front proxy's CA (`front-proxy-ca.crt`, kubeadm's name): it signs only the API server's proxy client
   * certificate, so that an extension server trusts the user headers of that certificate and of no other
   * (`--requestheader-client-ca-file`).
   */
  frontProxyCa: { certFile: string; keyFile: string };
  /** The API server's client certificate to extension servers (`--proxy-client-cert-file`, `-key-file`). */
  frontProxyClient: { certFile: string; keyFile: string };
  /** The metrics server's serving certificate (cluster CA, `metrics-server.system.svc` and 127.0.0.1). */
  metricsServerServing: { certFile: string; keyFile: string };
  /** The metrics server's client certificate (`system:metrics-server`, cluster CA), to the API server and agents. */
  metricsServerClient: { certFile: string; keyFile: string };
  /** Each daemon's output. */
  logDir: string;
  /** What `platform status`, `platform down` and `platform logs` read: the running cluster's launcher and daemons. */
  stateFile: string;
  /** Held by the launcher while the cluster runs: one cluster per state directory. */
  lockFile: string;
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
    clusterCa: { certFile: join(dir, 'pki', 'ca.crt'), keyFile: join(dir, 'pki', 'ca.key') },
    agentClient: {
      certFile: join(dir, 'pki', 'apiserver-agent-client.crt'),
      keyFile: join(dir, 'pki', 'apiserver-agent-client.key'),
    },
    serviceAccountKey: join(dir, 'pki', 'service-account.key'),
    frontProxyCa: { certFile: join(dir, 'pki', 'front-proxy-ca.crt'), keyFile: join(dir, 'pki', 'front-proxy-ca.key') },
    frontProxyClient: {
      certFile: join(dir, 'pki', 'front-proxy-client.crt'),
      keyFile: join(dir, 'pki', 'front-proxy-client.key'),
    },
    metricsServerServing: {
      certFile: join(dir, 'pki', 'metrics-server.crt'),
      keyFile: join(dir, 'pki', 'metrics-server.key'),
    },
    metricsServerClient: {
      certFile: join(dir, 'pki', 'metrics-server-client.crt'),
      keyFile: join(dir, 'pki', 'metrics-server-client.key'),
    },
    logDir: join(dir, 'logs'),
    stateFile: join(dir, 'cluster.json'),
    lockFile: join(dir, 'platform.lock'),
  };
}

/** Who a daemon is to the API server. */
export interface Identity {
  /** The client configuration's file name in the state directory (`controller-manager.conf`). */
  name: string;
  user: string;
  groups: string[];
}

/** The admin: `system:masters`, bound to `cluster-admin`. */
export const ADMIN: Identity = { name: 'admin', user: 'admin', groups: ['system:masters'] };
/** The controller manager, as the bootstrap policy binds it (`system:platform-controller-manager`). */
export const CONTROLLER_MANAGER: Identity = {
  name: 'controller-manager',
  user: 'system:platform-controller-manager',
  groups: [],
};
/** The scheduler, as the bootstrap policy binds it (`system:platform-scheduler`). */
export const SCHEDULER: Identity = { name: 'scheduler', user: 'system:platform-scheduler', groups: [] };
/** The node agent of node `node`: the Node authorizer and NodeRestriction limit it to its own node and pods. */
export function nodeIdentity(node: string): Identity {
  return { name: `node-agent-${node}`, user: `system:node:${node}`, groups: ['system:nodes'] };
}
/**
 * The agent hosting `--simulate-nodes`: one process speaks for many nodes, which no single node identity may do, so
 * it acts as a cluster administrator (a local, simulated cluster only).
 */
export const SIMULATED_NODES: Identity = {
  name: 'simulated-nodes',
  user: 'system:platform-simulated-nodes',
  groups: ['system:masters'],
};

function tokenFor(f: ClusterFiles, id: Identity): string {
  const file = id === ADMIN ? f.tokenFile : join(f.pkiDir, `${id.name}.token`);
  if (!existsSync(file)) writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/**
 * Makes (or reuses) the cluster CA, the API servers' serving certificate, the service account key and a token for
 * each identity; rewrites the token file with exactly these identities. Returns the tokens by identity name.
 */
export async function ensureCredentials(
  f: ClusterFiles,
  host: string,
  identities: readonly Identity[] = [ADMIN],
  /** More names the API servers' certificate is valid for (`apiserver1` in docker compose). */
  alternateDNS: readonly string[] = [],
): Promise<Map<string, string>> {
  mkdirSync(f.pkiDir, { recursive: true });
  // ECDSA P-256 keys (the specification allows RSA or ECDSA for both): an RSA 2048 key costs a third of a
  // CPU-second or more to generate, and a first start made three.
  if (!existsSync(f.serviceAccountKey)) {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    writeFileSync(f.serviceAccountKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  // The API servers' serving certificate, issued by the cluster CA; the file holds it followed by the CA, which is
  // what the client configurations trust. A pair of an earlier start (self-signed, RSA) is kept while it is valid.
  const serving = { certFile: join(f.pkiDir, 'apiserver.crt'), keyFile: join(f.pkiDir, 'apiserver.key') };
  const names = [host, 'localhost', '127.0.0.1', ...alternateDNS];
  if (!usablePair(serving, names)) {
    if (existsSync(serving.certFile)) rmPair(serving);
    const ca = await ensureClusterCa(f);
    const { issueCertificate } = await import('@platform/common');
    const ip = (n: string): boolean => /^[\d.]+$|:/.test(n);
    const leaf = await issueCertificate(ca, {
      commonName: host,
      usage: 'server',
      dns: [...new Set(names.filter((n) => !ip(n)))],
      ips: [...new Set(names.filter(ip))],
    });
    writePair(serving, { certPem: `${leaf.certPem}${ca.certPem}`, keyPem: leaf.keyPem });
  }
  const tokens = new Map<string, string>();
  const lines: string[] = [];
  for (const id of [ADMIN, ...identities.filter((i) => i !== ADMIN)]) {
    const token = tokenFor(f, id);
    tokens.set(id.name, token);
    lines.push(`${token},${id.user},${id.user}${id.groups.length ? `,"${id.groups.join(',')}"` : ''}`);
  }
  // Rewritten at every start, so it always names the current tokens.
  writeFileSync(f.tokenAuthFile, `${lines.join('\n')}\n`, { mode: 0o600 });
  return tokens;
}

/** The client configuration file of identity `id` (the admin's is `f.kubeconfig`). */
export function kubeconfigPath(f: ClusterFiles, id: Identity): string {
  return id === ADMIN ? f.kubeconfig : join(f.dir, `${id.name}.conf`);
}

/** Writes the client configuration (kubeconfig format) of `id` for `server`; returns its path. */
export function writeKubeconfig(f: ClusterFiles, server: string, token: string, id: Identity = ADMIN): string {
  return writeClientConfig(f, kubeconfigPath(f, id), server, id.name, { token });
}

/** Writes a client configuration of user `user` with `credentials` (a token, or certificate files) at `path`. */
function writeClientConfig(
  f: ClusterFiles,
  path: string,
  server: string,
  user: string,
  credentials: Record<string, string>,
): string {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'platform',
        cluster: { server, 'certificate-authority-data': Buffer.from(readFileSync(f.caFile)).toString('base64') },
      },
    ],
    users: [{ name: user, user: credentials }],
    contexts: [{ name: `${user}@platform`, context: { cluster: 'platform', user } }],
    'current-context': `${user}@platform`,
    preferences: {},
  };
  writeFileSync(path, yaml.dump(config), { mode: 0o600 });
  return path;
}

/** A certificate file and its key file. */
export interface PairFiles {
  certFile: string;
  keyFile: string;
}

/** A day: a certificate that expires sooner is made again at start. */
const RENEW_BEFORE_MS = 24 * 3600 * 1000;

/**
 * Whether the pair exists, its key matches, it is valid for another day, covers `names` (DNS names or IPs), and (with
 * `issuer`) was signed by that CA. Node's own X509 parser: a start that reuses its certificates loads no X.509 library.
 */
function usablePair(p: PairFiles, names: readonly string[] = [], issuer?: X509Certificate): boolean {
  if (!existsSync(p.certFile) || !existsSync(p.keyFile)) return false;
  try {
    const cert = new X509Certificate(readFileSync(p.certFile));
    if (!cert.checkPrivateKey(createPrivateKey(readFileSync(p.keyFile)))) return false;
    if (new Date(cert.validTo).getTime() < Date.now() + RENEW_BEFORE_MS) return false;
    if (issuer && !cert.verify(issuer.publicKey)) return false;
    return names.every((n) => (/^[\d.]+$|:/.test(n) ? cert.checkIP(n) : cert.checkHost(n)) !== undefined);
  } catch {
    return false;
  }
}

function rmPair(p: PairFiles): void {
  for (const file of [p.certFile, p.keyFile]) if (existsSync(file)) renameSync(file, `${file}.old`);
}

function writePair(p: PairFiles, pem: PemPair): void {
  for (const [file, data, mode] of [
    [p.keyFile, pem.keyPem, 0o600],
    [p.certFile, pem.certPem, 0o644],
  ] as const) {
    writeFileSync(`${file}.tmp`, data, { mode });
    renameSync(`${file}.tmp`, file);
  }
}

/**
 * The cluster CA, made once and kept (a new one would invalidate every certificate it signed, which are then made
 * again); returns it with its key.
 */
export function ensureClusterCa(f: ClusterFiles): Promise<PemPair> {
  return ensureCa(f, f.clusterCa, 'platform-ca');
}

/** The front proxy's CA, made once and kept as the cluster CA is. */
export function ensureFrontProxyCa(f: ClusterFiles): Promise<PemPair> {
  return ensureCa(f, f.frontProxyCa, 'platform-front-proxy-ca');
}

async function ensureCa(f: ClusterFiles, pair: PairFiles, name: string): Promise<PemPair> {
  mkdirSync(f.pkiDir, { recursive: true });
  if (!usablePair(pair)) {
    const { generateCertificateAuthority } = await import('@platform/common');
    writePair(pair, await generateCertificateAuthority(`${name}@${Math.floor(Date.now() / 1000)}`));
  }
  return { certPem: readFileSync(pair.certFile, 'utf8'), keyPem: readFileSync(pair.keyFile, 'utf8') };
}

/**
 * A certificate signed by the cluster CA, kept while it is still valid for its names and signed by the current CA,
 * otherwise issued again. `o.dns`/`o.ips` are the names it must cover.
 */
export async function ensureIssued(ca: PemPair, p: PairFiles, o: IssueOptions): Promise<PairFiles> {
  if (!usablePair(p, [...(o.dns ?? []), ...(o.ips ?? [])], new X509Certificate(ca.certPem))) {
    const { issueCertificate } = await import('@platform/common');
    writePair(p, await issueCertificate(ca, o));
  }
  return p;
}

/** Who the API server is to the node agents: a cluster administrator (as kubeadm's `apiserver-kubelet-client`). */
export const AGENT_CLIENT = { commonName: 'platform-apiserver-agent-client', organizations: ['system:masters'] };
/** Who the API server is to extension servers (kubeadm's `front-proxy-client`); the only allowed request-header name. */
export const FRONT_PROXY_CLIENT = { commonName: 'front-proxy-client' };
/** The metrics server's user, bound to its roles by `metrics-server.ts`. */
export const METRICS_SERVER_USER = 'system:metrics-server';

/** Writes a client configuration (kubeconfig format) that authenticates with a client certificate; returns its path. */
export function writeCertKubeconfig(f: ClusterFiles, server: string, name: string, client: PairFiles): string {
  return writeClientConfig(f, join(f.dir, `${name}.conf`), server, name, {
    'client-certificate': client.certFile,
    'client-key': client.keyFile,
  });
}
