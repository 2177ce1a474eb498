/**
 * LimitPodHardAntiAffinityTopology: a pod's required anti-affinity terms may only use the
 * `kubernetes.io/hostname` topology key (anything wider would let one pod keep a whole zone to itself).
 */
import { type Pod } from '@platform/api';

import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { isPod } from './util';

export const NAME = 'LimitPodHardAntiAffinityTopology';

const HOSTNAME = 'kubernetes.io/hostname';

/** The LimitPodHardAntiAffinityTopology plugin. */
export class LimitPodHardAntiAffinityTopologyPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a) || !a.object) return;
    const terms =
      (a.object as Pod).spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
    for (const t of terms) {
      if (t.topologyKey !== HOSTNAME) {
        throw admissionForbidden(
          a,
          `affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${t.topologyKey} but only key ${HOSTNAME} is allowed`,
        );
      }
    }
  }
}

export const factory: PluginFactory = () => new LimitPodHardAntiAffinityTopologyPlugin();
