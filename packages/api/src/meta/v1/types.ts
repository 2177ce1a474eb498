/**
 * The machinery types of `meta.platform/v1` (Kubernetes' `meta/v1`), complete as in Kubernetes 1.21, with the
 * Protobuf field numbers of Kubernetes' `generated.proto` so that Protobuf clients of either interoperate.
 */
import { type Static, Type } from '@sinclair/typebox';

import { object, opt, ptr, ref, req, t } from '../../schema/schema';

const M = 'io.platform.meta.v1.';

/** TypeMeta: the `apiVersion` and `kind` of every serialized object. */
export const TypeMetaSchema = object(`${M}TypeMeta`, {
  apiVersion: opt(1, t.string()),
  kind: opt(2, t.string()),
});
export type TypeMeta = Static<typeof TypeMetaSchema>;

/** OwnerReference: an object this one depends on (used by the garbage collector). */
export const OwnerReferenceSchema = object(`${M}OwnerReference`, {
  apiVersion: req(5, t.string(), 'API version of the referent.'),
  kind: req(1, t.string(), 'Kind of the referent.'),
  name: req(3, t.string(), 'Name of the referent.'),
  uid: req(4, t.string(), 'UID of the referent.'),
  controller: opt(6, ptr(t.bool()), 'If true, this reference points to the managing controller.'),
  blockOwnerDeletion: opt(
    7,
    ptr(t.bool()),
    'If true, the owner cannot be deleted from storage until this reference is removed.',
  ),
});
export type OwnerReference = Static<typeof OwnerReferenceSchema>;

/** ManagedFieldsEntry: the fields a manager owns (server-side apply). */
export const ManagedFieldsEntrySchema = object(`${M}ManagedFieldsEntry`, {
  manager: opt(1, t.string()),
  operation: opt(2, t.enumOf(['Apply', 'Update'])),
  apiVersion: opt(3, t.string()),
  time: opt(4, t.time()),
  fieldsType: opt(6, t.string()),
  fieldsV1: opt(7, t.fieldsV1()),
});
export type ManagedFieldsEntry = Static<typeof ManagedFieldsEntrySchema>;

/** ObjectMeta: the metadata every persisted object carries. */
export const ObjectMetaSchema = object(
  `${M}ObjectMeta`,
  {
    name: opt(1, t.string(), 'Name must be unique within a namespace. Cannot be updated.'),
    generateName: opt(
      2,
      t.string(),
      'Optional prefix used by the server to generate a unique name when name is empty.',
    ),
    namespace: opt(3, t.string(), 'Namespace defines the space within which each name must be unique.'),
    selfLink: opt(4, t.string(), 'Deprecated: always empty (RemoveSelfLink).'),
    uid: opt(5, t.string(), 'UID is the unique in time and space value for this object. Set by the server.'),
    resourceVersion: opt(6, t.string(), 'An opaque value that represents the internal version of this object.'),
    generation: opt(7, t.int64(), 'A sequence number representing a specific generation of the desired state.'),
    creationTimestamp: opt(8, t.time(), 'Time this object was created. Set by the server.'),
    deletionTimestamp: opt(9, t.time(), 'Time after which this resource will be deleted. Set by the server.'),
    deletionGracePeriodSeconds: opt(10, ptr(t.int64()), 'Seconds allowed for graceful termination.'),
    labels: opt(11, t.map(t.string()), 'Map of string keys and values to organize and categorize objects.'),
    annotations: opt(12, t.map(t.string()), 'Unstructured key value map stored with a resource.'),
    ownerReferences: opt(
      13,
      t.array(ref(OwnerReferenceSchema), { patchMergeKey: 'uid', patchStrategy: 'merge' }),
      'Objects depended on by this object.',
    ),
    finalizers: opt(14, t.array(t.string(), { patchStrategy: 'merge' }), 'Must be empty before the object is deleted.'),
    clusterName: opt(15, t.string()),
    managedFields: opt(
      17,
      t.array(ref(ManagedFieldsEntrySchema)),
      'Fields managed by each workflow (server-side apply).',
    ),
  },
  { description: 'Standard object metadata.' },
);
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

