/**
 * The API server binary as a user runs it: on the embedded store (data kept across restarts) and on a real etcd;
 * bad command lines fail with a message naming the option; SIGTERM shuts it down cleanly.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort, startEtcd } from '@platform/apiserver';

import { get, ROOT, startDaemon, waitFor } from './support/process';

const BIN = join(ROOT, 'packages', 'apiserver', 'bin', 'platform-apiserver');
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'apiserver-e2e-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function startApiServer(
  store: string,
  extraArgs: string[] = [],
): Promise<{ url: string; ca: () => string; stop: () => Promise<number | null>; output: () => string }> {
  const port = await freePort();
  const d = startDaemon('apiserver', 'platform-apiserver', [
    `--store-servers=${store}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    `--cert-dir=${join(dir, 'pki')}`,
    ...extraArgs,
  ]);
  const url = `https://127.0.0.1:${port}`;
  // Generous: a busy machine, and with --server-processes each process bootstraps itself.
  await waitFor(
    'the API server to be ready',
    async () => (await get(`${url}/readyz`, undefined)).status === 200,
    60_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${d.output()}`);
  });
  return {
    url,
    ca: () => readFileSync(join(dir, 'pki', 'apiserver.crt'), 'utf8'),
    stop: () => d.stop(),
    output: d.output,
  };
}

const configMap = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { a: '1' } });

it('serves on the embedded store, keeps data across restarts, and exits 0 on SIGTERM', async () => {
  const store = `sqlite://${join(dir, 'state.db')}`;
  const first = await startApiServer(store);
  const created = await get(`${first.url}/api/v1/namespaces/default/configmaps`, first.ca(), {
    method: 'POST',
    body: configMap,
    headers: { 'content-type': 'application/json' },
  });
  expect(created.status).toBe(201);
  expect(await first.stop()).toBe(0);

  const second = await startApiServer(store);
  const got = await get(`${second.url}/api/v1/namespaces/default/configmaps/kept`, second.ca());
  expect([got.status, JSON.parse(got.text).data]).toEqual([200, { a: '1' }]);
  expect(await second.stop()).toBe(0);
}, 60_000);

it('serves on a real etcd', async () => {
  const etcd = await startEtcd();
  try {
    const server = await startApiServer(etcd.endpoints.join(','));
    const created = await get(`${server.url}/api/v1/namespaces/default/configmaps`, server.ca(), {
      method: 'POST',
      body: configMap,
      headers: { 'content-type': 'application/json' },
    });
    expect(created.status).toBe(201);
    const list = await get(`${server.url}/api/v1/namespaces/default/configmaps`, server.ca());
    expect(JSON.parse(list.text).items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['kept']);
    expect(await server.stop()).toBe(0);
  } finally {
    await etcd.stop();
  }
}, 120_000);

it('serves only the group versions --runtime-config leaves on', async () => {
  const server = await startApiServer(`sqlite://${join(dir, 'state.db')}`, ['--runtime-config=batch/v1beta1=false']);
  const batch = JSON.parse((await get(`${server.url}/apis/batch`, server.ca())).text);
  expect(batch.versions.map((v: { version: string }) => v.version)).toEqual(['v1']);
  expect((await get(`${server.url}/apis/batch/v1beta1`, server.ca())).status).toBe(404);
  expect((await get(`${server.url}/apis/batch/v1`, server.ca())).status).toBe(200);
  expect(await server.stop()).toBe(0);
}, 60_000);

it.each([
  [[], '--store-servers must be specified'],
  [['--store-servers=ftp://x'], '--store-servers: invalid server "ftp://x"'],
  [['--store-servers=sqlite:///tmp/x.db', '--secure-port=0'], '--secure-port'],
  [
    ['--store-servers=sqlite:///tmp/x.db', '--authorization-mode=RBAC,Bogus'],
    '--authorization-mode: "Bogus" is not a valid mode',
  ],
  [
    ['--store-servers=sqlite:///tmp/x.db', '--authorization-mode=ABAC'],
    '--authorization-policy-file is required with --authorization-mode=ABAC',
  ],
  [
    ['--store-servers=sqlite:///tmp/x.db', '--request-timeout=5x'],
    'invalid argument "5x" for "--request-timeout" flag',
  ],
  [['--store-servers=sqlite:///tmp/x.db', '--no-such-flag'], 'unknown flag: --no-such-flag'],
  [
    ['--store-servers=sqlite:///tmp/x.db', '--service-cluster-ip-range=10.0.0.0/24,10.1.0.0/24'],
    'must be of different IP families',
  ],
  [
    ['--store-servers=sqlite:///tmp/x.db', '--runtime-config=apps/v2=true'],
    'invalid argument "apps/v2=true" for "--runtime-config" flag: unknown API group versions or resources: apps/v2',
  ],
])('refuses the command line %p with a message naming the option', (args, message) => {
  // A command line that is wrongly accepted starts a server: the time-out turns that into a failure, not a hang.
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain(message);
});
