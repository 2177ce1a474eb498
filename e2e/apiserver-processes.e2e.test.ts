/**
 * `platform-apiserver --server-processes=2` on a real etcd: connections land on both server processes, a write
 * through one is seen by a watch served by the other, a killed server process is replaced while the other serves,
 * and SIGTERM stops them all cleanly; on the embedded store more than one process is refused.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type EtcdCluster, freePort, startEtcd } from '@platform/apiserver';

import { type Daemon, ROOT, startDaemon, waitFor } from './support/process';

const BIN = join(ROOT, 'packages', 'apiserver', 'bin', 'platform-apiserver');

let dir: string;
let etcd: EtcdCluster | undefined;
let daemon: Daemon | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'apiserver-processes-'));
});
afterAll(async () => {
  await daemon?.stop('SIGKILL');
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One HTTPS request on `agent` (a keep-alive agent of one socket keeps it on one connection). */
function call(
  url: string,
  agent: Agent,
  o: { method?: string; body?: unknown } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = o.body === undefined ? undefined : JSON.stringify(o.body);
    const req = httpsRequest(
      url,
      {
        method: o.method ?? 'GET',
        agent,
        headers: payload ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The pid of the server process that answers `/metrics` on `agent`'s connection. */
async function servingPid(url: string, agent: Agent): Promise<number> {
  const r = await call(`${url}/metrics`, agent);
  const m = /^apiserver_server_process_info\{[^}]*pid="(\d+)"[^}]*\} 1$/m.exec(r.text);
  if (r.status !== 200 || !m) throw new Error(`no server process info in /metrics: ${r.status}`);
  return Number(m[1]);
}

/** A one-connection agent whose connection is served by a process `accept`s (new connections until one is). */
async function connectionTo(
  url: string,
  ca: string,
  accept: (pid: number) => boolean,
): Promise<{ agent: Agent; pid: number }> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
    const pid = await servingPid(url, agent).catch(() => undefined);
    if (pid !== undefined && accept(pid)) return { agent, pid };
    agent.destroy();
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no connection reached the wanted server process within 120 s');
}

/** The pids seen over `n` new connections. */
async function pidsOver(url: string, ca: string, n: number): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < n; i++) {
    const agent = new Agent({ keepAlive: false, ca });
    const pid = await servingPid(url, agent).catch(() => undefined);
    if (pid !== undefined) pids.add(pid);
    agent.destroy();
  }
  return pids;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('serves from two processes on etcd, restarts a killed one, and stops all of them on SIGTERM', async () => {
  etcd = await startEtcd();
  const port = await freePort();
  const pki = join(dir, 'pki');
  daemon = startDaemon('apiserver', 'platform-apiserver', [
    `--store-servers=${etcd.endpoints.join(',')}`,
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    `--cert-dir=${pki}`,
    '--server-processes=2',
  ]);
  const d = daemon;
  const url = `https://127.0.0.1:${port}`;
  const fail = (err: Error): never => {
    throw new Error(`${err.message}\n${d.output()}`);
  };
  let ca = '';
  await waitFor(
    'a server process to be ready',
    async () => {
      ca ||= readFileSync(join(pki, 'apiserver.crt'), 'utf8');
      return (await call(`${url}/readyz`, new Agent({ ca }))).status === 200;
    },
    // Two processes each load and start a whole API server: generous for a busy machine.
    150_000,
  ).catch(fail);

  // New connections reach both processes (round robin, or the kernel's choice: many connections then).
  let pids = new Set<number>();
  await waitFor(
    'connections to reach two server processes',
    async () => {
      for (const pid of await pidsOver(url, ca, 4)) pids.add(pid);
      return pids.size === 2;
    },
    150_000,
  ).catch(fail);
  const [first, second] = [...pids] as [number, number];

  // A watch served by one process sees a write made through the other (each request right after the one that
  // named the process, on the same kept-alive connection).
  const watcher = await connectionTo(url, ca, (pid) => pid === first);
  const listed = await call(`${url}/api/v1/namespaces/default/configmaps`, watcher.agent);
  expect(listed.status).toBe(200);
  const rv = JSON.parse(listed.text).metadata.resourceVersion as string;
  const seen = new Promise<string>((resolve, reject) => {
    const req = httpsRequest(
      `${url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`,
      { agent: watcher.agent },
      (res) => {
        let buf = '';
        res.on('data', (c: Buffer) => {
          buf += c.toString();
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
            const e = JSON.parse(buf.slice(0, nl)) as { type: string; object: { metadata: { name: string } } };
            buf = buf.slice(nl + 1);
            if (e.type === 'ADDED') resolve(e.object.metadata.name);
          }
        });
        res.on('error', () => {});
      },
    );
    req.on('error', reject);
    req.end();
  });
  const writer = await connectionTo(url, ca, (pid) => pid === second);
  const created = await call(`${url}/api/v1/namespaces/default/configmaps`, writer.agent, {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'across' }, data: { a: '1' } },
  });
  expect(created.status).toBe(201);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('(no event in 30 s)'), 30_000)));
  expect(await Promise.race([seen, timeout])).toBe('across');
  clearTimeout(timer);
  watcher.agent.destroy();
  writer.agent.destroy();

  // A killed process is replaced; the other keeps serving meanwhile.
  process.kill(first, 'SIGKILL');
  await waitFor('the killed server process to be gone', async () => !isAlive(first)).catch(fail);
  await waitFor(
    'the other server process to answer',
    async () => {
      const agent = new Agent({ keepAlive: false, ca });
      const r = await call(`${url}/api/v1/namespaces/default/configmaps/across`, agent).finally(() => agent.destroy());
      return r.status === 200;
    },
    60_000,
  ).catch(fail);
  await waitFor(
    'a new server process to serve beside the other',
    async () => {
      pids = await pidsOver(url, ca, 4);
      return pids.has(second) && pids.size === 2 && !pids.has(first);
    },
    150_000,
  ).catch(fail);
  const replacement = [...pids].find((p) => p !== second)!;
  expect(d.output()).toContain('A server process exited; restarting it');

  // SIGTERM: every process shuts down gracefully and the command exits 0.
  expect(await d.stop('SIGTERM')).toBe(0);
  daemon = undefined;
  expect([isAlive(second), isAlive(replacement)]).toEqual([false, false]);
  expect(d.output()).toContain('Every server process has exited');
}, 420_000);

it('refuses more than one server process on the embedded store, naming the option', () => {
  const r = spawnSync(
    process.execPath,
    [BIN, `--store-servers=sqlite://${join(dir, 'state.db')}`, '--server-processes=2', `--cert-dir=${join(dir, 'p2')}`],
    { encoding: 'utf8', timeout: 120_000, killSignal: 'SIGKILL' },
  );
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('--server-processes=2: the embedded store');
}, 150_000);
