/** PrioritySort (1.21 `queuesort/priority_sort.go`): higher priority first, then the earlier queued. */
import { type PluginFactory, type QueuedPodInfo, type QueueSortPlugin } from '../../framework/types';
import { podPriority } from '../helper/helper';

export const NAME = 'PrioritySort';

export class PrioritySort implements QueueSortPlugin {
  readonly name = NAME;
  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
    const pa = podPriority(a.pod);
    const pb = podPriority(b.pod);
    return pa > pb || (pa === pb && a.timestamp < b.timestamp);
  }
}

export const factory: PluginFactory = () => new PrioritySort();
