/**
 * NodePreferAvoidPods (1.21): a node whose `scheduler.alpha.kubernetes.io/preferAvoidPods` annotation names the
 * pod's controller (ReplicationController or ReplicaSet, by uid) scores 0, every other node 100 (weight 10000).
 */
import { type Pod } from '@platform/api';

import { type NodeInfo } from '../../framework/node-info';
import { type CycleState, MAX_NODE_SCORE, type PluginFactory, type ScorePlugin } from '../../framework/types';

export const NAME = 'NodePreferAvoidPods';
export const ANNOTATION = 'scheduler.alpha.kubernetes.io/preferAvoidPods';

interface AvoidPods {
  preferAvoidPods?: { podSignature?: { podController?: { kind?: string; uid?: string } } }[];
}

export class NodePreferAvoidPods implements ScorePlugin {
  readonly name = NAME;
  score(_s: CycleState, pod: Pod, node: NodeInfo): number {
    const text = node.node?.metadata?.annotations?.[ANNOTATION];
    if (!text) return MAX_NODE_SCORE;
    const ref = pod.metadata?.ownerReferences?.find((o) => o.controller);
    if (!ref || (ref.kind !== 'ReplicationController' && ref.kind !== 'ReplicaSet')) return MAX_NODE_SCORE;
    let avoid: AvoidPods;
    try {
      avoid = JSON.parse(text) as AvoidPods;
    } catch {
      return MAX_NODE_SCORE;
    }
    for (const a of avoid.preferAvoidPods ?? []) {
      const c = a.podSignature?.podController;
      if (c?.kind === ref.kind && c.uid === ref.uid) return 0;
    }
    return MAX_NODE_SCORE;
  }
}

export const factory: PluginFactory = () => new NodePreferAvoidPods();
