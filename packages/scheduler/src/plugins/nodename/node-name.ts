/** NodeName (1.21 `nodename`): a pod that names its node (`spec.nodeName`) fits only that node. */
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

export const NAME = 'NodeName';
export const ERR_REASON = "node(s) didn't match the requested hostname";

export class NodeName implements FilterPlugin, EnqueueExtensions {
  readonly name = NAME;
  eventsToRegister(): ClusterEvent[] {
    return ['NodeAdd'];
  }
  filter(_s: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    const want = pod.spec?.nodeName;
    return !want || want === node.name ? undefined : unresolvable(ERR_REASON);
  }
}

export const factory: PluginFactory = () => new NodeName();
