/**
 * Client configuration files in kubeconfig format (`clusters`, `users`, `contexts`, `current-context`), as
 * `--clientconfig` names them and kubectl reads them (client-go `tools/clientcmd`). Loading resolves the context
 * to one {@link RestConfig}: server URL, CA, client certificate and key, bearer token. Relative file paths are
 * resolved against the file's directory, as clientcmd does; inline `-data` fields are base64 and win over paths.
 *
 * Every problem is a {@link ClientConfigError} naming the file and the field (`users[0].user.client-key`), never a
 * crash on a malformed document.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

import { PROTOBUF_MEDIA_TYPE } from '@platform/api';
import { load as loadYaml } from 'js-yaml';

const BRAND = Symbol.for('platform.client.ClientConfigError');

/** A client configuration that cannot be used; `file` and `field` say where. */
export class ClientConfigError extends Error {
  readonly [BRAND] = true;
  constructor(
    readonly file: string,
    readonly field: string,
    detail: string,
  ) {
    super(`client configuration ${file}: ${field ? `${field}: ` : ''}${detail}`);
    this.name = 'ClientConfigError';
  }
}

/** Brand check for {@link ClientConfigError}. */
export function isClientConfigError(err: unknown): err is ClientConfigError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** Everything the REST client needs to reach and authenticate to an API server. */
export interface RestConfig {
  /** `https://host:port` (a path prefix is kept). */
  server: string;
  /** PEM of the authorities the server certificate must chain to; the system roots when absent. */
  ca?: Buffer;
  /** Skip verification of the server certificate (`insecure-skip-tls-verify`). */
  insecureSkipTlsVerify?: boolean;
  /** Name to check the server certificate against (`tls-server-name`). */
  tlsServerName?: string;
  /** Client certificate and key (PEM). */
  cert?: Buffer;
  key?: Buffer;
  /** Bearer token. */
  token?: string;
  /** File holding the bearer token, re-read when it changes (service account tokens rotate). */
  tokenFile?: string;
  /** Basic authentication. */
  username?: string;
  password?: string;
  /** The context's default namespace. */
  namespace?: string;
  /** `--api-content-type`: the media type of request bodies and the preferred response type. */
  contentType?: string;
  /** `--api-qps` / `--api-burst`: client-side rate limit; qps <= 0 disables it. */
  qps?: number;
  burst?: number;
  /** Time-out of one non-watch request, ms. */
  timeoutMs?: number;
  /** User agent. */
  userAgent?: string;
}

/** Where to load a configuration from. */
export interface LoadClientConfigOptions {
  /** `--clientconfig`: the file path. */
  clientConfig?: string;
  /** `--master`: overrides the server of the file (or is the whole configuration when there is no file). */
  master?: string;
  /** A context other than `current-context`. */
  context?: string;
}

type Obj = Record<string, unknown>;

class Reader {
  constructor(
    readonly file: string,
    readonly dir: string,
  ) {}

  fail(field: string, detail: string): never {
    throw new ClientConfigError(this.file, field, detail);
  }

  obj(v: unknown, field: string): Obj {
    if (v === undefined || v === null) return {};
    if (typeof v !== 'object' || Array.isArray(v)) this.fail(field, `must be a mapping, got ${typeName(v)}`);
    return v as Obj;
  }

