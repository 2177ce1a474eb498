/**
 * Informer behaviour that depends on time (resync) or on exact delivery order, driven by an injected clock and
 * an in-memory lister-watcher. The same informer against the real API server is in `integration/`.
 */
import { type ApiObject, StatusError } from '@platform/api';

import { type ListOptions, type ObjectList } from '../rest/resource-client';
import { FakeClock, flushMicrotasks } from '../util/clock';
import { type Watch, type WatchEvent } from '../watch/watch';
import { type DeletedFinalStateUnknown, isDeletedFinalStateUnknown, SharedIndexInformer } from './shared-informer';
import { LABEL_INDEX, labelIndexFunc, NAMESPACE_INDEX, namespaceIndexFunc } from './store';

const obj = (ns: string, name: string, rv: string, labels: Record<string, string> = {}): ApiObject => ({
  metadata: { namespace: ns, name, resourceVersion: rv, labels },
});

/** A lister-watcher over a list the test controls; watches stay open until the test ends them. */
class MemoryListerWatcher {
  items: ApiObject[] = [];
  rv = '1';
  lists = 0;
  /** The resourceVersion and paging each list asked for. */
  asked: string[] = [];
  /** Errors the next lists fail with. */
  listErrors: Error[] = [];
  private push?: (e: WatchEvent<ApiObject> | Error | null) => void;

  list(o: ListOptions): Promise<ObjectList<ApiObject>> {
    this.lists++;
    this.asked.push(`rv=${o.resourceVersion ?? ''} limit=${o.limit ?? ''} continue=${o.continue ?? ''}`);
    const err = this.listErrors.shift();
    if (err) return Promise.reject(err);
    const start = Number(o.continue ?? 0);
    const limit = o.limit ?? this.items.length;
    const page = this.items.slice(start, start + limit);
    const next = start + limit < this.items.length ? String(start + limit) : undefined;
    return Promise.resolve({
      items: page,
      metadata: { resourceVersion: this.rv, ...(next ? { continue: next } : {}) },
    });
  }

  watch(): Promise<Watch<ApiObject>> {
    const queue: (WatchEvent<ApiObject> | Error | null)[] = [];
    let wake: (() => void) | undefined;
    this.push = (e) => {
      queue.push(e);
      wake?.();
    };
    const w: Watch<ApiObject> = {
      stop: () => this.push?.(null),
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const e = queue.shift();
          if (e === undefined) {
            await new Promise<void>((r) => (wake = r));
            continue;
          }
          if (e === null) return;
          if (e instanceof Error) throw e;
          yield e;
        }
      },
    };
    return Promise.resolve(w);
  }

  send(e: WatchEvent<ApiObject> | Error | null): void {
    this.push?.(e);
  }
}

function record(inf: SharedIndexInformer<ApiObject>): string[] {
  const calls: string[] = [];
  const id = (o: ApiObject | DeletedFinalStateUnknown<ApiObject>): string =>
    isDeletedFinalStateUnknown(o) ? `tombstone:${o.key}` : `${o.metadata?.name}@${o.metadata?.resourceVersion}`;
  inf.addEventHandler({
    onAdd: (o, initial) => calls.push(`add ${id(o)}${initial ? ' initial' : ''}`),
    onUpdate: (a, b) => calls.push(`update ${id(a)} -> ${id(b)}`),
    onDelete: (o) => calls.push(`delete ${id(o)}`),
  });
  return calls;
}

