import { type Admission, type Clock, dealHand, hashFlow, QueueSet, type QueueSetConfig } from './queue-set';

/** A clock moved by hand; timers fire when it passes them. */
class FakeClock implements Clock {
  private t = 1_000_000;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private next = 0;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== handle);
  }
  advance(ms: number): void {
    this.t += ms;
    for (const due of this.timers.filter((x) => x.at <= this.t)) {
      this.clearTimeout(due.id);
      due.fn();
    }
  }
}

const CONFIG: QueueSetConfig = {
  name: 'test',
  concurrencyLimit: 2,
  queues: 16,
  handSize: 4,
  queueLengthLimit: 5,
  requestWaitLimitMs: 15_000,
};

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('shuffle sharding', () => {
  it('deals distinct cards within the deck, the same hand for the same flow', () => {
    for (let i = 0; i < 500; i++) {
      const hand = dealHand(hashFlow('fs', `user-${i}`), 64, 6);
      expect(new Set(hand).size).toBe(6);
      for (const c of hand) expect(c >= 0 && c < 64).toBe(true);
      expect(dealHand(hashFlow('fs', `user-${i}`), 64, 6)).toEqual(hand);
    }
  });

  it('spreads flows over every queue, and different flows mostly get different hands', () => {
    const seen = new Set<number>();
    const hands = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const hand = dealHand(hashFlow('fs', `user-${i}`), 128, 6);
      hand.forEach((c) => seen.add(c));
      hands.add([...hand].sort((a, b) => a - b).join(','));
    }
    expect(seen.size).toBe(128);
    expect(hands.size).toBe(1000);
  });

  it('uses the whole deck when the hand is the deck', () => {
    expect(dealHand(12345n, 5, 5).sort()).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('QueueSet', () => {
  function started(qs: QueueSet, flow: string, admissions: Admission[]): void {
    void qs.startRequest(hashFlow('fs', flow), { flowSchema: 'fs', distinguisher: flow }).then((a) => {
      admissions.push(a);
    });
  }

  it('executes up to the concurrency limit, then queues, then rejects when the queue is full', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ ...CONFIG, queues: 1, handSize: 1, queueLengthLimit: 2 }, clock);
    const out: Admission[] = [];
    for (let i = 0; i < 5; i++) started(qs, 'a', out);
    await flush();
    expect(out.map((a) => (a.execute ? 'run' : a.reason))).toEqual(['run', 'run', 'queue-full']);
    expect(qs.waitingCount).toBe(2);
    // One finishing lets the next one in, after the time it waited.
    clock.advance(300);
    (out[0] as Extract<Admission, { execute: true }>).finish();
    await flush();
    expect(out[3]).toMatchObject({ execute: true, queued: true, waitedMs: 300 });
    expect(qs.waitingCount).toBe(1);
  });

  it('rejects at once at the limit when the level does not queue (Reject)', async () => {
    const qs = new QueueSet({ ...CONFIG, queues: 0, handSize: 0, queueLengthLimit: 0 }, new FakeClock());
    const out: Admission[] = [];
    for (let i = 0; i < 3; i++) started(qs, 'a', out);
    await flush();
    expect(out.map((a) => (a.execute ? 'run' : a.reason))).toEqual(['run', 'run', 'concurrency-limit']);
  });

  it('rejects a request that waited longer than the wait limit, and drops one whose client left', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ ...CONFIG, concurrencyLimit: 1 }, clock);
    const out: Admission[] = [];
    started(qs, 'a', out);
    started(qs, 'b', out);
    const gone = new AbortController();
    void qs
      .startRequest(hashFlow('fs', 'c'), { flowSchema: 'fs', distinguisher: 'c' }, gone.signal)
      .then((a) => out.push(a));
    gone.abort();
    await flush();
    expect(out.map((a) => (a.execute ? 'run' : a.reason))).toEqual(['run', 'cancelled']);
    clock.advance(15_000);
    await flush();
    expect(out.map((a) => (a.execute ? 'run' : a.reason))).toEqual(['run', 'cancelled', 'time-out']);
    expect(qs.waitingCount).toBe(0);
  });

  it('dispatches fairly: a light flow is served next even behind a long backlog of a heavy flow', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ ...CONFIG, concurrencyLimit: 1, queueLengthLimit: 100 }, clock);
    const order: string[] = [];
    const running: Extract<Admission, { execute: true }>[] = [];
    const start = (flow: string): void => {
      void qs.startRequest(hashFlow('fs', flow), { flowSchema: 'fs', distinguisher: flow }).then((a) => {
        if (!a.execute) throw new Error(`rejected: ${a.reason}`);
        order.push(flow);
        running.push(a);
      });
    };
    for (let i = 0; i < 40; i++) start('heavy');
    await flush();
    // Serve a few heavy requests, then the light flow arrives behind the backlog.
    for (let i = 0; i < 3; i++) {
      clock.advance(10);
      running.shift()?.finish();
      await flush();
    }
    start('light');
    await flush();
    clock.advance(10);
    running.shift()?.finish();
    await flush();
    // The light flow is dispatched at the first free seat, before the 36 heavy requests still waiting.
    expect(order.slice(-1)).toEqual(['light']);
    expect(order.filter((f) => f === 'heavy')).toHaveLength(4);
    expect(qs.waitingCount).toBe(36);
  });

  it('shares the seats equally between two backlogged flows whatever their backlogs', async () => {
    const clock = new FakeClock();
    // One queue per flow (a hand of one), and the two flows' queues differ: fairness is between queues.
    const qs = new QueueSet({ ...CONFIG, concurrencyLimit: 2, handSize: 1, queueLengthLimit: 1000 }, clock);
    expect(dealHand(hashFlow('fs', 'a'), 16, 1)).not.toEqual(dealHand(hashFlow('fs', 'b'), 16, 1));
    const served: Record<string, number> = { a: 0, b: 0 };
    const running: Extract<Admission, { execute: true }>[] = [];
    const start = (flow: string): void => {
      void qs.startRequest(hashFlow('fs', flow), { flowSchema: 'fs', distinguisher: flow }).then((a) => {
        if (!a.execute) throw new Error(`rejected: ${a.reason}`);
        served[flow] = (served[flow] ?? 0) + 1;
        running.push(a);
      });
    };
    // Flow a has ten times the backlog of b (and requests of the same cost).
    for (let i = 0; i < 500; i++) start('a');
    for (let i = 0; i < 50; i++) start('b');
    await flush();
    for (let i = 0; i < 60; i++) {
      clock.advance(5);
      running.shift()?.finish();
      await flush();
    }
    // 62 dispatched in all: b got about half, not a tenth.
    expect(served.a! + served.b!).toBe(62);
    expect(Math.abs(served.a! - served.b!)).toBeLessThanOrEqual(2);
  });

  it('uses a new configuration: a higher limit dispatches the waiting requests', async () => {
    const qs = new QueueSet({ ...CONFIG, concurrencyLimit: 1 }, new FakeClock());
    const out: Admission[] = [];
    for (let i = 0; i < 3; i++) started(qs, `f${i}`, out);
    await flush();
    expect(out).toHaveLength(1);
    qs.setConfig({ ...CONFIG, concurrencyLimit: 3 });
    await flush();
    expect(out.filter((a) => a.execute)).toHaveLength(3);
    expect(qs.dump()).toMatchObject({ waiting: 0, executing: 3 });
  });
});
