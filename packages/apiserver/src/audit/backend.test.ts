import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { type Logger } from '@platform/common';

import { type AuditBackend, modeBackend, truncatingBackend } from './backend';
import { type AuditEvent, TRUNCATED_ANNOTATION } from './types';

/** Keeps errors (tests assert them) and drops the rest. */
function testLogger(errors: unknown[] = []): Logger {
  const log: Logger = {
    error: (msg, fields) => errors.push({ msg, ...fields }),
    warn: () => {},
    info: () => {},
    debug: () => {},
    v: () => ({ enabled: false, info: () => {} }),
    child: () => log,
  };
  return log;
}

function event(id: string, extra: Partial<AuditEvent> = {}): AuditEvent {
  return {
    kind: 'Event',
    apiVersion: 'audit.platform/v1',
    level: 'RequestResponse',
    auditID: id,
    stage: 'ResponseComplete',
    requestURI: '/api/v1/pods',
    verb: 'list',
    user: { username: 'alice' },
    requestReceivedTimestamp: '2021-04-01T10:00:00.000000Z',
    stageTimestamp: '2021-04-01T10:00:00.000001Z',
    ...extra,
  };
}

/** A sink that records batches; `fail` makes it report failure; `gate` holds calls until opened. */
function recorder(o: { fail?: boolean } = {}) {
  const batches: AuditEvent[][] = [];
  let open: () => void = () => {};
  let gate: Promise<void> | undefined;
  const sink: AuditBackend & { batches: AuditEvent[][]; hold(): void; release(): void } = {
    batches,
    hold() {
      gate = new Promise((r) => (open = r));
    },
    release() {
      open();
      gate = undefined;
    },
    async processEvents(events) {
      if (gate) await gate;
      batches.push(events);
      return !o.fail;
    },
    async shutdown() {},
  };
  return sink;
}

const batchConfig = {
  bufferSize: 100,
  maxBatchSize: 3,
  maxBatchWaitMs: 0,
  throttleEnable: false,
  throttleQPS: 0,
  throttleBurst: 0,
};

