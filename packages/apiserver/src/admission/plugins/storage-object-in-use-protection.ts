/**
 * StorageObjectInUseProtection (model: Kubernetes 1.21 `plugin/pkg/admission/storage/storageobjectinuseprotection`):
 * a new PersistentVolume gets the `kubernetes.io/pv-protection` finalizer and a new PersistentVolumeClaim the
 * `kubernetes.io/pvc-protection` one, so that neither goes while in use: the controller manager's pv-protection and
 * pvc-protection controllers take them off once the volume is unbound or no pod uses the claim.
 */
import { type ApiObject } from '../../storage/api-object';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  isResource,
  type Operation,
  type PluginFactory,
} from '../interfaces';

export const NAME = 'StorageObjectInUseProtection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

/** The StorageObjectInUseProtection plugin. */
export class StorageObjectInUseProtectionPlugin implements AdmissionPlugin {
  readonly name = NAME;

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const finalizer = isResource(a, '', 'persistentvolumes')
      ? PV_PROTECTION_FINALIZER
      : isResource(a, '', 'persistentvolumeclaims')
        ? PVC_PROTECTION_FINALIZER
        : undefined;
    const obj = a.object as ApiObject | undefined;
    if (!finalizer || !obj) return;
    const meta = (obj.metadata ??= {});
    if (meta.finalizers?.includes(finalizer)) return;
    meta.finalizers = [...(meta.finalizers ?? []), finalizer];
  }
}

export const factory: PluginFactory = () => new StorageObjectInUseProtectionPlugin();
