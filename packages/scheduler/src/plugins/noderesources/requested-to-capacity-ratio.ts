/**
 * RequestedToCapacityRatio (1.21): a broken-line function of each resource's utilization, given as points
 * (`utilization` 0–100, `score` 0–10, scaled ×10), averaged by weight and rounded.
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import { type CycleState, MAX_NODE_SCORE, type PluginFactory, type ScorePlugin } from '../../framework/types';
import { allocatableAndRequested, DEFAULT_RESOURCES, type ResourceSpec } from './resource-allocation';

export const NAME = 'RequestedToCapacityRatio';
/** The highest score of a shape point in the configuration. */
export const MAX_CUSTOM_PRIORITY_SCORE = 10;

/** A point of the function. */
export interface UtilizationShapePoint {
  utilization: number;
  score: number;
}

/** RequestedToCapacityRatioArgs. */
export interface RequestedToCapacityRatioArgs {
  shape?: UtilizationShapePoint[];
  resources?: ResourceSpec[];
}

/** The broken-line function through the points (sorted by utilization), in Go's integer arithmetic. */
export function brokenLinearFunction(shape: readonly UtilizationShapePoint[]): (p: number) => number {
  return (p) => {
    for (let i = 0; i < shape.length; i++) {
      const s = shape[i] as UtilizationShapePoint;
      if (p <= s.utilization) {
        if (i === 0) return s.score;
        const prev = shape[i - 1] as UtilizationShapePoint;
        return (
          prev.score +
          Math.trunc(((s.score - prev.score) * (p - prev.utilization)) / (s.utilization - prev.utilization))
        );
      }
    }
    return (shape[shape.length - 1] as UtilizationShapePoint).score;
  };
}

export class RequestedToCapacityRatio implements ScorePlugin {
  readonly name = NAME;
  private readonly f: (requested: number, capacity: number) => number;
  private readonly resources: ResourceSpec[];
  constructor(args: RequestedToCapacityRatioArgs = {}) {
    const shape = (
      args.shape ?? [
        { utilization: 0, score: 10 },
        { utilization: 100, score: 0 },
      ]
    ).map((p) => ({ utilization: p.utilization, score: (p.score * MAX_NODE_SCORE) / MAX_CUSTOM_PRIORITY_SCORE }));
    const raw = brokenLinearFunction(shape);
    this.f = (requested, capacity) => {
      if (capacity === 0 || requested > capacity) return raw(100);
      return raw(100 - Math.trunc(((capacity - requested) * 100) / capacity));
    };
    this.resources = args.resources?.length ? args.resources : DEFAULT_RESOURCES;
  }
  score(_s: CycleState, pod: Pod, node: NodeInfo): number {
    let score = 0;
    let weights = 0;
    for (const r of this.resources) {
      const { alloc, req } = allocatableAndRequested(node, pod, r.name);
      score += this.f(req, alloc) * r.weight;
      weights += r.weight;
    }
    return weights === 0 ? 0 : Math.round(score / weights);
  }
}

export const factory: PluginFactory = (args) =>
  new RequestedToCapacityRatio((args ?? {}) as RequestedToCapacityRatioArgs);
