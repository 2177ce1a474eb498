/** NodePorts (1.21 `nodeports`): the host ports the pod asks for must be free on the node. */
import { type ContainerPort, type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import {
  type ClusterEvent,
  type CycleState,
  type EnqueueExtensions,
  type FilterPlugin,
  type PluginFactory,
  type PreFilterPlugin,
  type Status,
  unschedulable,
} from '../../framework/types';

export const NAME = 'NodePorts';
export const ERR_REASON = "node(s) didn't have free ports for the requested pod ports";
const KEY = `PreFilter${NAME}`;

/** The host ports a pod asks for. */
export function podHostPorts(pod: Pod): ContainerPort[] {
  const out: ContainerPort[] = [];
  for (const c of pod.spec?.containers ?? []) for (const p of c.ports ?? []) if (p.hostPort) out.push(p);
  return out;
}

export class NodePorts implements PreFilterPlugin, FilterPlugin, EnqueueExtensions {
  readonly name = NAME;
  eventsToRegister(): ClusterEvent[] {
    return ['AssignedPodDelete', 'NodeAdd'];
  }
  preFilter(state: CycleState, pod: Pod): Status | undefined {
    state.write(KEY, podHostPorts(pod));
    return undefined;
  }
  filter(state: CycleState, pod: Pod, node: NodeInfo): Status | undefined {
    const ports = state.read<ContainerPort[]>(KEY) ?? podHostPorts(pod);
    for (const p of ports)
      if (node.usedPorts.checkConflict(p.hostIP, p.protocol, p.hostPort ?? 0)) return unschedulable(ERR_REASON);
    return undefined;
  }
}

export const factory: PluginFactory = () => new NodePorts();
