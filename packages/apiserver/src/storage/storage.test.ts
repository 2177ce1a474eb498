import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { objectKey } from './api-object';
import { Cacher } from './cacher/cacher';
import { SqliteStore } from './sqlite/sqlite-store';
import { decodeContinue, encodeContinue, parseResourceVersion, StoreStorage } from './storage';
import { jsonCodec } from './testing/json-codec';
import { runStorageConformance } from './testing/storage-conformance';

async function sqliteStore(): Promise<{ store: SqliteStore; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'storage-test-'));
  return { store: await SqliteStore.open(join(dir, 'state.db'), { progressIntervalMs: 200 }), dir };
}

runStorageConformance('StoreStorage over sqlite', async () => {
  const { store, dir } = await sqliteStore();
  return {
    storage: new StoreStorage(store, jsonCodec),
    rawStore: store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

runStorageConformance('Cacher over sqlite', async () => {
  const { store, dir } = await sqliteStore();
  const cacher = new Cacher(new StoreStorage(store, jsonCodec), {
    resourcePrefix: '/registry/pods/',
    waitTimeoutMs: 500,
  });
  await cacher.start();
  return {
    storage: cacher,
    cleanup: async () => {
      await cacher.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('resource versions and continue tokens', () => {
  test('parseResourceVersion accepts decimal revisions only', () => {
    expect(parseResourceVersion(undefined)).toBeUndefined();
    expect(parseResourceVersion('')).toBeUndefined();
    expect(parseResourceVersion('0')).toBe(0n);
    expect(parseResourceVersion('9007199254740993')).toBe(9007199254740993n);
    for (const bad of ['-1', '01', '1.5', 'abc', ' 1', '99999999999999999999']) {
      expect(() => parseResourceVersion(bad)).toThrow(/invalid resourceVersion/);
    }
  });
  test('continue tokens round-trip and reject tampering', () => {
    const t = encodeContinue(9007199254740993n, 'ns/name\0');
    expect(decodeContinue(t)).toEqual({ revision: 9007199254740993n, start: 'ns/name\0' });
    const forged = Buffer.from(JSON.stringify({ v: 'meta.platform/v1', rv: '5', start: '../../secrets/x' })).toString(
      'base64url',
    );
    expect(() => decodeContinue(forged)).toThrow(/invalid start key/);
    expect(() => decodeContinue('%%%')).toThrow(/continue key is not valid/);
  });
});

describe('objectKey', () => {
  test('lays keys out as <prefix>/<resource>/[<namespace>/]<name>', () => {
    expect(objectKey('/registry', 'pods', 'default', 'web')).toBe('/registry/pods/default/web');
    expect(objectKey('/registry/', 'nodes', undefined, 'n1')).toBe('/registry/nodes/n1');
  });
  test('rejects names that would escape their directory', () => {
    expect(() => objectKey('/registry', 'pods', 'default', 'a/b')).toThrow(/invalid name/);
    expect(() => objectKey('/registry', 'pods', '..', 'x')).toThrow(/invalid namespace/);
    expect(() => objectKey('/registry', 'pods', 'default', '')).toThrow(/invalid name/);
  });
});
