import { MetricsRegistry } from '@platform/common';

import { FakeClock } from '../util/clock';
import { WorkQueue, runWorkers } from './queue';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter } from './rate-limiters';

describe('WorkQueue', () => {
  it('deduplicates keys and never hands one key to two workers at once', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.length).toBe(2);
    const first = await q.get();
    expect(first).toEqual({ key: 'a', shutdown: false });
    q.add('a'); // while processing: parked, not queued
    expect(q.length).toBe(1);
    expect(await q.get()).toEqual({ key: 'b', shutdown: false });
    let got: unknown;
    void q.get().then((i) => (got = i));
    await Promise.resolve();
    expect(got).toBeUndefined();
    q.done('a'); // now it goes back in, and the waiting getter gets it
    await Promise.resolve();
    expect(got).toEqual({ key: 'a', shutdown: false });
  });

  it('runs concurrent workers without ever syncing a key twice at once', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    const active = new Set<string>();
    let overlaps = 0;
    let syncs = 0;
    for (let i = 0; i < 50; i++) q.add(`k${i % 5}`);
    const workers = runWorkers(q, 4, async (key) => {
      if (active.has(key)) overlaps++;
      active.add(key);
      syncs++;
      if (syncs < 20) q.add(key); // re-added while being processed
      await new Promise((r) => setImmediate(r));
      active.delete(key);
    });
    while (q.length > 0 || syncs < 20) await new Promise((r) => setImmediate(r));
    q.shutDown();
    await workers;
    expect(overlaps).toBe(0);
  });

  it('delays adds with the clock, keeping the earliest', async () => {
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ clock });
    q.addAfter('x', 1000);
    q.addAfter('x', 500);
    q.addAfter('x', 2000);
    await clock.advance(499);
    expect(q.length).toBe(0);
    await clock.advance(1);
    expect(q.length).toBe(1);
    await clock.advance(5000);
    expect(q.length).toBe(1);
  });

  it('backs off failing keys exponentially and forgets them on success', async () => {
    const clock = new FakeClock();
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    const q = new WorkQueue<string>({ clock, rateLimiter: limiter });
    expect([1, 2, 3, 4].map(() => limiter.when('other'))).toEqual([5, 10, 20, 40]);
    q.addRateLimited('k');
    q.addRateLimited('k');
    expect(q.numRequeues('k')).toBe(2);
    await clock.advance(5);
    expect(q.length).toBe(1);
    q.forget('k');
    expect(q.numRequeues('k')).toBe(0);
    expect(new ItemExponentialFailureRateLimiter<string>(5, 1000).when('z')).toBe(5);
    const capped = new ItemExponentialFailureRateLimiter<string>(5, 1000);
    for (let i = 0; i < 30; i++) capped.when('z');
    expect(capped.when('z')).toBe(1000);
  });

  it('takes the maximum of the per-item and overall limiters', () => {
    const clock = new FakeClock();
    const l = new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter(5, 1_000_000),
      new BucketRateLimiter(10, 2, clock),
    );
    expect(l.when('a')).toBe(5);
    expect(l.when('b')).toBe(5);
    expect(l.when('c')).toBe(100); // the bucket is empty: 1/10 s
  });

  it('shuts down: waiting getters are released, adds are ignored', async () => {
    const q = new WorkQueue<string>({ clock: new FakeClock() });
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toEqual({ shutdown: true });
    q.add('late');
    expect(q.length).toBe(0);
    expect(await q.get()).toEqual({ shutdown: true });
  });

  it('exposes the workqueue_* metrics', async () => {
    const clock = new FakeClock();
    const metrics = new MetricsRegistry();
    const q = new WorkQueue<string>({ clock, metrics, name: 'replicaset' });
    q.add('a');
    q.add('b');
    await clock.advance(250);
    const item = await q.get();
    await clock.advance(1500);
    q.updateUnfinishedWork();
    if (!item.shutdown) q.done(item.key);
    q.addRateLimited('c');
    const { body } = await metrics.exposition();
    expect(body).toMatch(/workqueue_adds_total\{name="replicaset"\} 2/);
    expect(body).toMatch(/workqueue_depth\{name="replicaset"\} 1/);
    expect(body).toMatch(/workqueue_retries_total\{name="replicaset"\} 1/);
    expect(body).toMatch(/workqueue_queue_duration_seconds_sum\{name="replicaset"\} 0\.25/);
    expect(body).toMatch(/workqueue_work_duration_seconds_sum\{name="replicaset"\} 1\.5/);
    expect(body).toMatch(/workqueue_unfinished_work_seconds\{name="replicaset"\} 1\.5/);
  });

  it('keeps the unfinished-work gauges current while a key is processed', async () => {
    const clock = new FakeClock();
    const metrics = new MetricsRegistry();
    const q = new WorkQueue<string>({ clock, metrics, name: 'slow' });
    const ac = new AbortController();
    const loop = q.updateMetricsUntil(ac.signal);
    q.add('a');
    await q.get();
    await clock.advance(3000);
    const { body } = await metrics.exposition();
    expect(body).toMatch(/workqueue_unfinished_work_seconds\{name="slow"\} 3/);
    expect(body).toMatch(/workqueue_longest_running_processor_seconds\{name="slow"\} 3/);
    ac.abort();
    await loop;
  });
});
