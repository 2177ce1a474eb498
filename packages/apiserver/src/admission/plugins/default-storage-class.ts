/**
 * DefaultStorageClass (model: Kubernetes 1.21 `plugin/pkg/admission/storage/storageclass/setdefault`): a new
 * PersistentVolumeClaim that names no class (no `spec.storageClassName`, not even `""`, and no beta class
 * annotation) gets the class annotated as the default. Without a default class it is left alone; with several the
 * claim is refused, as the default is ambiguous.
 */
import { isDefaultStorageClass, type PersistentVolumeClaim, type StorageClass } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  isResource,
  type Operation,
  type PluginFactory,
} from '../interfaces';

export const NAME = 'DefaultStorageClass';

const STORAGE_CLASSES = { group: 'storage.platform', resource: 'storageclasses' };
/** The class annotation that predates `spec.storageClassName`. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** The DefaultStorageClass plugin. */
export class DefaultStorageClassPlugin implements AdmissionPlugin {
  readonly name = NAME;
  constructor(private readonly client: InternalClient) {}

  handles(op: Operation): boolean {
    return op === 'CREATE';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isResource(a, '', 'persistentvolumeclaims')) return;
    const pvc = a.object as PersistentVolumeClaim | undefined;
    if (!pvc?.spec || pvc.spec.storageClassName !== undefined) return;
    if (pvc.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] !== undefined) return;
    if (!this.client.has(STORAGE_CLASSES)) return;
    const all = (await this.client.list(STORAGE_CLASSES, '')) as StorageClass[];
    const defaults = all.filter((sc) => isDefaultStorageClass(sc.metadata?.annotations));
    if (defaults.length === 0) return;
    if (defaults.length > 1) throw admissionForbidden(a, `${defaults.length} default StorageClasses were found`);
    pvc.spec.storageClassName = defaults[0]!.metadata?.name ?? '';
  }
}

export const factory: PluginFactory = (c) => new DefaultStorageClassPlugin(c.client);
