/**
 * PersistentVolumeClaimResize (model: Kubernetes 1.21 `plugin/pkg/admission/storage/persistentvolume/resize`): a
 * claim's storage request may grow only when the claim is bound and its StorageClass (the same before and after)
 * sets `allowVolumeExpansion: true`; the persistentvolume-expander controller then grows the volume. Shrinking and
 * other changes are left to validation.
 */
import { claimClass, parseQuantity, type PersistentVolumeClaim, type StorageClass } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  isResource,
  type Operation,
  type PluginFactory,
} from '../interfaces';

export const NAME = 'PersistentVolumeClaimResize';

const STORAGE_CLASSES = { group: 'storage.platform', resource: 'storageclasses' };

function storageRequest(pvc: PersistentVolumeClaim): ReturnType<typeof parseQuantity> | undefined {
  const q = pvc.spec?.resources?.requests?.storage;
  try {
    return q === undefined ? undefined : parseQuantity(String(q));
  } catch {
    return undefined; // validation reports it
  }
}

/** The PersistentVolumeClaimResize plugin. */
export class PersistentVolumeClaimResizePlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isResource(a, '', 'persistentvolumeclaims')) return;
    const pvc = a.object as PersistentVolumeClaim | undefined;
    const old = a.oldObject as PersistentVolumeClaim | undefined;
    if (!pvc || !old) return;
    const size = storageRequest(pvc);
    const oldSize = storageRequest(old);
    if (!size || !oldSize || size.cmp(oldSize) <= 0) return;
    if (old.status?.phase !== 'Bound')
      throw admissionForbidden(a, 'Only bound persistent volume claims can be expanded');
    if (!(await this.allowResize(pvc, old)))
      throw admissionForbidden(
        a,
        'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
      );
  }

  private async allowResize(pvc: PersistentVolumeClaim, old: PersistentVolumeClaim): Promise<boolean> {
    const cls = claimClass(pvc);
    if (cls === '' || cls !== claimClass(old) || !this.client.has(STORAGE_CLASSES)) return false;
    const sc = (await this.client.get(STORAGE_CLASSES, '', cls, { cached: true })) as StorageClass | undefined;
    return sc?.allowVolumeExpansion === true;
  }
}

export const factory: PluginFactory = (c) => new PersistentVolumeClaimResizePlugin(c.client);
