/**
 * SecurityContextDeny (model: Kubernetes 1.21 `plugin/pkg/admission/securitycontext/scdeny`): pods may not set the
 * security context fields that change who they run as (`runAsUser`, `seLinuxOptions`, `supplementalGroups`,
 * `fsGroup`, and the containers' `runAsUser` and `seLinuxOptions`).
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

export const NAME = 'SecurityContextDeny';

/** The SecurityContextDeny plugin. */
export class SecurityContextDenyPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPod(a) || !a.object) return;
    const spec = (a.object as Pod).spec;
    const sc = spec?.securityContext;
    const no = (what: string): never => {
      throw admissionForbidden(a, `${what} is forbidden`);
    };
    if (sc?.supplementalGroups !== undefined) no('pod.Spec.SecurityContext.SupplementalGroups');
    if (sc?.seLinuxOptions !== undefined) no('pod.Spec.SecurityContext.SELinuxOptions');
    if (sc?.runAsUser !== undefined) no('pod.Spec.SecurityContext.RunAsUser');
    if (sc?.fsGroup !== undefined) no('pod.Spec.SecurityContext.FSGroup');
    for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
      if (c.securityContext?.seLinuxOptions !== undefined) no('SecurityContext.SELinuxOptions');
      if (c.securityContext?.runAsUser !== undefined) no('SecurityContext.RunAsUser');
    }
  }
}

export const factory: PluginFactory = () => new SecurityContextDenyPlugin();