describe('SharedIndexInformer', () => {
  it('lists from the watch cache first, delivers the initial list, then watch events in order', async () => {
    const clock = new FakeClock();
    const lw = new MemoryListerWatcher();
    lw.items = [obj('a', 'x', '1'), obj('a', 'y', '1'), obj('b', 'z', '1')];
    const inf = new SharedIndexInformer(lw, { clock, pageSize: 2 });
    const calls = record(inf);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await flushMicrotasks();
    expect(inf.hasSynced()).toBe(true);
    expect(lw.asked).toEqual(['rv=0 limit= continue=']); // resourceVersion "0", no pages: the API server's cache
    lw.send({ type: 'MODIFIED', object: obj('a', 'x', '2') });
    lw.send({ type: 'MODIFIED', object: obj('a', 'x', '2') }); // the same change again: not delivered twice
    lw.send({ type: 'DELETED', object: obj('a', 'y', '3') });
    lw.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } });
    await flushMicrotasks();
    expect(calls).toEqual(['add x@1 initial', 'add y@1 initial', 'add z@1 initial', 'update x@1 -> x@2', 'delete y@3']);
    expect(inf.lastSyncResourceVersion()).toBe('7');
    ac.abort();
    await run;
  });

  it('relists on 410 and turns what vanished into DeletedFinalStateUnknown', async () => {
    const clock = new FakeClock();
    const lw = new MemoryListerWatcher();
    lw.items = [obj('a', 'x', '1'), obj('a', 'y', '1')];
    const inf = new SharedIndexInformer(lw, { clock });
    const calls = record(inf);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await flushMicrotasks();
    lw.items = [obj('a', 'x', '1'), obj('a', 'new', '5')];
    lw.rv = '5';
    lw.send(new StatusError({ code: 410, reason: 'Expired', message: 'too old resource version' }));
    await flushMicrotasks();
    expect(calls.slice(2)).toEqual(['add new@5', 'delete tombstone:a/y']);
    expect(inf.stats.expired).toBe(1);
    expect(lw.asked).toEqual(['rv=0 limit= continue=', 'rv=1 limit= continue=']); // not older than the last seen
    ac.abort();
    await run;
  });

  it('lists the latest state, in pages, after a list refused its resourceVersion', async () => {
    const clock = new FakeClock();
    const lw = new MemoryListerWatcher();
    lw.items = [obj('a', 'x', '1'), obj('a', 'y', '1'), obj('b', 'z', '1')];
    lw.listErrors = [
      new StatusError({
        code: 504,
        reason: 'Timeout',
        message: 'Timeout: Too large resource version: 9, current: 5',
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
      }),
    ];
    const inf = new SharedIndexInformer(lw, { clock, pageSize: 2 });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await flushMicrotasks();
    expect(inf.hasSynced()).toBe(false);
    await clock.advance(30_000); // past the back-off
    await flushMicrotasks();
    expect(inf.hasSynced()).toBe(true);
    expect(inf.indexer.list()).toHaveLength(3);
    expect(lw.asked).toEqual(['rv=0 limit= continue=', 'rv= limit=2 continue=', 'rv= limit=2 continue=2']);
    ac.abort();
    await run;
  });

  it('backs off after a failed watch and resumes from the last resourceVersion without a list', async () => {
    const clock = new FakeClock();
    const lw = new MemoryListerWatcher();
    const inf = new SharedIndexInformer(lw, { clock, random: () => 0 });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await flushMicrotasks();
    lw.send(new Error('connection reset'));
    await flushMicrotasks();
    expect(inf.stats.watches).toBe(1);
    await clock.advance(799);
    expect(inf.stats.watches).toBe(1);
    await clock.advance(1);
    expect(inf.stats.watches).toBe(2);
    expect(lw.lists).toBe(1);
    ac.abort();
    await run;
  });

  it('resyncs every period as updates with the same object, and replays the cache to late handlers', async () => {
    const clock = new FakeClock();
    const lw = new MemoryListerWatcher();
    lw.items = [obj('a', 'x', '1')];
    const inf = new SharedIndexInformer(lw, { clock, resyncPeriodMs: 60_000 });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await flushMicrotasks();
    const late = record(inf);
    expect(late).toEqual(['add x@1 initial']);
    await clock.advance(59_999);
    expect(late).toHaveLength(1);
    await clock.advance(1);
    expect(late).toEqual(['add x@1 initial', 'update x@1 -> x@1']);
    ac.abort();
    await run;
  });

  it('indexes by namespace, labels and custom functions, kept up to date', async () => {
    const clock = new FakeClock();
    const lw = new MemoryListerWatcher();
    lw.items = [obj('a', 'x', '1', { app: 'web' }), obj('b', 'y', '1', { app: 'db' })];
    const inf = new SharedIndexInformer(lw, { clock });
    inf.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc, [LABEL_INDEX]: labelIndexFunc });
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await flushMicrotasks();
    inf.addIndexers({ byFirstLetter: (o) => [(o.metadata?.name ?? '').slice(0, 1)] });
    expect(inf.indexer.byIndex(NAMESPACE_INDEX, 'a').map((o) => o.metadata?.name)).toEqual(['x']);
    lw.send({ type: 'MODIFIED', object: obj('a', 'x', '2', { app: 'db' }) });
    await flushMicrotasks();
    expect(inf.indexer.byIndex(LABEL_INDEX, 'app=web')).toEqual([]);
    expect(
      inf.indexer
        .byIndex(LABEL_INDEX, 'app=db')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['x', 'y']);
    expect(inf.indexer.byIndex('byFirstLetter', 'y')).toHaveLength(1);
    expect(() => inf.indexer.byIndex('nope', 'x')).toThrow(/index "nope" does not exist/);
    expect(() => inf.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc })).toThrow(/already exists/);
    ac.abort();
    await run;
  });

  it('isolates a throwing handler from the others and from the informer', async () => {
    const clock = new FakeClock();
    const lw = new MemoryListerWatcher();
    lw.items = [obj('a', 'x', '1')];
    const inf = new SharedIndexInformer(lw, { clock });
    inf.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    const calls = record(inf);
    const ac = new AbortController();
    const run = inf.run(ac.signal);
    await flushMicrotasks();
    lw.send({ type: 'ADDED', object: obj('a', 'y', '2') });
    await flushMicrotasks();
    expect(calls).toEqual(['add x@1 initial', 'add y@2']);
    expect(inf.indexer.listKeys().sort()).toEqual(['a/x', 'a/y']);
    ac.abort();
    await run;
  });
});