/** ListMeta: the metadata of a list response. */
export const ListMetaSchema = object(`${M}ListMeta`, {
  selfLink: opt(1, t.string()),
  resourceVersion: opt(2, t.string(), 'The version of the collection; usable to start a watch.'),
  continue: opt(3, t.string(), 'Token for the next chunk; empty at the end of the list.'),
  remainingItemCount: opt(4, ptr(t.int64()), 'Items after this chunk; an estimate when the list is not consistent.'),
});
export type ListMeta = Static<typeof ListMetaSchema>;

/** StatusCause: one cause of a failure (a field error, typically). */
export const StatusCauseSchema = object(`${M}StatusCause`, {
  reason: opt(1, t.string()),
  message: opt(2, t.string()),
  field: opt(3, t.string()),
});
export type StatusCause = Static<typeof StatusCauseSchema>;

/** StatusDetails: what a Status is about. */
export const StatusDetailsSchema = object(`${M}StatusDetails`, {
  name: opt(1, t.string()),
  group: opt(2, t.string()),
  kind: opt(3, t.string()),
  uid: opt(6, t.string()),
  causes: opt(4, t.array(ref(StatusCauseSchema))),
  retryAfterSeconds: opt(5, t.int32()),
});
export type StatusDetails = Static<typeof StatusDetailsSchema>;

/** Status: the result of an operation that does not return an object, and the body of every error. */
export const StatusSchema = object(`${M}Status`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  metadata: opt(1, ref(ListMetaSchema)),
  status: opt(2, t.enumOf(['Success', 'Failure'])),
  message: opt(3, t.string()),
  reason: opt(4, t.string()),
  details: opt(5, ref(StatusDetailsSchema)),
  code: opt(6, t.int32()),
});
export type Status = Static<typeof StatusSchema>;

/** Preconditions: must be fulfilled before an operation (update, delete) is carried out. */
export const PreconditionsSchema = object(`${M}Preconditions`, {
  uid: opt(1, ptr(t.string())),
  resourceVersion: opt(2, ptr(t.string())),
});
export type Preconditions = Static<typeof PreconditionsSchema>;

/** DeleteOptions: the body (optional) of a DELETE. */
export const DeleteOptionsSchema = object(`${M}DeleteOptions`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  gracePeriodSeconds: opt(1, ptr(t.int64())),
  preconditions: opt(2, ref(PreconditionsSchema)),
  orphanDependents: opt(3, ptr(t.bool())),
  propagationPolicy: opt(4, ptr(t.enumOf(['Orphan', 'Background', 'Foreground']))),
  dryRun: opt(5, t.array(t.string())),
});
export type DeleteOptions = Static<typeof DeleteOptionsSchema>;

/** WatchEvent: one frame of a watch stream. */
export const WatchEventSchema = object(`${M}WatchEvent`, {
  type: req(1, t.string()),
  object: req(2, t.raw()),
});
export type WatchEvent = Static<typeof WatchEventSchema>;

/** LabelSelectorRequirement: one `key operator values` term of a LabelSelector. */
export const LabelSelectorRequirementSchema = object(`${M}LabelSelectorRequirement`, {
  key: req(1, t.string(), 'The label key that the selector applies to.'),
  operator: req(2, t.enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist'])),
  values: opt(3, t.array(t.string())),
});
export type LabelSelectorRequirement = Static<typeof LabelSelectorRequirementSchema>;

/** LabelSelector: matchLabels and matchExpressions, ANDed. An empty selector matches everything. */
export const LabelSelectorSchema = object(`${M}LabelSelector`, {
  matchLabels: opt(1, t.map(t.string())),
  matchExpressions: opt(2, t.array(ref(LabelSelectorRequirementSchema))),
});
export type LabelSelector = Static<typeof LabelSelectorSchema>;

/** GroupVersionForDiscovery: one version of an API group. */
export const GroupVersionForDiscoverySchema = object(`${M}GroupVersionForDiscovery`, {
  groupVersion: req(1, t.string()),
  version: req(2, t.string()),
});
export type GroupVersionForDiscovery = Static<typeof GroupVersionForDiscoverySchema>;

/** ServerAddressByClientCIDR: the address a client in a CIDR should use. */
export const ServerAddressByClientCIDRSchema = object(`${M}ServerAddressByClientCIDR`, {
  clientCIDR: req(1, t.string()),
  serverAddress: req(2, t.string()),
});

/** APIVersions: the answer of `/api`. */
export const APIVersionsSchema = object(`${M}APIVersions`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  versions: req(1, t.array(t.string())),
  serverAddressByClientCIDRs: req(2, t.array(ref(ServerAddressByClientCIDRSchema))),
});
export type APIVersions = Static<typeof APIVersionsSchema>;

