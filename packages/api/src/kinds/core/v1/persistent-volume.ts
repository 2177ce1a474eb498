/** core/v1 PersistentVolume and PersistentVolumeClaim: storage and a claim on it. */
import { type Static } from '@sinclair/typebox';

import { embed, object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { AGE_COLUMN } from '../../../table/table';
import {
  AWSElasticBlockStoreVolumeSourceSchema,
  AzureDiskVolumeSourceSchema,
  FCVolumeSourceSchema,
  FlockerVolumeSourceSchema,
  GCEPersistentDiskVolumeSourceSchema,
  HostPathVolumeSourceSchema,
  NFSVolumeSourceSchema,
  NodeSelectorSchema,
  ObjectReferenceSchema,
  PersistentVolumeClaimSpecSchema,
  PhotonPersistentDiskVolumeSourceSchema,
  PortworxVolumeSourceSchema,
  QuobyteVolumeSourceSchema,
  SecretReferenceSchema,
  VsphereVirtualDiskVolumeSourceSchema,
} from './types';

const P = schemaPrefix('', 'v1');

/** GlusterfsPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const GlusterfsPersistentVolumeSourceSchema = object(`${P}GlusterfsPersistentVolumeSource`, {
  endpoints: req(1, t.string()),
  path: req(2, t.string()),
  readOnly: opt(3, t.bool()),
  endpointsNamespace: opt(4, ptr(t.string())),
});

/** RBDPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const RBDPersistentVolumeSourceSchema = object(`${P}RBDPersistentVolumeSource`, {
  monitors: req(1, t.array(t.string())),
  image: req(2, t.string()),
  fsType: opt(3, t.string()),
  pool: opt(4, t.string()),
  user: opt(5, t.string()),
  keyring: opt(6, t.string()),
  secretRef: opt(7, ref(SecretReferenceSchema)),
  readOnly: opt(8, t.bool()),
});

/** ISCSIPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ISCSIPersistentVolumeSourceSchema = object(`${P}ISCSIPersistentVolumeSource`, {
  targetPortal: req(1, t.string()),
  iqn: req(2, t.string()),
  lun: req(3, t.int32()),
  iscsiInterface: opt(4, t.string()),
  fsType: opt(5, t.string()),
  readOnly: opt(6, t.bool()),
  portals: opt(7, t.array(t.string())),
  chapAuthDiscovery: opt(8, t.bool()),
  chapAuthSession: opt(11, t.bool()),
  secretRef: opt(10, ref(SecretReferenceSchema)),
  initiatorName: opt(12, ptr(t.string())),
});

/** CinderPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CinderPersistentVolumeSourceSchema = object(`${P}CinderPersistentVolumeSource`, {
  volumeID: req(1, t.string()),
  fsType: opt(2, t.string()),
  readOnly: opt(3, t.bool()),
  secretRef: opt(4, ref(SecretReferenceSchema)),
});

/** CephFSPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CephFSPersistentVolumeSourceSchema = object(`${P}CephFSPersistentVolumeSource`, {
  monitors: req(1, t.array(t.string())),
  path: opt(2, t.string()),
  user: opt(3, t.string()),
  secretFile: opt(4, t.string()),
  secretRef: opt(5, ref(SecretReferenceSchema)),
  readOnly: opt(6, t.bool()),
});

/** FlexPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const FlexPersistentVolumeSourceSchema = object(`${P}FlexPersistentVolumeSource`, {
  driver: req(1, t.string()),
  fsType: opt(2, t.string()),
  secretRef: opt(3, ref(SecretReferenceSchema)),
  readOnly: opt(4, t.bool()),
  options: opt(5, t.map(t.string())),
});

/** AzureFilePersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const AzureFilePersistentVolumeSourceSchema = object(`${P}AzureFilePersistentVolumeSource`, {
  secretName: req(1, t.string()),
  shareName: req(2, t.string()),
  readOnly: opt(3, t.bool()),
  secretNamespace: opt(4, ptr(t.string())),
});

/** ScaleIOPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const ScaleIOPersistentVolumeSourceSchema = object(`${P}ScaleIOPersistentVolumeSource`, {
  gateway: req(1, t.string()),
  system: req(2, t.string()),
  secretRef: req(3, ref(SecretReferenceSchema)),
  sslEnabled: opt(4, t.bool()),
  protectionDomain: opt(5, t.string()),
  storagePool: opt(6, t.string()),
  storageMode: opt(7, t.string()),
  volumeName: opt(8, t.string()),
  fsType: opt(9, t.string()),
  readOnly: opt(10, t.bool()),
});

/** LocalVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const LocalVolumeSourceSchema = object(`${P}LocalVolumeSource`, {
  path: req(1, t.string()),
  fsType: opt(2, ptr(t.string())),
});

/** StorageOSPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const StorageOSPersistentVolumeSourceSchema = object(`${P}StorageOSPersistentVolumeSource`, {
  volumeName: opt(1, t.string()),
  volumeNamespace: opt(2, t.string()),
  fsType: opt(3, t.string()),
  readOnly: opt(4, t.bool()),
  secretRef: opt(5, ref(ObjectReferenceSchema)),
});

/** CSIPersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CSIPersistentVolumeSourceSchema = object(`${P}CSIPersistentVolumeSource`, {
  driver: req(1, t.string(), 'Name of the CSI driver.'),
  volumeHandle: req(2, t.string(), 'Unique volume name returned by the driver.'),
  readOnly: opt(3, t.bool()),
  fsType: opt(4, t.string()),
  volumeAttributes: opt(5, t.map(t.string())),
  controllerPublishSecretRef: opt(6, ref(SecretReferenceSchema)),
  nodeStageSecretRef: opt(7, ref(SecretReferenceSchema)),
  nodePublishSecretRef: opt(8, ref(SecretReferenceSchema)),
  controllerExpandSecretRef: opt(9, ref(SecretReferenceSchema)),
});

/** PersistentVolumeSource, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PersistentVolumeSourceSchema = object(`${P}PersistentVolumeSource`, {
  gcePersistentDisk: opt(1, ref(GCEPersistentDiskVolumeSourceSchema)),
  awsElasticBlockStore: opt(2, ref(AWSElasticBlockStoreVolumeSourceSchema)),
  hostPath: opt(3, ref(HostPathVolumeSourceSchema), 'A directory on the host (single-node testing only).'),
  glusterfs: opt(4, ref(GlusterfsPersistentVolumeSourceSchema)),
  nfs: opt(5, ref(NFSVolumeSourceSchema), 'An NFS mount on the host.'),
  rbd: opt(6, ref(RBDPersistentVolumeSourceSchema)),
  iscsi: opt(7, ref(ISCSIPersistentVolumeSourceSchema)),
  cinder: opt(8, ref(CinderPersistentVolumeSourceSchema)),
  cephfs: opt(9, ref(CephFSPersistentVolumeSourceSchema)),
  fc: opt(10, ref(FCVolumeSourceSchema)),
  flocker: opt(11, ref(FlockerVolumeSourceSchema)),
  flexVolume: opt(12, ref(FlexPersistentVolumeSourceSchema)),
  azureFile: opt(13, ref(AzureFilePersistentVolumeSourceSchema)),
  vsphereVolume: opt(14, ref(VsphereVirtualDiskVolumeSourceSchema)),
  quobyte: opt(15, ref(QuobyteVolumeSourceSchema)),
  azureDisk: opt(16, ref(AzureDiskVolumeSourceSchema)),
  photonPersistentDisk: opt(17, ref(PhotonPersistentDiskVolumeSourceSchema)),
  portworxVolume: opt(18, ref(PortworxVolumeSourceSchema)),
  scaleIO: opt(19, ref(ScaleIOPersistentVolumeSourceSchema)),
  local: opt(20, ref(LocalVolumeSourceSchema), 'Directly-attached storage with node affinity.'),
  storageos: opt(21, ref(StorageOSPersistentVolumeSourceSchema)),
  csi: opt(22, ref(CSIPersistentVolumeSourceSchema), 'Storage handled by an external CSI driver.'),
});

/** VolumeNodeAffinity, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const VolumeNodeAffinitySchema = object(`${P}VolumeNodeAffinity`, {
  required: opt(1, ref(NodeSelectorSchema), 'Hard node constraints.'),
});

const ACCESS_MODES = t.enumOf(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany']);

/** PersistentVolumeSpec, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PersistentVolumeSpecSchema = object(`${P}PersistentVolumeSpec`, {
  capacity: opt(1, t.map(t.quantity()), "The volume's resources and capacity."),
  ...embed(2, 'persistentVolumeSource', PersistentVolumeSourceSchema),
  accessModes: opt(3, t.array(ACCESS_MODES), 'All ways the volume can be mounted.'),
  claimRef: opt(4, ref(ObjectReferenceSchema), 'The claim bound to this volume.'),
  persistentVolumeReclaimPolicy: opt(
    5,
    t.enumOf(['Recycle', 'Delete', 'Retain']),
    'What happens when the volume is released from its claim. Defaults to Retain.',
  ),
  storageClassName: opt(6, t.string(), 'Name of the StorageClass of this volume.'),
  mountOptions: opt(7, t.array(t.string())),
  volumeMode: opt(8, ptr(t.enumOf(['Block', 'Filesystem'])), 'Filesystem (default) or Block.'),
  nodeAffinity: opt(9, ref(VolumeNodeAffinitySchema), 'Nodes this volume can be accessed from.'),
});

/** PersistentVolumeStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PersistentVolumeStatusSchema = object(`${P}PersistentVolumeStatus`, {
  phase: opt(1, t.enumOf(['Pending', 'Available', 'Bound', 'Released', 'Failed']), 'Phase of the volume.'),
  message: opt(2, t.string()),
  reason: opt(3, t.string()),
});

/** PersistentVolume, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PersistentVolumeSchema = object(
  `${P}PersistentVolume`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(PersistentVolumeSpecSchema), 'Specification of the persistent volume.'),
    status: opt(3, ref(PersistentVolumeStatusSchema), 'Current status of the persistent volume. Read-only.'),
  },
  {
    description:
      'PersistentVolume (PV) is a storage resource provisioned by an administrator. It is analogous to a node.',
  },
);
/** A PersistentVolume object in its JSON form. */
export type PersistentVolume = Static<typeof PersistentVolumeSchema>;

/** PersistentVolumeClaimCondition, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PersistentVolumeClaimConditionSchema = object(`${P}PersistentVolumeClaimCondition`, {
  type: req(1, t.string()),
  status: req(2, t.enumOf(['True', 'False', 'Unknown'])),
  lastProbeTime: opt(3, t.time()),
  lastTransitionTime: opt(4, t.time()),
  reason: opt(5, t.string()),
  message: opt(6, t.string()),
});

/** PersistentVolumeClaimStatus, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PersistentVolumeClaimStatusSchema = object(`${P}PersistentVolumeClaimStatus`, {
  phase: opt(1, t.enumOf(['Pending', 'Bound', 'Lost']), 'Phase of the claim.'),
  accessModes: opt(2, t.array(ACCESS_MODES), 'Access modes of the bound volume.'),
  capacity: opt(3, t.map(t.quantity()), 'Resources of the bound volume.'),
  conditions: opt(
    4,
    t.array(ref(PersistentVolumeClaimConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
  ),
});

/** PersistentVolumeClaim, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const PersistentVolumeClaimSchema = object(
  `${P}PersistentVolumeClaim`,
  {
    ...OBJECT_HEAD,
    spec: opt(2, ref(PersistentVolumeClaimSpecSchema), 'What the claim asks of a volume.'),
    status: opt(3, ref(PersistentVolumeClaimStatusSchema), 'Current status of the claim. Read-only.'),
  },
  { description: "PersistentVolumeClaim is a user's request for and claim to a persistent volume." },
);
/** A PersistentVolumeClaim object in its JSON form. */
export type PersistentVolumeClaim = Static<typeof PersistentVolumeClaimSchema>;

/** `RWO,ROX,RWX` in that order (`GetAccessModesAsString`). */
export function accessModesString(modes: readonly string[] | undefined): string {
  const set = new Set(modes ?? []);
  const out: string[] = [];
  if (set.has('ReadWriteOnce')) out.push('RWO');
  if (set.has('ReadOnlyMany')) out.push('ROX');
  if (set.has('ReadWriteMany')) out.push('RWX');
  return out.join(',');
}

const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** Defaults of a PersistentVolumeClaim (also applied to StatefulSet claim templates). */
export function defaultPersistentVolumeClaim(pvc: PersistentVolumeClaim): void {
  const spec = (pvc.spec ??= {});
  spec.volumeMode ??= 'Filesystem';
  const status = (pvc.status ??= {});
  status.phase ||= 'Pending';
}

/** The PersistentVolume kind: discovery facts, defaults, printer columns and field selectors. */
export const PersistentVolumeKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'PersistentVolume',
  plural: 'persistentvolumes',
  shortNames: ['pv'],
  scope: 'Cluster',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: PersistentVolumeSchema,
  defaults(pv) {
    const spec = (pv.spec ??= {});
    spec.persistentVolumeReclaimPolicy ||= 'Retain';
    spec.volumeMode ??= 'Filesystem';
    const status = (pv.status ??= {});
    status.phase ||= 'Pending';
  },
  columns: [
    {
      name: 'Capacity',
      type: 'string',
      description: 'Storage capacity of the volume.',
      cell: (o) => o.spec?.capacity?.storage ?? '0',
    },
    {
      name: 'Access Modes',
      type: 'string',
      description: 'Ways the volume can be mounted.',
      cell: (o) => accessModesString(o.spec?.accessModes),
    },
    {
      name: 'Reclaim Policy',
      type: 'string',
      description: 'What happens when the volume is released.',
      cell: (o) => o.spec?.persistentVolumeReclaimPolicy ?? '',
    },
    {
      name: 'Status',
      type: 'string',
      description: 'Phase of the volume.',
      cell: (o) => (o.metadata?.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? '')),
    },
    {
      name: 'Claim',
      type: 'string',
      description: 'The claim bound to this volume.',
      cell: (o) => (o.spec?.claimRef ? `${o.spec.claimRef.namespace ?? ''}/${o.spec.claimRef.name ?? ''}` : ''),
    },
    {
      name: 'StorageClass',
      type: 'string',
      description: 'Storage class of the volume.',
      cell: (o) => o.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] ?? o.spec?.storageClassName ?? '',
    },
    { name: 'Reason', type: 'string', description: 'Reason of the phase.', cell: (o) => o.status?.reason ?? '' },
    AGE_COLUMN,
    {
      name: 'VolumeMode',
      type: 'string',
      priority: 1,
      description: 'Filesystem or Block.',
      cell: (o) => o.spec?.volumeMode ?? '<unset>',
    },
  ],
});

