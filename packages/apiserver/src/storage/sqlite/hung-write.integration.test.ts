/**
 * A hung SQLite write as users meet it: an API server over HTTPS on a SQLite file whose write lock another process
 * holds (a backup tool, an `sqlite3` shell in `BEGIN EXCLUSIVE`). Writes answer 504 Timeout from the store within
 * the request deadline, reads go on, `/readyz` fails; once the lock is released, writes and readiness come back by
 * themselves, and every write that answered 504 is either there whole (with its watch event) or not at all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestServer, type TestResponse, type TestServer } from '../../testing/test-server';
import { holdSqliteLock, type SqliteLockHolder } from '../testing/sqlite-lock';

/** `--request-timeout` of the server: the store's write deadline is 10% shorter (7.2 s). */
const REQUEST_TIMEOUT_MS = 8000;
const NS = 'hung';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

let dir: string;
let path: string;
let server: TestServer;
let holder: SqliteLockHolder | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'apiserver-hung-'));
  path = join(dir, 'state.db');
  server = await startTestServer((c) => {
    c.storage.servers = [`sqlite://${path}`];
    c.limits.requestTimeoutMs = REQUEST_TIMEOUT_MS;
  });
}, 90000);

afterAll(async () => {
  await holder?.release();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Retries `fn` until `ok` holds for its result (60 s at most); returns the last result. */
async function until<T>(fn: () => Promise<T>, ok: (r: T) => boolean): Promise<T> {
  let r = await fn();
  for (const deadline = Date.now() + 60000; !ok(r) && Date.now() < deadline;) {
    await new Promise((res) => setTimeout(res, 200));
    r = await fn();
  }
  return r;
}

const cm = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
});

test('writes answer 504 from the store while the lock is held elsewhere, and are whole or absent after', async () => {
  expect((await server.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).toBe(201);
  const made: Record<string, TestResponse> = {};
  for (const name of ['upd', 'patched', 'del']) {
    made[name] = await server.request('POST', CMS, { body: cm(name, { v: '1' }) });
    expect(made[name]!.status).toBe(201);
  }
  const rv0 = (await server.request('GET', CMS)).json.metadata.resourceVersion as string;
  const big = 'x'.repeat(4096);

  holder = await holdSqliteLock(path);
  const creates = [0, 1, 2].map((i) => server.request('POST', CMS, { body: cm(`new-${i}`, { v: 'new', big }) }));
  const update = server.request('PUT', `${CMS}/upd`, {
    body: { ...made.upd!.json, data: { v: '2', big } },
  });
  const patch = server.request('PATCH', `${CMS}/patched`, {
    body: { data: { v: '2', big } },
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  const del = server.request('DELETE', `${CMS}/del`);
  // Reads go on meanwhile (watch cache and read-only connection), and /readyz says the store is not ready.
  const get = await server.request('GET', `${CMS}/upd`);
  expect([get.status, get.json?.data?.v]).toEqual([200, '1']);
  const list = await server.request('GET', CMS);
  expect(list.status).toBe(200);
  const readyz = await until(
    () => server.request('GET', '/readyz?verbose'),
    (r) => r.status !== 200,
  );
  expect(readyz.status).not.toBe(200);
  expect(readyz.text).toContain('[-]store failed');

  const writes = await Promise.all([...creates, update, patch, del]);
  for (const w of writes) {
    console.log(`write while locked: ${w.status} ${w.json?.message}`);
    expect([w.status, w.json?.kind, w.json?.reason]).toEqual([504, 'Status', 'Timeout']);
    // The store's own answer (not the request deadline's): it came within the request's deadline.
    expect(w.json.message).toMatch(/store timeout: the SQLite (store|database)/);
  }

  await holder.release();
  const ready = await until(
    () => server.request('GET', '/readyz'),
    (r) => r.status === 200,
  );
  expect(ready.status).toBe(200);
  const after = await until(
    () => server.request('POST', CMS, { body: cm('after', { v: 'after' }) }),
    (r) => r.status !== 504 && r.status < 500,
  );
  expect(after.status).toBe(201);

  // Every write that answered 504 is there whole or not at all.
  const items = new Map<string, { data: Record<string, string> }>(
    (
      (await server.request('GET', CMS)).json.items as { metadata: { name: string }; data: Record<string, string> }[]
    ).map((o) => [o.metadata.name, o]),
  );
  const applied: string[] = [];
  for (let i = 0; i < 3; i++) {
    const o = items.get(`new-${i}`);
    if (o) applied.push(`new-${i}`);
    expect(o === undefined || (o.data.v === 'new' && o.data.big === big)).toBe(true);
  }
  for (const name of ['upd', 'patched']) {
    const data = items.get(name)!.data;
    if (data.v === '2') applied.push(name);
    expect(data).toEqual(data.v === '2' ? { v: '2', big } : { v: '1' });
  }
  const delData = items.get('del')?.data;
  if (!delData) applied.push('del');
  expect(delData === undefined || delData.v === '1').toBe(true);
  expect(items.get('after')?.data).toEqual({ v: 'after' });
  console.log(`504'd writes applied after all: ${applied.length === 0 ? 'none' : applied.join(', ')}`);

  // Watchers see exactly the writes that were applied, once each, then the write after the lock.
  const watched = await until(
    () => server.request('GET', `${CMS}?watch=1&resourceVersion=${rv0}&timeoutSeconds=1`),
    (r) => r.text.includes('"after"'),
  );
  const events = watched.text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } })
    .map((e) => `${e.type} ${e.object.metadata.name}`);
  const expected = [
    ...applied.map((n) => (n === 'del' ? 'DELETED del' : n.startsWith('new-') ? `ADDED ${n}` : `MODIFIED ${n}`)),
    'ADDED after',
  ];
  expect(events.sort()).toEqual(expected.sort());
}, 120000);
