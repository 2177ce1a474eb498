import { HealthRegistry, PING_CHECK, namedCheck } from './health';

describe('HealthRegistry', () => {
  it('keeps registration order per endpoint', () => {
    const r = new HealthRegistry();
    r.addHealthChecks(
      PING_CHECK,
      namedCheck('store', () => {}),
    );
    r.addReadyzChecks(namedCheck('informer-sync', () => {}));
    r.addLivezChecks(namedCheck('deadlock', () => {}));
    expect(r.healthz.map((c) => c.name)).toEqual(['ping', 'store', 'deadlock']);
    expect(r.livez.map((c) => c.name)).toEqual(['ping', 'store', 'deadlock']);
    expect(r.readyz.map((c) => c.name)).toEqual(['ping', 'store', 'informer-sync']);
  });

  it('rejects a second check with the same name', () => {
    const r = new HealthRegistry();
    r.addHealthChecks(PING_CHECK);
    expect(() => r.addReadyzChecks(namedCheck('ping', () => {}))).toThrow('health check "ping" is already registered');
  });
});