/** The PersistentVolumeClaim kind: discovery facts, defaults, printer columns and field selectors. */
export const PersistentVolumeClaimKind = defineKind({
  group: '',
  version: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  shortNames: ['pvc'],
  scope: 'Namespaced',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: PersistentVolumeClaimSchema,
  defaults: defaultPersistentVolumeClaim,
  columns: [
    {
      name: 'Status',
      type: 'string',
      description: 'Phase of the claim.',
      cell: (o) => (o.metadata?.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? '')),
    },
    { name: 'Volume', type: 'string', description: 'The bound volume.', cell: (o) => o.spec?.volumeName ?? '' },
    {
      name: 'Capacity',
      type: 'string',
      description: 'Capacity of the bound volume.',
      cell: (o) => (o.spec?.volumeName ? (o.status?.capacity?.storage ?? '0') : ''),
    },
    {
      name: 'Access Modes',
      type: 'string',
      description: 'Access modes of the bound volume.',
      cell: (o) => (o.spec?.volumeName ? accessModesString(o.status?.accessModes) : ''),
    },
    {
      name: 'StorageClass',
      type: 'string',
      description: 'Storage class of the claim.',
      cell: (o) => o.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] ?? o.spec?.storageClassName ?? '',
    },
    AGE_COLUMN,
    {
      name: 'VolumeMode',
      type: 'string',
      priority: 1,
      description: 'Filesystem or Block.',
      cell: (o) => o.spec?.volumeMode ?? '<unset>',
    },
  ],
});
