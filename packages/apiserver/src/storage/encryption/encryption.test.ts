import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseOrExit } from '@platform/common';
import { apiServerCommand } from '../../cmd/main';
import { startKmsPlugin } from '../testing/kms-plugin';
import { parseEncryptionConfig } from './config';
import { ENCRYPTED_PREFIX } from './providers';

const key32 = randomBytes(32).toString('base64');
const key16 = randomBytes(16).toString('base64');
const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

function config(providers: string, resources = '[secrets]'): string {
  return `apiVersion: apiserver.config.platform/v1
kind: EncryptionConfiguration
resources:
  - resources: ${resources}
    providers:
${providers
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
`;
}

const plain = Buffer.from('{"kind":"Secret","data":{"password":"hunter2"}}');

describe.each([
  ['aescbc', key32],
  ['aescbc', key16],
  ['aesgcm', key32],
  ['aesgcm', key16],
  ['secretbox', key32],
])('%s provider (%s)', (provider, secret) => {
  const t = parseEncryptionConfig(config(`- ${provider}: {keys: [{name: k1, secret: "${secret}"}]}`)).transformerFor(
    '',
    'secrets',
  )!;

  test('writes with its prefix, never the clear text, and reads back', async () => {
    const stored = await t.toStorage(plain, '/registry/secrets/ns/a');
    expect(text(stored).startsWith(`${ENCRYPTED_PREFIX}${provider}:v1:k1:`)).toBe(true);
    expect(text(stored)).not.toContain('hunter2');
    const again = await t.toStorage(plain, '/registry/secrets/ns/a');
    expect(Buffer.compare(stored, again)).not.toBe(0); // a fresh IV or nonce each time
    expect(await t.fromStorage(stored, '/registry/secrets/ns/a')).toEqual({ data: plain, stale: false });
  });

  test('a changed byte is refused or misread, never the original', async () => {
    const stored = Buffer.from(await t.toStorage(plain, '/k'));
    stored[stored.length - 1]! ^= 1;
    let out: Uint8Array | undefined;
    try {
      out = (await t.fromStorage(stored, '/k')).data;
    } catch {
      out = undefined;
    }
    expect(out && Buffer.compare(out, plain) === 0).toBeFalsy();
  });
});

test('aesgcm binds the value to its storage key', async () => {
  const t = parseEncryptionConfig(config(`- aesgcm: {keys: [{name: k1, secret: "${key32}"}]}`)).transformerFor(
    '',
    'secrets',
  )!;
  const stored = await t.toStorage(plain, '/registry/secrets/ns/a');
  await expect(t.fromStorage(stored, '/registry/secrets/ns/b')).rejects.toThrow();
});

test('the first key writes, every key reads, a value of another key is stale', async () => {
  const k2 = randomBytes(32).toString('base64');
  const old = parseEncryptionConfig(config(`- aescbc: {keys: [{name: k1, secret: "${key32}"}]}`)).transformerFor(
    '',
    'secrets',
  )!;
  const rotated = parseEncryptionConfig(
    config(`- aescbc: {keys: [{name: k2, secret: "${k2}"}, {name: k1, secret: "${key32}"}]}\n- identity: {}`),
  ).transformerFor('', 'secrets')!;
  const byOld = await old.toStorage(plain, '/k');
  expect(await rotated.fromStorage(byOld, '/k')).toEqual({ data: plain, stale: true });
  const byNew = await rotated.toStorage(plain, '/k');
  expect(text(byNew).startsWith(`${ENCRYPTED_PREFIX}aescbc:v1:k2:`)).toBe(true);
  expect(await rotated.fromStorage(byNew, '/k')).toEqual({ data: plain, stale: false });
  // Values written before encryption was configured are read by identity, and are stale.
  expect(await rotated.fromStorage(plain, '/k')).toEqual({ data: plain, stale: true });
  // Without the old key, its values cannot be read.
  const withoutOld = parseEncryptionConfig(config(`- aescbc: {keys: [{name: k2, secret: "${k2}"}]}`)).transformerFor(
    '',
    'secrets',
  )!;
  await expect(withoutOld.fromStorage(byOld, '/k')).rejects.toThrow('no matching prefix found');
});

