/**
 * storage.platform: StorageClass, CSIDriver, CSINode and VolumeAttachment in v1 and v1beta1 (Kubernetes 1.21 serves
 * both, with the same fields), and CSIStorageCapacity in v1beta1 only.
 */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema } from '../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN } from '../../table/table';
import { PersistentVolumeSpecSchema } from '../core/v1/persistent-volume';
import { kindInVersion } from '../versions';

/** The storage API group. */
export const STORAGE_GROUP = 'storage.platform';

const P = schemaPrefix(STORAGE_GROUP, 'v1');
const CORE = schemaPrefix('', 'v1');

/** `storageclass.kubernetes.io/is-default-class`: marks the class of claims that name none. */
export const STORAGE_CLASS_DEFAULT_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
/** The beta spelling of the default-class annotation, still read by 1.21. */
export const STORAGE_CLASS_BETA_DEFAULT_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';

/** True when a StorageClass's annotations mark it as the default class (`IsDefaultAnnotation`). */
export function isDefaultStorageClass(annotations: Record<string, string> | undefined): boolean {
  return (
    annotations?.[STORAGE_CLASS_DEFAULT_ANNOTATION] === 'true' ||
    annotations?.[STORAGE_CLASS_BETA_DEFAULT_ANNOTATION] === 'true'
  );
}

const TopologySelectorLabelRequirementSchema = object(`${CORE}TopologySelectorLabelRequirement`, {
  key: req(1, t.string(), 'The label key the selector applies to.'),
  values: req(2, t.array(t.string()), 'Label values; one must match.'),
});
/** core/v1 TopologySelectorTerm (StorageClass `allowedTopologies`). */
export const TopologySelectorTermSchema = object(`${CORE}TopologySelectorTerm`, {
  matchLabelExpressions: opt(1, t.array(ref(TopologySelectorLabelRequirementSchema)), 'Label requirements, ANDed.'),
});

/** StorageClass, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const StorageClassSchema = object(
  `${P}StorageClass`,
  {
    ...OBJECT_HEAD,
    provisioner: req(2, t.string(), 'The volume plugin that provisions volumes of this class.'),
    parameters: opt(3, t.map(t.string()), 'Parameters of the provisioner.'),
    reclaimPolicy: opt(4, ptr(t.string()), 'Delete (default) or Retain, for the volumes provisioned.'),
    mountOptions: opt(5, t.array(t.string()), 'Mount options of the volumes provisioned.'),
    allowVolumeExpansion: opt(6, ptr(t.bool()), 'Claims of this class may grow.'),
    volumeBindingMode: opt(7, ptr(t.string()), 'Immediate (default) or WaitForFirstConsumer.'),
    allowedTopologies: opt(
      8,
      t.array(ref(TopologySelectorTermSchema), { listType: 'atomic' }),
      'Where volumes may be provisioned.',
    ),
  },
  { description: 'StorageClass describes the parameters for a class of storage for dynamic provisioning.' },
);
/** A StorageClass object in its JSON form. */
export type StorageClass = Static<typeof StorageClassSchema>;

/** The StorageClass kind in storage.platform/v1. */
export const StorageClassKind = defineKind({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'StorageClass',
  plural: 'storageclasses',
  shortNames: ['sc'],
  scope: 'Cluster',
  schema: StorageClassSchema,
  defaults(sc) {
    sc.reclaimPolicy ??= 'Delete';
    sc.volumeBindingMode ??= 'Immediate';
  },
  columns: [
    { name: 'Provisioner', type: 'string', description: 'The provisioner.', cell: (o) => o.provisioner ?? '' },
    {
      name: 'ReclaimPolicy',
      type: 'string',
      description: 'Reclaim policy of the volumes provisioned.',
      cell: (o) => o.reclaimPolicy ?? 'Delete',
    },
    {
      name: 'VolumeBindingMode',
      type: 'string',
      description: 'When claims are bound and provisioned.',
      cell: (o) => o.volumeBindingMode ?? 'Immediate',
    },
    {
      name: 'AllowVolumeExpansion',
      type: 'string',
      description: 'Whether claims may grow.',
      cell: (o) => o.allowVolumeExpansion ?? false,
    },
    AGE_COLUMN,
  ],
});

const TokenRequestSchema = object(`${P}TokenRequest`, {
  audience: req(1, t.string(), 'Intended audience of the token.'),
  expirationSeconds: opt(2, ptr(t.int64()), 'Duration of validity of the token.'),
});
const CSIDriverSpecSchema = object(`${P}CSIDriverSpec`, {
  attachRequired: opt(1, ptr(t.bool()), 'The driver needs an attach operation. Defaults to true.'),
  podInfoOnMount: opt(2, ptr(t.bool()), 'The driver gets pod information on mount. Defaults to false.'),
  volumeLifecycleModes: opt(3, t.array(t.string()), 'Persistent (default) and/or Ephemeral.'),
  storageCapacity: opt(4, ptr(t.bool()), 'The driver reports CSIStorageCapacity objects. Defaults to false.'),
  fsGroupPolicy: opt(5, ptr(t.string()), 'ReadWriteOnceWithFSType (default), File or None.'),
  tokenRequests: opt(6, t.array(ref(TokenRequestSchema), { listType: 'atomic' }), 'Service account tokens to pass.'),
  requiresRepublish: opt(7, ptr(t.bool()), 'NodePublishVolume is called periodically. Defaults to false.'),
});

