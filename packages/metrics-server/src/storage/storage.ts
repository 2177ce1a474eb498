/**
 * The metrics storage (model: metrics-server 0.5 `pkg/storage/node.go`, `pod.go`): the last two points of every
 * node and container, from which usage is computed when asked — CPU as the rate of the cumulative counter between
 * the two points, memory as the last working set, the window the time between the points. So a node or pod has
 * metrics from its second scrape on.
 *
 * Each scrape round replaces what is stored: a node (or pod) the round did not report is gone. A new point moves
 * the stored last point to previous when it is newer; a point no newer than the last one keeps the previous point
 * (the agent answered from its cache). A counter that went down (a restarted container) has no usage until the
 * next point. A pod has metrics only when every container of its last point has a previous one.
 */
import { type MetricsPoint, type NodeBatch, type PodPoints } from '../scraper/decode';

/** Usage over a window. */
export interface Usage {
  /** When the last point was read (epoch ms). */
  timestamp: number;
  windowMs: number;
  /** CPU, nanocores. */
  cpuNanoCores: number;
  memoryBytes: number;
}

/** A pod's containers' usage, over the earliest of their windows. */
export interface PodUsage {
  timestamp: number;
  windowMs: number;
  containers: { name: string; cpuNanoCores: number; memoryBytes: number }[];
}

interface PodPair {
  last: PodPoints;
  prev: Map<string, MetricsPoint>;
}

/** The usage between two points, or undefined when it cannot be computed (no time between them, counter reset). */
export function usageBetween(last: MetricsPoint, prev: MetricsPoint): Usage | undefined {
  const windowMs = last.timestamp - prev.timestamp;
  if (windowMs <= 0 || last.cpuSeconds < prev.cpuSeconds) return undefined;
  return {
    timestamp: last.timestamp,
    windowMs,
    cpuNanoCores: Math.round(((last.cpuSeconds - prev.cpuSeconds) * 1e9) / (windowMs / 1000)),
    memoryBytes: Math.floor(last.memoryBytes),
  };
}

/** The point to keep as previous when `next` arrives after `last` (and the older `prev`). */
function previous(
  next: MetricsPoint,
  last: MetricsPoint | undefined,
  prev: MetricsPoint | undefined,
): MetricsPoint | undefined {
  if (!last) return undefined;
  if (next.cpuSeconds < last.cpuSeconds) return undefined; // restarted: start again from this point
  if (next.timestamp > last.timestamp) return last;
  return prev && prev.timestamp < next.timestamp ? prev : undefined;
}

/** The last two points of every node and container. */
export class MetricsStorage {
  private nodes = new Map<string, { last: MetricsPoint; prev?: MetricsPoint }>();
  private pods = new Map<string, PodPair>();

  /** Stores one scrape round: the batch of every node that answered, by node name. */
  store(round: ReadonlyMap<string, NodeBatch>): void {
    const nodes = new Map<string, { last: MetricsPoint; prev?: MetricsPoint }>();
    const pods = new Map<string, PodPair>();
    for (const [name, batch] of round) {
      if (batch.node) {
        const old = this.nodes.get(name);
        nodes.set(name, { last: batch.node, prev: previous(batch.node, old?.last, old?.prev) });
      }
      for (const [key, pod] of batch.pods) {
        if (pods.has(key)) continue; // a pod reported by two agents: the first wins, as metrics-server
        const old = this.pods.get(key);
        const prev = new Map<string, MetricsPoint>();
        for (const [container, point] of pod.containers) {
          const p = previous(point, old?.last.containers.get(container), old?.prev.get(container));
          if (p) prev.set(container, p);
        }
        pods.set(key, { last: pod, prev });
      }
    }
    this.nodes = nodes;
    this.pods = pods;
  }

  /** The usage of a node, when it has two points. */
  nodeUsage(name: string): Usage | undefined {
    const n = this.nodes.get(name);
    return n?.prev ? usageBetween(n.last, n.prev) : undefined;
  }

  /** The usage of a pod's containers, when every one of them has two points. */
  podUsage(namespace: string, name: string): PodUsage | undefined {
    const p = this.pods.get(`${namespace}/${name}`);
    if (!p) return undefined;
    const out: PodUsage = { timestamp: 0, windowMs: 0, containers: [] };
    for (const [container, last] of p.last.containers) {
      const prev = p.prev.get(container);
      if (!prev) return undefined;
      const u = usageBetween(last, prev);
      if (!u) continue;
      out.containers.push({ name: container, cpuNanoCores: u.cpuNanoCores, memoryBytes: u.memoryBytes });
      if (out.timestamp === 0 || u.timestamp < out.timestamp) {
        out.timestamp = u.timestamp;
        out.windowMs = u.windowMs;
      }
    }
    out.containers.sort((a, b) => a.name.localeCompare(b.name));
    return out.containers.length ? out : undefined;
  }

  /** Whether any node or pod has metrics (the `metric-storage-ready` check). */
  ready(): boolean {
    for (const n of this.nodes.values()) if (n.prev) return true;
    for (const p of this.pods.values()) if (p.prev.size) return true;
    return false;
  }

  /** How many points are stored, by kind (`metrics_server_storage_points`). */
  points(): { node: number; container: number } {
    let container = 0;
    for (const p of this.pods.values()) container += p.last.containers.size + p.prev.size;
    let node = 0;
    for (const n of this.nodes.values()) node += n.prev ? 2 : 1;
    return { node, container };
  }
}
