/**
 * The store's own KV client (`kv-client.ts`) against real etcd members: every request and response field the store
 * uses round-trips, a lease ID above 2^53 is written exactly, failures arrive as errors the store classifies and maps
 * (answers, not sent, unknown outcome; Unreachable, Timeout, TooLarge), and the store fails over on it when the
 * member it uses is killed or hung, over plain HTTP and mutual TLS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Etcd3 } from 'etcd3';

import { isStorageError } from '../errors';
import { freePort, generateTls, startEtcd, type EtcdCluster } from '../testing/etcd';

import { classifyEtcdError, Etcd3Store, mapEtcdError } from './etcd3-store';
import { CompareResult, CompareTarget, KvClient, SortOrder, SortTarget } from './kv-client';

const b = (s: string): Buffer => Buffer.from(s);
const soon = (ms = 10000): { deadline: number } => ({ deadline: Date.now() + ms });

function plainClient(url: string): KvClient {
  return new KvClient(url);
}

/** Waits (up to 60 s) until `fn` resolves, retrying on errors: members restarted or resumed need a moment. */
async function eventually<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

describe('etcd KV client: one member', () => {
  let cluster: EtcdCluster;
  let kv: KvClient;
  beforeAll(async () => {
    cluster = await startEtcd();
    kv = plainClient(cluster.endpoints[0]!);
  }, 60000);
  afterAll(async () => {
    kv?.close();
    await cluster?.stop();
  });

  test('range and txn carry every field the store uses', async () => {
    const create = (key: string, value: string) =>
      kv.txn(
        {
          compare: [{ key: b(key), target: CompareTarget.Create, result: CompareResult.Equal, value: 0 }],
          success: [{ request_put: { key: b(key), value: b(value) } }],
          failure: [{ request_range: { key: b(key) } }],
        },
        soon(),
      );
    const a = await create('/t/a', 'a1');
    expect(a.succeeded).toBe(true);
    expect(a.header.revision).toBeGreaterThan(1);
    // Create again: the compare fails and the failure branch answers with the stored key.
    const again = await create('/t/a', 'other');
    expect(again.succeeded).toBe(false);
    const cur = again.responses[0]!.response_range!.kvs[0]!;
    expect([cur.key.toString(), cur.value.toString(), cur.create_revision, cur.mod_revision]).toEqual([
      '/t/a',
      'a1',
      a.header.revision,
      a.header.revision,
    ]);
    await create('/t/b', 'b1');
    await create('/t/c', 'c1');
    // Compare-and-swap on the mod revision, with the previous value back.
    const upd = await kv.txn(
      {
        compare: [
          { key: b('/t/a'), target: CompareTarget.Mod, result: CompareResult.Equal, value: a.header.revision },
          { key: b('/t/a'), target: CompareTarget.Version, result: CompareResult.Greater, value: 0 },
        ],
        success: [{ request_put: { key: b('/t/a'), value: new TextEncoder().encode('a2'), prev_kv: true } }],
        failure: [{ request_range: { key: b('/t/a') } }],
      },
      soon(),
    );
    expect(upd.succeeded).toBe(true);
    expect(upd.responses[0]!.response_put!.prev_kv!.value.toString()).toBe('a1');
    const stale = await kv.txn(
      {
        compare: [{ key: b('/t/a'), target: CompareTarget.Mod, result: CompareResult.Equal, value: a.header.revision }],
        success: [{ request_put: { key: b('/t/a'), value: b('a3') } }],
        failure: [{ request_range: { key: b('/t/a') } }],
      },
      soon(),
    );
    expect(stale.succeeded).toBe(false);
    expect(stale.responses[0]!.response_range!.kvs[0]!.mod_revision).toBe(upd.header.revision);
    // Ranges: limit and more, count, count only, an old revision, the newest key since a revision.
    const page = await kv.range({ key: b('/t/'), range_end: b('/t0'), limit: 2 }, soon());
    expect(page.kvs.map((x) => x.key.toString())).toEqual(['/t/a', '/t/b']);
    expect([page.more, page.count, page.header.revision]).toEqual([true, 3, upd.header.revision]);
    const counted = await kv.range({ key: b('/t/'), range_end: b('/t0'), count_only: true }, soon());
    expect([counted.kvs.length, counted.count]).toEqual([0, 3]);
    const old = await kv.range({ key: b('/t/a'), revision: a.header.revision }, soon());
    expect(old.kvs[0]!.value.toString()).toBe('a1');
    const newest = await kv.range(
      {
        key: b('/t/'),
        range_end: b('/t0'),
        min_mod_revision: a.header.revision + 1,
        sort_target: SortTarget.Mod,
        sort_order: SortOrder.Descend,
        keys_only: true,
        limit: 1,
      },
      soon(),
    );
    expect(newest.kvs.map((x) => [x.key.toString(), x.value.length, x.mod_revision])).toEqual([
      ['/t/a', 0, upd.header.revision],
    ]);
    expect(newest.count).toBe(3);
    // Delete with the previous value; a missing key's range is empty.
    const del = await kv.txn(
      {
        compare: [{ key: b('/t/b'), target: CompareTarget.Version, result: CompareResult.Greater, value: 0 }],
        success: [{ request_delete_range: { key: b('/t/b'), prev_kv: true } }],
        failure: [],
      },
      soon(),
    );
    expect(del.responses[0]!.response_delete_range!.deleted).toBe(1);
    expect(del.responses[0]!.response_delete_range!.prev_kvs[0]!.value.toString()).toBe('b1');
    expect((await kv.range({ key: b('/t/b') }, soon())).kvs).toEqual([]);
  });

  test('a lease ID (int64, usually above 2^53 as etcd makes them) is read and written exactly', async () => {
    // The npm client reads the key back: an independent decoder.
    const npm = new Etcd3({ hosts: cluster.endpoints });
    try {
      const grant = await kv.leaseGrant(60, soon());
      // A wrong ID would be refused ("requested lease not found").
      const put = await kv.txn(
        {
          compare: [],
          success: [{ request_put: { key: b('/lease/x'), value: b('x'), lease: grant.ID } }],
          failure: [],
        },
        soon(),
      );
      expect(put.succeeded).toBe(true);
      const read = await npm.kv.range({ key: b('/lease/x') });
      expect(read.kvs[0]!.lease).toBe(grant.ID.toString());
    } finally {
      npm.close();
    }
  });

  test('a list larger than gRPC default 4 MiB message limit is received whole', async () => {
    const value = Buffer.alloc(1024 * 1024, 'v');
    for (let i = 0; i < 6; i++) {
      await kv.txn({ compare: [], success: [{ request_put: { key: b(`/big/${i}`), value } }], failure: [] }, soon());
    }
    const all = await kv.range({ key: b('/big/'), range_end: b('/big0') }, soon());
    expect(all.kvs.map((x) => x.value.length)).toEqual(Array(6).fill(value.length));
  });

  test("etcd's refusals are answers: a future revision, a request too large", async () => {
    const future = await kv.range({ key: b('/t/a'), revision: 1e9 }, soon()).catch((e: unknown) => e);
    expect(String(future)).toMatch(/future revision/);
    expect(classifyEtcdError(future)).toBe('definite');
    // Above etcd's request limit (1.5 MiB), below gRPC's message limit (2 MiB), which the store never reaches either.
    const huge = Buffer.alloc(1.7 * 1024 * 1024);
    const tooLarge = await kv
      .txn({ compare: [], success: [{ request_put: { key: b('/huge'), value: huge } }], failure: [] }, soon())
      .catch((e: unknown) => e);
    expect(String(tooLarge)).toMatch(/request is too large/);
    expect(classifyEtcdError(tooLarge)).toBe('definite');
    expect(mapEtcdError(tooLarge, 'create', '/huge').code).toBe('TooLarge');
  });

  test('a hung member: the deadline ends the call as an unknown outcome (Timeout); the client works on after', async () => {
    await kv.range({ key: b('/t/a') }, soon()); // connected
    cluster.members[0]!.pause();
    try {
      const err = await kv.range({ key: b('/t/a') }, soon(500)).catch((e: unknown) => e);
      expect(classifyEtcdError(err)).toBe('ambiguous');
      expect(mapEtcdError(err, 'get').code).toBe('Timeout');
    } finally {
      cluster.members[0]!.resume();
    }
    const after = await eventually(() => kv.range({ key: b('/t/a') }, soon()));
    expect(after.kvs[0]!.value.toString()).toBe('a2');
  });

  test('a hung member under an open call: keepalive pings close the connection before the deadline', async () => {
    const pinged = new KvClient(cluster.endpoints[0]!, { keepaliveTimeMs: 200, keepaliveTimeoutMs: 500 });
    try {
      await pinged.range({ key: b('/t/a') }, soon()); // connected
      cluster.members[0]!.pause();
      try {
        const err = await pinged.range({ key: b('/t/a') }, soon(60000)).catch((e: unknown) => e);
        expect(String(err)).toMatch(/keepalive/);
        expect(classifyEtcdError(err)).toBe('ambiguous'); // sent: it may have been applied
      } finally {
        cluster.members[0]!.resume();
      }
      const after = await eventually(() => pinged.range({ key: b('/t/a') }, soon()));
      expect(after.kvs[0]!.value.toString()).toBe('a2');
    } finally {
      pinged.close();
    }
  });

  test('a member that takes the connection but never answers TLS: given up at the dial timeout, not sent', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    const client = new KvClient(`https://127.0.0.1:${port}`, { dialTimeoutMs: 300 });
    try {
      const err = await client.range({ key: b('/x') }, soon(60000)).catch((e: unknown) => e);
      expect(String(err)).toMatch(/No connection established.*300ms/);
      expect(classifyEtcdError(err)).toBe('notSent');
    } finally {
      client.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  test('nobody listening: not sent (Unreachable); a closed client refuses calls', async () => {
    const none = plainClient(`http://127.0.0.1:${await freePort()}`);
    try {
      const err = await none.range({ key: b('/x') }, soon(3000)).catch((e: unknown) => e);
      expect(classifyEtcdError(err)).toBe('notSent');
      expect(mapEtcdError(err, 'get').code).toBe('Unreachable');
    } finally {
      none.close();
    }
    const closed = plainClient(cluster.endpoints[0]!);
    closed.close();
    const err = await closed.range({ key: b('/x') }, soon()).catch((e: unknown) => e);
    expect(classifyEtcdError(err)).toBe('notSent');
  });
});

describe('etcd3 store on the KV client: 3 members', () => {
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcd({ members: 3 });
  }, 60000);
  afterAll(async () => {
    await cluster?.stop();
  });

  test('the member in use killed: reads and writes go on through another', async () => {
    const store = new Etcd3Store({ endpoints: cluster.endpoints, requestTimeoutMs: 10000, attemptTimeoutMs: 2000 });
    try {
      await store.create('/kill/a', b('a')); // on the first member
      await cluster.members[0]!.kill();
      const created = await store.create('/kill/b', b('b'));
      expect((await store.get('/kill/a'))?.value.toString()).toBe('a');
      const listed = await store.list('/kill/');
      expect(listed.kvs.map((kv) => kv.key)).toEqual(['/kill/a', '/kill/b']);
      expect(listed.revision).toBeGreaterThanOrEqual(created.modRevision);
    } finally {
      await store.close();
      await cluster.members[0]!.restart();
    }
  }, 60000);

  test('the member in use hung (SIGSTOP): calls leave it after an attempt timeout and succeed elsewhere', async () => {
    const [m0, m1, m2] = cluster.members;
    // Every member healthy again (the first was restarted by the test above).
    const probe = new Etcd3Store({ endpoints: [m0!.clientUrl], requestTimeoutMs: 3000 });
    try {
      await eventually(() => probe.check(3000));
    } finally {
      await probe.close();
    }
    const store = new Etcd3Store({
      endpoints: [m0!.clientUrl, m1!.clientUrl, m2!.clientUrl],
      requestTimeoutMs: 20000,
      attemptTimeoutMs: 1000,
    });
    try {
      const a = await store.create('/hang/a', b('a')); // connected to the first member
      m0!.pause();
      const upd = await store.update('/hang/a', b('a2'), a.modRevision);
      expect(upd.modRevision).toBeGreaterThan(a.modRevision);
      expect((await store.get('/hang/a'))?.value.toString()).toBe('a2');
    } finally {
      m0!.resume();
      await store.close();
    }
  }, 60000);
});