/** CSIDriver, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CSIDriverSchema = object(
  `${P}CSIDriver`,
  { ...OBJECT_HEAD, spec: req(2, ref(CSIDriverSpecSchema), 'Specification of the CSI driver.') },
  { description: 'CSIDriver captures information about a Container Storage Interface (CSI) volume driver.' },
);
/** A CSIDriver object in its JSON form. */
export type CSIDriver = Static<typeof CSIDriverSchema>;

/** The CSIDriver kind in storage.platform/v1 (defaults: `SetDefaults_CSIDriver` of 1.21). */
export const CSIDriverKind = defineKind({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'CSIDriver',
  plural: 'csidrivers',
  scope: 'Cluster',
  schema: CSIDriverSchema,
  defaults(d) {
    const spec = d.spec;
    if (!spec) return;
    spec.attachRequired ??= true;
    spec.podInfoOnMount ??= false;
    spec.storageCapacity ??= false;
    spec.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
    if (!spec.volumeLifecycleModes || spec.volumeLifecycleModes.length === 0)
      spec.volumeLifecycleModes = ['Persistent'];
    spec.requiresRepublish ??= false;
  },
  columns: [
    {
      name: 'AttachRequired',
      type: 'boolean',
      description: 'The driver needs an attach operation.',
      cell: (o) => o.spec?.attachRequired ?? true,
    },
    {
      name: 'PodInfoOnMount',
      type: 'boolean',
      description: 'The driver gets pod information on mount.',
      cell: (o) => o.spec?.podInfoOnMount ?? false,
    },
    {
      name: 'StorageCapacity',
      type: 'boolean',
      description: 'The driver reports storage capacity.',
      cell: (o) => o.spec?.storageCapacity ?? false,
    },
    {
      name: 'TokenRequests',
      type: 'string',
      description: 'Audiences of the service account tokens passed to the driver.',
      cell: (o) => {
        const audiences = (o.spec?.tokenRequests ?? []).map((r) => r.audience);
        return audiences.length ? audiences.join(',') : '<unset>';
      },
    },
    {
      name: 'RequiresRepublish',
      type: 'boolean',
      description: 'NodePublishVolume is called periodically.',
      cell: (o) => o.spec?.requiresRepublish ?? false,
    },
    {
      name: 'Modes',
      type: 'string',
      description: 'Volume lifecycle modes.',
      cell: (o) => (o.spec?.volumeLifecycleModes ?? []).join(',') || '<none>',
    },
    AGE_COLUMN,
  ],
});

