/**
 * NodeResourcesBalancedAllocation (1.21): favours nodes whose CPU and memory fractions (with the pod) are close —
 * `(1 − |cpu − memory|) × 100`, 0 when either fraction reaches 1.
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import { CPU, MEMORY } from '../../framework/resource';
import { type CycleState, MAX_NODE_SCORE, type PluginFactory, type ScorePlugin } from '../../framework/types';
import { allocatableAndRequested } from './resource-allocation';

export const NAME = 'NodeResourcesBalancedAllocation';

function fraction(requested: number, capacity: number): number {
  return capacity === 0 ? 1 : requested / capacity;
}

export class BalancedAllocation implements ScorePlugin {
  readonly name = NAME;
  score(_s: CycleState, pod: Pod, node: NodeInfo): number {
    const c = allocatableAndRequested(node, pod, CPU);
    const m = allocatableAndRequested(node, pod, MEMORY);
    const cf = fraction(c.req, c.alloc);
    const mf = fraction(m.req, m.alloc);
    if (cf >= 1 || mf >= 1) return 0;
    return Math.trunc((1 - Math.abs(cf - mf)) * MAX_NODE_SCORE);
  }
}

export const factory: PluginFactory = () => new BalancedAllocation();
