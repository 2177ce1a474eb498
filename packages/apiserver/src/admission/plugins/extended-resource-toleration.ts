/**
 * ExtendedResourceToleration: a new pod that requests an extended resource (a fully qualified name outside the
 * `kubernetes.io` domain, such as `example.com/gpu`) tolerates the `NoSchedule` taint of that name, so nodes with
 * such devices can be tainted to keep other pods off.
 */
import { type Pod, type Toleration } from '@platform/api';

import { type AdmissionAttributes, type AdmissionPlugin, type Operation, type PluginFactory } from '../interfaces';
import { isPod } from './util';

export const NAME = 'ExtendedResourceToleration';

/** Whether a resource name is an extended resource. */
export function isExtendedResource(name: string): boolean {
  const i = name.indexOf('/');
  if (i <= 0 || name.startsWith('requests.')) return false;
  const domain = name.slice(0, i);
  return domain !== 'kubernetes.io' && !domain.endsWith('.kubernetes.io');
}

/** The ExtendedResourceToleration plugin. */
export class ExtendedResourceTolerationPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a) || !a.object) return;
    const pod = a.object as Pod;
    if (!pod.spec) return;
    const names = new Set<string>();
    for (const c of [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])]) {
      const r = c.resources as { requests?: object; limits?: object } | undefined;
      for (const n of [...Object.keys(r?.requests ?? {}), ...Object.keys(r?.limits ?? {})]) {
        if (isExtendedResource(n)) names.add(n);
      }
    }
    if (names.size === 0) return;
    const tolerations: Toleration[] = (pod.spec.tolerations ??= []);
    for (const n of [...names].sort()) {
      if (
        !tolerations.some((t) => t.key === n && t.operator === 'Exists' && (!t.effect || t.effect === 'NoSchedule'))
      ) {
        tolerations.push({ key: n, operator: 'Exists', effect: 'NoSchedule' });
      }
    }
  }
}

export const factory: PluginFactory = () => new ExtendedResourceTolerationPlugin();
