import { DecodeError, decodeResourceMetrics } from './decode';

/** A kubelet 1.21 `/metrics/resource` answer, as it writes it. */
const KUBELET_121 = `# HELP container_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="coredns",namespace="kube-system",pod="coredns-74ff55c5b-8nqxf"} 12.226498419 1623341565232
container_cpu_usage_seconds_total{container="web",namespace="default",pod="web-0"} 0.5 1623341565232
container_cpu_usage_seconds_total{container="sidecar",namespace="default",pod="web-0"} 1.25 1623341565230
# HELP container_memory_working_set_bytes [ALPHA] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="coredns",namespace="kube-system",pod="coredns-74ff55c5b-8nqxf"} 1.3185024e+07 1623341565232
container_memory_working_set_bytes{container="web",namespace="default",pod="web-0"} 4096 1623341565232
container_memory_working_set_bytes{container="sidecar",namespace="default",pod="web-0"} 8192 1623341565230
# HELP node_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 1245.560285 1623341565234
# HELP node_memory_working_set_bytes [ALPHA] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.234567168e+09 1623341565234
# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 0
`;

describe('decodeResourceMetrics', () => {
  it("reads the node and every container of kubelet 1.21's answer, with their timestamps", () => {
    const b = decodeResourceMetrics(KUBELET_121, 1);
    expect(b.node).toEqual({ timestamp: 1623341565234, cpuSeconds: 1245.560285, memoryBytes: 1234567168 });
    expect([...b.pods.keys()].sort()).toEqual(['default/web-0', 'kube-system/coredns-74ff55c5b-8nqxf']);
    const web = b.pods.get('default/web-0');
    expect(web?.namespace).toBe('default');
    expect(web?.name).toBe('web-0');
    expect(Object.fromEntries(web?.containers ?? [])).toEqual({
      web: { timestamp: 1623341565232, cpuSeconds: 0.5, memoryBytes: 4096 },
      sidecar: { timestamp: 1623341565230, cpuSeconds: 1.25, memoryBytes: 8192 },
    });
    expect(b.pods.get('kube-system/coredns-74ff55c5b-8nqxf')?.containers.get('coredns')?.memoryBytes).toBe(13185024);
  });

  it('takes the scrape time for samples without a timestamp, and reads labels in any order with escapes', () => {
    const b = decodeResourceMetrics(
      [
        'node_cpu_usage_seconds_total 10',
        'node_memory_working_set_bytes 20',
        'container_cpu_usage_seconds_total{pod="p",namespace="ns",container="c\\"1\\\\"} 3 500',
        'container_memory_working_set_bytes{ namespace = "ns" , pod="p",container="c\\"1\\\\",} 4 500',
      ].join('\n'),
      42,
    );
    expect(b.node).toEqual({ timestamp: 42, cpuSeconds: 10, memoryBytes: 20 });
    expect(b.pods.get('ns/p')?.containers.get('c"1\\')).toEqual({ timestamp: 500, cpuSeconds: 3, memoryBytes: 4 });
  });

  it.each([
    ['without memory', 'node_cpu_usage_seconds_total 1 5'],
    ['without CPU', 'node_memory_working_set_bytes 1 5'],
    ['with a NaN', 'node_cpu_usage_seconds_total NaN 5\nnode_memory_working_set_bytes 1 5'],
    ['with a negative value', 'node_cpu_usage_seconds_total 1 5\nnode_memory_working_set_bytes -1 5'],
    ['with +Inf', 'node_cpu_usage_seconds_total +Inf 5\nnode_memory_working_set_bytes 1 5'],
  ])('leaves out a point %s', (_what, text) => {
    expect(decodeResourceMetrics(text, 1).node).toBeUndefined();
  });

  it('leaves out containers without their three labels, and other metrics', () => {
    const b = decodeResourceMetrics(
      [
        'container_cpu_usage_seconds_total{pod="p",namespace="ns"} 1 5',
        'container_memory_working_set_bytes{pod="p",namespace="ns"} 1 5',
        'container_start_time_seconds{container="c",pod="p",namespace="ns"} 1.6e9 5',
        'pod_cpu_usage_seconds_total{pod="p",namespace="ns"} 1 5',
      ].join('\n'),
      1,
    );
    expect(b.pods.size).toBe(0);
    expect(b.node).toBeUndefined();
  });

  it.each([
    ['a bad metric name', '9metric 1', 'line 1: invalid metric name'],
    ['an unterminated label', 'node_cpu_usage_seconds_total{a="x 1', 'line 1: unterminated value of label a'],
    ['a label without a quoted value', 'node_cpu_usage_seconds_total{a=x} 1', 'line 1: expected a quoted value'],
    ['a value that is not a number', '# c\nnode_cpu_usage_seconds_total abc', 'line 2: invalid value "abc"'],
    ['a bad timestamp', 'node_cpu_usage_seconds_total 1 1.5', 'line 1: invalid timestamp "1.5"'],
    ['too many fields', 'node_cpu_usage_seconds_total 1 2 3', 'line 1: expected a value and an optional timestamp'],
    ['no value', 'node_cpu_usage_seconds_total', 'line 1: expected a value'],
  ])('refuses %s, naming the line', (_what, text, message) => {
    expect(() => decodeResourceMetrics(text, 1)).toThrow(DecodeError);
    expect(() => decodeResourceMetrics(text, 1)).toThrow(message);
  });

  it('reads an empty answer as no points', () => {
    const b = decodeResourceMetrics('', 1);
    expect(b.node).toBeUndefined();
    expect(b.pods.size).toBe(0);
  });
});
