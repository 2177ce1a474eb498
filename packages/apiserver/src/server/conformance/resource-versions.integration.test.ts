/**
 * Document 1, "Resource version parameters" and "Chunked lists": every cell of the get, list and watch tables (the
 * Invalid cells included), continue tokens, 410 for what compaction removed, 504 for a version from the future,
 * synthetic ADDED events and BOOKMARKs. Runs on both stores.
 */
import {
  configMap,
  describeEvents,
  freshNamespace,
  itemNames,
  mustCreate,
  openWatch,
  STORES,
  useServer,
  type WatchReader,
} from './harness';

describe.each(STORES)('resource versions on %s', (store) => {
  // Secrets without a watch cache (--watch-cache-sizes secrets#0): their watches go to the store itself. The watch
  // cache keeps the events of its window (at least 75 s, as Kubernetes does) even after compaction, so a 410 on a
  // watch of a cached resource needs a revision older than the cache.
  const server = useServer(store, (c) => {
    c.watchCache.sizes = { ...c.watchCache.sizes, secrets: 0 };
  });

  // The history every case reads: a, b, c created (rvC is the state after c), then a updated, b deleted, d created.
  let ns: string;
  let cms: string;
  let rvC: string;
  let rvD: string;
  let bookmarks: WatchReader | undefined;
  beforeAll(async () => {
    const t = server();
    ns = await freshNamespace(t, 'rv');
    cms = `/api/v1/namespaces/${ns}/configmaps`;
    for (const n of ['a', 'b']) await mustCreate(t, cms, configMap(n, { v: '1' }));
    rvC = (await mustCreate(t, cms, configMap('c', { v: '1' }))).metadata.resourceVersion;
    const a = (await t.request('GET', `${cms}/a`)).json;
    expect((await t.request('PUT', `${cms}/a`, { body: { ...a, data: { v: '2' } } })).status).toBe(200);
    expect((await t.request('DELETE', `${cms}/b`)).status).toBe(200);
    rvD = (await mustCreate(t, cms, configMap('d', { v: '1' }))).metadata.resourceVersion;
    // Opened now and read by the BOOKMARK case near the end: bookmarks follow the store's progress notifications
    // (every few seconds), which then come while the other cases run instead of being waited for.
    bookmarks = await openWatch(t, `${cms}?watch=1&allowWatchBookmarks=true&resourceVersion=${rvD}`);
  });
  afterAll(() => bookmarks?.close());

  const list = async (query: string) => {
    const r = await server().request('GET', `${cms}?${query}`);
    expect([r.status, r.json?.kind]).toEqual([200, 'ConfigMapList']);
    return r.json;
  };
  const atLeast = (rv: string, than: string) => expect(BigInt(rv) >= BigInt(than)).toBe(true);
  const expectBadRequest = async (path: string, message: string) => {
    const r = await server().request('GET', path);
    expect([r.status, r.json?.kind, r.json?.reason]).toEqual([400, 'Status', 'BadRequest']);
    expect(r.json.message).toContain(message);
  };

  describe('get', () => {
    it('unset: Most Recent', async () => {
      const r = await server().request('GET', `${cms}/a`);
      expect([r.status, r.json.data]).toEqual([200, { v: '2' }]);
    });

    it('0: Any', async () => {
      const r = await server().request('GET', `${cms}/a?resourceVersion=0`);
      expect([r.status, r.json.metadata.name]).toEqual([200, 'a']);
    });

    it('other value: Not older than', async () => {
      const r = await server().request('GET', `${cms}/d?resourceVersion=${rvD}`);
      expect([r.status, r.json.metadata.resourceVersion]).toEqual([200, rvD]);
      // a changed after rvC: a read not older than rvC may be served from a newer state, never an older one.
      const a = await server().request('GET', `${cms}/a?resourceVersion=${rvC}`);
      expect(a.status).toBe(200);
      atLeast(a.json.metadata.resourceVersion, '1');
    });

    it('answers 400 for a resource version that is not one', async () => {
      await expectBadRequest(`${cms}/a?resourceVersion=abc`, 'invalid resource version');
    });
  });

  describe('list, resourceVersionMatch unset', () => {
    it('limit unset: unset is Most Recent, 0 is Any, another value is Not older than', async () => {
      const recent = await list('');
      expect(itemNames(recent)).toEqual(['a', 'c', 'd']);
      atLeast(recent.metadata.resourceVersion, rvD);
      const any = await list('resourceVersion=0');
      expect(itemNames(any).every((n) => ['a', 'b', 'c', 'd'].includes(n))).toBe(true);
      const notOlder = await list(`resourceVersion=${rvC}`);
      atLeast(notOlder.metadata.resourceVersion, rvC);
      expect(itemNames(notOlder)).toContain('c');
    });

    it('limit=n, continue unset: unset is Most Recent, 0 is Any, another value is Exact', async () => {
      const recent = await list('limit=10');
      expect(itemNames(recent)).toEqual(['a', 'c', 'd']);
      expect(recent.metadata.continue ?? '').toBe('');
      atLeast(recent.metadata.resourceVersion, rvD);
      const any = await list('limit=10&resourceVersion=0');
      expect(itemNames(any).every((n) => ['a', 'b', 'c', 'd'].includes(n))).toBe(true);
      const exact = await list(`limit=10&resourceVersion=${rvC}`);
      expect(exact.metadata.resourceVersion).toBe(rvC);
      expect(itemNames(exact)).toEqual(['a', 'b', 'c']);
      expect(exact.items[0]?.data).toEqual({ v: '1' });
    });

    it('limit=n, continue=token: the token decides (Continue Token, Exact); 0 is treated as unset', async () => {
      const first = await list('limit=1');
      expect(itemNames(first)).toEqual(['a']);
      const rv = first.metadata.resourceVersion;
      const token = encodeURIComponent(first.metadata.continue ?? '');
      expect(token).not.toBe('');
      const second = await list(`limit=1&continue=${token}`);
      expect([itemNames(second), second.metadata.resourceVersion]).toEqual([['c'], rv]);
      const withZero = await list(`limit=1&continue=${token}&resourceVersion=0`);
      expect([itemNames(withZero), withZero.metadata.resourceVersion]).toEqual([['c'], rv]);
      await expectBadRequest(
        `${cms}?limit=1&continue=${token}&resourceVersion=${rvC}`,
        'specifying resource version is not allowed when using continue',
      );
    });

    it('answers 400 for a continue token that is not one', async () => {
      await expectBadRequest(`${cms}?limit=1&continue=not-a-token`, 'continue');
    });
  });

  describe('list, resourceVersionMatch=Exact', () => {
    it.each([
      ['', 'resourceVersionMatch is forbidden unless resourceVersion is provided'],
      ['&limit=2', 'resourceVersionMatch is forbidden unless resourceVersion is provided'],
      ['&resourceVersion=0', 'resourceVersionMatch "Exact" is forbidden for resourceVersion "0"'],
      ['&resourceVersion=0&limit=2', 'resourceVersionMatch "Exact" is forbidden for resourceVersion "0"'],
    ])('Invalid: %s', async (query, message) => {
      await expectBadRequest(`${cms}?resourceVersionMatch=Exact${query}`, message);
    });

    it('another value, limit unset: Exact', async () => {
      const exact = await list(`resourceVersionMatch=Exact&resourceVersion=${rvC}`);
      expect([exact.metadata.resourceVersion, itemNames(exact)]).toEqual([rvC, ['a', 'b', 'c']]);
      expect(exact.items[0]?.data).toEqual({ v: '1' });
    });

    it('another value, limit=n: Exact, and every page at that version', async () => {
      const first = await list(`resourceVersionMatch=Exact&resourceVersion=${rvC}&limit=2`);
      expect([first.metadata.resourceVersion, itemNames(first)]).toEqual([rvC, ['a', 'b']]);
      const next = await list(`limit=2&continue=${encodeURIComponent(first.metadata.continue ?? '')}`);
      expect([next.metadata.resourceVersion, itemNames(next), next.metadata.continue ?? '']).toEqual([rvC, ['c'], '']);
    });
  });

  describe('list, resourceVersionMatch=NotOlderThan', () => {
    it.each([[''], ['&limit=2']])('Invalid with resourceVersion unset%s', async (query) => {
      await expectBadRequest(
        `${cms}?resourceVersionMatch=NotOlderThan${query}`,
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
      );
    });

    it.each([[''], ['&limit=10']])('0 is Any, another value Not older than%s', async (query) => {
      const any = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=0${query}`);
      expect(itemNames(any).every((n) => ['a', 'b', 'c', 'd'].includes(n))).toBe(true);
      const notOlder = await list(`resourceVersionMatch=NotOlderThan&resourceVersion=${rvC}${query}`);
      atLeast(notOlder.metadata.resourceVersion, rvC);
      expect(itemNames(notOlder)).toContain('c');
    });
  });

  describe('list, the rules around the table', () => {
    it.each([
      ['resourceVersion=1&resourceVersionMatch=Sometime', 'resourceVersionMatch: Unsupported value: "Sometime"'],
      ['limit=1&continue=x&resourceVersionMatch=Exact&resourceVersion=1', 'resourceVersionMatch is forbidden'],
      ['resourceVersion=-1', 'invalid resource version'],
      ['limit=x', 'invalid value for limit'],
    ])('answers 400 for %s', async (query, message) => {
      await expectBadRequest(`${cms}?${query}`, message);
    });
  });

  describe('chunked lists', () => {
    it('keep the first page revision on every page, whatever is written in between', async () => {
      const t = server();
      const pns = await freshNamespace(t, 'pages');
      const path = `/api/v1/namespaces/${pns}/configmaps`;
      for (let i = 0; i < 5; i++) await mustCreate(t, path, configMap(`p${i}`));
      const first = (await t.request('GET', `${path}?limit=2`)).json;
      const rv = first.metadata.resourceVersion as string;
      await mustCreate(t, path, configMap('p-late'));
      expect((await t.request('DELETE', `${path}/p4`)).status).toBe(200);
      const names = itemNames(first);
      let token = first.metadata.continue as string;
      while (token) {
        const page = await t.request('GET', `${path}?limit=2&continue=${encodeURIComponent(token)}`);
        expect([page.status, page.json.metadata.resourceVersion]).toEqual([200, rv]);
        names.push(...itemNames(page.json));
        token = page.json.metadata.continue;
      }
      expect(names).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
      // A new list without continue sees the changes.
      expect(itemNames((await t.request('GET', path)).json)).toEqual(['p-late', 'p0', 'p1', 'p2', 'p3']);
    });

    it('pages across namespaces and cluster-scoped collections', async () => {
      const t = server();
      const all = (await t.request('GET', '/api/v1/namespaces')).json;
      const first = (await t.request('GET', '/api/v1/namespaces?limit=1')).json;
      const names = itemNames(first);
      let token = first.metadata.continue as string;
      while (token) {
        const page = (await t.request('GET', `/api/v1/namespaces?limit=1&continue=${encodeURIComponent(token)}`)).json;
        expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
        names.push(...itemNames(page));
        token = page.metadata.continue;
      }
      expect(names).toEqual(itemNames(all));
    });
  });

  describe('watch', () => {
    it('unset: Get State and Start at Most Recent (synthetic ADDED, then changes)', async () => {
      const t = server();
      const w = await openWatch(t, `${cms}?watch=1`);
      try {
        expect(w.status).toBe(200);
        expect(describeEvents(await w.waitFor(3))).toEqual(['ADDED a', 'ADDED c', 'ADDED d']);
        expect(w.events[0]?.object.data).toEqual({ v: '2' });
        await mustCreate(t, cms, configMap('w-unset'));
        await w.waitFor(4);
        expect(describeEvents(w.events)).toEqual(['ADDED a', 'ADDED c', 'ADDED d', 'ADDED w-unset']);
      } finally {
        w.close();
        await t.request('DELETE', `${cms}/w-unset`);
      }
    });

    it('0: Get State and Start at Any (synthetic ADDED)', async () => {
      const w = await openWatch(server(), `${cms}?watch=1&resourceVersion=0`);
      try {
        expect(w.status).toBe(200);
        const names = describeEvents(await w.waitFor(3));
        expect(names.every((n) => n.startsWith('ADDED '))).toBe(true);
      } finally {
        w.close();
      }
    });

    it('another value: Start at Exact (the changes after it, no synthetic ADDED)', async () => {
      const w = await openWatch(server(), `${cms}?watch=1&resourceVersion=${rvC}`);
      try {
        expect(w.status).toBe(200);
        const events = await w.waitFor(3);
        expect(describeEvents(events)).toEqual(['MODIFIED a', 'DELETED b', 'ADDED d']);
        expect(events[2]?.object.metadata.resourceVersion).toBe(rvD);
      } finally {
        w.close();
      }
    });

    it('answers 400 for resourceVersionMatch and for a resource version that is not one', async () => {
      await expectBadRequest(`${cms}?watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan`, 'watch');
      await expectBadRequest(`${cms}?watch=1&resourceVersion=x`, 'invalid resource version');
    });
  });

  describe('bookmarks', () => {
    it('are sent with allowWatchBookmarks: an object of the kind with only its resourceVersion', async () => {
      const bookmark = await bookmarks!.waitUntil((e) => e.type === 'BOOKMARK', 15_000);
      expect(bookmark.object).toEqual({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { resourceVersion: expect.any(String) },
      });
      atLeast(bookmark.object.metadata.resourceVersion, rvD);
      // The changes made since rvD came as events, each before any bookmark that covers it.
      const firstBookmark = bookmarks!.events.findIndex((e) => e.type === 'BOOKMARK');
      for (const e of bookmarks!.events.slice(0, firstBookmark)) {
        expect(
          BigInt(e.object.metadata.resourceVersion as string) <=
            BigInt(bookmark.object.metadata.resourceVersion as string),
        ).toBe(true);
      }
    }, 20_000);
  });

  describe('versions from the future', () => {
    it('answer get and list with 504 Timeout and Retry-After: 1 after a short wait', async () => {
      const t = server();
      const future = (BigInt(rvD) + 1_000_000n).toString();
      const [get, lst] = await Promise.all([
        t.request('GET', `${cms}/a?resourceVersion=${future}`),
        t.request('GET', `${cms}?resourceVersion=${future}`),
      ]);
      for (const r of [get, lst]) {
        expect([r.status, r.json?.kind, r.json?.reason]).toEqual([504, 'Status', 'Timeout']);
        expect(r.headers['retry-after']).toBe('1');
        expect(r.json.message).toMatch(/Too large resource version/i);
      }
    }, 20_000);
  });

  // Compaction removes history for the whole store: these cases come last.
  describe('after compaction', () => {
    let oldRv: string;
    let token: string;
    let secretRv: string;
    beforeAll(async () => {
      const t = server();
      const first = (await t.request('GET', `${cms}?limit=1`)).json;
      token = first.metadata.continue;
      oldRv = first.metadata.resourceVersion;
      secretRv = (
        await mustCreate(t, `/api/v1/namespaces/${ns}/secrets`, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 's' },
          stringData: { k: 'v' },
        })
      ).metadata.resourceVersion;
      // Two writes after: compaction at a revision keeps that revision, so a watch from secretRv (which starts at the
      // next revision) would still be served.
      await mustCreate(t, cms, configMap('after-compaction'));
      await mustCreate(t, cms, configMap('after-compaction-2'));
      await t.server.compactNow();
    });

    it('an expired continue token is 410 Expired', async () => {
      const r = await server().request('GET', `${cms}?limit=1&continue=${encodeURIComponent(token)}`);
      expect([r.status, r.json?.kind, r.json?.reason]).toEqual([410, 'Status', 'Expired']);
    });

    it('Exact on a compacted revision is 410 Expired, with and without limit', async () => {
      for (const q of [
        `resourceVersionMatch=Exact&resourceVersion=${oldRv}`,
        `resourceVersionMatch=Exact&resourceVersion=${oldRv}&limit=1`,
        `resourceVersion=${oldRv}&limit=1`,
      ]) {
        const r = await server().request('GET', `${cms}?${q}`);
        expect([q, r.status, r.json?.reason]).toEqual([q, 410, 'Expired']);
      }
    });

    it('a watch from a compacted revision is a 200 stream with an ERROR event carrying a 410 Status', async () => {
      const w = await openWatch(server(), `/api/v1/namespaces/${ns}/secrets?watch=1&resourceVersion=${secretRv}`);
      try {
        expect(w.status).toBe(200);
        const [e] = await w.waitFor(1);
        expect(e?.type).toBe('ERROR');
        expect(e?.object).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
        await w.ended;
      } finally {
        w.close();
      }
    });

    it('a list not older than a compacted revision still succeeds', async () => {
      const r = await list(`resourceVersion=${oldRv}`);
      expect(itemNames(r)).toContain('after-compaction');
    });
  });
});
