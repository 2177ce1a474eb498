/**
 * The storage configuration of the API server: the values behind the `--store-*`, `--storage-*`, `--watch-cache*`,
 * `--event-ttl` and `--lease-reuse-duration-seconds` flags (Document 2), with their defaults. The flags themselves are
 * defined by the API server's options; this module parses and validates their values.
 */

/** Storage configuration. Durations in milliseconds (flags take Go durations; the options layer converts). */
export interface StorageConfig {
  /** `--store-servers`: `http(s)://host:port` etcd members, or one `sqlite:///path/state.db`. Empty → embedded store. */
  storeServers: string[];
  /** `--store-servers-overrides`: `group/resource#server;server` entries (core group: `/pods#...`). */
  storeServersOverrides: string[];
  /** `--store-cafile`, `--store-certfile`, `--store-keyfile`. */
  storeCaFile?: string;
  storeCertFile?: string;
  storeKeyFile?: string;
  /** `--store-prefix`. */
  storePrefix: string;
  /** `--store-compaction-interval`; 0 disables compaction. */
  storeCompactionIntervalMs: number;
  /** `--store-count-metric-poll-period`; 0 disables. */
  storeCountMetricPollPeriodMs: number;
  /** `--store-db-metric-poll-interval`; 0 disables. */
  storeDbMetricPollIntervalMs: number;
  /** `--store-healthcheck-timeout`. */
  storeHealthcheckTimeoutMs: number;
  /** `--storage-media-type`. */
  storageMediaType: string;
  /** `--watch-cache`. */
  watchCache: boolean;
  /** `--watch-cache-sizes`: `resource[.group]#size`. */
  watchCacheSizes: string[];
  /** `--default-watch-cache-size`; 0 disables the cache for resources without their own size. */
  defaultWatchCacheSize: number;
  /** `--event-ttl`, seconds: Events are stored with this TTL. */
  eventTtlSeconds: number;
  /** `--lease-reuse-duration-seconds`. */
  leaseReuseDurationSeconds: number;
  /** Where the embedded store lives when `storeServers` is empty. */
  defaultSqlitePath: string;
  /**
   * Deadline of each write to the embedded store (ms), derived from `--request-timeout` by `storeWriteTimeoutFor`
   * (no flag of its own, as in Kubernetes, whose store calls end with the request). Unset: the store's default (60 s).
   */
  storeWriteTimeoutMs?: number;
}

/** The defaults of Document 2. */
export const DEFAULT_STORAGE_CONFIG: Readonly<StorageConfig> = Object.freeze({
  storeServers: [],
  storeServersOverrides: [],
  storePrefix: '/registry',
  storeCompactionIntervalMs: 5 * 60 * 1000,
  storeCountMetricPollPeriodMs: 60 * 1000,
  storeDbMetricPollIntervalMs: 30 * 1000,
  storeHealthcheckTimeoutMs: 2000,
  storageMediaType: 'application/vnd.platform.protobuf',
  watchCache: true,
  watchCacheSizes: [],
  defaultWatchCacheSize: 100,
  eventTtlSeconds: 3600,
  leaseReuseDurationSeconds: 60,
  defaultSqlitePath: '.platform/state.db',
});

/** Media types objects may be stored as. */
export const STORAGE_MEDIA_TYPES = ['application/json', 'application/vnd.platform.protobuf', 'application/yaml'];

/** A group and resource, e.g. `{ group: 'apps', resource: 'deployments' }`; the core group is ''. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** `group/resource` (core: `/pods`... written as `pods` by Kubernetes' String(); we key by `group/resource`). */
export function groupResourceKey(gr: GroupResource): string {
  return `${gr.group}/${gr.resource}`;
}

