/**
 * The resource-allocation scorers (1.21 `noderesources/resource_allocation.go`): for each configured resource,
 * what the node would have requested with the pod on it and its allocatable; then a scorer turns the pairs into
 * a score in [0, 100]. CPU and memory count the scoring defaults (100m, 200 MiB) for unset requests.
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import { CPU, MEMORY, podRequests } from '../../framework/resource';
import { MAX_NODE_SCORE } from '../../framework/types';

/** A resource and its weight. */
export interface ResourceSpec {
  name: string;
  weight: number;
}

/** cpu and memory, weight 1 each. */
export const DEFAULT_RESOURCES: ResourceSpec[] = [
  { name: CPU, weight: 1 },
  { name: MEMORY, weight: 1 },
];

/** What the node would request with the pod on it, and its allocatable, for one resource. */
export function allocatableAndRequested(node: NodeInfo, pod: Pod, resource: string): { alloc: number; req: number } {
  const pr = podRequests(pod);
  switch (resource) {
    case CPU:
      return { alloc: node.allocatable.milliCPU, req: node.nonZeroRequested.milliCPU + pr.nonZeroCPU };
    case MEMORY:
      return { alloc: node.allocatable.memory, req: node.nonZeroRequested.memory + pr.nonZeroMemory };
    default:
      return { alloc: node.allocatable.get(resource), req: node.requested.get(resource) + pr.request.get(resource) };
  }
}

/** Weighted integer mean of a per-resource score (Go's int64 arithmetic). */
export function weightedScore(
  node: NodeInfo,
  pod: Pod,
  resources: readonly ResourceSpec[],
  f: (requested: number, capacity: number) => number,
): number {
  let score = 0;
  let weights = 0;
  for (const r of resources) {
    const { alloc, req } = allocatableAndRequested(node, pod, r.name);
    score += f(req, alloc) * r.weight;
    weights += r.weight;
  }
  return weights === 0 ? 0 : Math.trunc(score / weights);
}

/** `(capacity − requested) × 100 / capacity`, 0 when over capacity. */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** `requested × 100 / capacity`, 0 when over capacity. */
export function mostRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc((requested * MAX_NODE_SCORE) / capacity);
}