  str(o: Obj, key: string, field: string): string | undefined {
    const v = o[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') this.fail(`${field}.${key}`, `must be a string, got ${typeName(v)}`);
    return v;
  }

  bool(o: Obj, key: string, field: string): boolean | undefined {
    const v = o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') this.fail(`${field}.${key}`, `must be true or false, got ${typeName(v)}`);
    return v;
  }

  /** A named list (`clusters`, `users`, `contexts`): returns name → [index, inner object]. */
  namedList(root: Obj, key: string, inner: string): Map<string, { field: string; value: Obj }> {
    const out = new Map<string, { field: string; value: Obj }>();
    const v = root[key];
    if (v === undefined || v === null) return out;
    if (!Array.isArray(v)) this.fail(key, `must be a list, got ${typeName(v)}`);
    v.forEach((item, i) => {
      const field = `${key}[${i}]`;
      const o = this.obj(item, field);
      const name = this.str(o, 'name', field);
      if (name === undefined) this.fail(`${field}.name`, 'is required');
      if (out.has(name)) this.fail(`${field}.name`, `duplicate name ${JSON.stringify(name)}`);
      out.set(name, { field: `${field}.${inner}`, value: this.obj(o[inner], `${field}.${inner}`) });
    });
    return out;
  }

  /** Inline base64 `<key>-data` or a file path `<key>` (relative to the configuration file). */
  bytes(o: Obj, key: string, field: string, what: 'pem' | 'raw' = 'pem'): Buffer | undefined {
    const data = this.str(o, `${key}-data`, field);
    if (data !== undefined) {
      if (!/^[A-Za-z0-9+/=\s]*$/.test(data)) this.fail(`${field}.${key}-data`, 'is not valid base64');
      const buf = Buffer.from(data, 'base64');
      if (what === 'pem' && !buf.toString('utf8').includes('-----BEGIN'))
        this.fail(`${field}.${key}-data`, 'does not decode to PEM data');
      return buf;
    }
    const path = this.str(o, key, field);
    if (path === undefined) return undefined;
    const full = isAbsolute(path) ? path : resolve(this.dir, path);
    let buf: Buffer;
    try {
      buf = readFileSync(full);
    } catch (err) {
      this.fail(`${field}.${key}`, `cannot read ${full}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    if (what === 'pem' && !buf.toString('utf8').includes('-----BEGIN'))
      this.fail(`${field}.${key}`, `${full} does not hold PEM data`);
    return buf;
  }
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v;
}

/** Checks and normalises a server URL; `field` names where it came from in errors. */
export function parseServerUrl(server: string, file: string, field: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `https://${server}`);
  } catch {
    throw new ClientConfigError(file, field, `invalid server URL ${JSON.stringify(server)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ClientConfigError(file, field, `server URL must be http or https, got ${JSON.stringify(server)}`);
  if (url.search || url.hash)
    throw new ClientConfigError(file, field, `server URL must not have a query or fragment: ${JSON.stringify(server)}`);
  return url.toString().replace(/\/$/, '');
}

/**
 * Parses the text of a client configuration file. `file` is used in error messages and to resolve relative
 * paths. Throws {@link ClientConfigError}.
 */
export function parseClientConfig(
  text: string,
  file: string,
  o: { context?: string; master?: string } = {},
): RestConfig {
  const r: Reader = new Reader(file, dirname(resolve(file)));
  let doc: unknown;
  try {
    doc = loadYaml(text);
  } catch (err) {
    const mark = (err as { mark?: { line: number; column: number } }).mark;
    r.fail(
      '',
      `not valid YAML${mark ? ` at line ${mark.line + 1}, column ${mark.column + 1}` : ''}: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  const root = r.obj(doc, '(document)');
  const kind = r.str(root, 'kind', '');
  if (kind !== undefined && kind !== 'Config') r.fail('kind', `must be "Config", got ${JSON.stringify(kind)}`);
  const apiVersion = r.str(root, 'apiVersion', '');
  if (apiVersion !== undefined && apiVersion !== 'v1')
    r.fail('apiVersion', `must be "v1", got ${JSON.stringify(apiVersion)}`);
  const clusters = r.namedList(root, 'clusters', 'cluster');
  const users = r.namedList(root, 'users', 'user');
  const contexts = r.namedList(root, 'contexts', 'context');
  const contextName = o.context ?? r.str(root, 'current-context', '');
  if (contextName === undefined) {
    if (o.master) return { server: parseServerUrl(o.master, file, '--master') };
    r.fail('current-context', 'is not set and no context was named');
  }
  const ctx = contexts.get(contextName);
  if (!ctx)
    r.fail(o.context ? '--context' : 'current-context', `no context named ${JSON.stringify(contextName)} in contexts`);
  const clusterName = r.str(ctx.value, 'cluster', ctx.field);
  if (clusterName === undefined) r.fail(`${ctx.field}.cluster`, 'is required');
  const cluster = clusters.get(clusterName);
  if (!cluster) r.fail(`${ctx.field}.cluster`, `no cluster named ${JSON.stringify(clusterName)} in clusters`);
  const userName = r.str(ctx.value, 'user', ctx.field);
  let user: { field: string; value: Obj } = { field: '', value: {} };
  if (userName !== undefined) {
    const u = users.get(userName);
    if (!u) r.fail(`${ctx.field}.user`, `no user named ${JSON.stringify(userName)} in users`);
    user = u;
  }
  const out: RestConfig = { server: '' };
  const c = cluster.value;
  if (o.master) out.server = parseServerUrl(o.master, file, '--master');
  else {
    const server = r.str(c, 'server', cluster.field);
    if (server === undefined) r.fail(`${cluster.field}.server`, 'is required');
    out.server = parseServerUrl(server, file, `${cluster.field}.server`);
  }
  const ca = r.bytes(c, 'certificate-authority', cluster.field);
  if (ca) out.ca = ca;
  const insecure = r.bool(c, 'insecure-skip-tls-verify', cluster.field);
  if (insecure) {
    if (ca) r.fail(`${cluster.field}.insecure-skip-tls-verify`, 'cannot be set together with a certificate authority');
    out.insecureSkipTlsVerify = true;
  }
  const sni = r.str(c, 'tls-server-name', cluster.field);
  if (sni) out.tlsServerName = sni;
  const u = user.value;
  const cert = r.bytes(u, 'client-certificate', user.field);
  const key = r.bytes(u, 'client-key', user.field);
  if (cert && !key) r.fail(`${user.field}.client-key`, 'is required when a client certificate is given');
  if (key && !cert) r.fail(`${user.field}.client-certificate`, 'is required when a client key is given');
  if (cert && key) {
    out.cert = cert;
    out.key = key;
  }
  const token = r.str(u, 'token', user.field);
  const tokenFile = r.str(u, 'tokenFile', user.field);
  if (token) out.token = token;
  else if (tokenFile) {
    const full = isAbsolute(tokenFile) ? tokenFile : resolve(r.dir, tokenFile);
    try {
      readFileSync(full);
    } catch (err) {
      r.fail(`${user.field}.tokenFile`, `cannot read ${full}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    out.tokenFile = full;
  }
  const username = r.str(u, 'username', user.field);
  const password = r.str(u, 'password', user.field);
  if (username !== undefined || password !== undefined) {
    if (out.token || out.tokenFile)
      r.fail(`${user.field}.username`, 'basic authentication cannot be combined with a token');
    out.username = username ?? '';
    out.password = password ?? '';
  }
  for (const unsupported of ['exec', 'auth-provider'])
    if (u[unsupported] !== undefined) r.fail(`${user.field}.${unsupported}`, 'is not supported by this client');
  const ns = r.str(ctx.value, 'namespace', ctx.field);
  if (ns) out.namespace = ns;
  return out;
}

/**
 * Loads the configuration of `--clientconfig` / `--master` (client-go `BuildConfigFromFlags`): the file when one
 * is named (with `--master` overriding its server), else `--master` alone. Throws {@link ClientConfigError}.
 */
export function loadClientConfig(o: LoadClientConfigOptions): RestConfig {
  if (!o.clientConfig) {
    if (!o.master)
      throw new ClientConfigError('(none)', '--clientconfig', 'neither --clientconfig nor --master was given');
    return { server: parseServerUrl(o.master, '(none)', '--master') };
  }
  let text: string;
  try {
    text = readFileSync(o.clientConfig, 'utf8');
  } catch (err) {
    throw new ClientConfigError(
      o.clientConfig,
      '',
      `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  return parseClientConfig(text, o.clientConfig, o);
}

/** The defaults of the client flags (Document 2): `--api-content-type`, `--api-qps`, `--api-burst`. */
export const DEFAULT_CLIENT_SETTINGS = {
  contentType: PROTOBUF_MEDIA_TYPE,
  qps: 20,
  burst: 30,
  timeoutMs: 60_000,
} as const;
