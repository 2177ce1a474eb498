/**
 * Validation of the storage.platform kinds (model: Kubernetes 1.21 `pkg/apis/storage/validation`), with 1.21's
 * messages: StorageClass (provisioner, reclaim policy, binding mode; most fields frozen), CSIDriver (name, required
 * flags, modes, token requests; the behaviour fields frozen), CSINode (drivers), VolumeAttachment (attacher, exactly
 * one source, node; the spec frozen) and CSIStorageCapacity.
 */
import {
  type CSIDriver,
  type CSINode,
  type CSIStorageCapacity,
  type FieldError,
  FieldPath,
  field,
  isDNS1123Subdomain,
  isQualifiedName,
  type StorageClass,
  validateImmutableField,
  validateLabelSelector,
  validateNonnegativeField,
  type VolumeAttachment,
} from '@platform/api';

import { isNegative } from '../node/runtimeclass';

const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Ephemeral', 'Persistent'];
/** The longest CSI driver name. */
export const CSI_DRIVER_NAME_MAX_LENGTH = 63;
/** The longest node ID a CSI driver may report. */
export const CSI_NODE_ID_MAX_LENGTH = 192;
const MAX_PARAMETERS_LENGTH = 256 * 1024;
const MAX_VOLUME_ERROR_LENGTH = 1024;
const MAX_ATTACHED_VOLUME_METADATA_SIZE = 256 * 1024;

/** Checks a CSI driver name (`ValidateCSIDriverName`): a DNS-1123 subdomain of at most 63 characters. */
export function validateCSIDriverName(name: string, path: FieldPath): FieldError[] {
  if (name.length === 0) return [field.required(path, name)];
  const errs: FieldError[] = [];
  if (name.length > CSI_DRIVER_NAME_MAX_LENGTH) errs.push(field.tooLong(path, name, CSI_DRIVER_NAME_MAX_LENGTH));
  return [...errs, ...field.invalidEach(path, name, isDNS1123Subdomain(name.toLowerCase()))];
}

/** Validation of a StorageClass (`ValidateStorageClass`). */
export function validateStorageClass(sc: StorageClass): FieldError[] {
  const errs: FieldError[] = [];
  const provisioner = sc.provisioner ?? '';
  if (provisioner.length === 0) errs.push(field.required(new FieldPath('provisioner'), provisioner));
  else
    errs.push(
      ...field.invalidEach(new FieldPath('provisioner'), provisioner, isQualifiedName(provisioner.toLowerCase())),
    );
  let size = 0;
  for (const [k, v] of Object.entries(sc.parameters ?? {})) {
    if (k.length === 0)
      errs.push(field.invalid(new FieldPath('parameters'), sc.parameters, 'parameters must contain non-empty keys'));
    size += k.length + v.length;
  }
  if (size > MAX_PARAMETERS_LENGTH) errs.push(field.tooLong(new FieldPath('parameters'), '', MAX_PARAMETERS_LENGTH));
  if (sc.reclaimPolicy !== undefined && !RECLAIM_POLICIES.includes(sc.reclaimPolicy))
    errs.push(field.notSupported(new FieldPath('reclaimPolicy'), sc.reclaimPolicy, RECLAIM_POLICIES));
  if (sc.volumeBindingMode === undefined) errs.push(field.required(new FieldPath('volumeBindingMode'), ''));
  else if (!BINDING_MODES.includes(sc.volumeBindingMode))
    errs.push(field.notSupported(new FieldPath('volumeBindingMode'), sc.volumeBindingMode, BINDING_MODES));
  (sc.allowedTopologies ?? []).forEach((term, i) => {
    const p = new FieldPath('allowedTopologies').index(i);
    const exprs = term.matchLabelExpressions ?? [];
    if (exprs.length === 0) errs.push(field.required(p, 'must have at least one label requirement'));
    exprs.forEach((e, j) => {
      const ep = p.child('matchLabelExpressions').index(j);
      errs.push(...field.invalidEach(ep.child('key'), e.key, isQualifiedName(e.key)));
      if ((e.values ?? []).length === 0)
        errs.push(field.required(ep.child('values'), 'must specify as least one value for key ' + e.key));
    });
  });
  return errs;
}

