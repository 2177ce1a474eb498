import { type MetricsPoint, type NodeBatch } from '../scraper/decode';
import { MetricsStorage, usageBetween } from './storage';

const point = (timestamp: number, cpuSeconds: number, memoryBytes = 1000): MetricsPoint => ({
  timestamp,
  cpuSeconds,
  memoryBytes,
});

/** One round: node `n1` with a node point and the pods' containers. */
function round(node: MetricsPoint | undefined, pods: Record<string, Record<string, MetricsPoint>> = {}) {
  const batch: NodeBatch = { ...(node ? { node } : {}), pods: new Map() };
  for (const [key, containers] of Object.entries(pods)) {
    const [namespace = '', name = ''] = key.split('/');
    batch.pods.set(key, { namespace, name, containers: new Map(Object.entries(containers)) });
  }
  return new Map([['n1', batch]]);
}

describe('usageBetween', () => {
  it('is the CPU rate in nanocores over the window, and the last working set', () => {
    expect(usageBetween(point(15_000, 12.5, 300), point(5_000, 10, 200))).toEqual({
      timestamp: 15_000,
      windowMs: 10_000,
      cpuNanoCores: 250_000_000,
      memoryBytes: 300,
    });
  });
  it('has no usage without time between the points or when the counter went down', () => {
    expect(usageBetween(point(5_000, 12), point(5_000, 10))).toBeUndefined();
    expect(usageBetween(point(6_000, 9), point(5_000, 10))).toBeUndefined();
  });
});

describe('MetricsStorage', () => {
  it('has node metrics from the second point on, and is ready then', () => {
    const s = new MetricsStorage();
    s.store(round(point(1_000, 1)));
    expect(s.nodeUsage('n1')).toBeUndefined();
    expect(s.ready()).toBe(false);
    s.store(round(point(3_000, 2, 4096)));
    expect(s.nodeUsage('n1')).toEqual({
      timestamp: 3_000,
      windowMs: 2_000,
      cpuNanoCores: 500_000_000,
      memoryBytes: 4096,
    });
    expect(s.ready()).toBe(true);
    s.store(round(point(4_000, 2.1)));
    expect(s.nodeUsage('n1')?.windowMs).toBe(1_000);
    expect(s.nodeUsage('n1')?.cpuNanoCores).toBe(100_000_000);
  });

  it('keeps the previous point when the agent answers with a point no newer than the last', () => {
    const s = new MetricsStorage();
    s.store(round(point(1_000, 1)));
    s.store(round(point(3_000, 2)));
    s.store(round(point(3_000, 2)));
    expect(s.nodeUsage('n1')).toMatchObject({ timestamp: 3_000, windowMs: 2_000 });
  });

  it('forgets a node that a round did not report, and starts again after a counter reset', () => {
    const s = new MetricsStorage();
    s.store(round(point(1_000, 5)));
    s.store(round(point(2_000, 6)));
    s.store(new Map());
    expect(s.nodeUsage('n1')).toBeUndefined();
    expect(s.ready()).toBe(false);
    s.store(round(point(3_000, 7)));
    s.store(round(point(4_000, 1)));
    expect(s.nodeUsage('n1')).toBeUndefined();
    s.store(round(point(5_000, 2)));
    expect(s.nodeUsage('n1')?.cpuNanoCores).toBe(1_000_000_000);
  });

  it('has pod metrics when every container has two points, over the earliest window', () => {
    const s = new MetricsStorage();
    s.store(round(undefined, { 'ns/web': { a: point(1_000, 1) } }));
    s.store(round(undefined, { 'ns/web': { a: point(2_000, 1.5, 10), b: point(2_000, 3, 20) } }));
    expect(s.podUsage('ns', 'web')).toBeUndefined();
    s.store(round(undefined, { 'ns/web': { a: point(3_000, 2, 30), b: point(3_500, 3.3, 40) } }));
    expect(s.podUsage('ns', 'web')).toEqual({
      timestamp: 3_000,
      windowMs: 1_000,
      containers: [
        { name: 'a', cpuNanoCores: 500_000_000, memoryBytes: 30 },
        { name: 'b', cpuNanoCores: 200_000_000, memoryBytes: 40 },
      ],
    });
    expect(s.podUsage('ns', 'other')).toBeUndefined();
    expect(s.points()).toEqual({ node: 0, container: 4 });
  });
});
