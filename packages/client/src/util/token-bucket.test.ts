import { FakeClock } from './clock';
import { TokenBucket } from './token-bucket';

describe('TokenBucket', () => {
  it('holds its QPS under a burst of 1,000 calls', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const bucket = new TokenBucket(20, 30, clock);
    const admitted: number[] = [];
    const calls = Array.from({ length: 1000 }, () => bucket.wait().then(() => admitted.push(clock.now() - start)));
    // Drive time in 10 ms steps until everyone is through.
    while (admitted.length < 1000) await clock.advance(10);
    await Promise.all(calls);
    // The burst goes through at once, then exactly 20 a second.
    expect(admitted.filter((t) => t === 0)).toHaveLength(30);
    const last = admitted[admitted.length - 1] as number;
    expect(last).toBeGreaterThanOrEqual(((1000 - 30) / 20) * 1000);
    expect(last).toBeLessThanOrEqual(((1000 - 30) / 20) * 1000 + 10);
    // In any window of one second after the burst, at most qps (+1 for the window edge) calls are admitted.
    for (let w = 0; w + 1000 <= last; w += 250) {
      const n = admitted.filter((t) => t > w && t <= w + 1000).length;
      expect(n).toBeLessThanOrEqual(21);
    }
  });

  it('refills up to the burst and no more', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(10, 5, clock);
    for (let i = 0; i < 5; i++) expect(bucket.tryAccept()).toBe(true);
    expect(bucket.tryAccept()).toBe(false);
    await clock.advance(100);
    expect(bucket.tryAccept()).toBe(true);
    expect(bucket.tryAccept()).toBe(false);
    await clock.advance(60_000);
    for (let i = 0; i < 5; i++) expect(bucket.tryAccept()).toBe(true);
    expect(bucket.tryAccept()).toBe(false);
  });

  it('gives the token back when a waiter is aborted', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(1, 1, clock);
    expect(bucket.tryAccept()).toBe(true);
    const ac = new AbortController();
    const waiting = bucket.wait(ac.signal);
    ac.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    await clock.advance(1000);
    expect(bucket.tryAccept()).toBe(true);
  });

  it('does not limit when qps is 0, and rejects a bad burst', () => {
    const bucket = new TokenBucket(0, 0);
    for (let i = 0; i < 100; i++) expect(bucket.tryAccept()).toBe(true);
    expect(() => new TokenBucket(5, 0)).toThrow(/burst must be a positive integer/);
    expect(() => new TokenBucket(Number.NaN, 1)).toThrow(/qps must be a finite number/);
  });
});
