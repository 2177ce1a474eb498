import { type Pod } from '@platform/api';

import {
  SIM_CONTAINER_BYTES,
  SIM_CONTAINER_CORES,
  SIM_NODE_BYTES,
  simulatedSummary,
} from '../runtime/simulated/simulated-servers';
import { formatGoFloat, renderResourceMetrics } from './resource-metrics';

const at = (ns: number, ms = 2000) => ({ timestamp: ms, usageCoreNanoSeconds: ns });
const mem = (bytes: number, ms = 2000) => ({ timestamp: ms, workingSetBytes: bytes });

test('the text of 1.21 (resource_metrics_test.go): sorted families and samples, core-seconds, ms timestamps', () => {
  const text = renderResourceMetrics({
    node: { cpu: at(10e9), memory: mem(1000) },
    containers: [
      { namespace: 'namespace_b', pod: 'pod_b', container: 'container_a', cpu: at(10e9), memory: mem(1000) },
      { namespace: 'namespace_a', pod: 'pod_a', container: 'container_b', cpu: at(10e9), memory: mem(1000) },
      { namespace: 'namespace_a', pod: 'pod_a', container: 'container_a', cpu: at(10e9), memory: mem(1000) },
    ],
    error: false,
  });
  expect(text).toBe(
    [
      '# HELP container_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the container in core-seconds',
      '# TYPE container_cpu_usage_seconds_total counter',
      'container_cpu_usage_seconds_total{container="container_a",namespace="namespace_a",pod="pod_a"} 10 2000',
      'container_cpu_usage_seconds_total{container="container_a",namespace="namespace_b",pod="pod_b"} 10 2000',
      'container_cpu_usage_seconds_total{container="container_b",namespace="namespace_a",pod="pod_a"} 10 2000',
      '# HELP container_memory_working_set_bytes [ALPHA] Current working set of the container in bytes',
      '# TYPE container_memory_working_set_bytes gauge',
      'container_memory_working_set_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 2000',
      'container_memory_working_set_bytes{container="container_a",namespace="namespace_b",pod="pod_b"} 1000 2000',
      'container_memory_working_set_bytes{container="container_b",namespace="namespace_a",pod="pod_a"} 1000 2000',
      '# HELP node_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the node in core-seconds',
      '# TYPE node_cpu_usage_seconds_total counter',
      'node_cpu_usage_seconds_total 10 2000',
      '# HELP node_memory_working_set_bytes [ALPHA] Current working set of the node in bytes',
      '# TYPE node_memory_working_set_bytes gauge',
      'node_memory_working_set_bytes 1000 2000',
      '# HELP pod_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the pod in core-seconds',
      '# TYPE pod_cpu_usage_seconds_total counter',
      'pod_cpu_usage_seconds_total{namespace="namespace_a",pod="pod_a"} 20 2000',
      'pod_cpu_usage_seconds_total{namespace="namespace_b",pod="pod_b"} 10 2000',
      '# HELP pod_memory_working_set_bytes [ALPHA] Current working set of the pod in bytes',
      '# TYPE pod_memory_working_set_bytes gauge',
      'pod_memory_working_set_bytes{namespace="namespace_a",pod="pod_a"} 2000 2000',
      'pod_memory_working_set_bytes{namespace="namespace_b",pod="pod_b"} 1000 2000',
      '# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise',
      '# TYPE scrape_error gauge',
      'scrape_error 0',
      '',
    ].join('\n'),
  );
});

test('a failed read is scrape_error 1; values not read are left out; label values are escaped', () => {
  expect(renderResourceMetrics({ node: {}, containers: [], error: true })).toBe(
    [
      '# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise',
      '# TYPE scrape_error gauge',
      'scrape_error 1',
      '',
    ].join('\n'),
  );
  const text = renderResourceMetrics({
    node: {},
    containers: [{ namespace: 'ns', pod: 'p"\\\n', container: 'c', memory: mem(1) }],
    error: false,
  });
  expect(text).toContain('container_memory_working_set_bytes{container="c",namespace="ns",pod="p\\"\\\\\\n"} 1 2000');
  expect(text).not.toContain('cpu_usage');
});

test.each([
  [0, '0'],
  [1, '1'],
  [10, '10'],
  [0.25, '0.25'],
  [123456, '123456'],
  [1e6, '1e+06'],
  [1234567, '1.234567e+06'],
  [536870912, '5.36870912e+08'],
  [0.0001, '0.0001'],
  [0.00001234, '1.234e-05'],
  [1e21, '1e+21'],
])('%p is written as Go writes it: %p', (v, text) => {
  expect(formatGoFloat(v)).toBe(text);
});

test('simulated usage: a function of time, only Running pods, the node carrying its containers', () => {
  const pod = (name: string, phase: string): Pod =>
    ({
      metadata: { name, namespace: 'default', creationTimestamp: '1970-01-01T00:00:10Z' },
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
      status: { phase, startTime: '1970-01-01T00:00:10Z' },
    }) as Pod;
  const s = simulatedSummary(0, [pod('run', 'Running'), pod('wait', 'Pending')], 110_000);
  expect(s.containers.map((c) => `${c.pod}/${c.container}`)).toEqual(['run/a', 'run/b']);
  expect(s.containers[0]?.cpu?.usageCoreNanoSeconds).toBe(Math.round(SIM_CONTAINER_CORES * 100 * 1e9));
  expect(s.containers[0]?.memory?.workingSetBytes).toBe(SIM_CONTAINER_BYTES);
  expect(s.node.memory?.workingSetBytes).toBe(SIM_NODE_BYTES + 2 * SIM_CONTAINER_BYTES);
  expect(simulatedSummary(0, [pod('run', 'Running')], 110_000)).toEqual(s);
  expect(simulatedSummary(0, [], 120_000).node.cpu!.usageCoreNanoSeconds).toBeGreaterThan(
    simulatedSummary(0, [], 110_000).node.cpu!.usageCoreNanoSeconds,
  );
});
