/**
 * NodeResourcesLeastAllocated (1.21): favours nodes with more left over — per resource
 * `(allocatable − requested) × 100 / allocatable`, averaged by weight. The default resource scorer.
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import { type CycleState, type PluginFactory, type ScorePlugin } from '../../framework/types';
import { DEFAULT_RESOURCES, leastRequestedScore, type ResourceSpec, weightedScore } from './resource-allocation';

export const NAME = 'NodeResourcesLeastAllocated';

export class LeastAllocated implements ScorePlugin {
  readonly name = NAME;
  constructor(private readonly resources: ResourceSpec[] = DEFAULT_RESOURCES) {}
  score(_s: CycleState, pod: Pod, node: NodeInfo): number {
    return weightedScore(node, pod, this.resources, leastRequestedScore);
  }
}

export const factory: PluginFactory = (args) =>
  new LeastAllocated((args as { resources?: ResourceSpec[] } | undefined)?.resources ?? DEFAULT_RESOURCES);
