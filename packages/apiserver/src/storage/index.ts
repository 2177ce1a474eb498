/**
 * The storage layer of the API server (see docs/storage.md): the backend `Store` contract and its etcd3 and SQLite
 * implementations, the typed `Storage` over a codec, the per-resource watch cache, configuration, the store factory,
 * compaction, health and metrics polling. The conformance suites live in `./testing` and are not exported here.
 */
export * from './interface';
export * from './errors';
export * from './api-object';
export * from './storage';
export * from './event-queue';
export * from './options';
export * from './factory';
export * from './maintenance';
export { Etcd3Store, mapEtcdError, type Etcd3StoreOptions } from './etcd3/etcd3-store';
export { SqliteStore, parseSqliteUrl, type SqliteStoreOptions } from './sqlite/sqlite-store';
export { Cacher, type CacherOptions } from './cacher/cacher';
