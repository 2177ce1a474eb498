/**
 * Priority (model: Kubernetes 1.21 `plugin/pkg/admission/priority`): a new pod's `priorityClassName` resolves to
 * its `priority` and `preemptionPolicy`; a pod without one gets the global default class (the lowest-valued one if
 * several claim it), or priority 0. A pod may not give a priority or policy that differs from its class's. Updates
 * keep the priority the pod was created with.
 */
import { type Pod, type PriorityClass } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { isPod, podOf } from './util';

export const NAME = 'Priority';

const PRIORITY_CLASSES = { group: 'scheduling.platform', resource: 'priorityclasses' };

/** The built-in classes, valid even before the bootstrap has stored them. */
export const SYSTEM_PRIORITY_CLASSES: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

/** The Priority plugin. */
export class PriorityPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a)) return;
    const pod = podOf(a);
    if (!pod?.spec) return;
    if (a.operation === 'UPDATE') {
      const old = (a.oldObject as Pod | undefined)?.spec;
      if (old?.priority !== undefined && pod.spec.priority === undefined) pod.spec.priority = old.priority;
      if (old?.preemptionPolicy !== undefined && pod.spec.preemptionPolicy === undefined) {
        pod.spec.preemptionPolicy = old.preemptionPolicy;
      }
      return;
    }
    let value: number;
    let policy: string | undefined;
    const name = pod.spec.priorityClassName;
    if (!name) {
      const def = await this.globalDefault();
      value = def?.value ?? 0;
      policy = def?.preemptionPolicy ?? undefined;
      if (def?.metadata?.name) pod.spec.priorityClassName = def.metadata.name;
    } else {
      const pc = this.client.has(PRIORITY_CLASSES)
        ? ((await this.client.get(PRIORITY_CLASSES, '', name, { cached: true })) as PriorityClass | undefined)
        : undefined;
      if (pc) {
        value = pc.value;
        policy = pc.preemptionPolicy ?? undefined;
      } else if (name in SYSTEM_PRIORITY_CLASSES) {
        value = SYSTEM_PRIORITY_CLASSES[name] as number;
      } else {
        throw admissionForbidden(a, `no PriorityClass with name ${name} was found`);
      }
    }
    policy ??= 'PreemptLowerPriority';
    if (pod.spec.priority !== undefined && pod.spec.priority !== null && pod.spec.priority !== value) {
      throw admissionForbidden(
        a,
        `the integer value of priority (${pod.spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`,
      );
    }
    pod.spec.priority = value;
    if (pod.spec.preemptionPolicy && pod.spec.preemptionPolicy !== policy) {
      throw admissionForbidden(
        a,
        `the string value of PreemptionPolicy (${pod.spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
      );
    }
    pod.spec.preemptionPolicy = policy as NonNullable<Pod['spec']>['preemptionPolicy'];
  }

  private async globalDefault(): Promise<PriorityClass | undefined> {
    if (!this.client.has(PRIORITY_CLASSES)) return undefined;
    const all = (await this.client.list(PRIORITY_CLASSES, '')) as PriorityClass[];
    let best: PriorityClass | undefined;
    for (const pc of all) if (pc.globalDefault && (!best || pc.value < best.value)) best = pc;
    return best;
  }
}

export const factory: PluginFactory = (c) => new PriorityPlugin(c.client);
