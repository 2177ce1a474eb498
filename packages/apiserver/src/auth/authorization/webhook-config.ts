/**
 * The client configuration of a webhook, in kubeconfig format (model: client-go `tools/clientcmd`, the subset
 * webhooks use): the current context's cluster gives `server`, `certificate-authority[-data]`,
 * `insecure-skip-tls-verify` and `tls-server-name`; its user gives `client-certificate[-data]`,
 * `client-key[-data]`, `token` or `tokenFile`. Relative file paths are relative to the configuration file.
 * Without `current-context`, the first context is used, or else the first cluster and first user.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

import { load as loadYaml } from 'js-yaml';

/** Where and how to call a webhook. */
export interface WebhookClientConfig {
  url: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  insecureSkipTLSVerify: boolean;
  serverName?: string;
}

type Entry = Record<string, unknown>;

function named(list: unknown, name: string | undefined, field: string): Entry | undefined {
  if (!Array.isArray(list)) return undefined;
  const items = list.filter((x): x is Entry => !!x && typeof x === 'object');
  const hit = name === undefined ? items[0] : items.find((x) => x.name === name);
  const inner = hit?.[field];
  return inner && typeof inner === 'object' ? (inner as Entry) : undefined;
}

/** Parses a kubeconfig text; `file` names it in errors and anchors relative paths. Throws an Error on bad input. */
export function parseWebhookConfig(text: string, file: string): WebhookClientConfig {
  let doc: unknown;
  try {
    doc = loadYaml(text);
  } catch (err) {
    throw new Error(`${file}: not a kubeconfig file: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object') throw new Error(`${file}: not a kubeconfig file`);
  const d = doc as Entry;
  const currentName =
    typeof d['current-context'] === 'string' && d['current-context'] ? d['current-context'] : undefined;
  const context = named(d.contexts, currentName, 'context');
  if (currentName !== undefined && !context)
    throw new Error(`${file}: context ${JSON.stringify(currentName)} not found`);
  const clusterName = typeof context?.cluster === 'string' ? context.cluster : undefined;
  const userName = typeof context?.user === 'string' ? context.user : undefined;
  const cluster = named(d.clusters, clusterName, 'cluster');
  if (!cluster) throw new Error(`${file}: no cluster${clusterName ? ` ${JSON.stringify(clusterName)}` : ''} found`);
  const user = named(d.users, userName, 'user') ?? {};
  const base = dirname(file);
  const read = (path: unknown, what: string): Buffer | undefined => {
    if (typeof path !== 'string' || path === '') return undefined;
    const p = isAbsolute(path) ? path : resolve(base, path);
    try {
      return readFileSync(p);
    } catch (err) {
      throw new Error(`${file}: cannot read ${what} ${p}: ${(err as Error).message}`);
    }
  };
  const data = (v: unknown): Buffer | undefined =>
    typeof v === 'string' && v !== '' ? Buffer.from(v, 'base64') : undefined;
  const server = cluster.server;
  if (typeof server !== 'string' || server === '') throw new Error(`${file}: the cluster has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`${file}: server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`${file}: server ${JSON.stringify(server)} must be an http or https URL`);
  const out: WebhookClientConfig = { url, insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true };
  const ca =
    data(cluster['certificate-authority-data']) ?? read(cluster['certificate-authority'], 'certificate authority');
  const cert = data(user['client-certificate-data']) ?? read(user['client-certificate'], 'client certificate');
  const key = data(user['client-key-data']) ?? read(user['client-key'], 'client key');
  const token =
    typeof user.token === 'string' && user.token
      ? user.token
      : read(user.tokenFile, 'token file')?.toString('utf8').trim();
  if (ca) out.ca = ca;
  if (cert) out.cert = cert;
  if (key) out.key = key;
  if (token) out.token = token;
  if (typeof cluster['tls-server-name'] === 'string' && cluster['tls-server-name'])
    out.serverName = cluster['tls-server-name'];
  if (!!out.cert !== !!out.key)
    throw new Error(`${file}: a client certificate needs its key, and a key its certificate`);
  return out;
}

/** Reads and parses a kubeconfig file. */
export function readWebhookConfig(file: string): WebhookClientConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  return parseWebhookConfig(text, file);
}
