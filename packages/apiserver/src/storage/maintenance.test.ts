import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isStorageError } from './errors';
import { StoreFactory } from './factory';
import { Compactor, pollDbSizes, pollObjectCounts, storeHealthCheck } from './maintenance';
import {
  DEFAULT_STORAGE_CONFIG,
  parseServersOverrides,
  parseWatchCacheSizes,
  validateStorageConfig,
  watchCacheSizeFor,
  type StorageConfig,
} from './options';
import { SqliteStore } from './sqlite/sqlite-store';

const enc = new TextEncoder();
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maintenance-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('the compactor keeps one interval of history', async () => {
  const store = await SqliteStore.open(join(dir, 'state.db'));
  try {
    const c = new Compactor(store);
    const a = await store.create('/k', enc.encode('1'));
    expect(await c.tick()).toBeUndefined(); // first tick only observes
    const b = await store.update('/k', enc.encode('2'), a.modRevision);
    expect(await c.tick()).toBe(a.modRevision);
    expect((await store.get('/k', { at: a.modRevision }))?.modRevision).toBe(a.modRevision);
    await store.update('/k', enc.encode('3'), b.modRevision);
    expect(await c.tick()).toBe(b.modRevision);
    const err = await store.get('/k', { at: a.modRevision }).catch((e: unknown) => e);
    expect(isStorageError(err, 'Compacted')).toBe(true);
  } finally {
    await store.close();
  }
});

test('health check, object counts and database size', async () => {
  const store = await SqliteStore.open(join(dir, 'state.db'));
  try {
    await store.create('/registry/pods/a/x', enc.encode('{}'));
    await store.create('/registry/pods/b/y', enc.encode('{}'));
    await store.create('/registry/podtemplates/a/z', enc.encode('{}'));
    await storeHealthCheck(async () => [store], 1000).check();
    const counts = new Map<string, number>();
    const sizes = new Map<string, number>();
    const sink = {
      setObjectCount: (r: string, n: number) => counts.set(r, n),
      setDbSize: (e: string, n: number) => sizes.set(e, n),
    };
    const target = {
      resources: [{ label: 'pods', prefix: '/registry/pods/', store }],
      stores: [{ endpoint: 'sqlite', store }],
    };
    await pollObjectCounts(target, sink);
    await pollDbSizes(target, sink);
    expect(counts.get('pods')).toBe(2);
    expect(sizes.get('sqlite')).toBeGreaterThan(0);
  } finally {
    await store.close();
  }
  const closed = await storeHealthCheck(async () => [store], 1000)
    .check()
    .catch((e: unknown) => e);
  expect(isStorageError(closed, 'Unreachable')).toBe(true);
});

test('options: defaults are valid; every bad value is reported by its flag', () => {
  expect(validateStorageConfig({ ...DEFAULT_STORAGE_CONFIG })).toEqual([]);
  const bad: StorageConfig = {
    ...DEFAULT_STORAGE_CONFIG,
    storeServers: ['http://127.0.0.1:2379', 'https://127.0.0.1:2380', 'etcd:2379'],
    storeServersOverrides: ['apps/deployments'],
    watchCacheSizes: ['pods=5'],
    storeCompactionIntervalMs: -1,
    storePrefix: 'registry',
    storageMediaType: 'text/plain',
  };
  const messages = validateStorageConfig(bad).map((e) => e.message);
  for (const want of [
    /etcd:2379/,
    /mixes http and https/,
    /--store-servers-overrides entry "apps\/deployments"/,
    /--watch-cache-sizes entry "pods=5"/,
    /--store-compaction-interval/,
    /--store-prefix/,
    /--storage-media-type/,
  ]) {
    expect(messages.some((m) => want.test(m))).toBe(true);
  }
  expect(parseServersOverrides(['/events#http://127.0.0.1:1;http://127.0.0.1:2']).get('/events')).toEqual([
    'http://127.0.0.1:1',
    'http://127.0.0.1:2',
  ]);
  expect(parseWatchCacheSizes(['pods#1000', 'deployments.apps#50'])).toEqual(
    new Map([
      ['/pods', 1000],
      ['apps/deployments', 50],
    ]),
  );
  const c = { ...DEFAULT_STORAGE_CONFIG, watchCacheSizes: ['pods#0'] };
  expect(watchCacheSizeFor(c, { group: '', resource: 'pods' })).toBe(0);
  expect(watchCacheSizeFor(c, { group: 'apps', resource: 'deployments' })).toBe(100);
  expect(watchCacheSizeFor({ ...c, watchCache: false }, { group: 'apps', resource: 'deployments' })).toBe(0);
});

test('the factory picks the store per resource and shares stores with the same servers', async () => {
  const main = `sqlite://${join(dir, 'main.db')}`;
  const events = `sqlite://${join(dir, 'events.db')}`;
  const f = new StoreFactory({
    ...DEFAULT_STORAGE_CONFIG,
    storeServers: [main],
    storeServersOverrides: [`/events#${events}`],
  });
  try {
    const pods = await f.storeFor({ group: '', resource: 'pods' });
    const deployments = await f.storeFor({ group: 'apps', resource: 'deployments' });
    const ev = await f.storeFor({ group: '', resource: 'events' });
    expect(pods).toBe(deployments);
    expect(ev).not.toBe(pods);
    expect((ev as SqliteStore).path).toBe(join(dir, 'events.db'));
    expect((await f.openStores()).length).toBe(2);
  } finally {
    await f.close();
  }
});