describe('audit backends', () => {
  it('batch mode returns at once and delivers every event in batches of at most the maximum size', async () => {
    const sink = recorder();
    const b = modeBackend('log', sink, 'batch', batchConfig, testLogger());
    for (let i = 0; i < 10; i++) expect(b.processEvents([event(String(i))])).toBe(true);
    await b.shutdown();
    const delivered = sink.batches.flat().map((e) => e.auditID);
    expect(delivered).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(sink.batches.every((batch) => batch.length <= 3)).toBe(true);
  });

  it('batch mode hands everything queued to a sink that takes several batches at once, in order', async () => {
    const calls: AuditEvent[][][] = [];
    const sink: AuditBackend = {
      processEvents: () => {
        throw new Error('not used: the sink takes batches');
      },
      processBatches: async (batches) => {
        calls.push(batches);
        return true;
      },
      shutdown: async () => {},
    };
    const b = modeBackend('log', sink, 'batch', batchConfig, testLogger());
    for (let i = 0; i < 10; i++) void b.processEvents([event(String(i))]);
    await b.shutdown();
    const batches = calls.flat();
    expect(batches.flat().map((e) => e.auditID)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(batches.every((batch) => batch.length <= 3)).toBe(true);
    // Queued together, they went out in fewer calls than batches.
    expect(calls.length).toBeLessThan(batches.length);
  });

  it('batch mode lets go of the events it has handed to the sink, in whole and in partial takes', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A sink that keeps nothing: only the queue could hold the events. The throttle (one batch a second) keeps all
    // but the first batch queued, so the first is a partial take.
    let delivered = 0;
    const sink: AuditBackend = {
      processEvents: (events) => {
        delivered += events.length;
        return true;
      },
      shutdown: async () => {},
    };
    const throttled = { ...batchConfig, maxBatchSize: 2, throttleEnable: true, throttleQPS: 1, throttleBurst: 1 };
    const b = modeBackend('webhook', sink, 'batch', throttled, testLogger());
    const refs: WeakRef<AuditEvent>[] = [];
    const send = (): void => {
      for (let i = 0; i < 5; i++) {
        const ev = event(String(i));
        refs.push(new WeakRef(ev));
        void b.processEvents([ev]);
      }
    };
    send();
    for (let i = 0; i < 100 && delivered < 2; i++) await new Promise((r) => setTimeout(r, 5));
    gc();
    expect(refs.map((r) => r.deref() !== undefined)).toEqual([false, false, true, true, true]);
    await b.shutdown(); // the rest goes out without waiting for the throttle
    expect(delivered).toBe(5);
    await new Promise((r) => setTimeout(r, 10));
    gc();
    expect(refs.map((r) => r.deref() !== undefined)).toEqual([false, false, false, false, false]);
  });

  it('batch mode waits up to the maximum wait to fill a batch', async () => {
    const sink = recorder();
    const b = modeBackend(
      'webhook',
      sink,
      'batch',
      { ...batchConfig, maxBatchSize: 5, maxBatchWaitMs: 60_000 },
      testLogger(),
    );
    for (let i = 0; i < 5; i++) void b.processEvents([event(String(i))]);
    // Five events fill the batch: it goes out without waiting a minute.
    for (let i = 0; i < 100 && sink.batches.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sink.batches).toEqual([[0, 1, 2, 3, 4].map((i) => expect.objectContaining({ auditID: String(i) }))]);
    void b.processEvents([event('late')]);
    await b.shutdown(); // shutdown sends the short batch
    expect(sink.batches[1]?.map((e) => e.auditID)).toEqual(['late']);
  });

  it('batch mode drops events when the buffer is full and says so', async () => {
    const sink = recorder();
    const errors: unknown[] = [];
    // One batch per 1000 s: the worker sends the first event, then waits on the throttle while the buffer fills.
    const b = modeBackend(
      'log',
      sink,
      'batch',
      { ...batchConfig, bufferSize: 4, maxBatchSize: 1, throttleEnable: true, throttleQPS: 0.001, throttleBurst: 1 },
      testLogger(errors),
    );
    void b.processEvents([event('first')]);
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 10; i++) void b.processEvents([event(`e${i}`)]);
    expect(errors).toEqual([
      expect.objectContaining({ msg: 'Audit buffer queue blocked: events dropped', backend: 'log' }),
    ]);
    await b.shutdown(); // the throttle gives way at shutdown: what the buffer held is sent
    expect(sink.batches.flat().map((e) => e.auditID)).toEqual(['first', 'e0', 'e1', 'e2', 'e3']);
  });

  it('throttled batch mode still delivers everything', async () => {
    const sink = recorder();
    const b = modeBackend(
      'webhook',
      sink,
      'batch',
      { ...batchConfig, maxBatchSize: 1, throttleEnable: true, throttleQPS: 1000, throttleBurst: 2 },
      testLogger(),
    );
    for (let i = 0; i < 6; i++) void b.processEvents([event(String(i))]);
    await b.shutdown();
    expect(sink.batches.flat()).toHaveLength(6);
  });

  it('blocking mode waits for the sink and logs a failure; blocking-strict reports it', async () => {
    const errors: unknown[] = [];
    const failing = recorder({ fail: true });
    const blocking = modeBackend('log', failing, 'blocking', batchConfig, testLogger(errors));
    expect(await blocking.processEvents([event('a')])).toBe(true);
    expect(failing.batches).toHaveLength(1);
    expect(errors).toEqual([expect.objectContaining({ msg: 'Audit events could not be stored', backend: 'log' })]);
    const strict = modeBackend('log', failing, 'blocking-strict', batchConfig, testLogger());
    expect(await strict.processEvents([event('b')])).toBe(false);
  });

  it('truncation drops the objects of an oversize event, then the event, and splits batches by size', async () => {
    const sink = recorder();
    const errors: unknown[] = [];
    const small = event('small');
    const smallSize = Buffer.byteLength(JSON.stringify(small));
    const t = truncatingBackend(
      'webhook',
      sink,
      { enabled: true, maxEventSize: smallSize + 200, maxBatchSize: smallSize * 2 + 10 },
      testLogger(errors),
    );
    const big = event('big', { requestObject: { data: 'x'.repeat(1000) }, responseObject: { data: 'y' } });
    const huge = event('huge', { requestURI: `/api/v1/${'z'.repeat(1000)}` });
    expect(await t.processEvents([small, big, huge, event('s2'), event('s3')])).toBe(true);
    const all = sink.batches.flat();
    expect(all.map((e) => e.auditID)).toEqual(['small', 'big', 's2', 's3']);
    const truncated = all[1]!;
    expect(truncated.requestObject).toBeUndefined();
    expect(truncated.responseObject).toBeUndefined();
    expect(truncated.annotations).toEqual({ [TRUNCATED_ANNOTATION]: 'true' });
    expect(errors).toEqual([expect.objectContaining({ auditID: 'huge' })]);
    for (const batch of sink.batches) {
      const size = batch.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
      expect(size).toBeLessThanOrEqual(smallSize * 2 + 10);
    }
    expect(sink.batches.length).toBeGreaterThan(1);
  });
});