/** APIGroup: one API group and its versions. */
export const APIGroupSchema = object(`${M}APIGroup`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  name: req(1, t.string()),
  versions: req(2, t.array(ref(GroupVersionForDiscoverySchema))),
  preferredVersion: opt(3, ref(GroupVersionForDiscoverySchema)),
  serverAddressByClientCIDRs: opt(4, t.array(ref(ServerAddressByClientCIDRSchema))),
});
export type APIGroup = Static<typeof APIGroupSchema>;

/** APIGroupList: the answer of `/apis`. */
export const APIGroupListSchema = object(`${M}APIGroupList`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  groups: req(1, t.array(ref(APIGroupSchema))),
});
export type APIGroupList = Static<typeof APIGroupListSchema>;

/** APIResource: one resource of a group version, as discovery describes it. */
export const APIResourceSchema = object(`${M}APIResource`, {
  name: req(1, t.string()),
  singularName: req(6, t.string()),
  namespaced: req(2, t.bool()),
  group: opt(8, t.string()),
  version: opt(9, t.string()),
  kind: req(3, t.string()),
  verbs: req(4, t.array(t.string())),
  shortNames: opt(5, t.array(t.string())),
  categories: opt(7, t.array(t.string())),
  storageVersionHash: opt(10, t.string()),
});
export type APIResource = Static<typeof APIResourceSchema>;

/** APIResourceList: the answer of `/api/v1` and `/apis/<group>/<version>`. */
export const APIResourceListSchema = object(`${M}APIResourceList`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  groupVersion: req(1, t.string()),
  resources: req(2, t.array(ref(APIResourceSchema))),
});
export type APIResourceList = Static<typeof APIResourceListSchema>;

/** TableColumnDefinition: one column of a Table. */
export const TableColumnDefinitionSchema = object(`${M}TableColumnDefinition`, {
  name: req(1, t.string()),
  type: req(2, t.string()),
  format: req(3, t.string()),
  description: req(4, t.string()),
  priority: req(6, t.int32()),
});
export type TableColumnDefinition = Static<typeof TableColumnDefinitionSchema>;

/** TableRow: the cells of one object, and the object itself when `includeObject` asks for it. */
export const TableRowSchema = object(`${M}TableRow`, {
  cells: req(1, Type.Array(Type.Unknown())),
  conditions: opt(2, t.array(Type.Unknown())),
  object: opt(3, t.raw()),
});
export type TableRow = Static<typeof TableRowSchema>;

/** Table: the tabular view of a list or object (`as=Table`). JSON only, as in Kubernetes. */
export const TableSchema = object(`${M}Table`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  metadata: opt(1, ref(ListMetaSchema)),
  columnDefinitions: req(2, t.array(ref(TableColumnDefinitionSchema))),
  rows: req(3, t.array(ref(TableRowSchema))),
});
export type Table = Static<typeof TableSchema>;

/** PartialObjectMetadata: an object reduced to its metadata (`as=PartialObjectMetadata`). */
export const PartialObjectMetadataSchema = object(`${M}PartialObjectMetadata`, {
  apiVersion: opt(0, t.string()),
  kind: opt(0, t.string()),
  metadata: opt(1, ref(ObjectMetaSchema)),
});
export type PartialObjectMetadata = Static<typeof PartialObjectMetadataSchema>;

/** The `meta.platform` group name. */
export const META_GROUP = 'meta.platform';
