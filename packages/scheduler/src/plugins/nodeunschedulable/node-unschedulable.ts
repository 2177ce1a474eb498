/**
 * NodeUnschedulable (1.21 `nodeunschedulable`): a cordoned node (`spec.unschedulable`) takes only pods that
 * tolerate the `node.kubernetes.io/unschedulable:NoSchedule` taint.
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  type FilterPlugin,
  type PluginFactory,
  type Status,
  unresolvable,
} from '../../framework/types';
import { taintTolerated } from '../helper/helper';

export const NAME = 'NodeUnschedulable';
export const ERR_REASON_UNKNOWN_CONDITION = 'node(s) had unknown conditions';
export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

export class NodeUnschedulable implements FilterPlugin, EnqueueExtensions {
  readonly name = NAME;
  eventsToRegister(): ClusterEvent[] {
    return ['NodeAdd', 'NodeUpdate'];
  }
  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    if (!node.node) return unresolvable(ERR_REASON_UNKNOWN_CONDITION);
    if (!node.node.spec?.unschedulable) return undefined;
    const tolerated = taintTolerated({ key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' }, pod.spec?.tolerations);
    return tolerated ? undefined : unresolvable(ERR_REASON_UNSCHEDULABLE);
  }
}

export const factory: PluginFactory = () => new NodeUnschedulable();
