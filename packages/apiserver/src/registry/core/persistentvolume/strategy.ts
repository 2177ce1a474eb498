/**
 * The PersistentVolume and PersistentVolumeClaim strategies (model: Kubernetes 1.21
 * `pkg/registry/core/persistentvolume{,claim}/strategy.go`, `ValidatePersistentVolume`,
 * `ValidatePersistentVolumeClaim{,Update}`): a volume has a storage capacity, access modes and exactly one volume
 * source, and starts Pending; a claim has access modes and a storage request, starts Pending, and afterwards may
 * change only its requested resources.
 */
import {
  type FieldError,
  FieldPath,
  field,
  type Kind,
  type PersistentVolume,
  type PersistentVolumeClaim,
  semanticEqual,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { parseQuantityValue, quantityError } from '../pod/quantity';

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce'];
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const PV_SPEC_FIELDS = new Set([
  'capacity',
  'accessModes',
  'claimRef',
  'persistentVolumeReclaimPolicy',
  'storageClassName',
  'mountOptions',
  'volumeMode',
  'nodeAffinity',
]);

function validateAccessModes(modes: string[] | undefined, path: FieldPath): FieldError[] {
  if (!modes || modes.length === 0) return [field.required(path, '')];
  return modes.filter((m) => !ACCESS_MODES.includes(m)).map((m) => field.notSupported(path, m, ACCESS_MODES));
}

function validateStorage(map: Record<string, unknown> | undefined, path: FieldPath): FieldError[] {
  const storage = map?.storage;
  if (storage === undefined) return [field.required(path.key('storage'), '')];
  const q = parseQuantityValue(storage);
  if (!q) return [field.invalid(path.key('storage'), storage, quantityError(storage))];
  return q.sign() < 0 ? [field.invalid(path.key('storage'), storage, 'must be greater than or equal to 0')] : [];
}

/** Validation of a PersistentVolume. */
export function validatePersistentVolume(pv: PersistentVolume): FieldError[] {
  const spec = pv.spec ?? {};
  const path = new FieldPath('spec');
  const errs = [
    ...validateAccessModes(spec.accessModes, path.child('accessModes')),
    ...validateStorage(spec.capacity, path.child('capacity')),
  ];
  const policy = spec.persistentVolumeReclaimPolicy;
  if (policy && !RECLAIM_POLICIES.includes(policy)) {
    errs.push(field.notSupported(path.child('persistentVolumeReclaimPolicy'), policy, RECLAIM_POLICIES));
  }
  const sources = Object.entries(spec).filter(([k, v]) => !PV_SPEC_FIELDS.has(k) && v !== undefined && v !== null);
  if (sources.length === 0) errs.push(field.required(path, 'must specify a volume type'));
  for (const [k] of sources.slice(1))
    errs.push(field.forbidden(path.child(k), 'may not specify more than 1 volume type'));
  return errs;
}

/** Validation of a PersistentVolumeClaim. */
export function validatePersistentVolumeClaim(pvc: PersistentVolumeClaim): FieldError[] {
  const spec = pvc.spec ?? {};
  const path = new FieldPath('spec');
  return [
    ...validateAccessModes(spec.accessModes, path.child('accessModes')),
    ...validateStorage(spec.resources?.requests, path.child('resources', 'requests')),
  ];
}

/** Validation of a claim update: only `resources.requests` changes. */
export function validatePersistentVolumeClaimUpdate(
  pvc: PersistentVolumeClaim,
  old: PersistentVolumeClaim,
): FieldError[] {
  const errs = validatePersistentVolumeClaim(pvc);
  const strip = (c: PersistentVolumeClaim): unknown => {
    const spec = structuredClone(c.spec ?? {});
    if (spec.resources) delete spec.resources.requests;
    // The binder sets volumeName once.
    if (!old.spec?.volumeName) delete spec.volumeName;
    return spec;
  };
  if (!semanticEqual(strip(pvc), strip(old))) {
    errs.push(
      field.forbidden(
        new FieldPath('spec'),
        'spec is immutable after creation except resources.requests for bound claims',
      ),
    );
  }
  return errs;
}

/** The strategy of `persistentvolumes`. */
export function persistentVolumeStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate: (_ctx, obj) => {
      (obj as PersistentVolume).status = { phase: 'Pending' };
    },
    validate: (_ctx, obj) => validatePersistentVolume(obj as PersistentVolume),
    validateUpdate: (_ctx, obj) => validatePersistentVolume(obj as PersistentVolume),
  });
}

/** The strategy of `persistentvolumeclaims`. */
export function persistentVolumeClaimStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate: (_ctx, obj) => {
      (obj as PersistentVolumeClaim).status = { phase: 'Pending' };
    },
    validate: (_ctx, obj) => validatePersistentVolumeClaim(obj as PersistentVolumeClaim),
    validateUpdate: (_ctx, obj, old) =>
      validatePersistentVolumeClaimUpdate(obj as PersistentVolumeClaim, old as PersistentVolumeClaim),
  });
}