const VolumeNodeResourcesSchema = object(`${P}VolumeNodeResources`, {
  count: opt(1, ptr(t.int32()), 'Maximum number of volumes of the driver on the node.'),
});
const CSINodeDriverSchema = object(`${P}CSINodeDriver`, {
  name: req(1, t.string(), 'Name of the CSI driver.'),
  nodeID: req(2, t.string(), 'The node as the driver knows it.'),
  topologyKeys: opt(3, t.array(t.string()), 'Topology label keys the driver supports.'),
  allocatable: opt(4, ref(VolumeNodeResourcesSchema), 'Volume limits of the driver on the node.'),
});
const CSINodeSpecSchema = object(`${P}CSINodeSpec`, {
  drivers: req(
    1,
    t.array(ref(CSINodeDriverSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
    'CSI drivers on the node.',
  ),
});

/** CSINode, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CSINodeSchema = object(
  `${P}CSINode`,
  { ...OBJECT_HEAD, spec: req(2, ref(CSINodeSpecSchema), 'The drivers on the node.') },
  { description: 'CSINode holds information about all CSI drivers installed on a node.' },
);
/** A CSINode object in its JSON form. */
export type CSINode = Static<typeof CSINodeSchema>;

/** The CSINode kind in storage.platform/v1. */
export const CSINodeKind = defineKind({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'CSINode',
  plural: 'csinodes',
  scope: 'Cluster',
  schema: CSINodeSchema,
  columns: [
    {
      name: 'Drivers',
      type: 'integer',
      description: 'Number of CSI drivers on the node.',
      cell: (o) => o.spec?.drivers?.length ?? 0,
    },
    AGE_COLUMN,
  ],
});

const VolumeErrorSchema = object(`${P}VolumeError`, {
  time: opt(1, t.time(), 'When the error was met.'),
  message: opt(2, t.string(), 'The error.'),
});
const VolumeAttachmentSourceSchema = object(`${P}VolumeAttachmentSource`, {
  persistentVolumeName: opt(1, ptr(t.string()), 'The persistent volume to attach.'),
  inlineVolumeSpec: opt(2, ref(PersistentVolumeSpecSchema), 'An inline volume migrated to CSI.'),
});
const VolumeAttachmentSpecSchema = object(`${P}VolumeAttachmentSpec`, {
  attacher: req(1, t.string(), 'The attacher (a CSI driver name).'),
  source: req(2, ref(VolumeAttachmentSourceSchema), 'The volume to attach.'),
  nodeName: req(3, t.string(), 'The node to attach the volume to.'),
});
const VolumeAttachmentStatusSchema = object(`${P}VolumeAttachmentStatus`, {
  attached: req(1, t.bool(), 'The volume is attached.'),
  attachmentMetadata: opt(2, t.map(t.string()), 'Information of the attach operation.'),
  attachError: opt(3, ref(VolumeErrorSchema), 'The last error of an attach operation.'),
  detachError: opt(4, ref(VolumeErrorSchema), 'The last error of a detach operation.'),
});

/** VolumeAttachment, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const VolumeAttachmentSchema = object(
  `${P}VolumeAttachment`,
  {
    ...OBJECT_HEAD,
    spec: req(2, ref(VolumeAttachmentSpecSchema), 'The desired attach/detach behavior.'),
    status: opt(3, ref(VolumeAttachmentStatusSchema), 'Status of the attach/detach.'),
  },
  { description: 'VolumeAttachment captures the intent to attach or detach a volume to or from a node.' },
);
/** A VolumeAttachment object in its JSON form. */
export type VolumeAttachment = Static<typeof VolumeAttachmentSchema>;

/** The VolumeAttachment kind in storage.platform/v1. */
export const VolumeAttachmentKind = defineKind({
  group: STORAGE_GROUP,
  version: 'v1',
  kind: 'VolumeAttachment',
  plural: 'volumeattachments',
  scope: 'Cluster',
  subresources: { status: { verbs: ['get', 'patch', 'update'] } },
  schema: VolumeAttachmentSchema,
  columns: [
    { name: 'Attacher', type: 'string', description: 'The attacher.', cell: (o) => o.spec?.attacher ?? '' },
    {
      name: 'PV',
      type: 'string',
      description: 'The persistent volume attached.',
      cell: (o) => o.spec?.source?.persistentVolumeName ?? '',
    },
    { name: 'Node', type: 'string', description: 'The node.', cell: (o) => o.spec?.nodeName ?? '' },
    {
      name: 'Attached',
      type: 'boolean',
      description: 'The volume is attached.',
      cell: (o) => o.status?.attached ?? false,
    },
    AGE_COLUMN,
  ],
});

const PB = schemaPrefix(STORAGE_GROUP, 'v1beta1');

/** CSIStorageCapacity (storage.platform/v1beta1), as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CSIStorageCapacitySchema = object(
  `${PB}CSIStorageCapacity`,
  {
    ...OBJECT_HEAD,
    nodeTopology: opt(2, ref(LabelSelectorSchema), 'The nodes that can reach the storage.'),
    storageClassName: req(3, t.string(), 'The StorageClass the capacity applies to.'),
    capacity: opt(4, t.quantity(), 'Capacity reported by the driver.'),
    maximumVolumeSize: opt(5, t.quantity(), 'Largest volume that can be created.'),
  },
  { description: 'CSIStorageCapacity stores the result of one CSI GetCapacity call.' },
);
/** A CSIStorageCapacity object in its JSON form. */
export type CSIStorageCapacity = Static<typeof CSIStorageCapacitySchema>;

/** The CSIStorageCapacity kind (storage.platform/v1beta1). */
export const CSIStorageCapacityKind = defineKind({
  group: STORAGE_GROUP,
  version: 'v1beta1',
  kind: 'CSIStorageCapacity',
  plural: 'csistoragecapacities',
  scope: 'Namespaced',
  schema: CSIStorageCapacitySchema,
  columns: [
    {
      name: 'StorageClassName',
      type: 'string',
      description: 'The StorageClass.',
      cell: (o) => o.storageClassName ?? '',
    },
    { name: 'Capacity', type: 'string', description: 'Capacity reported.', cell: (o) => o.capacity ?? '<unset>' },
    AGE_COLUMN,
  ],
});

/** StorageClass in storage.platform/v1beta1. */
export const StorageClassV1beta1Kind = kindInVersion(StorageClassKind, 'v1beta1');
/** CSIDriver in storage.platform/v1beta1. */
export const CSIDriverV1beta1Kind = kindInVersion(CSIDriverKind, 'v1beta1');
/** CSINode in storage.platform/v1beta1. */
export const CSINodeV1beta1Kind = kindInVersion(CSINodeKind, 'v1beta1');
/** VolumeAttachment in storage.platform/v1beta1. */
export const VolumeAttachmentV1beta1Kind = kindInVersion(VolumeAttachmentKind, 'v1beta1');
