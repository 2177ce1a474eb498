import { MetricsRegistry } from './registry';

function registry(over: Partial<ConstructorParameters<typeof MetricsRegistry>[0] & object> = {}) {
  return new MetricsRegistry(
    { disabledMetrics: [], allowListMapping: new Map(), showHiddenMetricsForVersion: '', ...over },
    { collectDefaultMetrics: false },
  );
}

describe('MetricsRegistry', () => {
  it('exposes counters, gauges and histograms in the Prometheus text format', async () => {
    const r = registry();
    r.counter({ name: 'apiserver_request_total', help: 'Counter of requests.', labelNames: ['verb', 'code'] }).inc({
      verb: 'GET',
      code: 200,
    });
    r.gauge({ name: 'workqueue_depth', help: 'Current depth.', labelNames: ['name'] }).set({ name: 'q' }, 3);
    r.histogram({ name: 'request_duration_seconds', help: 'Latency.', buckets: [0.1, 1] }).observe({}, 0.5);
    const { contentType, body } = await r.exposition();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain(
      '# HELP apiserver_request_total Counter of requests.\n# TYPE apiserver_request_total counter\napiserver_request_total{verb="GET",code="200"} 1\n',
    );
    expect(body).toContain('workqueue_depth{name="q"} 3\n');
    expect(body).toContain('request_duration_seconds_bucket{le="1"} 1\n');
  });

  it('keeps --disabled-metrics out of the exposition while they still work', async () => {
    const r = registry({ disabledMetrics: ['noisy_total'] });
    const noisy = r.counter({ name: 'noisy_total', help: 'x' });
    noisy.inc();
    r.counter({ name: 'kept_total', help: 'y' }).inc();
    const { body } = await r.exposition();
    expect(body).not.toContain('noisy_total');
    expect(body).toContain('kept_total 1');
  });

  it('records label values outside --allow-metric-labels as "unexpected"', async () => {
    const r = registry({ allowListMapping: new Map([['req_total', new Map([['verb', new Set(['GET', 'LIST'])]])]]) });
    const c = r.counter({ name: 'req_total', help: 'x', labelNames: ['verb', 'resource'] });
    c.inc({ verb: 'GET', resource: 'pods' });
    c.inc({ verb: 'PATCH', resource: 'pods' });
    c.inc({ verb: 'BREW', resource: 'pods' });
    const { body } = await r.exposition();
    expect(body).toContain('req_total{verb="GET",resource="pods"} 1\n');
    expect(body).toContain('req_total{verb="unexpected",resource="pods"} 2\n');
    expect(body).not.toContain('PATCH');
  });

  it('marks metrics deprecated in this version and hides older ones unless asked', async () => {
    const r = registry();
    r.counter({ name: 'dep_now_total', help: 'Now.', deprecatedVersion: '1.21' }).inc();
    r.counter({ name: 'dep_old_total', help: 'Old.', deprecatedVersion: '1.20' }).inc();
    const { body } = await r.exposition();
    expect(body).toContain('# HELP dep_now_total (Deprecated since 1.21.0) Now.\n');
    expect(body).not.toContain('dep_old_total');

    const shown = registry({ showHiddenMetricsForVersion: '1.20' });
    shown.counter({ name: 'dep_old_total', help: 'Old.', deprecatedVersion: '1.20' }).inc();
    shown.counter({ name: 'dep_older_total', help: 'Older.', deprecatedVersion: '1.19' }).inc();
    const b2 = (await shown.exposition()).body;
    expect(b2).toContain('# HELP dep_old_total (Deprecated since 1.20.0) Old.\n');
    expect(b2).not.toContain('dep_older_total');
  });

  it('rejects duplicate names', () => {
    const r = registry();
    r.gauge({ name: 'g', help: 'x' });
    expect(() => r.gauge({ name: 'g', help: 'x' })).toThrow('metric g is already registered');
  });
});
