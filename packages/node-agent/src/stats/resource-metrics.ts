/**
 * `/metrics/resource`: the resource metrics a metrics server scrapes from each node, in the Prometheus text format
 * (model: kubelet 1.21 `metrics/collectors/resource_metrics.go`). The names, help texts, label names, stability
 * marks and the order of families and samples are 1.21's, as client_golang writes them: families sorted by name,
 * samples by their label values, labels by name, CPU counters in core-seconds, working sets in bytes, each sample
 * with the time (ms) it was read at, and `scrape_error` (1 when the containers' usage could not be read) last.
 * Pod values are the sums of their containers' (the kubelet reads the pod's cgroup; the agent has none per pod).
 */
import {
  type ContainerStats,
  LABEL_CONTAINER_NAME,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  type Runtime,
} from '../runtime/runtime';
import { type Usage } from './usage';

/** The usage of one container of a pod. */
export interface ContainerUsage extends Usage {
  namespace: string;
  pod: string;
  container: string;
}

/** What one scrape reports. */
export interface ResourceSummary {
  node: Usage;
  containers: ContainerUsage[];
  /** The containers' usage could not be read (`scrape_error 1`). */
  error: boolean;
}

/** The media type of the Prometheus text format, as the kubelet answers it. */
export const PROMETHEUS_TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: { labels: [string, string][]; value: number; timestamp?: number }[];
}

/** A float as Go's `strconv.FormatFloat(v, 'g', -1, 64)` writes it (what client_golang's text format uses). */
export function formatGoFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return '0';
  const [mantissa = '0', exp = '0'] = v.toExponential().split('e');
  const e = Number(exp);
  // %e when the exponent is below -4 or at least the shortest form's precision threshold (6), as Go decides.
  if (e < -4 || e >= 6) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return String(v);
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function compareLabels(a: [string, string][], b: [string, string][]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]?.[1] ?? '';
    const y = b[i]?.[1] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function writeFamily(f: Family): string {
  if (f.samples.length === 0) return '';
  let out = `# HELP ${f.name} [ALPHA] ${f.help}\n# TYPE ${f.name} ${f.type}\n`;
  for (const s of [...f.samples].sort((a, b) => compareLabels(a.labels, b.labels))) {
    const labels = s.labels.length ? `{${s.labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
    out += `${f.name}${labels} ${formatGoFloat(s.value)}${s.timestamp !== undefined ? ` ${s.timestamp}` : ''}\n`;
  }
  return out;
}

/** The usage of each pod: the sums of its containers', read at the latest of their times. */
function podUsage(containers: readonly ContainerUsage[]): Map<string, { namespace: string; pod: string } & Usage> {
  const pods = new Map<string, { namespace: string; pod: string } & Usage>();
  for (const c of containers) {
    const key = `${c.namespace}/${c.pod}`;
    const p = pods.get(key) ?? { namespace: c.namespace, pod: c.pod };
    if (c.cpu)
      p.cpu = {
        timestamp: Math.max(p.cpu?.timestamp ?? 0, c.cpu.timestamp),
        usageCoreNanoSeconds: (p.cpu?.usageCoreNanoSeconds ?? 0) + c.cpu.usageCoreNanoSeconds,
      };
    if (c.memory)
      p.memory = {
        timestamp: Math.max(p.memory?.timestamp ?? 0, c.memory.timestamp),
        workingSetBytes: (p.memory?.workingSetBytes ?? 0) + c.memory.workingSetBytes,
      };
    pods.set(key, p);
  }
  return pods;
}

const cpuSample = (labels: [string, string][], u: Usage) =>
  u.cpu ? [{ labels, value: u.cpu.usageCoreNanoSeconds / 1e9, timestamp: Math.round(u.cpu.timestamp) }] : [];
const memorySample = (labels: [string, string][], u: Usage) =>
  u.memory ? [{ labels, value: u.memory.workingSetBytes, timestamp: Math.round(u.memory.timestamp) }] : [];

/** The text of `/metrics/resource` for one scrape. */
export function renderResourceMetrics(s: ResourceSummary): string {
  const containerLabels = (c: ContainerUsage): [string, string][] => [
    ['container', c.container],
    ['namespace', c.namespace],
    ['pod', c.pod],
  ];
  const pods = [...podUsage(s.containers).values()];
  const podLabels = (p: { namespace: string; pod: string }): [string, string][] => [
    ['namespace', p.namespace],
    ['pod', p.pod],
  ];
  const families: Family[] = [
    {
      name: 'container_cpu_usage_seconds_total',
      help: 'Cumulative cpu time consumed by the container in core-seconds',
      type: 'counter',
      samples: s.containers.flatMap((c) => cpuSample(containerLabels(c), c)),
    },
    {
      name: 'container_memory_working_set_bytes',
      help: 'Current working set of the container in bytes',
      type: 'gauge',
      samples: s.containers.flatMap((c) => memorySample(containerLabels(c), c)),
    },
    {
      name: 'node_cpu_usage_seconds_total',
      help: 'Cumulative cpu time consumed by the node in core-seconds',
      type: 'counter',
      samples: cpuSample([], s.node),
    },
    {
      name: 'node_memory_working_set_bytes',
      help: 'Current working set of the node in bytes',
      type: 'gauge',
      samples: memorySample([], s.node),
    },
    {
      name: 'pod_cpu_usage_seconds_total',
      help: 'Cumulative cpu time consumed by the pod in core-seconds',
      type: 'counter',
      samples: pods.flatMap((p) => cpuSample(podLabels(p), p)),
    },
    {
      name: 'pod_memory_working_set_bytes',
      help: 'Current working set of the pod in bytes',
      type: 'gauge',
      samples: pods.flatMap((p) => memorySample(podLabels(p), p)),
    },
    {
      name: 'scrape_error',
      help: '1 if there was an error while getting container metrics, 0 otherwise',
      type: 'gauge',
      samples: [{ labels: [], value: s.error ? 1 : 0 }],
    },
  ];
  return families.map(writeFamily).join('');
}

/** The pod and container a runtime's stats belong to, from the agent's labels; undefined for other containers. */
function containerUsageOf(st: ContainerStats): ContainerUsage | undefined {
  const pod = st.labels[LABEL_POD_NAME];
  const namespace = st.labels[LABEL_POD_NAMESPACE];
  if (!pod || !namespace) return undefined;
  return {
    namespace,
    pod,
    container: st.labels[LABEL_CONTAINER_NAME] ?? st.metadata.name,
    ...(st.cpu ? { cpu: st.cpu } : {}),
    ...(st.memory ? { memory: st.memory } : {}),
  };
}

/**
 * Reads one scrape's summary: the node's usage and that of every running container of a pod the runtime reports
 * (one series per container: should the runtime list two containers of one name in a pod, the last one counts).
 * A runtime that fails is `error: true` with the node's usage still reported.
 */
export async function collectResourceSummary(runtime: Runtime, node: () => Usage): Promise<ResourceSummary> {
  let error = false;
  const containers = new Map<string, ContainerUsage>();
  try {
    for (const st of (await runtime.listContainerStats?.()) ?? []) {
      const c = containerUsageOf(st);
      if (c) containers.set(`${c.namespace}/${c.pod}/${c.container}`, c);
    }
  } catch {
    error = true;
  }
  return { node: node(), containers: [...containers.values()], error };
}
