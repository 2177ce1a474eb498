/**
 * Picks and opens the `Store` of each resource: `--store-servers`, or the `--store-servers-overrides` entry of the
 * resource (model: apiserver `pkg/server/storage/storage_factory.go`). Resources with the same server list share one
 * Store (one connection pool, one SQLite writer). No servers → the embedded SQLite store at `defaultSqlitePath`.
 */
import { resolve } from 'node:path';

import { type Store } from './interface';
import {
  groupResourceKey,
  parseServersOverrides,
  serversProblems,
  type GroupResource,
  type StorageConfig,
} from './options';
import { parseSqliteUrl, SqliteStore } from './sqlite/sqlite-store';

/** Opens the Store for one server list (already validated or not: problems throw a TypeError naming them). */
export async function openStore(servers: string[], config: StorageConfig): Promise<Store> {
  const problems = serversProblems(servers, '--store-servers');
  if (problems.length > 0) throw new TypeError(problems.join('; '));
  const sqlite = config.storeWriteTimeoutMs ? { writeTimeoutMs: config.storeWriteTimeoutMs } : {};
  if (servers.length === 0) return SqliteStore.open(resolve(config.defaultSqlitePath), sqlite);
  if (servers[0]!.startsWith('sqlite://')) return SqliteStore.open(parseSqliteUrl(servers[0]!), sqlite);
  // Loaded here: the etcd client (gRPC and its protocol definitions) is almost half a second of a start on the
  // embedded store, which never uses it.
  const { Etcd3Store } = await import('./etcd3/etcd3-store');
  return new Etcd3Store({
    endpoints: servers,
    tls: { caFile: config.storeCaFile, certFile: config.storeCertFile, keyFile: config.storeKeyFile },
    leaseReuseDurationSeconds: config.leaseReuseDurationSeconds,
  });
}

/** Hands out the Store of each resource; owns the Stores it opened (close them with `close()`). */
export class StoreFactory {
  private readonly overrides: Map<string, string[]>;
  private readonly stores = new Map<string, Promise<Store>>();

  /** Throws a TypeError when `--store-servers-overrides` is malformed. */
  constructor(private readonly config: StorageConfig) {
    this.overrides = parseServersOverrides(config.storeServersOverrides);
  }

  /** The server list a resource uses. */
  serversFor(gr: GroupResource): string[] {
    return this.overrides.get(groupResourceKey(gr)) ?? this.config.storeServers;
  }

  /** The Store of a resource, opening it on first use. */
  storeFor(gr: GroupResource): Promise<Store> {
    const servers = this.serversFor(gr);
    const id = servers.join(',');
    let store = this.stores.get(id);
    if (!store) {
      store = openStore(servers, this.config);
      this.stores.set(id, store);
      store.catch(() => this.stores.delete(id));
    }
    return store;
  }

  /** Every Store opened so far (for health checks, compaction and metrics), with its server list. */
  async openStores(): Promise<{ servers: string; store: Store }[]> {
    const out: { servers: string; store: Store }[] = [];
    for (const [servers, p] of this.stores) {
      try {
        out.push({ servers, store: await p });
      } catch {
        // a store that failed to open is reported by whoever asked for it
      }
    }
    return out;
  }

  /** Closes every Store opened. */
  async close(): Promise<void> {
    const all = await this.openStores();
    this.stores.clear();
    await Promise.all(all.map((s) => s.store.close()));
  }
}
