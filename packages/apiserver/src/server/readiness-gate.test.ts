import { namedCheck } from '@platform/common';

import { ReadinessGate } from './readiness-gate';

describe('ReadinessGate', () => {
  const controller = new AbortController();
  afterAll(() => controller.abort());

  it('holds API requests, not health checks, metrics or version', () => {
    const gate = new ReadinessGate(() => [], controller.signal);
    expect(['/api/v1/pods', '/apis', '/openapi/v2', '/readyzz', '/versions'].map((u) => gate.holds(u))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(
      ['/readyz', '/readyz/etcd', '/livez?verbose', '/healthz', '/metrics', '/version', '/debug/pprof/'].map((u) =>
        gate.holds(u),
      ),
    ).toEqual([false, false, false, false, false, false, false]);
  });

  it('opens once every readiness check but shutdown passes, and stays open', async () => {
    let ready = false;
    let polls = 0;
    const checks = [
      namedCheck('poststarthook/x', () => {
        polls++;
        if (!ready) throw new Error('not finished');
      }),
      namedCheck('shutdown', () => {
        throw new Error('not counted');
      }),
    ];
    const gate = new ReadinessGate(() => checks, controller.signal, { pollMs: 1, maxWaitMs: 60_000 });
    const waited = gate.wait();
    while (polls < 3) await new Promise((r) => setTimeout(r, 1));
    expect(gate.open).toBe(false);
    ready = true;
    await waited;
    expect(gate.open).toBe(true);
    expect(gate.holds('/api/v1/pods')).toBe(false);
  });

  it('opens for good maxWaitMs after the first held request when the server never gets ready', async () => {
    const never = namedCheck('store', () => {
      throw new Error('down');
    });
    const gate = new ReadinessGate(() => [never], controller.signal, { pollMs: 1, maxWaitMs: 5 });
    await gate.wait();
    expect(gate.open).toBe(true);
  });

  it('opens on shutdown', async () => {
    const stop = new AbortController();
    const gate = new ReadinessGate(() => [namedCheck('store', () => Promise.reject(new Error('down')))], stop.signal, {
      pollMs: 1,
      maxWaitMs: 60_000,
    });
    const waited = gate.wait();
    stop.abort();
    await waited;
    expect(gate.open).toBe(true);
  });
});
