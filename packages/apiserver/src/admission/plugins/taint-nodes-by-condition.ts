/**
 * TaintNodesByCondition: a new Node gets the `node.kubernetes.io/not-ready:NoSchedule` taint, so nothing is
 * scheduled on it before the node controller has seen it ready (and removes the taint).
 */
import { type Node } from '@platform/api';

import { type AdmissionAttributes, type AdmissionPlugin, type Operation, type PluginFactory } from '../interfaces';
import { NOT_READY_TAINT } from './default-toleration-seconds';

export const NAME = 'TaintNodesByCondition';

/** The TaintNodesByCondition plugin. */
export class TaintNodesByConditionPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group !== '' || a.resource.resource !== 'nodes' || a.subresource !== '') return;
    const node = a.object as Node | undefined;
    if (!node) return;
    node.spec ??= {};
    const taints = (node.spec.taints ??= []);
    if (!taints.some((t) => t.key === NOT_READY_TAINT && t.effect === 'NoSchedule')) {
      taints.push({ key: NOT_READY_TAINT, effect: 'NoSchedule' });
    }
  }
}

export const factory: PluginFactory = () => new TaintNodesByConditionPlugin();