/** Validation of a StorageClass update (`ValidateStorageClassUpdate`): only labels, annotations and expansion change. */
export function validateStorageClassUpdate(sc: StorageClass, old: StorageClass): FieldError[] {
  const errs = validateStorageClass(sc);
  if (JSON.stringify(sc.parameters ?? {}) !== JSON.stringify(old.parameters ?? {}))
    errs.push(field.forbidden(new FieldPath('parameters'), 'updates to parameters are forbidden.'));
  if (sc.provisioner !== old.provisioner)
    errs.push(field.forbidden(new FieldPath('provisioner'), 'updates to provisioner are forbidden.'));
  if (sc.reclaimPolicy !== old.reclaimPolicy)
    errs.push(field.forbidden(new FieldPath('reclaimPolicy'), 'updates to reclaimPolicy are forbidden.'));
  errs.push(...validateImmutableField(sc.volumeBindingMode, old.volumeBindingMode, new FieldPath('volumeBindingMode')));
  return errs;
}

/** Validation of a CSIDriver (`ValidateCSIDriver`). */
export function validateCSIDriver(d: CSIDriver): FieldError[] {
  const errs = validateCSIDriverName(d.metadata?.name ?? '', new FieldPath('metadata', 'name'));
  const spec = d.spec;
  const p = new FieldPath('spec');
  // 1.21 spells the first path `attachedRequired`.
  if (spec?.attachRequired === undefined) errs.push(field.required(p.child('attachedRequired'), ''));
  if (spec?.podInfoOnMount === undefined) errs.push(field.required(p.child('podInfoOnMount'), ''));
  if (spec?.storageCapacity === undefined) errs.push(field.required(p.child('storageCapacity'), ''));
  if (spec?.fsGroupPolicy !== undefined && !FS_GROUP_POLICIES.includes(spec.fsGroupPolicy))
    errs.push(field.notSupported(p.child('fsGroupPolicy'), spec.fsGroupPolicy, FS_GROUP_POLICIES));
  for (const mode of spec?.volumeLifecycleModes ?? []) {
    if (!LIFECYCLE_MODES.includes(mode))
      errs.push(field.notSupported(p.child('volumeLifecycleModes'), mode, LIFECYCLE_MODES));
  }
  const audiences = new Set<string>();
  (spec?.tokenRequests ?? []).forEach((r, i) => {
    const rp = p.child('tokenRequests').index(i);
    if (audiences.has(r.audience)) errs.push(field.duplicate(rp.child('audience'), r.audience));
    audiences.add(r.audience);
    const seconds = r.expirationSeconds;
    if (seconds !== undefined && seconds < 600)
      errs.push(
        field.invalid(rp.child('expirationSeconds'), seconds, 'may not specify a duration less than 10 minutes'),
      );
    if (seconds !== undefined && seconds > 2 ** 32)
      errs.push(
        field.invalid(rp.child('expirationSeconds'), seconds, 'may not specify a duration larger than 2^32 seconds'),
      );
  });
  return errs;
}

/** Validation of a CSIDriver update: the fields kubelet acts on never change (`ValidateCSIDriverUpdate`). */
export function validateCSIDriverUpdate(d: CSIDriver, old: CSIDriver): FieldError[] {
  const errs = validateCSIDriver(d);
  const p = new FieldPath('spec');
  for (const f of ['attachRequired', 'fsGroupPolicy', 'podInfoOnMount', 'volumeLifecycleModes'] as const) {
    errs.push(...validateImmutableField(d.spec?.[f], old.spec?.[f], p.child(f)));
  }
  return errs;
}

/** Validation of a CSINode (`ValidateCSINode`). */
export function validateCSINode(n: CSINode): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (n.spec?.drivers ?? []).forEach((d, i) => {
    const p = new FieldPath('spec', 'drivers').index(i);
    errs.push(...validateCSIDriverName(d.name ?? '', p.child('name')));
    if (names.has(d.name)) errs.push(field.duplicate(p.child('name'), d.name));
    names.add(d.name);
    if (!d.nodeID) errs.push(field.required(p.child('nodeID'), 'nodeID cannot be empty'));
    else if (d.nodeID.length > CSI_NODE_ID_MAX_LENGTH)
      errs.push(field.invalid(p.child('nodeID'), d.nodeID, `must be ${CSI_NODE_ID_MAX_LENGTH} characters or less`));
    const keys = new Set<string>();
    (d.topologyKeys ?? []).forEach((k, j) => {
      const kp = p.child('topologyKeys');
      if (k.length === 0) errs.push(field.required(kp, k));
      if (keys.has(k)) errs.push(field.duplicate(kp.index(j), k));
      keys.add(k);
      errs.push(...field.invalidEach(kp, k, isQualifiedName(k)));
    });
    errs.push(...validateNonnegativeField(d.allocatable?.count, p.child('allocatable', 'count')));
  });
  return errs;
}

