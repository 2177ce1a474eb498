/**
 * ImageLocality (1.21 `imagelocality`): favours nodes that already have the pod's images, by size, scaled by how
 * many nodes have each image (spread images count less), clamped between 23 MB and 1000 MB per container.
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import {
  type CycleState,
  type FrameworkHandle,
  MAX_NODE_SCORE,
  type PluginFactory,
  type ScorePlugin,
} from '../../framework/types';

export const NAME = 'ImageLocality';
const MB = 1024 * 1024;
export const MIN_THRESHOLD = 23 * MB;
export const MAX_CONTAINER_THRESHOLD = 1000 * MB;

/** `image` with `:latest` when it has no tag (`normalizedImageName`). */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(':') <= name.lastIndexOf('/') ? `${name}:latest` : name;
}

/** The score of a sum of image sizes for `numContainers` containers. */
export function calculatePriority(sum: number, numContainers: number): number {
  const max = MAX_CONTAINER_THRESHOLD * numContainers;
  const s = Math.min(Math.max(sum, MIN_THRESHOLD), max);
  return Math.trunc((MAX_NODE_SCORE * (s - MIN_THRESHOLD)) / (max - MIN_THRESHOLD));
}

export class ImageLocality implements ScorePlugin {
  readonly name = NAME;
  constructor(private readonly handle: FrameworkHandle) {}
  score(_s: CycleState, pod: Pod, node: NodeInfo): number {
    const total = this.handle.snapshot().list().length;
    const containers = pod.spec?.containers ?? [];
    let sum = 0;
    if (node.imageStates.size && total)
      for (const c of containers) {
        const st = node.imageStates.get(normalizedImageName(c.image ?? ''));
        if (st) sum += Math.trunc((st.size * st.numNodes) / total);
      }
    return calculatePriority(sum, containers.length);
  }
}

export const factory: PluginFactory = (_a, handle) => new ImageLocality(handle);
