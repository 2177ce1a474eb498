/**
 * DefaultIngressClass (model: Kubernetes 1.21 `plugin/pkg/admission/network/defaultingressclass`): a new
 * networking.platform Ingress that names no class (no `spec.ingressClassName` and no `kubernetes.io/ingress.class`
 * annotation) gets the IngressClass annotated as the default. Without a default it is left alone; with several the
 * Ingress is refused. As in 1.21, Ingresses written through extensions/v1beta1 are not defaulted.
 */
import {
  INGRESS_CLASS_ANNOTATION,
  INGRESS_CLASS_DEFAULT_ANNOTATION,
  type Ingress,
  type IngressClass,
} from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  isResource,
  type Operation,
  type PluginFactory,
} from '../interfaces';

export const NAME = 'DefaultIngressClass';

const INGRESS_CLASSES = { group: 'networking.platform', resource: 'ingressclasses' };

/** The DefaultIngressClass plugin. */
export class DefaultIngressClassPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isResource(a, 'networking.platform', 'ingresses')) return;
    const ing = a.object as Ingress | undefined;
    if (!ing) return;
    if (ing.spec?.ingressClassName !== undefined) return;
    if (ing.metadata?.annotations?.[INGRESS_CLASS_ANNOTATION] !== undefined) return;
    if (!this.client.has(INGRESS_CLASSES)) return;
    const all = (await this.client.list(INGRESS_CLASSES, '')) as IngressClass[];
    const defaults = all.filter((c) => c.metadata?.annotations?.[INGRESS_CLASS_DEFAULT_ANNOTATION] === 'true');
    if (defaults.length === 0) return;
    if (defaults.length > 1)
      throw admissionForbidden(a, `${defaults.length} default IngressClasses were found, only 1 allowed`);
    ing.spec = { ...ing.spec, ingressClassName: defaults[0]!.metadata?.name ?? '' };
  }
}

export const factory: PluginFactory = (c) => new DefaultIngressClassPlugin(c.client);
