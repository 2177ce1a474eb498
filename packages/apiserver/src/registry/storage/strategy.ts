/**
 * The strategies of storage.platform's kinds (model: Kubernetes 1.21 `pkg/registry/storage`), the same in v1 and
 * v1beta1. A VolumeAttachment's status is written through its subresource.
 */
import {
  type CSIDriver,
  type CSINode,
  type CSIStorageCapacity,
  type Kind,
  type StorageClass,
  type VolumeAttachment,
} from '@platform/api';

import { defaultStrategy, statusStrategy } from '../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../rest/rest';
import {
  validateCSIDriver,
  validateCSIDriverUpdate,
  validateCSINode,
  validateCSINodeUpdate,
  validateCSIStorageCapacity,
  validateStorageClass,
  validateStorageClassUpdate,
  validateVolumeAttachment,
  validateVolumeAttachmentStatus,
  validateVolumeAttachmentUpdate,
} from './validation';

/** The strategy of `storageclasses`. */
export function storageClassStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateStorageClass(obj as StorageClass),
    validateUpdate: (_ctx, obj, old) => validateStorageClassUpdate(obj as StorageClass, old as StorageClass),
  });
}

/** The strategy of `csidrivers`. */
export function csiDriverStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateCSIDriver(obj as CSIDriver),
    validateUpdate: (_ctx, obj, old) => validateCSIDriverUpdate(obj as CSIDriver, old as CSIDriver),
  });
}

/** The strategy of `csinodes`. */
export function csiNodeStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateCSINode(obj as CSINode),
    validateUpdate: (_ctx, obj, old) => validateCSINodeUpdate(obj as CSINode, old as CSINode),
  });
}

/** The strategy of `volumeattachments`. */
export function volumeAttachmentStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateVolumeAttachment(obj as VolumeAttachment),
    validateUpdate: (_ctx, obj, old) =>
      validateVolumeAttachmentUpdate(obj as VolumeAttachment, old as VolumeAttachment),
  });
}

/** The strategy of `volumeattachments/status`. */
export function volumeAttachmentStatusStrategy(): UpdateStrategy {
  return statusStrategy({ validateUpdate: (_ctx, obj) => validateVolumeAttachmentStatus(obj as VolumeAttachment) });
}

/** The strategy of `csistoragecapacities`. */
export function csiStorageCapacityStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateCSIStorageCapacity(obj as CSIStorageCapacity),
    validateUpdate: (_ctx, obj) => validateCSIStorageCapacity(obj as CSIStorageCapacity),
  });
}