describe('etcd3 store on the KV client: mutual TLS', () => {
  let dir: string;
  let other: string;
  let cluster: EtcdCluster;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcd-kv-tls-'));
    other = mkdtempSync(join(tmpdir(), 'etcd-kv-tls-other-'));
    cluster = await startEtcd({ tls: generateTls(dir) });
    generateTls(other);
  }, 60000);
  afterAll(async () => {
    await cluster?.stop();
    for (const d of [dir, other]) if (d) rmSync(d, { recursive: true, force: true });
  });

  test('reads and writes over TLS; a server certificate from another CA is refused (Unreachable)', async () => {
    const files = (ca: string) => ({
      caFile: join(ca, 'ca.crt'),
      certFile: join(dir, 'client.crt'),
      keyFile: join(dir, 'client.key'),
    });
    const store = new Etcd3Store({ endpoints: cluster.endpoints, tls: files(dir) });
    try {
      const kv = await store.create('/tls/a', b('secret'));
      await store.update('/tls/a', b('secret2'), kv.modRevision);
      expect((await store.list('/tls/')).kvs.map((x) => x.value.toString())).toEqual(['secret2']);
      await store.delete('/tls/a');
    } finally {
      await store.close();
    }
    const wrongCa = new Etcd3Store({ endpoints: cluster.endpoints, tls: files(other), requestTimeoutMs: 2000 });
    try {
      const err = await wrongCa.get('/tls/a').catch((e: unknown) => e);
      expect(isStorageError(err) && err.code).toBe('Unreachable');
    } finally {
      await wrongCa.close();
    }
  }, 30000);
});
