/**
 * NodeResourcesMostAllocated (1.21): favours the fullest nodes (bin packing) — per resource
 * `requested × 100 / allocatable`, averaged by weight.
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import { type CycleState, type PluginFactory, type ScorePlugin } from '../../framework/types';
import { DEFAULT_RESOURCES, mostRequestedScore, type ResourceSpec, weightedScore } from './resource-allocation';

export const NAME = 'NodeResourcesMostAllocated';

export class MostAllocated implements ScorePlugin {
  readonly name = NAME;
  constructor(private readonly resources: ResourceSpec[] = DEFAULT_RESOURCES) {}
  score(_s: CycleState, pod: Pod, node: NodeInfo): number {
    return weightedScore(node, pod, this.resources, mostRequestedScore);
  }
}

export const factory: PluginFactory = (args) =>
  new MostAllocated((args as { resources?: ResourceSpec[] } | undefined)?.resources ?? DEFAULT_RESOURCES);
