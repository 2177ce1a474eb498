/**
 * etcd's Watch stream on the store's own client (`KvClient.watch`) against real etcd members: events in order with
 * their previous values from a start revision (several to a message, and a value spanning many HTTP/2 frames),
 * progress notifications, a compacted start revision, the unary calls beside it (lease grant, compaction, status), and
 * closed streams leaving none open on either side (etcd's own watch stream gauge). Then the store's watches on it:
 * aborted and closed watches end their streams, and a watch whose member is killed or hangs resumes on another member
 * with no gap and no duplicate.
 */
import { request } from 'node:http';

import { type StoreEvent } from '../interface';
import { startEtcd, type EtcdCluster } from '../testing/etcd';

import { classifyEtcdError, Etcd3Store } from './etcd3-store';
import { CompareResult, CompareTarget, EventType, KvClient, type RawWatchResponse } from './kv-client';

const b = (s: string): Buffer => Buffer.from(s);
const soon = (ms = 10000): { deadline: number } => ({ deadline: Date.now() + ms });

/** Waits (up to `ms`, 60 s by default) until `check` returns true. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** etcd's gauge of open watch streams (a member's `/metrics`). */
async function watchStreams(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(`${url}/metrics`, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        const m = /^etcd_debugging_mvcc_watch_stream_total (\d+)/m.exec(body);
        if (m) resolve(Number(m[1]));
        else reject(new Error('no watch stream gauge in the metrics'));
      });
    })
      .on('error', reject)
      .end();
  });
}

/** A watch on `kv` whose responses are collected, and its end. */
function collect(kv: KvClient, req: Parameters<KvClient['watch']>[0]) {
  const responses: RawWatchResponse[] = [];
  let ended: Error | undefined;
  const stream = kv.watch(req, { response: (r) => responses.push(r), end: (e) => (ended = e) });
  return {
    responses,
    stream,
    get ended() {
      return ended;
    },
    events: () => responses.flatMap((r) => r.events),
  };
}

async function put(kv: KvClient, key: string, value: Buffer | string): Promise<number> {
  const v = typeof value === 'string' ? b(value) : value;
  const res = await kv.txn({ compare: [], success: [{ request_put: { key: b(key), value: v } }], failure: [] }, soon());
  return res.header.revision;
}

