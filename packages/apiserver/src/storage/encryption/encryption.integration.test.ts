/**
 * Encryption at rest through a real API server, as users meet it: Secrets written over HTTPS are stored encrypted
 * (the raw store never holds them in clear), read back after a restart, rotated to a new key by rewriting them,
 * moved to a KMS plugin, and decrypted again with identity first. On the SQLite store and on etcd.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Etcd3 } from 'etcd3';
import { startTestServer, type TestServer } from '../../testing/test-server';
import { type EtcdCluster, startEtcd } from '../testing/etcd';
import { startKmsPlugin, type KmsPlugin } from '../testing/kms-plugin';
import { parseEncryptionConfig } from './config';

jest.setTimeout(180_000);

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');
const password = `hunter2-${randomBytes(8).toString('hex')}`;
const visible = `visible-${randomBytes(8).toString('hex')}`;
const NS = 'enc';

function config(providers: string[]): string {
  return [
    'apiVersion: apiserver.config.platform/v1',
    'kind: EncryptionConfiguration',
    'resources:',
    '  - resources: [secrets]',
    '    providers:',
    ...providers.map((p) => `      - ${p}`),
  ].join('\n');
}
const aescbc = (...keys: [string, string][]): string =>
  `aescbc: {keys: [${keys.map(([n, s]) => `{name: ${n}, secret: "${s}"}`).join(', ')}]}`;

let dir: string;
let etcd: EtcdCluster | undefined;
let plugin: KmsPlugin;
const master = randomBytes(32);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'enc-int-'));
  plugin = await startKmsPlugin(join(dir, 'kms.sock'), undefined, master);
});

afterAll(async () => {
  await plugin?.stop();
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['sqlite', 'etcd'] as const)('on %s', (store) => {
  const prefix = `/registry-${randomBytes(4).toString('hex')}`;
  const dbPath = (): string => join(dir, `${store}.db`);
  const secretKey = `${prefix}/secrets/${NS}/s1`;
  let server: TestServer | undefined;

  async function start(providers: string[]): Promise<TestServer> {
    if (store === 'etcd') etcd ??= await startEtcd();
    const encryption = parseEncryptionConfig(config(providers));
    server = await startTestServer({
      store,
      ...(etcd ? { etcd } : {}),
      configure: (c) => {
        c.storage.prefix = prefix;
        c.storage.encryption = encryption;
        if (store === 'sqlite') c.storage.servers = [`sqlite://${dbPath()}`];
      },
    });
    return server;
  }

  async function stop(): Promise<void> {
    await server?.stop();
    server = undefined;
  }

  /** The latest stored value of a key, read from the store itself (the server stopped). */
  async function raw(key: string): Promise<Buffer> {
    if (store === 'sqlite') {
      const db = new Database(dbPath(), { readonly: true });
      try {
        const row = db.prepare('SELECT value FROM kine WHERE name = ? ORDER BY id DESC LIMIT 1').get(key) as
          { value: Buffer } | undefined;
        if (!row) throw new Error(`${key} is not in the database`);
        return row.value;
      } finally {
        db.close();
      }
    }
    const client = new Etcd3({ hosts: etcd!.endpoints });
    try {
      const value = await client.get(key).buffer();
      if (!value) throw new Error(`${key} is not in etcd`);
      return value;
    } finally {
      client.close();
    }
  }

  async function readSecret(s: TestServer, name = 's1'): Promise<string> {
    const res = await s.request('GET', `/api/v1/namespaces/${NS}/secrets/${name}`);
    expect(res.status).toBe(200);
    return Buffer.from(res.json.data.password, 'base64').toString();
  }

  /** Reads the secret and writes it back unchanged, as `kubectl get -o json | kubectl replace -f -` does. */
  async function rewrite(s: TestServer): Promise<void> {
    const got = await s.request('GET', `/api/v1/namespaces/${NS}/secrets/s1`);
    const put = await s.request('PUT', `/api/v1/namespaces/${NS}/secrets/s1`, { body: got.json });
    expect(put.status).toBe(200);
  }

  afterEach(stop);

  test('secrets are stored encrypted and read back after a restart; other resources stay in clear', async () => {
    const s = await start([aescbc(['k1', k1]), 'identity: {}']);
    expect((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
    const created = await s.request('POST', `/api/v1/namespaces/${NS}/secrets`, {
      body: { metadata: { name: 's1' }, stringData: { password } },
    });
    expect(created.status).toBe(201);
    const cm = await s.request('POST', `/api/v1/namespaces/${NS}/configmaps`, {
      body: { metadata: { name: 'c1' }, data: { v: visible } },
    });
    expect(cm.status).toBe(201);
    expect(await readSecret(s)).toBe(password);
    await stop();

    const value = await raw(secretKey);
    expect(value.toString('latin1').startsWith('platform:enc:aescbc:v1:k1:')).toBe(true);
    expect(value.toString('latin1')).not.toContain(password);
    // The same raw read finds a ConfigMap's data in clear: the check above can fail.
    expect((await raw(`${prefix}/configmaps/${NS}/c1`)).toString('latin1')).toContain(visible);
    if (store === 'sqlite') {
      for (const f of [dbPath(), `${dbPath()}-wal`]) {
        if (existsSync(f)) expect(readFileSync(f).toString('latin1')).not.toContain(password);
      }
    }

    const again = await start([aescbc(['k1', k1]), 'identity: {}']);
    expect(await readSecret(again)).toBe(password);
  });

  test('rotation: a new first key reads the old values and rewriting moves them to it', async () => {
    const s = await start([aescbc(['k2', k2], ['k1', k1])]);
    expect(await readSecret(s)).toBe(password);
    await rewrite(s);
    await stop();
    expect((await raw(secretKey)).toString('latin1').startsWith('platform:enc:aescbc:v1:k2:')).toBe(true);

    const onlyNew = await start([aescbc(['k2', k2])]);
    expect(await readSecret(onlyNew)).toBe(password);
    // Secrets written now go through the watch cache's feed decrypted too (a list at resourceVersion=0).
    const s2 = await onlyNew.request('POST', `/api/v1/namespaces/${NS}/secrets`, {
      body: { metadata: { name: 's2' }, stringData: { password } },
    });
    expect(s2.status).toBe(201);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const list = await onlyNew.request('GET', `/api/v1/namespaces/${NS}/secrets?resourceVersion=0`);
      expect(list.status).toBe(200);
      const item = (list.json.items as { metadata: { name: string }; data: { password: string } }[]).find(
        (i) => i.metadata.name === 's2',
      );
      if (item) {
        expect(Buffer.from(item.data.password, 'base64').toString()).toBe(password);
        break;
      }
      if (Date.now() > deadline) throw new Error('s2 never reached the watch cache');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  test('to a KMS plugin and back to clear text', async () => {
    const kms = `kms: {name: test-kms, endpoint: "unix://${join(dir, 'kms.sock')}", timeout: 10s}`;
    const s = await start([kms, aescbc(['k2', k2])]);
    expect(await readSecret(s)).toBe(password);
    await rewrite(s);
    await stop();
    const value = await raw(secretKey);
    expect(value.toString('latin1').startsWith('platform:enc:kms:v1:test-kms:')).toBe(true);
    expect(value.toString('latin1')).not.toContain(password);

    const decrypts = plugin.calls.decrypt;
    const restarted = await start([kms, aescbc(['k2', k2])]);
    expect(await readSecret(restarted)).toBe(password);
    expect(plugin.calls.decrypt).toBeGreaterThan(decrypts); // a new server asks the plugin for the DEK
    await stop();

    // A plugin that is not up yet when the server starts: the watch cache's first list fails and is tried again,
    // and the server becomes ready once the plugin answers.
    await plugin.stop();
    const starting = start([kms, aescbc(['k2', k2])]);
    await new Promise((r) => setTimeout(r, 3000));
    plugin = await startKmsPlugin(join(dir, 'kms.sock'), undefined, master);
    expect(await readSecret(await starting)).toBe(password);
    await stop();

    const clear = await start(['identity: {}', kms, aescbc(['k2', k2])]);
    expect(await readSecret(clear)).toBe(password);
    await rewrite(clear);
    await stop();
    expect((await raw(secretKey)).toString('latin1')).toContain(password);
  });
});