test('identity first writes in clear and still reads encrypted values (decrypting a cluster)', async () => {
  const enc = parseEncryptionConfig(config(`- secretbox: {keys: [{name: k1, secret: "${key32}"}]}`)).transformerFor(
    '',
    'secrets',
  )!;
  const dec = parseEncryptionConfig(
    config(`- identity: {}\n- secretbox: {keys: [{name: k1, secret: "${key32}"}]}`),
  ).transformerFor('', 'secrets')!;
  const stored = await enc.toStorage(plain, '/k');
  expect(await dec.fromStorage(stored, '/k')).toEqual({ data: plain, stale: true });
  expect(Buffer.compare(await dec.toStorage(plain, '/k'), plain)).toBe(0);
  // identity alone refuses encrypted data rather than handing out ciphertext.
  const identity = parseEncryptionConfig(config('- identity: {}')).transformerFor('', 'secrets')!;
  await expect(identity.fromStorage(stored, '/k')).rejects.toThrow('identity transformer tried to read encrypted data');
});

test('resources are matched by resource and group, .k8s.io groups meaning .platform ones', () => {
  const c = parseEncryptionConfig(
    config('- identity: {}', '[secrets, configmaps, deployments.apps, leases.coordination.k8s.io, foos.example.com]'),
  );
  expect(c.transformerFor('', 'secrets')).toBeDefined();
  expect(c.transformerFor('', 'configmaps')).toBeDefined();
  expect(c.transformerFor('apps', 'deployments')).toBeDefined();
  expect(c.transformerFor('coordination.platform', 'leases')).toBeDefined();
  expect(c.transformerFor('example.com', 'foos')).toBeDefined();
  expect(c.transformerFor('', 'pods')).toBeUndefined();
  expect(c.transformerFor('apps', 'secrets')).toBeUndefined();
});

test.each([
  [
    'kind',
    'apiVersion: apiserver.config.platform/v1\nkind: Other\nresources: []',
    'kind: must be EncryptionConfiguration',
  ],
  [
    'no resources',
    'apiVersion: apiserver.config.platform/v1\nkind: EncryptionConfiguration',
    'resources: at least one entry',
  ],
  ['not YAML', '{{{', 'not valid YAML or JSON'],
  ['no providers', config('').replace('    providers:\n      \n', ''), 'resources[0].providers: at least one provider'],
  ['two in one', config(`- {identity: {}, aescbc: {keys: [{name: a, secret: "${key32}"}]}}`), 'more than one provider'],
  ['unknown provider', config('- rot13: {}'), 'unknown provider rot13'],
  ['no keys', config('- aescbc: {keys: []}'), 'resources[0].providers[0].aescbc.keys: at least one key'],
  ['key size', config(`- secretbox: {keys: [{name: a, secret: "${key16}"}]}`), 'got 16, expected one of [32]'],
  ['bad base64', config('- aesgcm: {keys: [{name: a, secret: "!!"}]}'), 'secret is not valid base64'],
  ['colon in name', config(`- aescbc: {keys: [{name: "a:b", secret: "${key32}"}]}`), "key name should not contain ':'"],
  [
    'duplicate key',
    config(`- aescbc: {keys: [{name: a, secret: "${key32}"}, {name: a, secret: "${key32}"}]}`),
    'duplicate key name "a"',
  ],
  ['kms endpoint', config('- kms: {name: k, endpoint: "tcp://1.2.3.4:5"}'), 'only unix:// is supported'],
  ['kms cachesize', config('- kms: {name: k, endpoint: "unix:///x", cachesize: 0}'), 'cachesize should be a positive'],
  [
    'kms timeout',
    config('- kms: {name: k, endpoint: "unix:///x", timeout: "soon"}'),
    'timeout should be a positive duration',
  ],
  ['bad resource', config('- identity: {}', '["Secrets!"]'), 'is not a resource name'],
])('refuses a configuration: %s', (_name, yaml, message) => {
  expect(() => parseEncryptionConfig(yaml, 'enc.yaml')).toThrow(message);
});