describe('etcd watch stream: one member', () => {
  let cluster: EtcdCluster;
  let url: string;
  let kv: KvClient;
  beforeAll(async () => {
    cluster = await startEtcd();
    url = cluster.endpoints[0]!;
    kv = new KvClient(url);
  }, 60000);
  afterAll(async () => {
    kv?.close();
    await cluster?.stop();
  });

  test('events in order with previous values, from a start revision, several to a message and large ones', async () => {
    const r1 = await put(kv, '/w/a', 'a1');
    const r2 = await put(kv, '/w/a', 'a2');
    const r3 = await put(kv, '/w/b', 'b1');
    const del = await kv.txn(
      { compare: [], success: [{ request_delete_range: { key: b('/w/a'), prev_kv: true } }], failure: [] },
      soon(),
    );
    const r4 = del.header.revision;
    await put(kv, '/x/other', 'not watched');
    const w = collect(kv, { key: b('/w/'), range_end: b('/w0'), start_revision: r1, prev_kv: true });
    await until(() => w.events().length >= 4, 'the 4 past events');
    expect(w.responses[0]!.created).toBe(true);
    const seen = (): string[][] =>
      w
        .events()
        .map((e) => [
          e.type === EventType.Delete ? 'delete' : 'put',
          e.kv.key.toString(),
          e.kv.value.toString(),
          `${e.kv.create_revision}/${e.kv.mod_revision}`,
          e.prev_kv ? `${e.prev_kv.value.toString()}@${e.prev_kv.mod_revision}` : '-',
        ]);
    expect(seen()).toEqual([
      ['put', '/w/a', 'a1', `${r1}/${r1}`, '-'],
      ['put', '/w/a', 'a2', `${r1}/${r2}`, `a1@${r1}`],
      ['put', '/w/b', 'b1', `${r3}/${r3}`, '-'],
      ['delete', '/w/a', '', `0/${r4}`, `a2@${r2}`],
    ]);
    // Live events: three puts in one transaction (one message, three events), then a value of 1 MiB (a message
    // spanning many HTTP/2 frames).
    const three = await kv.txn(
      {
        compare: [],
        success: ['c', 'd', 'e'].map((k) => ({ request_put: { key: b(`/w/${k}`), value: b(k) } })),
        failure: [],
      },
      soon(),
    );
    const big = Buffer.alloc(1024 * 1024, 'v');
    const r6 = await put(kv, '/w/big', big);
    await until(() => w.events().length >= 8, 'the live events');
    const live = w.events().slice(4);
    expect(live.map((e) => [e.kv.key.toString(), e.kv.mod_revision])).toEqual([
      ['/w/c', three.header.revision],
      ['/w/d', three.header.revision],
      ['/w/e', three.header.revision],
      ['/w/big', r6],
    ]);
    expect(live[3]!.kv.value.equals(big)).toBe(true);
    expect(w.responses.every((r) => r.watch_id === w.responses[0]!.watch_id && !r.canceled)).toBe(true);
    w.stream.close();
    expect(w.ended).toBeUndefined();
  }, 60000);

  test('progress notifications carry the revision reached', async () => {
    const rev = await put(kv, '/p/a', 'a');
    const w = collect(kv, { key: b('/p/'), range_end: b('/p0'), start_revision: rev + 1, progress_notify: true });
    try {
      // etcd in tests notifies every 500 ms.
      await until(() => w.responses.some((r) => !r.created && r.events.length === 0), 'a progress notification');
      const progress = w.responses.find((r) => !r.created && r.events.length === 0)!;
      expect(progress.header.revision).toBeGreaterThanOrEqual(rev);
    } finally {
      w.stream.close();
    }
  }, 60000);

  test('a compacted start revision: the watch is canceled with the compact revision; leases, status', async () => {
    const first = await put(kv, '/c/a', '1');
    const second = await put(kv, '/c/a', '2');
    await kv.compact(second, soon());
    const again = await kv.compact(second, soon()).catch((e: unknown) => e);
    expect(String(again)).toMatch(/required revision has been compacted/);
    const w = collect(kv, { key: b('/c/'), range_end: b('/c0'), start_revision: first, prev_kv: true });
    try {
      await until(() => w.responses.some((r) => r.canceled), 'the cancel');
      const cancel = w.responses.find((r) => r.canceled)!;
      expect(cancel.compact_revision).toBe(second);
      expect(w.events()).toEqual([]);
    } finally {
      w.stream.close();
    }
    const grant = await kv.leaseGrant(30, soon());
    expect(grant.ID).toBeGreaterThan(0n);
    expect(grant.TTL).toBe(30);
    const leased = await kv.txn(
      {
        compare: [{ key: b('/c/leased'), target: CompareTarget.Create, result: CompareResult.Equal, value: 0 }],
        success: [{ request_put: { key: b('/c/leased'), value: b('x'), lease: grant.ID } }],
        failure: [],
      },
      soon(),
    );
    expect(leased.succeeded).toBe(true);
    const status = await kv.status(soon());
    expect(status.dbSize).toBeGreaterThan(0);
    expect(status.header.revision).toBeGreaterThanOrEqual(leased.header.revision);
  }, 60000);

  test('closed streams leave none open, here or on etcd', async () => {
    // The earlier tests' streams are closed by now (on etcd, soon after).
    const before = 0;
    await until(async () => (await watchStreams(url)) === before, 'no stream open');
    const ws = Array.from({ length: 5 }, (_, i) => collect(kv, { key: b(`/s/${i}`) }));
    await until(() => ws.every((w) => w.responses.some((r) => r.created)), 'the watches created');
    expect(await watchStreams(url)).toBe(before + 5);
    expect(kv.openCalls).toBe(5);
    for (const w of ws) w.stream.close();
    await until(async () => kv.openCalls === 0 && (await watchStreams(url)) === before, 'the streams closed');
    expect(ws.map((w) => w.ended)).toEqual(Array(5).fill(undefined));
  }, 60000);

  test("the store's aborted watches and a closed store's end their streams on etcd", async () => {
    const before = 0;
    await until(async () => (await watchStreams(url)) === before, 'no stream open');
    const store = new Etcd3Store({ endpoints: [url] });
    const rev = await store.currentRevision();
    const acs = [0, 1, 2].map(() => new AbortController());
    const got: StoreEvent[][] = [[], [], []];
    const running = acs.map(async (ac, i) => {
      for await (const ev of store.watch(`/a${i}/`, rev, ac.signal)) got[i]!.push(ev);
    });
    await store.create('/a0/x', b('x'));
    await store.create('/a1/x', b('x'));
    await store.create('/a2/x', b('x'));
    await until(() => got.every((g) => g.length === 1), 'an event on each watch');
    expect(await watchStreams(url)).toBe(before + 3);
    acs[0]!.abort();
    await running[0];
    await until(async () => (await watchStreams(url)) === before + 2, 'the aborted watch closed');
    await store.close();
    await Promise.all(running);
    await until(async () => (await watchStreams(url)) === before, 'the store closed');
  }, 60000);

  test('a hung member under an open watch: keepalive pings end the stream as a failed call', async () => {
    const pinged = new KvClient(url, { keepaliveTimeMs: 200, keepaliveTimeoutMs: 500 });
    try {
      const w = collect(pinged, { key: b('/h/') });
      await until(() => w.responses.some((r) => r.created), 'the watch created');
      cluster.members[0]!.pause();
      try {
        await until(() => w.ended !== undefined, 'the stream to end');
      } finally {
        cluster.members[0]!.resume();
      }
      expect(String(w.ended)).toMatch(/keepalive/);
      expect(classifyEtcdError(w.ended)).toBe('ambiguous');
      expect(pinged.openCalls).toBe(0);
    } finally {
      pinged.close();
    }
  }, 60000);
});

