/**
 * Memory under watch load (issue 17): an event delivered to a watcher must not stay reachable once it is written,
 * however long the watch lives; a watcher that does not read has a bounded backlog and is closed; watches opened and
 * closed leave nothing behind. The server runs in this process (real HTTPS watches), and the heap is read after a
 * forced full GC (`gc` exposed through V8's flags, as Jest does not expose it).
 */
import { Agent, request as httpsRequest } from 'node:https';
import { type ClientRequest, type IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { type Cacher } from '../../storage/cacher/cacher';
import { startTestServer, type TestServer } from '../../testing/test-server';
import { WATCH_LIMITS, watchStats } from './watch';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The heap in use after full collections (several: weak maps and finalizers need more than one pass). */
async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

const MiB = 1024 * 1024;
const NS = 'watch-memory';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps`;

function configMap(name: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { payload: 'x'.repeat(512) } };
}

/** A watch that counts the events it reads (newline-delimited JSON) without keeping them. */
interface CountingWatch {
  events: number;
  ended: Promise<void>;
  res: IncomingMessage;
  req: ClientRequest;
  close(): void;
}

function openWatch(t: TestServer, agent: Agent, query: string, o: { read?: boolean } = {}): Promise<CountingWatch> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${t.url}${CM_PATH}?watch=1&${query}`, { agent }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`watch: ${res.statusCode}`));
        res.resume();
        return;
      }
      const w: CountingWatch = {
        events: 0,
        res,
        req,
        ended: new Promise((r) => {
          res.once('close', () => r());
          res.once('end', () => r());
        }),
        close: () => req.destroy(),
      };
      res.on('error', () => {});
      if (o.read !== false) {
        res.on('data', (c: Buffer) => {
          for (let i = c.indexOf(10); i >= 0; i = c.indexOf(10, i + 1)) w.events++;
        });
      } else {
        res.pause();
      }
      resolve(w);
    });
    req.on('error', (e) => reject(e));
    req.end();
  });
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `n` writes (a multiple of 3) by `writers` concurrent clients: each creates, patches and deletes a 512-byte ConfigMap. */
async function write(t: TestServer, n: number, writers: number, tag: string): Promise<void> {
  let next = 0;
  const check = (r: { status: number; text: string }, what: string): void => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 200)}`);
  };
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (let i = next++; i < n / 3; i = next++) {
        const name = `${tag}-${i}`;
        check(await t.request('POST', CM_PATH, { body: configMap(name) }), `create ${name}`);
        const patch = {
          body: { data: { more: String(i) } },
          headers: { 'content-type': 'application/merge-patch+json' },
        };
        check(await t.request('PATCH', `${CM_PATH}/${name}`, patch), `patch ${name}`);
        check(await t.request('DELETE', `${CM_PATH}/${name}`), `delete ${name}`);
      }
    }),
  );
}

describe('watch memory', () => {
  let t: TestServer;
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  /** The watches of the server's own clients, there before any of the test's. */
  let base = { watchers: 0, open: 0 };

  /** Client watches the watch caches feed (the server's own count, not the client's). */
  const cacheWatchers = (): number =>
    (t.server as unknown as { caches: Cacher[] }).caches.reduce((n, c) => n + c.watcherCount, 0);

  /** No watch of the test's is left (the server's own clients, its informers, watch too: theirs stay). */
  const gone = (): boolean => cacheWatchers() === base.watchers && watchStats.open === base.open;

  beforeAll(async () => {
    t = await startTestServer();
    (agent.options as { ca?: string }).ca = t.ca;
    const r = await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
    expect(r.status).toBe(201);
    base = { watchers: cacheWatchers(), open: watchStats.open };
  });
  afterAll(async () => {
    agent.destroy();
    await t?.stop();
  });

  it('keeps nothing of the events it delivered to long-lived watchers', async () => {
    const WATCHERS = 30;
    const EVENTS = 600; // a multiple of 3: every ConfigMap is created, patched and deleted
    const rv = (await t.request('GET', CM_PATH)).json.metadata.resourceVersion as string;
    const watches = await Promise.all(
      Array.from({ length: WATCHERS }, () => openWatch(t, agent, `resourceVersion=${rv}&timeoutSeconds=600`)),
    );
    try {
      // A first round warms everything up (code, caches, the watch cache's ring), then the measured round.
      await write(t, 210, 8, 'warm');
      await waitFor('the warm-up events', () => watches.every((w) => w.events === 210));
      const before = await heapAfterGc();
      await write(t, EVENTS, 8, 'load');
      await waitFor('every event at every watcher', () => watches.every((w) => w.events === 210 + EVENTS));
      const after = await heapAfterGc();
      const growth = after - before;
      // The watch cache keeps the recent events themselves (its ring: about 3 KiB of heap each here), once for
      // all watchers; a delivery must leave nothing. The old watch handler kept ~460 bytes per delivery for as long
      // as the watch lived (30 × 600 deliveries: 8 MiB, i.e. 13 KiB per event).
      process.stderr.write(
        `heap before ${(before / MiB).toFixed(1)} MiB, after ${(after / MiB).toFixed(1)} MiB, ` +
          `growth ${(growth / MiB).toFixed(1)} MiB for ${EVENTS} events × ${WATCHERS} watchers\n`,
      );
      expect(growth).toBeLessThan(EVENTS * 6 * 1024);
    } finally {
      for (const w of watches) w.close();
    }
  }, 120_000);

  it('closes a watcher that does not read, with a bounded backlog, and keeps serving the others', async () => {
    const limits = { ...WATCH_LIMITS };
    WATCH_LIMITS.STALL_MS = 2000;
    WATCH_LIMITS.END_GRACE_MS = 1000;
    const slowBefore = watchStats.tooSlow;
    await waitFor('earlier watches to be gone', gone);
    const rv = (await t.request('GET', CM_PATH)).json.metadata.resourceVersion as string;
    const reader = await openWatch(t, agent, `resourceVersion=${rv}&timeoutSeconds=600`);
    const sleeper = await openWatch(t, agent, `resourceVersion=${rv}&timeoutSeconds=600`, { read: false });
    try {
      // 100 events of 200 KB: 20 MB, more than the socket buffers of a client that does not read can take.
      const big = { payload: 'y'.repeat(200 * 1024) };
      const name = 'big';
      const created = await t.request('POST', CM_PATH, { body: { ...configMap(name), data: big } });
      expect(created.status).toBe(201);
      for (let i = 1; i < 100; i++) {
        const r = await t.request('PATCH', `${CM_PATH}/${name}`, {
          body: { data: { n: String(i) } },
          headers: { 'content-type': 'application/merge-patch+json' },
        });
        expect(r.status).toBe(200);
      }
      await waitFor('the reader to see every event', () => reader.events === 100, 60_000);
      await waitFor('the server to close the watcher that does not read', () => watchStats.tooSlow > slowBefore);
      await waitFor('the watch cache to forget it', () => cacheWatchers() === base.watchers + 1);
      expect(watchStats.open).toBe(base.open + 1);
      // The client, reading at last, finds its stream ended (or cut) short of the 100 events.
      sleeper.res.on('data', (c: Buffer) => {
        for (let i = c.indexOf(10); i >= 0; i = c.indexOf(10, i + 1)) sleeper.events++;
      });
      sleeper.res.resume();
      await sleeper.ended;
      expect(sleeper.events).toBeLessThan(100);
      // The reader was not disturbed: its stream is open and still delivers.
      const more = await t.request('PATCH', `${CM_PATH}/${name}`, {
        body: { data: { n: 'last' } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect(more.status).toBe(200);
      await waitFor('the reader to see the next event', () => reader.events === 101);
      expect(await t.request('DELETE', `${CM_PATH}/${name}`)).toMatchObject({ status: 200 });
    } finally {
      Object.assign(WATCH_LIMITS, limits);
      reader.close();
      sleeper.close();
    }
  }, 120_000);

  it('leaves nothing behind after many short watches', async () => {
    await waitFor('earlier watches to be gone', gone);
    const rv = (await t.request('GET', CM_PATH)).json.metadata.resourceVersion as string;
    const round = async (): Promise<void> => {
      // Half closed by the client after the events, half ended by the server (timeoutSeconds).
      const ws = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          openWatch(t, agent, `resourceVersion=${rv}${i % 2 ? '&timeoutSeconds=1' : '&timeoutSeconds=600'}`),
        ),
      );
      await write(t, 3, 1, `short-${Math.random().toString(36).slice(2, 8)}`);
      await waitFor('the events', () => ws.every((w, i) => i % 2 === 1 || w.events >= 3));
      for (const [i, w] of ws.entries()) if (i % 2 === 0) w.close();
      await Promise.all(ws.map((w) => w.ended));
    };
    await round();
    await waitFor('the first round to be gone', gone);
    const before = await heapAfterGc();
    for (let i = 0; i < 10; i++) await round();
    await waitFor('every watch to be gone', gone);
    const after = await heapAfterGc();
    process.stderr.write(
      `short watches: heap before ${(before / MiB).toFixed(1)} MiB, after ${(after / MiB).toFixed(1)} MiB\n`,
    );
    // 200 watches; the 30 events written meanwhile stay in the watch cache's ring (about 3 KiB each).
    expect(after - before).toBeLessThan(2 * MiB);
  }, 120_000);
});