test('--encryption-provider-config: a bad file is an error naming the option; a good one is taken', () => {
  const dir = mkdtempSync(join(tmpdir(), 'enc-flag-'));
  try {
    const run = (file: string): { code?: number; stderr: string } => {
      const { cmd, groups, version } = apiServerCommand();
      let stderr = '';
      const out = parseOrExit(
        cmd,
        groups,
        ['--store-servers', `sqlite://${join(dir, 'db')}`, '--encryption-provider-config', file],
        version,
        { stdout: () => {}, stderr: (s) => (stderr += s) },
      );
      return { code: out.exitCode, stderr };
    };
    const missing = run(join(dir, 'missing.yaml'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--encryption-provider-config: cannot read');
    writeFileSync(join(dir, 'bad.yaml'), config('- aescbc: {keys: []}'));
    expect(run(join(dir, 'bad.yaml')).stderr).toContain('at least one key has to be specified');
    writeFileSync(join(dir, 'good.yaml'), config(`- aescbc: {keys: [{name: k1, secret: "${key32}"}]}`));
    expect(run(join(dir, 'good.yaml'))).toEqual({ code: undefined, stderr: '' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('kms provider', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'kms-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('envelope: a DEK per write encrypted by the plugin, read back through the cache or the plugin', async () => {
    const socket = join(dir, 'kms.sock');
    const plugin = await startKmsPlugin(socket);
    const yaml = config(`- kms: {name: vault, endpoint: "unix://${socket}", cachesize: 10, timeout: 5s}`);
    const c1 = parseEncryptionConfig(yaml);
    const c2 = parseEncryptionConfig(yaml);
    try {
      const t = c1.transformerFor('', 'secrets')!;
      const stored = await t.toStorage(plain, '/k');
      expect(text(stored).startsWith(`${ENCRYPTED_PREFIX}kms:v1:vault:`)).toBe(true);
      expect(text(stored)).not.toContain('hunter2');
      expect(plugin.calls.encrypt).toBe(1);
      expect((await t.fromStorage(stored, '/k')).data).toEqual(plain);
      expect(plugin.calls.decrypt).toBe(0); // its own DEK is cached
      // Another server (a restart) asks the plugin once, then uses its cache.
      const other = c2.transformerFor('', 'secrets')!;
      expect((await other.fromStorage(stored, '/k')).data).toEqual(plain);
      expect((await other.fromStorage(stored, '/k')).data).toEqual(plain);
      expect(plugin.calls.decrypt).toBe(1);
    } finally {
      c1.close();
      c2.close();
      await plugin.stop();
    }
  });

  test('a plugin of another API version, or none at all, fails the write with a clear error', async () => {
    const socket = join(dir, 'v2.sock');
    const plugin = await startKmsPlugin(socket, 'v2');
    const c = parseEncryptionConfig(config(`- kms: {name: vault, endpoint: "unix://${socket}", timeout: 2s}`));
    const gone = parseEncryptionConfig(
      config(`- kms: {name: gone, endpoint: "unix://${join(dir, 'none.sock')}", timeout: 1s}`),
    );
    try {
      await expect(c.transformerFor('', 'secrets')!.toStorage(plain, '/k')).rejects.toThrow(
        'KMS provider vault: api version v2 is not supported, only v1beta1 is supported now',
      );
      await expect(gone.transformerFor('', 'secrets')!.toStorage(plain, '/k')).rejects.toThrow(
        'KMS provider gone: Version',
      );
    } finally {
      c.close();
      gone.close();
      await plugin.stop();
    }
  });
});