/** Checks one server URL; returns a problem or undefined. */
export function serverProblem(url: string): string | undefined {
  if (url.startsWith('sqlite://')) {
    return url.length > 'sqlite://'.length && !/[?#]/.test(url) ? undefined : `invalid sqlite URL ${url}`;
  }
  if (!/^https?:\/\/[^/\s]+$/.test(url)) return `invalid store server ${JSON.stringify(url)}: want scheme://ip:port`;
  try {
    const u = new URL(url);
    if (!u.port) return `store server ${url} has no port`;
  } catch {
    return `invalid store server ${JSON.stringify(url)}`;
  }
  return undefined;
}

/** Checks a server list: all etcd URLs of one scheme, or exactly one sqlite URL. */
export function serversProblems(servers: string[], what: string): string[] {
  const problems = servers
    .map(serverProblem)
    .filter((p): p is string => p !== undefined)
    .map((p) => `${what}: ${p}`);
  const sqlite = servers.filter((s) => s.startsWith('sqlite://'));
  if (sqlite.length > 0 && servers.length > 1) problems.push(`${what}: a sqlite store must be the only server`);
  const schemes = new Set(servers.filter((s) => !s.startsWith('sqlite://')).map((s) => s.split(':')[0]));
  if (schemes.size > 1) problems.push(`${what}: mixes http and https servers`);
  return problems;
}

/** Parses `--store-servers-overrides`; throws a TypeError naming the bad entry. */
export function parseServersOverrides(entries: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of entries) {
    const m = /^([^/#]*)\/([a-z0-9.-]+)#(.+)$/.exec(e);
    if (!m) throw new TypeError(`--store-servers-overrides entry ${JSON.stringify(e)}: want group/resource#servers`);
    const servers = m[3]!.split(';').filter((s) => s !== '');
    const problems = serversProblems(servers, `--store-servers-overrides ${m[1]}/${m[2]}`);
    if (servers.length === 0 || problems.length > 0) throw new TypeError(problems[0] ?? `no servers in ${e}`);
    out.set(`${m[1]}/${m[2]}`, servers);
  }
  return out;
}

/** Parses `--watch-cache-sizes` into `group/resource` → size; throws a TypeError naming the bad entry. */
export function parseWatchCacheSizes(entries: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of entries) {
    const m = /^([a-z0-9-]+)(?:\.([a-z0-9.-]+))?#([0-9]+)$/.exec(e);
    if (!m) throw new TypeError(`--watch-cache-sizes entry ${JSON.stringify(e)}: want resource[.group]#size`);
    out.set(`${m[2] ?? ''}/${m[1]}`, Number(m[3]));
  }
  return out;
}

/** Validates a configuration; returns every problem (empty when valid). */
export function validateStorageConfig(c: StorageConfig): Error[] {
  const errs: string[] = [];
  errs.push(...serversProblems(c.storeServers, '--store-servers'));
  try {
    parseServersOverrides(c.storeServersOverrides);
  } catch (e) {
    errs.push((e as Error).message);
  }
  try {
    parseWatchCacheSizes(c.watchCacheSizes);
  } catch (e) {
    errs.push((e as Error).message);
  }
  const nonNegative: [keyof StorageConfig, string][] = [
    ['storeCompactionIntervalMs', '--store-compaction-interval'],
    ['storeCountMetricPollPeriodMs', '--store-count-metric-poll-period'],
    ['storeDbMetricPollIntervalMs', '--store-db-metric-poll-interval'],
    ['defaultWatchCacheSize', '--default-watch-cache-size'],
    ['leaseReuseDurationSeconds', '--lease-reuse-duration-seconds'],
  ];
  for (const [k, flag] of nonNegative) {
    const v = c[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      errs.push(`${flag} must not be negative, got ${String(v)}`);
  }
  if (!(c.storeHealthcheckTimeoutMs > 0)) errs.push('--store-healthcheck-timeout must be positive');
  if (!(c.eventTtlSeconds > 0) || !Number.isInteger(c.eventTtlSeconds))
    errs.push('--event-ttl must be a positive number of seconds');
  if (!c.storePrefix.startsWith('/'))
    errs.push(`--store-prefix must start with '/', got ${JSON.stringify(c.storePrefix)}`);
  if (!STORAGE_MEDIA_TYPES.includes(c.storageMediaType)) {
    errs.push(`--storage-media-type ${c.storageMediaType} is not one of ${STORAGE_MEDIA_TYPES.join(', ')}`);
  }
  if (c.leaseReuseDurationSeconds === 0) errs.push('--lease-reuse-duration-seconds must be positive');
  return errs.map((m) => new Error(m));
}

/**
 * The embedded store's write deadline for a `--request-timeout` (ms): a little shorter (10%, at most 1 s), so that a
 * write the store cannot complete gets the store's own 504 before the request's deadline passes. 0 (no request
 * timeout) keeps the store's default.
 */
export function storeWriteTimeoutFor(requestTimeoutMs: number): number | undefined {
  if (!(requestTimeoutMs > 0)) return undefined;
  return Math.max(1, requestTimeoutMs - Math.min(1000, Math.floor(requestTimeoutMs / 10)));
}

/** The watch cache size of a resource: its own `--watch-cache-sizes` entry, else the default; 0 = no cache. */
export function watchCacheSizeFor(c: StorageConfig, gr: GroupResource): number {
  if (!c.watchCache) return 0;
  return parseWatchCacheSizes(c.watchCacheSizes).get(groupResourceKey(gr)) ?? c.defaultWatchCacheSize;
}
