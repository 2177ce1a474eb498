/**
 * Decoding of a node agent's `/metrics/resource` (model: metrics-server 0.5 `pkg/scraper/client/resource/decode.go`):
 * the Prometheus text exposition format, of which the resource metrics of Kubernetes 1.21's kubelet are read —
 * `node_cpu_usage_seconds_total`, `node_memory_working_set_bytes`, and `container_cpu_usage_seconds_total` and
 * `container_memory_working_set_bytes` labelled `container`, `pod` and `namespace`, each sample with a timestamp in
 * milliseconds. Other metrics (`scrape_error`, later additions) are skipped. A point needs both its CPU and its
 * memory sample; a point that lacks one, or has a negative or non-finite value, is left out, as metrics-server
 * drops what it cannot use. A line that is not the format fails the whole answer with a {@link DecodeError}.
 */

/** One reading of a node or a container. */
export interface MetricsPoint {
  /** When the CPU counter was read (epoch ms): the sample's timestamp, else the scrape's. */
  timestamp: number;
  /** Cumulative CPU time, in core-seconds. */
  cpuSeconds: number;
  /** Working set, in bytes. */
  memoryBytes: number;
}

/** The containers of one pod. */
export interface PodPoints {
  namespace: string;
  name: string;
  containers: Map<string, MetricsPoint>;
}

/** What one node agent reported. */
export interface NodeBatch {
  node?: MetricsPoint;
  /** By `namespace/name`. */
  pods: Map<string, PodPoints>;
}

/** An answer that is not the Prometheus text format. */
export class DecodeError extends Error {
  readonly isDecodeError = true;
}

/** One sample line. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestamp?: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** Parses `{a="x",b="y"}` starting at `text[0] === '{'`; returns the labels and the rest of the line. */
function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  const fail = (why: string): never => {
    throw new DecodeError(`line ${line}: ${why}`);
  };
  for (;;) {
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const m = LABEL_NAME.exec(text.slice(i));
    if (!m) fail('invalid label name');
    const key = m![0];
    i += key.length;
    while (text[i] === ' ') i++;
    if (text[i] !== '=') fail(`expected "=" after label ${key}`);
    i++;
    while (text[i] === ' ') i++;
    if (text[i] !== '"') fail(`expected a quoted value for label ${key}`);
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) fail(`unterminated value of label ${key}`);
      if (c === '"') break;
      if (c === '\\') {
        const n = text[i + 1];
        value += n === 'n' ? '\n' : n === '\\' ? '\\' : n === '"' ? '"' : fail(`invalid escape in label ${key}`);
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    i++;
    labels[key] = value;
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') fail(`expected "," or "}" after label ${key}`);
  }
}

/** A sample value as Prometheus writes it (`1.5`, `1.3e+07`, `NaN`, `+Inf`). */
function parseValue(s: string, line: number): number {
  if (s === 'NaN') return NaN;
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s))
    throw new DecodeError(`line ${line}: invalid value ${JSON.stringify(s)}`);
  return Number(s);
}

/** Parses one non-comment line. */
function parseSample(text: string, line: number): Sample {
  const m = NAME.exec(text);
  if (!m) throw new DecodeError(`line ${line}: invalid metric name`);
  const name = m[0];
  let rest = text.slice(name.length);
  let labels: Record<string, string> = {};
  if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
  const fields = rest.trim().split(/[ \t]+/);
  if (fields.length < 1 || fields.length > 2 || fields[0] === '')
    throw new DecodeError(`line ${line}: expected a value and an optional timestamp`);
  const value = parseValue(fields[0]!, line);
  if (fields[1] === undefined) return { name, labels, value };
  if (!/^-?\d+$/.test(fields[1])) throw new DecodeError(`line ${line}: invalid timestamp ${JSON.stringify(fields[1])}`);
  return { name, labels, value, timestamp: Number(fields[1]) };
}

/** A point under construction: what was read of it so far. */
interface Partial {
  timestamp?: number;
  cpuSeconds?: number;
  memoryBytes?: number;
}

function usable(v: number): boolean {
  return Number.isFinite(v) && v >= 0;
}

function complete(p: Partial, scrapeTime: number): MetricsPoint | undefined {
  if (p.cpuSeconds === undefined || p.memoryBytes === undefined) return undefined;
  return { timestamp: p.timestamp ?? scrapeTime, cpuSeconds: p.cpuSeconds, memoryBytes: p.memoryBytes };
}

/**
 * The points of one `/metrics/resource` answer. `scrapeTime` (epoch ms) stands in for a sample without a
 * timestamp. Throws {@link DecodeError} naming the line of a malformed answer.
 */
export function decodeResourceMetrics(text: string, scrapeTime: number): NodeBatch {
  const node: Partial = {};
  const containers = new Map<string, Partial & { namespace: string; pod: string; container: string }>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const s = parseSample(raw, i + 1);
    const isCpu = s.name === 'node_cpu_usage_seconds_total' || s.name === 'container_cpu_usage_seconds_total';
    const isMemory = s.name === 'node_memory_working_set_bytes' || s.name === 'container_memory_working_set_bytes';
    if (!isCpu && !isMemory) continue;
    let target: Partial;
    if (s.name.startsWith('node_')) target = node;
    else {
      const { namespace = '', pod = '', container = '' } = s.labels;
      if (!namespace || !pod || !container) continue;
      const key = `${namespace}/${pod}/${container}`;
      let c = containers.get(key);
      if (!c) containers.set(key, (c = { namespace, pod, container }));
      target = c;
    }
    if (!usable(s.value)) {
      // A value that cannot be used spoils the point: neither half of it counts.
      target.cpuSeconds = target.memoryBytes = NaN;
      continue;
    }
    if (isCpu) {
      target.cpuSeconds = s.value;
      if (s.timestamp !== undefined) target.timestamp = s.timestamp;
    } else {
      target.memoryBytes = s.value;
      target.timestamp ??= s.timestamp;
    }
  }
  const out: NodeBatch = { pods: new Map() };
  const n = complete(node, scrapeTime);
  if (n && usable(n.cpuSeconds) && usable(n.memoryBytes)) out.node = n;
  for (const c of containers.values()) {
    const p = complete(c, scrapeTime);
    if (!p || !usable(p.cpuSeconds) || !usable(p.memoryBytes)) continue;
    const key = `${c.namespace}/${c.pod}`;
    let pod = out.pods.get(key);
    if (!pod) out.pods.set(key, (pod = { namespace: c.namespace, name: c.pod, containers: new Map() }));
    pod.containers.set(c.container, p);
  }
  return out;
}
