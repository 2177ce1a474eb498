/**
 * DenyServiceExternalIPs: no service may gain `spec.externalIPs` (CVE-2020-8554); an update may keep or drop the
 * addresses it already has.
 */
import { type Service } from '@platform/api';

import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';

export const NAME = 'DenyServiceExternalIPs';

/** The DenyServiceExternalIPs plugin. */
export class DenyServiceExternalIPsPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.resource.group !== '' || a.resource.resource !== 'services' || a.subresource !== '') return;
    const ips = (a.object as Service | undefined)?.spec?.externalIPs ?? [];
    if (ips.length === 0) return;
    const old = new Set((a.oldObject as Service | undefined)?.spec?.externalIPs ?? []);
    if (a.operation === 'UPDATE' && ips.every((ip) => old.has(ip))) return;
    throw admissionForbidden(a, 'Use of external IPs is denied by admission control');
  }
}

export const factory: PluginFactory = () => new DenyServiceExternalIPsPlugin();