/** Validation of a CSINode update: an existing driver's node ID and topology keys never change. */
export function validateCSINodeUpdate(n: CSINode, old: CSINode): FieldError[] {
  const errs = validateCSINode(n);
  const before = new Map((old.spec?.drivers ?? []).map((d) => [d.name, d]));
  (n.spec?.drivers ?? []).forEach((d, i) => {
    const prev = before.get(d.name);
    if (!prev) return;
    const p = new FieldPath('spec', 'drivers').index(i);
    errs.push(...validateImmutableField(d.nodeID, prev.nodeID, p.child('nodeID')));
    errs.push(...validateImmutableField(d.topologyKeys ?? [], prev.topologyKeys ?? [], p.child('topologyKeys')));
  });
  return errs;
}

/** Validation of a VolumeAttachment (`ValidateVolumeAttachment`, the CSI attacher rules included). */
export function validateVolumeAttachment(va: VolumeAttachment): FieldError[] {
  const errs: FieldError[] = [];
  const p = new FieldPath('spec');
  const spec = va.spec;
  if (!spec?.attacher) errs.push(field.required(p.child('attacher'), ''));
  else errs.push(...validateCSIDriverName(spec.attacher, p.child('attacher')));
  const source = spec?.source ?? {};
  const sp = p.child('source');
  const hasName = source.persistentVolumeName !== undefined;
  const hasInline = source.inlineVolumeSpec !== undefined;
  if (hasName && hasInline)
    errs.push(field.forbidden(sp, 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (!hasName && !hasInline)
    errs.push(field.required(sp, 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  else if (hasName && !source.persistentVolumeName)
    errs.push(field.required(sp.child('persistentVolumeName'), 'must specify non empty persistentVolumeName'));
  if (!spec?.nodeName) errs.push(field.required(p.child('nodeName'), ''));
  else errs.push(...field.invalidEach(p.child('nodeName'), spec.nodeName, isDNS1123Subdomain(spec.nodeName)));
  errs.push(...validateVolumeAttachmentStatus(va));
  return errs;
}

/** Validation of a VolumeAttachment's status: bounded metadata and error messages. */
export function validateVolumeAttachmentStatus(va: VolumeAttachment): FieldError[] {
  const errs: FieldError[] = [];
  const p = new FieldPath('status');
  let size = 0;
  for (const [k, v] of Object.entries(va.status?.attachmentMetadata ?? {})) size += k.length + v.length;
  if (size > MAX_ATTACHED_VOLUME_METADATA_SIZE)
    errs.push(
      field.tooLong(p.child('attachmentMetadata'), va.status?.attachmentMetadata, MAX_ATTACHED_VOLUME_METADATA_SIZE),
    );
  for (const f of ['attachError', 'detachError'] as const) {
    const message = va.status?.[f]?.message ?? '';
    if (message.length > MAX_VOLUME_ERROR_LENGTH)
      errs.push(field.tooLong(p.child(f, 'message'), message, MAX_VOLUME_ERROR_LENGTH));
  }
  return errs;
}

/** Validation of a VolumeAttachment update: the spec never changes. */
export function validateVolumeAttachmentUpdate(va: VolumeAttachment, old: VolumeAttachment): FieldError[] {
  const errs = validateVolumeAttachment(va);
  if (JSON.stringify(va.spec) !== JSON.stringify(old.spec))
    errs.push(field.invalid(new FieldPath('spec'), va.spec, 'field is immutable'));
  return errs;
}

/** Validation of a CSIStorageCapacity (`ValidateCSIStorageCapacity`). */
export function validateCSIStorageCapacity(c: CSIStorageCapacity): FieldError[] {
  const errs = validateLabelSelector(c.nodeTopology, new FieldPath('nodeTopology'));
  const name = c.storageClassName ?? '';
  if (!name) errs.push(field.required(new FieldPath('storageClassName'), ''));
  else errs.push(...field.invalidEach(new FieldPath('storageClassName'), name, isDNS1123Subdomain(name)));
  for (const f of ['capacity', 'maximumVolumeSize'] as const) {
    const q = c[f];
    if (q !== undefined && isNegative(String(q)))
      errs.push(field.invalid(new FieldPath(f), q, 'must be greater than or equal to 0'));
  }
  return errs;
}