describe('etcd3 store watches: 3 members', () => {
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcd({ members: 3 });
  }, 60000);
  afterAll(async () => {
    await cluster?.stop();
  });

  /**
   * Watches `prefix` on a store whose first endpoint is `watched`, writes `n` keys through a store on the others,
   * applies `fault` to `watched` after the first, and expects every key once, in order.
   */
  async function watchThrough(prefix: string, order: number[], fault: () => Promise<void> | void): Promise<void> {
    const urls = order.map((i) => cluster.members[i]!.clientUrl);
    const watcher = new Etcd3Store({ endpoints: urls, keepaliveTimeMs: 200, keepaliveTimeoutMs: 500 });
    const writer = new Etcd3Store({ endpoints: urls.slice(1), requestTimeoutMs: 20000, attemptTimeoutMs: 1000 });
    const ac = new AbortController();
    try {
      const start = await writer.currentRevision();
      const events: StoreEvent[] = [];
      const watching = (async () => {
        for await (const ev of watcher.watch(prefix, start, ac.signal)) events.push(ev);
      })();
      const written: bigint[] = [(await writer.create(`${prefix}0`, b('0'))).modRevision];
      await until(() => events.length === 1, 'the first event');
      await fault();
      for (let i = 1; i < 5; i++) written.push((await writer.create(`${prefix}${i}`, b(String(i)))).modRevision);
      await until(() => events.length >= 5, 'the events after the fault');
      ac.abort();
      await watching;
      expect(events.map((e) => (e.type === 'put' ? [e.kv.key, e.revision] : e.type))).toEqual(
        written.map((rev, i) => [`${prefix}${i}`, rev]),
      );
    } finally {
      ac.abort();
      await watcher.close();
      await writer.close();
    }
  }

  test('the member under a watch killed: the watch resumes on another, no gap, no duplicate', async () => {
    try {
      await watchThrough('/killed/', [0, 1, 2], () => cluster.members[0]!.kill());
    } finally {
      await cluster.members[0]!.restart();
    }
  }, 60000);

  test('the member under a watch hung: keepalive finds it, the watch resumes on another', async () => {
    const m2 = cluster.members[2]!;
    try {
      await watchThrough('/hung/', [2, 0, 1], () => m2.pause());
    } finally {
      m2.resume();
    }
  }, 60000);
});
