/**
 * RuntimeClass (model: Kubernetes 1.21 `plugin/pkg/admission/runtimeclass`): a new pod naming a RuntimeClass gets
 * the class's pod overhead (PodOverhead, beta and on in 1.21) and scheduling constraints (its node selector merged
 * into the pod's, its tolerations added); a pod naming a class that does not exist, giving an overhead other than
 * its class's, or whose node selector conflicts with the class's, is refused.
 */
import { type Pod, type RuntimeClass } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { isPod, podOf } from './util';

export const NAME = 'RuntimeClass';

const RUNTIME_CLASSES = { group: 'node.platform', resource: 'runtimeclasses' };

function sameOverhead(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && String(a[k]) === String(b[k]));
}

/** The RuntimeClass plugin. */
export class RuntimeClassPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a)) return;
    const pod = podOf(a);
    const name = pod?.spec?.runtimeClassName;
    if (!pod?.spec || !name || !this.client.has(RUNTIME_CLASSES)) return;
    const rc = (await this.client.get(RUNTIME_CLASSES, '', name, { cached: true })) as RuntimeClass | undefined;
    if (!rc) throw admissionForbidden(a, `pod rejected: RuntimeClass "${name}" not found`);
    const spec = pod.spec as NonNullable<Pod['spec']> & { overhead?: Record<string, string> };
    const overhead = rc.overhead?.podFixed as Record<string, string> | undefined;
    if (overhead) {
      if (spec.overhead && !sameOverhead(spec.overhead, overhead))
        throw admissionForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      spec.overhead = { ...overhead };
    }
    const scheduling = rc.scheduling;
    if (!scheduling) return;
    const selector = { ...(spec.nodeSelector ?? {}) };
    for (const [k, v] of Object.entries(scheduling.nodeSelector ?? {})) {
      if (k in selector && selector[k] !== v) {
        throw admissionForbidden(
          a,
          `pod rejected: conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${selector[k]}`,
        );
      }
      selector[k] = v;
    }
    if (Object.keys(selector).length > 0) spec.nodeSelector = selector;
    const tolerations = [...(spec.tolerations ?? [])];
    for (const t of scheduling.tolerations ?? []) {
      if (!tolerations.some((x) => JSON.stringify(x) === JSON.stringify(t))) tolerations.push(t);
    }
    if (tolerations.length > 0) spec.tolerations = tolerations;
  }
}

export const factory: PluginFactory = (c) => new RuntimeClassPlugin(c.client);
