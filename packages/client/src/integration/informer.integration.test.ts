/**
 * Informers against the real API server (in-process, SQLite, HTTPS on 127.0.0.1): exact sync across dropped
 * connections and across a compaction that forces 410, with every handler call recorded so that a change heard
 * twice fails the test. The API server restart case is in `informer-restart.integration.test.ts`.
 */
import { type ApiObject, type ConfigMap, ConfigMapKind, PROTOBUF_MEDIA_TYPE, JSON_MEDIA_TYPE } from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';

import {
  Clientset,
  InformerFactory,
  isDeletedFinalStateUnknown,
  type ListerWatcher,
  type ListOptions,
  type ResourceClient,
  RestClient,
  SharedIndexInformer,
  type Watch,
} from '@platform/client';

type CM = ConfigMap & ApiObject;

/** Records handler calls; fails on a change heard twice. */
function recorder(inf: SharedIndexInformer<CM>): { calls: string[]; dupes: string[] } {
  const seen = new Set<string>();
  const calls: string[] = [];
  const dupes: string[] = [];
  const note = (what: string, o: CM): void => {
    const id = `${what} ${o.metadata?.name} ${o.metadata?.resourceVersion}`;
    if (seen.has(id)) dupes.push(id);
    seen.add(id);
    calls.push(id);
  };
  inf.addEventHandler({
    onAdd: (o) => note('add', o),
    onUpdate: (_old, o) => note('update', o),
    onDelete: (o) => note('delete', isDeletedFinalStateUnknown(o) ? o.obj : o),
  });
  return { calls, dupes };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The informer's cache equals a fresh list (names and resourceVersions). */
async function inSync(inf: SharedIndexInformer<CM>, cms: ResourceClient<CM>): Promise<boolean> {
  const fresh = await cms.list();
  const want = fresh.items.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
  const got = inf.indexer
    .list()
    .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
    .sort();
  return JSON.stringify(want) === JSON.stringify(got);
}

/** A lister-watcher whose watch can be held back (to let history be compacted meanwhile). */
function gated(inner: ResourceClient<CM>): ListerWatcher<CM> & { hold(): void; release(): void } {
  let gate: Promise<void> | undefined;
  let open: () => void = () => {};
  return {
    list: (o: ListOptions) => inner.list(o),
    watch: async (o: ListOptions): Promise<Watch<CM>> => {
      if (gate) await gate;
      return inner.watch(o);
    },
    hold: () => {
      gate = new Promise((r) => (open = r));
    },
    release: () => {
      gate = undefined;
      open();
    },
  };
}

describe.each([PROTOBUF_MEDIA_TYPE, JSON_MEDIA_TYPE])('informer over %s', (contentType) => {
  let ts: TestServer;
  let rest: RestClient;
  let cms: ResourceClient<CM>;
  const ac = new AbortController();

  beforeAll(async () => {
    // Without the watch cache, a watch from a compacted revision reaches the store and gets its 410 (the
    // cache's window adapts to load and would serve it from memory).
    ts = await startTestServer((c) => {
      c.watchCache.enabled = false;
    });
    rest = new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 'test-token', contentType, qps: 0 });
    cms = new Clientset(rest).resource(ConfigMapKind, 'default');
  });
  afterAll(async () => {
    ac.abort();
    rest.close();
    await ts.stop();
  });

  it('gives listed objects their apiVersion and kind in the cache (a list leaves them out of its items)', async () => {
    await cms.create({ metadata: { name: 'typed' } });
    const factory = new InformerFactory(new Clientset(rest), { namespace: 'default' });
    const inf = factory.informerFor(ConfigMapKind);
    const stop = new AbortController();
    factory.start(stop.signal);
    try {
      expect(await factory.waitForCacheSync(stop.signal)).toBe(true);
      const cached = inf.indexer.get('default/typed');
      expect({ apiVersion: cached?.apiVersion, kind: cached?.kind }).toEqual({ apiVersion: 'v1', kind: 'ConfigMap' });
    } finally {
      stop.abort();
      await factory.shutdown();
      await cms.delete('typed');
    }
  });

  it('lists in pages, then follows every change exactly once, across dropped connections and a 410', async () => {
    // More than one page of 500 before the informer starts.
    for (let i = 0; i < 520; i++) await cms.create({ metadata: { name: `pre-${i}` }, data: { i: String(i) } });
    const lw = gated(cms);
    const inf = new SharedIndexInformer<CM>(lw, { pageSize: 500 });
    const rec = recorder(inf);
    const run = inf.run(ac.signal);
    await waitFor('sync', () => inf.hasSynced());
    expect(inf.indexer.list()).toHaveLength(520);
    expect(rec.calls.filter((c) => c.startsWith('add'))).toHaveLength(520);

    // Changes while watching.
    await cms.create({ metadata: { name: 'a' }, data: { v: '1' } });
    const a = await cms.get('a');
    await cms.update({ ...a, data: { v: '2' } });
    await cms.delete('pre-0');
    await waitFor('watch events', () => inSync(inf, cms));

    // Dropped connections: the informer resumes from its last resourceVersion, without a list.
    const lists = inf.stats.lists;
    for (let round = 0; round < 3; round++) {
      inf.dropWatch();
      await cms.patch('a', 'merge', { data: { v: `drop-${round}` } });
      await cms.create({ metadata: { name: `drop-${round}` } });
      await waitFor('resync after a dropped watch', () => inSync(inf, cms));
    }
    expect(inf.stats.lists).toBe(lists);

    // 410: hold the watch back, let more than the watch cache's window of changes happen, compact, release.
    lw.hold();
    inf.dropWatch();
    for (let i = 0; i < 130; i++) await cms.patch('a', 'merge', { data: { v: `c-${i}` } });
    await cms.delete('pre-1');
    await cms.create({ metadata: { name: 'after-compaction' } });
    await ts.server.compactNow();
    lw.release();
    await waitFor('relist after 410', () => inf.stats.expired > 0 && inf.stats.lists > lists);
    await waitFor('sync after relist', () => inSync(inf, cms));
    // pre-1 vanished while the informer was blind: a tombstone-carrying delete, heard once.
    expect(rec.calls.filter((c) => c.startsWith('delete pre-1'))).toHaveLength(1);
    expect(rec.dupes).toEqual([]);
    ac.abort();
    await run;
  }, 60_000);
});
