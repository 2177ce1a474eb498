/**
 * The named sub-types of core/v1 (the PodSpec and PodStatus trees, volume sources, references, node and service
 * parts) as Kubernetes 1.21 has them, with the Protobuf field numbers of Kubernetes' `core/v1/generated.proto`.
 * Kinds (Pod, Node, Service, ...) are in their own files and reference these with ref().
 *
 * Go embedded structs (`VolumeSource` in `Volume`, `Handler` in `Probe`, `PersistentVolumeSource` in
 * `PersistentVolumeSpec`, `EphemeralContainerCommon` in `EphemeralContainer`) are spread in with embed(): flat in
 * JSON, one nested message in Protobuf.
 */
import { type Static } from '@sinclair/typebox';

import { LabelSelectorSchema, ObjectMetaSchema } from '../../../meta/v1/types';
import { embed, object, opt, ptr, ref, req, t } from '../../../schema/schema';
import { schemaPrefix } from '../../../scheme/kind';

const P = schemaPrefix('', 'v1');

// ---- references -------------------------------------------------------------------------------------------------

/** LocalObjectReference: the name of an object in the same namespace. */
export const LocalObjectReferenceSchema = object(`${P}LocalObjectReference`, {
  name: opt(1, t.string(), 'Name of the referent.'),
});
/** A LocalObjectReference object in its JSON form. */
export type LocalObjectReference = Static<typeof LocalObjectReferenceSchema>;

/** ObjectReference: enough to inspect or modify the referred object. */
export const ObjectReferenceSchema = object(`${P}ObjectReference`, {
  kind: opt(1, t.string(), 'Kind of the referent.'),
  namespace: opt(2, t.string(), 'Namespace of the referent.'),
  name: opt(3, t.string(), 'Name of the referent.'),
  uid: opt(4, t.string(), 'UID of the referent.'),
  apiVersion: opt(5, t.string(), 'API version of the referent.'),
  resourceVersion: opt(6, t.string(), 'Specific resourceVersion to which this reference is made, if any.'),
  fieldPath: opt(7, t.string(), 'A piece of the object, e.g. "spec.containers{name}".'),
});
/** A ObjectReference object in its JSON form. */
export type ObjectReference = Static<typeof ObjectReferenceSchema>;

/** TypedLocalObjectReference: a typed reference to an object in the same namespace. */
export const TypedLocalObjectReferenceSchema = object(`${P}TypedLocalObjectReference`, {
  apiGroup: opt(1, ptr(t.string()), 'Group of the referenced resource; core when empty.'),
  kind: req(2, t.string(), 'Kind of the referenced resource.'),
  name: req(3, t.string(), 'Name of the referenced resource.'),
});

/** SecretReference: a Secret in any namespace. */
export const SecretReferenceSchema = object(`${P}SecretReference`, {
  name: opt(1, t.string()),
  namespace: opt(2, t.string()),
});

// ---- selectors and environment ----------------------------------------------------------------------------------

/** ObjectFieldSelector: a field of the pod (downward API). */
export const ObjectFieldSelectorSchema = object(`${P}ObjectFieldSelector`, {
  apiVersion: opt(1, t.string(), 'Version of the schema the FieldPath is written in terms of; defaults to "v1".'),
  fieldPath: req(2, t.string(), 'Path of the field to select.'),
});

/** ResourceFieldSelector: a container resource (limits.cpu, requests.memory, ...) and its output format. */
export const ResourceFieldSelectorSchema = object(`${P}ResourceFieldSelector`, {
  containerName: opt(1, t.string(), 'Container name: required for volumes, optional for env vars.'),
  resource: req(2, t.string(), 'Resource to select.'),
  divisor: opt(3, t.quantity(), 'Output format of the exposed resource; defaults to "1".'),
});

/** ConfigMapKeySelector: one key of a ConfigMap. */
export const ConfigMapKeySelectorSchema = object(`${P}ConfigMapKeySelector`, {
  ...embed(1, 'localObjectReference', LocalObjectReferenceSchema),
  key: req(2, t.string(), 'The key to select.'),
  optional: opt(3, ptr(t.bool()), 'Whether the ConfigMap or its key must be defined.'),
});

/** SecretKeySelector: one key of a Secret. */
export const SecretKeySelectorSchema = object(`${P}SecretKeySelector`, {
  ...embed(1, 'localObjectReference', LocalObjectReferenceSchema),
  key: req(2, t.string(), 'The key of the secret to select from.'),
  optional: opt(3, ptr(t.bool()), 'Whether the Secret or its key must be defined.'),
});

/** EnvVarSource: where an environment variable's value comes from. */
export const EnvVarSourceSchema = object(`${P}EnvVarSource`, {
  fieldRef: opt(1, ref(ObjectFieldSelectorSchema), 'Selects a field of the pod.'),
  resourceFieldRef: opt(2, ref(ResourceFieldSelectorSchema), 'Selects a resource of the container.'),
  configMapKeyRef: opt(3, ref(ConfigMapKeySelectorSchema), 'Selects a key of a ConfigMap.'),
  secretKeyRef: opt(4, ref(SecretKeySelectorSchema), "Selects a key of a secret in the pod's namespace."),
});

/** EnvVar: one environment variable of a container. */
export const EnvVarSchema = object(`${P}EnvVar`, {
  name: req(1, t.string(), 'Name of the environment variable.'),
  value: opt(2, t.string(), 'Value; $(VAR_NAME) references are expanded.'),
  valueFrom: opt(3, ref(EnvVarSourceSchema), 'Source for the value. Cannot be used if value is not empty.'),
});
/** A EnvVar object in its JSON form. */
export type EnvVar = Static<typeof EnvVarSchema>;

/** ConfigMapEnvSource: a ConfigMap whose data become environment variables. */
export const ConfigMapEnvSourceSchema = object(`${P}ConfigMapEnvSource`, {
  ...embed(1, 'localObjectReference', LocalObjectReferenceSchema),
  optional: opt(2, ptr(t.bool())),
});

/** SecretEnvSource: a Secret whose data become environment variables. */
export const SecretEnvSourceSchema = object(`${P}SecretEnvSource`, {
  ...embed(1, 'localObjectReference', LocalObjectReferenceSchema),
  optional: opt(2, ptr(t.bool())),
});

/** EnvFromSource: a set of ConfigMap or Secret data as environment variables. */
export const EnvFromSourceSchema = object(`${P}EnvFromSource`, {
  prefix: opt(1, t.string(), 'Prefix prepended to each variable name.'),
  configMapRef: opt(2, ref(ConfigMapEnvSourceSchema)),
  secretRef: opt(3, ref(SecretEnvSourceSchema)),
});

// ---- containers -------------------------------------------------------------------------------------------------

/** ContainerPort: a port a container exposes. */
export const ContainerPortSchema = object(`${P}ContainerPort`, {
  name: opt(1, t.string(), 'IANA_SVC_NAME, unique within the pod; services may refer to it.'),
  hostPort: opt(2, t.int32(), 'Port to expose on the host.'),
  containerPort: req(3, t.int32(), "Port on the pod's IP address."),
  protocol: opt(4, t.enumOf(['TCP', 'UDP', 'SCTP']), 'TCP (default), UDP or SCTP.'),
  hostIP: opt(5, t.string(), 'Host IP to bind the external port to.'),
});
/** A ContainerPort object in its JSON form. */
export type ContainerPort = Static<typeof ContainerPortSchema>;

/** ResourceRequirements: compute resource requests and limits. */
export const ResourceRequirementsSchema = object(`${P}ResourceRequirements`, {
  limits: opt(1, t.map(t.quantity()), 'Maximum amount of compute resources allowed.'),
  requests: opt(2, t.map(t.quantity()), 'Minimum amount of compute resources required.'),
});
/** A ResourceRequirements object in its JSON form. */
export type ResourceRequirements = Static<typeof ResourceRequirementsSchema>;

/** VolumeMount: a volume mounted into a container. */
export const VolumeMountSchema = object(`${P}VolumeMount`, {
  name: req(1, t.string(), 'Name of the volume.'),
  readOnly: opt(2, t.bool(), 'Mounted read-only if true.'),
  mountPath: req(3, t.string(), 'Path within the container at which the volume is mounted.'),
  subPath: opt(4, t.string(), "Path within the volume; defaults to the volume's root."),
  mountPropagation: opt(5, ptr(t.enumOf(['None', 'HostToContainer', 'Bidirectional']))),
  subPathExpr: opt(6, t.string(), 'Like subPath, with $(VAR_NAME) expanded.'),
});
/** A VolumeMount object in its JSON form. */
export type VolumeMount = Static<typeof VolumeMountSchema>;

/** VolumeDevice: a raw block device mapped into a container. */
export const VolumeDeviceSchema = object(`${P}VolumeDevice`, {
  name: req(1, t.string()),
  devicePath: req(2, t.string()),
});

/** ExecAction: run a command in the container. */
export const ExecActionSchema = object(`${P}ExecAction`, {
  command: opt(1, t.array(t.string()), 'Command line to execute inside the container (not in a shell).'),
});

/** HTTPHeader: a header of an HTTP probe. */
export const HTTPHeaderSchema = object(`${P}HTTPHeader`, {
  name: req(1, t.string()),
  value: req(2, t.string()),
});

/** HTTPGetAction: an HTTP GET request. */
export const HTTPGetActionSchema = object(`${P}HTTPGetAction`, {
  path: opt(1, t.string(), 'Path to access on the HTTP server.'),
  port: req(2, t.intOrString(), 'Name or number of the port to access on the container.'),
  host: opt(3, t.string(), 'Host name to connect to; defaults to the pod IP.'),
  scheme: opt(4, t.enumOf(['HTTP', 'HTTPS']), 'Scheme; defaults to HTTP.'),
  httpHeaders: opt(5, t.array(ref(HTTPHeaderSchema)), 'Custom headers to set in the request.'),
});

/** TCPSocketAction: open a TCP connection. */
export const TCPSocketActionSchema = object(`${P}TCPSocketAction`, {
  port: req(1, t.intOrString(), 'Number or name of the port to access on the container.'),
  host: opt(2, t.string(), 'Host name to connect to; defaults to the pod IP.'),
});

/** Handler: one action of a probe or lifecycle hook (exactly one field is set). */
export const HandlerSchema = object(`${P}Handler`, {
  exec: opt(1, ref(ExecActionSchema), 'Run a command in the container.'),
  httpGet: opt(2, ref(HTTPGetActionSchema), 'Perform an HTTP GET request.'),
  tcpSocket: opt(3, ref(TCPSocketActionSchema), 'Open a TCP connection.'),
});

/** Probe: a periodic health check of a container. */
export const ProbeSchema = object(`${P}Probe`, {
  ...embed(1, 'handler', HandlerSchema),
  initialDelaySeconds: opt(2, t.int32(), 'Seconds after the container has started before probes are initiated.'),
  timeoutSeconds: opt(3, t.int32(), 'Seconds after which the probe times out. Defaults to 1.'),
  periodSeconds: opt(4, t.int32(), 'How often (in seconds) to perform the probe. Defaults to 10.'),
  successThreshold: opt(5, t.int32(), 'Minimum consecutive successes after having failed. Defaults to 1.'),
  failureThreshold: opt(6, t.int32(), 'Minimum consecutive failures after having succeeded. Defaults to 3.'),
  terminationGracePeriodSeconds: opt(7, ptr(t.int64()), 'Grace period when the probe fails; the pod value when unset.'),
});
/** A Probe object in its JSON form. */
export type Probe = Static<typeof ProbeSchema>;

/** Lifecycle: actions on container lifecycle events. */
export const LifecycleSchema = object(`${P}Lifecycle`, {
  postStart: opt(1, ref(HandlerSchema), 'Called immediately after a container is created.'),
  preStop: opt(2, ref(HandlerSchema), 'Called immediately before a container is terminated.'),
});

/** Capabilities: POSIX capabilities added to or removed from a container. */
export const CapabilitiesSchema = object(`${P}Capabilities`, {
  add: opt(1, t.array(t.string())),
  drop: opt(2, t.array(t.string())),
});

/** SELinuxOptions: SELinux labels of a container. */
export const SELinuxOptionsSchema = object(`${P}SELinuxOptions`, {
  user: opt(1, t.string()),
  role: opt(2, t.string()),
  type: opt(3, t.string()),
  level: opt(4, t.string()),
});

/** WindowsSecurityContextOptions: Windows-specific options. */
export const WindowsSecurityContextOptionsSchema = object(`${P}WindowsSecurityContextOptions`, {
  gmsaCredentialSpecName: opt(1, ptr(t.string())),
  gmsaCredentialSpec: opt(2, ptr(t.string())),
  runAsUserName: opt(3, ptr(t.string())),
});

/** SeccompProfile: a seccomp profile. */
export const SeccompProfileSchema = object(`${P}SeccompProfile`, {
  type: req(1, t.enumOf(['Localhost', 'RuntimeDefault', 'Unconfined'])),
  localhostProfile: opt(2, ptr(t.string())),
});

/** SecurityContext: security options of one container. */
export const SecurityContextSchema = object(`${P}SecurityContext`, {
  capabilities: opt(1, ref(CapabilitiesSchema), 'Capabilities to add/drop.'),
  privileged: opt(2, ptr(t.bool()), 'Run container in privileged mode.'),
  seLinuxOptions: opt(3, ref(SELinuxOptionsSchema)),
  windowsOptions: opt(10, ref(WindowsSecurityContextOptionsSchema)),
  runAsUser: opt(4, ptr(t.int64()), 'UID to run the entrypoint of the container process.'),
  runAsGroup: opt(8, ptr(t.int64()), 'GID to run the entrypoint of the container process.'),
  runAsNonRoot: opt(5, ptr(t.bool()), 'The container must run as a non-root user.'),
  readOnlyRootFilesystem: opt(6, ptr(t.bool()), 'The container has a read-only root filesystem.'),
  allowPrivilegeEscalation: opt(7, ptr(t.bool())),
  procMount: opt(9, ptr(t.string())),
  seccompProfile: opt(11, ref(SeccompProfileSchema)),
});

const CONTAINER_PROPS = {
  name: req(1, t.string(), 'Name of the container (DNS_LABEL), unique within the pod.'),
  image: opt(2, t.string(), 'Container image name.'),
  command: opt(3, t.array(t.string()), "Entrypoint array; the image's ENTRYPOINT when not provided."),
  args: opt(4, t.array(t.string()), "Arguments to the entrypoint; the image's CMD when not provided."),
  workingDir: opt(5, t.string(), "Container's working directory."),
  ports: opt(
    6,
    t.array(ref(ContainerPortSchema), {
      patchMergeKey: 'containerPort',
      patchStrategy: 'merge',
      listType: 'map',
      listMapKeys: ['containerPort', 'protocol'],
    }),
    'Ports to expose from the container.',
  ),
  envFrom: opt(19, t.array(ref(EnvFromSourceSchema)), 'Sources to populate environment variables from.'),
  env: opt(
    7,
    t.array(ref(EnvVarSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
    'Environment variables to set in the container.',
  ),
  resources: opt(8, ref(ResourceRequirementsSchema), 'Compute resources required by this container.'),
  volumeMounts: opt(
    9,
    t.array(ref(VolumeMountSchema), { patchMergeKey: 'mountPath', patchStrategy: 'merge' }),
    "Pod volumes to mount into the container's filesystem.",
  ),
  volumeDevices: opt(
    21,
    t.array(ref(VolumeDeviceSchema), { patchMergeKey: 'devicePath', patchStrategy: 'merge' }),
    'Block devices to be used by the container.',
  ),
  livenessProbe: opt(10, ref(ProbeSchema), 'Periodic probe of container liveness.'),
  readinessProbe: opt(11, ref(ProbeSchema), 'Periodic probe of container service readiness.'),
  startupProbe: opt(22, ref(ProbeSchema), 'Probe that must succeed before the other probes run.'),
  lifecycle: opt(12, ref(LifecycleSchema), 'Actions on container lifecycle events.'),
  terminationMessagePath: opt(13, t.string(), 'File of the termination message. Defaults to /dev/termination-log.'),
  terminationMessagePolicy: opt(
    20,
    t.enumOf(['File', 'FallbackToLogsOnError']),
    'How the termination message is populated. Defaults to File.',
  ),
  imagePullPolicy: opt(
    14,
    t.enumOf(['Always', 'Never', 'IfNotPresent']),
    'Always if the tag is :latest or absent, IfNotPresent otherwise.',
  ),
  securityContext: opt(15, ref(SecurityContextSchema), 'Security options of the container.'),
  stdin: opt(16, t.bool(), 'Allocate a buffer for stdin in the container runtime.'),
  stdinOnce: opt(17, t.bool(), 'Close stdin after the first attach.'),
  tty: opt(18, t.bool(), 'Allocate a TTY (requires stdin).'),
};

/** Container: one application container of a pod. */
export const ContainerSchema = object(`${P}Container`, CONTAINER_PROPS, {
  description: 'A single application container that you want to run within a pod.',
});
/** A Container object in its JSON form. */
export type Container = Static<typeof ContainerSchema>;

/** EphemeralContainerCommon: the fields an EphemeralContainer shares with Container. */
export const EphemeralContainerCommonSchema = object(`${P}EphemeralContainerCommon`, CONTAINER_PROPS);

/** EphemeralContainer: a temporary debugging container added to a running pod. */
export const EphemeralContainerSchema = object(`${P}EphemeralContainer`, {
  ...embed(1, 'ephemeralContainerCommon', EphemeralContainerCommonSchema),
  targetContainerName: opt(2, t.string(), 'The container whose namespaces this container joins.'),
});

// ---- volumes ----------------------------------------------------------------------------------------------------

/** KeyToPath: a key of a ConfigMap or Secret projected to a path. */
export const KeyToPathSchema = object(`${P}KeyToPath`, {
  key: req(1, t.string(), 'The key to project.'),
  path: req(2, t.string(), 'Relative path of the file to map the key to.'),
  mode: opt(3, ptr(t.int32()), 'Mode bits of the file.'),
});

/** HostPathVolumeSource: a file or directory of the host. */
export const HostPathVolumeSourceSchema = object(`${P}HostPathVolumeSource`, {
  path: req(1, t.string(), 'Path of the directory on the host.'),
  type: opt(
    2,
    ptr(
      t.enumOf(['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice']),
    ),
    'Type of the host path; defaults to "" (no checks).',
  ),
});

/** EmptyDirVolumeSource: a temporary directory sharing the pod's lifetime. */
export const EmptyDirVolumeSourceSchema = object(`${P}EmptyDirVolumeSource`, {
  medium: opt(1, t.string(), 'Storage medium: "" (node default) or Memory.'),
  sizeLimit: opt(2, ptr(t.quantity()), 'Total amount of local storage required.'),
});

/** GCEPersistentDiskVolumeSource: a GCE persistent disk. */
export const GCEPersistentDiskVolumeSourceSchema = object(`${P}GCEPersistentDiskVolumeSource`, {
  pdName: req(1, t.string()),
  fsType: opt(2, t.string()),
  partition: opt(3, t.int32()),
  readOnly: opt(4, t.bool()),
});

/** AWSElasticBlockStoreVolumeSource: an AWS EBS disk. */
export const AWSElasticBlockStoreVolumeSourceSchema = object(`${P}AWSElasticBlockStoreVolumeSource`, {
  volumeID: req(1, t.string()),
  fsType: opt(2, t.string()),
  partition: opt(3, t.int32()),
  readOnly: opt(4, t.bool()),
});

/** GitRepoVolumeSource: a git repository (deprecated). */
export const GitRepoVolumeSourceSchema = object(`${P}GitRepoVolumeSource`, {
  repository: req(1, t.string()),
  revision: opt(2, t.string()),
  directory: opt(3, t.string()),
});

/** SecretVolumeSource: a Secret as a volume. */
export const SecretVolumeSourceSchema = object(`${P}SecretVolumeSource`, {
  secretName: opt(1, t.string(), "Name of the secret in the pod's namespace."),
  items: opt(2, t.array(ref(KeyToPathSchema)), 'Keys to project; every key when unset.'),
  defaultMode: opt(3, ptr(t.int32()), 'Mode bits of created files. Defaults to 0644.'),
  optional: opt(4, ptr(t.bool()), 'Whether the Secret or its keys must be defined.'),
});

/** NFSVolumeSource: an NFS mount. */
export const NFSVolumeSourceSchema = object(`${P}NFSVolumeSource`, {
  server: req(1, t.string(), 'Hostname or IP address of the NFS server.'),
  path: req(2, t.string(), 'Path exported by the NFS server.'),
  readOnly: opt(3, t.bool()),
});

/** ISCSIVolumeSource: an iSCSI disk. */
export const ISCSIVolumeSourceSchema = object(`${P}ISCSIVolumeSource`, {
  targetPortal: req(1, t.string()),
  iqn: req(2, t.string()),
  lun: req(3, t.int32()),
  iscsiInterface: opt(4, t.string()),
  fsType: opt(5, t.string()),
  readOnly: opt(6, t.bool()),
  portals: opt(7, t.array(t.string())),
  chapAuthDiscovery: opt(8, t.bool()),
  chapAuthSession: opt(11, t.bool()),
  secretRef: opt(10, ref(LocalObjectReferenceSchema)),
  initiatorName: opt(12, ptr(t.string())),
});

/** GlusterfsVolumeSource: a Glusterfs mount. */
export const GlusterfsVolumeSourceSchema = object(`${P}GlusterfsVolumeSource`, {
  endpoints: req(1, t.string()),
  path: req(2, t.string()),
  readOnly: opt(3, t.bool()),
});

/** PersistentVolumeClaimVolumeSource: a PersistentVolumeClaim of the pod's namespace. */
export const PersistentVolumeClaimVolumeSourceSchema = object(`${P}PersistentVolumeClaimVolumeSource`, {
  claimName: req(1, t.string(), 'Name of a PersistentVolumeClaim in the same namespace.'),
  readOnly: opt(2, t.bool()),
});

/** RBDVolumeSource: a Rados Block Device. */
export const RBDVolumeSourceSchema = object(`${P}RBDVolumeSource`, {
  monitors: req(1, t.array(t.string())),
  image: req(2, t.string()),
  fsType: opt(3, t.string()),
  pool: opt(4, t.string()),
  user: opt(5, t.string()),
  keyring: opt(6, t.string()),
  secretRef: opt(7, ref(LocalObjectReferenceSchema)),
  readOnly: opt(8, t.bool()),
});

/** FlexVolumeSource: a volume provisioned by an exec-based plugin. */
export const FlexVolumeSourceSchema = object(`${P}FlexVolumeSource`, {
  driver: req(1, t.string()),
  fsType: opt(2, t.string()),
  secretRef: opt(3, ref(LocalObjectReferenceSchema)),
  readOnly: opt(4, t.bool()),
  options: opt(5, t.map(t.string())),
});

/** CinderVolumeSource: an OpenStack Cinder volume. */
export const CinderVolumeSourceSchema = object(`${P}CinderVolumeSource`, {
  volumeID: req(1, t.string()),
  fsType: opt(2, t.string()),
  readOnly: opt(3, t.bool()),
  secretRef: opt(4, ref(LocalObjectReferenceSchema)),
});

/** CephFSVolumeSource: a Ceph filesystem. */
export const CephFSVolumeSourceSchema = object(`${P}CephFSVolumeSource`, {
  monitors: req(1, t.array(t.string())),
  path: opt(2, t.string()),
  user: opt(3, t.string()),
  secretFile: opt(4, t.string()),
  secretRef: opt(5, ref(LocalObjectReferenceSchema)),
  readOnly: opt(6, t.bool()),
});

/** FlockerVolumeSource: a Flocker dataset. */
export const FlockerVolumeSourceSchema = object(`${P}FlockerVolumeSource`, {
  datasetName: opt(1, t.string()),
  datasetUUID: opt(2, t.string()),
});

/** DownwardAPIVolumeFile: one file of pod information. */
export const DownwardAPIVolumeFileSchema = object(`${P}DownwardAPIVolumeFile`, {
  path: req(1, t.string(), 'Relative path of the file to create.'),
  fieldRef: opt(2, ref(ObjectFieldSelectorSchema), 'A field of the pod.'),
  resourceFieldRef: opt(3, ref(ResourceFieldSelectorSchema), 'A resource of a container.'),
  mode: opt(4, ptr(t.int32()), 'Mode bits of the file.'),
});

/** DownwardAPIVolumeSource: pod information as files. */
export const DownwardAPIVolumeSourceSchema = object(`${P}DownwardAPIVolumeSource`, {
  items: opt(1, t.array(ref(DownwardAPIVolumeFileSchema))),
  defaultMode: opt(2, ptr(t.int32()), 'Mode bits of created files. Defaults to 0644.'),
});

/** FCVolumeSource: a Fibre Channel volume. */
export const FCVolumeSourceSchema = object(`${P}FCVolumeSource`, {
  targetWWNs: opt(1, t.array(t.string())),
  lun: opt(2, ptr(t.int32())),
  fsType: opt(3, t.string()),
  readOnly: opt(4, t.bool()),
  wwids: opt(5, t.array(t.string())),
});

/** AzureFileVolumeSource: an Azure File share. */
export const AzureFileVolumeSourceSchema = object(`${P}AzureFileVolumeSource`, {
  secretName: req(1, t.string()),
  shareName: req(2, t.string()),
  readOnly: opt(3, t.bool()),
});

/** ConfigMapVolumeSource: a ConfigMap as a volume. */
export const ConfigMapVolumeSourceSchema = object(`${P}ConfigMapVolumeSource`, {
  ...embed(1, 'localObjectReference', LocalObjectReferenceSchema),
  items: opt(2, t.array(ref(KeyToPathSchema)), 'Keys to project; every key when unset.'),
  defaultMode: opt(3, ptr(t.int32()), 'Mode bits of created files. Defaults to 0644.'),
  optional: opt(4, ptr(t.bool()), 'Whether the ConfigMap or its keys must be defined.'),
});

/** VsphereVirtualDiskVolumeSource: a vSphere volume. */
export const VsphereVirtualDiskVolumeSourceSchema = object(`${P}VsphereVirtualDiskVolumeSource`, {
  volumePath: req(1, t.string()),
  fsType: opt(2, t.string()),
  storagePolicyName: opt(3, t.string()),
  storagePolicyID: opt(4, t.string()),
});

/** QuobyteVolumeSource: a Quobyte mount. */
export const QuobyteVolumeSourceSchema = object(`${P}QuobyteVolumeSource`, {
  registry: req(1, t.string()),
  volume: req(2, t.string()),
  readOnly: opt(3, t.bool()),
  user: opt(4, t.string()),
  group: opt(5, t.string()),
  tenant: opt(6, t.string()),
});

/** AzureDiskVolumeSource: an Azure data disk. */
export const AzureDiskVolumeSourceSchema = object(`${P}AzureDiskVolumeSource`, {
  diskName: req(1, t.string()),
  diskURI: req(2, t.string()),
  cachingMode: opt(3, ptr(t.string())),
  fsType: opt(4, ptr(t.string())),
  readOnly: opt(5, ptr(t.bool())),
  kind: opt(6, ptr(t.string())),
});

/** PhotonPersistentDiskVolumeSource: a Photon Controller persistent disk. */
export const PhotonPersistentDiskVolumeSourceSchema = object(`${P}PhotonPersistentDiskVolumeSource`, {
  pdID: req(1, t.string()),
  fsType: opt(2, t.string()),
});

/** SecretProjection: a Secret in a projected volume. */
export const SecretProjectionSchema = object(`${P}SecretProjection`, {
  ...embed(1, 'localObjectReference', LocalObjectReferenceSchema),
  items: opt(2, t.array(ref(KeyToPathSchema))),
  optional: opt(4, ptr(t.bool())),
});

/** DownwardAPIProjection: pod information in a projected volume. */
export const DownwardAPIProjectionSchema = object(`${P}DownwardAPIProjection`, {
  items: opt(1, t.array(ref(DownwardAPIVolumeFileSchema))),
});

/** ConfigMapProjection: a ConfigMap in a projected volume. */
export const ConfigMapProjectionSchema = object(`${P}ConfigMapProjection`, {
  ...embed(1, 'localObjectReference', LocalObjectReferenceSchema),
  items: opt(2, t.array(ref(KeyToPathSchema))),
  optional: opt(4, ptr(t.bool())),
});

/** ServiceAccountTokenProjection: a service account token in a projected volume. */
export const ServiceAccountTokenProjectionSchema = object(`${P}ServiceAccountTokenProjection`, {
  audience: opt(1, t.string(), 'Intended audience of the token; the API server when empty.'),
  expirationSeconds: opt(2, ptr(t.int64()), 'Requested validity of the token. Defaults to 1 hour.'),
  path: req(3, t.string(), 'Path of the token file relative to the mount point.'),
});

/** VolumeProjection: one source of a projected volume (exactly one field is set). */
export const VolumeProjectionSchema = object(`${P}VolumeProjection`, {
  secret: opt(1, ref(SecretProjectionSchema)),
  downwardAPI: opt(2, ref(DownwardAPIProjectionSchema)),
  configMap: opt(3, ref(ConfigMapProjectionSchema)),
  serviceAccountToken: opt(4, ref(ServiceAccountTokenProjectionSchema)),
});

/** ProjectedVolumeSource: several sources in one directory. */
export const ProjectedVolumeSourceSchema = object(`${P}ProjectedVolumeSource`, {
  sources: opt(1, t.array(ref(VolumeProjectionSchema)), 'The volume projections.'),
  defaultMode: opt(2, ptr(t.int32()), 'Mode bits of created files. Defaults to 0644.'),
});

/** PortworxVolumeSource: a Portworx volume. */
export const PortworxVolumeSourceSchema = object(`${P}PortworxVolumeSource`, {
  volumeID: req(1, t.string()),
  fsType: opt(2, t.string()),
  readOnly: opt(3, t.bool()),
});

/** ScaleIOVolumeSource: a ScaleIO volume. */
export const ScaleIOVolumeSourceSchema = object(`${P}ScaleIOVolumeSource`, {
  gateway: req(1, t.string()),
  system: req(2, t.string()),
  secretRef: req(3, ref(LocalObjectReferenceSchema)),
  sslEnabled: opt(4, t.bool()),
  protectionDomain: opt(5, t.string()),
  storagePool: opt(6, t.string()),
  storageMode: opt(7, t.string()),
  volumeName: opt(8, t.string()),
  fsType: opt(9, t.string()),
  readOnly: opt(10, t.bool()),
});

/** StorageOSVolumeSource: a StorageOS volume. */
export const StorageOSVolumeSourceSchema = object(`${P}StorageOSVolumeSource`, {
  volumeName: opt(1, t.string()),
  volumeNamespace: opt(2, t.string()),
  fsType: opt(3, t.string()),
  readOnly: opt(4, t.bool()),
  secretRef: opt(5, ref(LocalObjectReferenceSchema)),
});

/** CSIVolumeSource: an ephemeral volume of a CSI driver. */
export const CSIVolumeSourceSchema = object(`${P}CSIVolumeSource`, {
  driver: req(1, t.string(), 'Name of the CSI driver that handles this volume.'),
  readOnly: opt(2, ptr(t.bool())),
  fsType: opt(3, ptr(t.string())),
  volumeAttributes: opt(4, t.map(t.string()), 'Driver-specific properties.'),
  nodePublishSecretRef: opt(5, ref(LocalObjectReferenceSchema)),
});

/** PersistentVolumeClaimSpec: what a claim asks of a volume. */
export const PersistentVolumeClaimSpecSchema = object(`${P}PersistentVolumeClaimSpec`, {
  accessModes: opt(
    1,
    t.array(t.enumOf(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'])),
    'Desired access modes of the volume.',
  ),
  selector: opt(4, ref(LabelSelectorSchema), 'A label query over volumes to consider for binding.'),
  resources: opt(2, ref(ResourceRequirementsSchema), 'Minimum resources the volume should have.'),
  volumeName: opt(3, t.string(), 'The PersistentVolume bound to this claim.'),
  storageClassName: opt(5, ptr(t.string()), 'Name of the StorageClass required by the claim.'),
  volumeMode: opt(6, ptr(t.enumOf(['Block', 'Filesystem'])), 'Filesystem (default) or Block.'),
  dataSource: opt(7, ref(TypedLocalObjectReferenceSchema), 'An object to populate the volume from.'),
});
/** A PersistentVolumeClaimSpec object in its JSON form. */
export type PersistentVolumeClaimSpec = Static<typeof PersistentVolumeClaimSpecSchema>;

/** PersistentVolumeClaimTemplate: the claim created for an ephemeral volume. */
export const PersistentVolumeClaimTemplateSchema = object(`${P}PersistentVolumeClaimTemplate`, {
  metadata: opt(1, ref(ObjectMetaSchema), 'Labels and annotations copied into the claim.'),
  spec: req(2, ref(PersistentVolumeClaimSpecSchema), 'The claim specification.'),
});

/** EphemeralVolumeSource: a volume provisioned for and deleted with the pod. */
export const EphemeralVolumeSourceSchema = object(`${P}EphemeralVolumeSource`, {
  volumeClaimTemplate: opt(1, ref(PersistentVolumeClaimTemplateSchema)),
});

/** VolumeSource: where a volume's data come from (exactly one field is set). */
export const VolumeSourceSchema = object(`${P}VolumeSource`, {
  hostPath: opt(1, ref(HostPathVolumeSourceSchema), 'A file or directory on the host.'),
  emptyDir: opt(2, ref(EmptyDirVolumeSourceSchema), "A temporary directory sharing the pod's lifetime."),
  gcePersistentDisk: opt(3, ref(GCEPersistentDiskVolumeSourceSchema)),
  awsElasticBlockStore: opt(4, ref(AWSElasticBlockStoreVolumeSourceSchema)),
  gitRepo: opt(5, ref(GitRepoVolumeSourceSchema)),
  secret: opt(6, ref(SecretVolumeSourceSchema), 'A Secret.'),
  nfs: opt(7, ref(NFSVolumeSourceSchema), 'An NFS mount.'),
  iscsi: opt(8, ref(ISCSIVolumeSourceSchema)),
  glusterfs: opt(9, ref(GlusterfsVolumeSourceSchema)),
  persistentVolumeClaim: opt(10, ref(PersistentVolumeClaimVolumeSourceSchema), 'A PersistentVolumeClaim.'),
  rbd: opt(11, ref(RBDVolumeSourceSchema)),
  flexVolume: opt(12, ref(FlexVolumeSourceSchema)),
  cinder: opt(13, ref(CinderVolumeSourceSchema)),
  cephfs: opt(14, ref(CephFSVolumeSourceSchema)),
  flocker: opt(15, ref(FlockerVolumeSourceSchema)),
  downwardAPI: opt(16, ref(DownwardAPIVolumeSourceSchema), 'Information about the pod.'),
  fc: opt(17, ref(FCVolumeSourceSchema)),
  azureFile: opt(18, ref(AzureFileVolumeSourceSchema)),
  configMap: opt(19, ref(ConfigMapVolumeSourceSchema), 'A ConfigMap.'),
  vsphereVolume: opt(20, ref(VsphereVirtualDiskVolumeSourceSchema)),
  quobyte: opt(21, ref(QuobyteVolumeSourceSchema)),
  azureDisk: opt(22, ref(AzureDiskVolumeSourceSchema)),
  photonPersistentDisk: opt(23, ref(PhotonPersistentDiskVolumeSourceSchema)),
  projected: opt(26, ref(ProjectedVolumeSourceSchema), 'Secrets, ConfigMaps, downward API and tokens together.'),
  portworxVolume: opt(24, ref(PortworxVolumeSourceSchema)),
  scaleIO: opt(25, ref(ScaleIOVolumeSourceSchema)),
  storageos: opt(27, ref(StorageOSVolumeSourceSchema)),
  csi: opt(28, ref(CSIVolumeSourceSchema), 'An ephemeral volume of a CSI driver.'),
  ephemeral: opt(29, ref(EphemeralVolumeSourceSchema), 'A volume provisioned for this pod.'),
});

/** Volume: a named volume of a pod. */
export const VolumeSchema = object(`${P}Volume`, {
  name: req(1, t.string(), 'Name of the volume (DNS_LABEL), unique within the pod.'),
  ...embed(2, 'volumeSource', VolumeSourceSchema),
});
/** A Volume object in its JSON form. */
export type Volume = Static<typeof VolumeSchema>;

// ---- scheduling -------------------------------------------------------------------------------------------------

/** NodeSelectorRequirement: `key operator values` over node labels or fields. */
export const NodeSelectorRequirementSchema = object(`${P}NodeSelectorRequirement`, {
  key: req(1, t.string(), 'The label key that the selector applies to.'),
  operator: req(2, t.enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'])),
  values: opt(3, t.array(t.string())),
});

/** NodeSelectorTerm: requirements ANDed. */
export const NodeSelectorTermSchema = object(`${P}NodeSelectorTerm`, {
  matchExpressions: opt(1, t.array(ref(NodeSelectorRequirementSchema)), "Requirements on the node's labels."),
  matchFields: opt(2, t.array(ref(NodeSelectorRequirementSchema)), "Requirements on the node's fields."),
});

/** NodeSelector: terms ORed. */
export const NodeSelectorSchema = object(`${P}NodeSelector`, {
  nodeSelectorTerms: req(1, t.array(ref(NodeSelectorTermSchema)), 'The terms, ORed.'),
});

/** PreferredSchedulingTerm: a weighted node selector term. */
export const PreferredSchedulingTermSchema = object(`${P}PreferredSchedulingTerm`, {
  weight: req(1, t.int32(), 'Weight in the range 1-100.'),
  preference: req(2, ref(NodeSelectorTermSchema)),
});

/** NodeAffinity: node affinity scheduling rules. */
export const NodeAffinitySchema = object(`${P}NodeAffinity`, {
  requiredDuringSchedulingIgnoredDuringExecution: opt(1, ref(NodeSelectorSchema)),
  preferredDuringSchedulingIgnoredDuringExecution: opt(2, t.array(ref(PreferredSchedulingTermSchema))),
});

/** PodAffinityTerm: pods (by label and namespace) to be co-located with, or not, on a topology. */
export const PodAffinityTermSchema = object(`${P}PodAffinityTerm`, {
  labelSelector: opt(1, ref(LabelSelectorSchema), 'A label query over pods.'),
  namespaces: opt(2, t.array(t.string()), "Namespaces the term applies to; the pod's when empty."),
  topologyKey: req(3, t.string(), 'Node label whose value defines co-location.'),
  namespaceSelector: opt(4, ref(LabelSelectorSchema), 'A label query over namespaces.'),
});

/** WeightedPodAffinityTerm: a weighted pod affinity term. */
export const WeightedPodAffinityTermSchema = object(`${P}WeightedPodAffinityTerm`, {
  weight: req(1, t.int32(), 'Weight in the range 1-100.'),
  podAffinityTerm: req(2, ref(PodAffinityTermSchema)),
});

/** PodAffinity: inter-pod affinity rules. */
export const PodAffinitySchema = object(`${P}PodAffinity`, {
  requiredDuringSchedulingIgnoredDuringExecution: opt(1, t.array(ref(PodAffinityTermSchema))),
  preferredDuringSchedulingIgnoredDuringExecution: opt(2, t.array(ref(WeightedPodAffinityTermSchema))),
});

/** PodAntiAffinity: inter-pod anti-affinity rules. */
export const PodAntiAffinitySchema = object(`${P}PodAntiAffinity`, {
  requiredDuringSchedulingIgnoredDuringExecution: opt(1, t.array(ref(PodAffinityTermSchema))),
  preferredDuringSchedulingIgnoredDuringExecution: opt(2, t.array(ref(WeightedPodAffinityTermSchema))),
});

/** Affinity: the pod's affinity scheduling rules. */
export const AffinitySchema = object(`${P}Affinity`, {
  nodeAffinity: opt(1, ref(NodeAffinitySchema), 'Node affinity scheduling rules.'),
  podAffinity: opt(2, ref(PodAffinitySchema), 'Pod affinity scheduling rules.'),
  podAntiAffinity: opt(3, ref(PodAntiAffinitySchema), 'Pod anti-affinity scheduling rules.'),
});

/** Toleration: a taint the pod tolerates. */
export const TolerationSchema = object(`${P}Toleration`, {
  key: opt(1, t.string(), 'Taint key; empty matches all keys (with operator Exists).'),
  operator: opt(2, t.enumOf(['Exists', 'Equal']), 'Exists or Equal (default).'),
  value: opt(3, t.string(), 'Taint value the toleration matches.'),
  effect: opt(4, t.enumOf(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']), 'Taint effect; empty matches all.'),
  tolerationSeconds: opt(5, ptr(t.int64()), 'How long a NoExecute taint is tolerated; forever when unset.'),
});
/** A Toleration object in its JSON form. */
export type Toleration = Static<typeof TolerationSchema>;

/** TopologySpreadConstraint: how matching pods spread over a topology. */
export const TopologySpreadConstraintSchema = object(`${P}TopologySpreadConstraint`, {
  maxSkew: req(1, t.int32(), 'Maximum permitted difference of matching pods between domains.'),
  topologyKey: req(2, t.string(), 'Node label key defining the domains.'),
  whenUnsatisfiable: req(3, t.enumOf(['DoNotSchedule', 'ScheduleAnyway'])),
  labelSelector: opt(4, ref(LabelSelectorSchema), 'Finds the matching pods.'),
});

/** HostAlias: an /etc/hosts entry of the pod. */
export const HostAliasSchema = object(`${P}HostAlias`, {
  ip: opt(1, t.string()),
  hostnames: opt(2, t.array(t.string())),
});

/** PodDNSConfigOption: one resolver option. */
export const PodDNSConfigOptionSchema = object(`${P}PodDNSConfigOption`, {
  name: opt(1, t.string()),
  value: opt(2, ptr(t.string())),
});

/** PodDNSConfig: DNS parameters beyond the DNS policy. */
export const PodDNSConfigSchema = object(`${P}PodDNSConfig`, {
  nameservers: opt(1, t.array(t.string())),
  searches: opt(2, t.array(t.string())),
  options: opt(3, t.array(ref(PodDNSConfigOptionSchema))),
});

/** PodReadinessGate: a pod condition that must be True for the pod to be ready. */
export const PodReadinessGateSchema = object(`${P}PodReadinessGate`, {
  conditionType: req(1, t.string()),
});

/** Sysctl: a kernel parameter. */
export const SysctlSchema = object(`${P}Sysctl`, {
  name: req(1, t.string()),
  value: req(2, t.string()),
});

/** PodSecurityContext: pod-level security attributes. */
export const PodSecurityContextSchema = object(`${P}PodSecurityContext`, {
  seLinuxOptions: opt(1, ref(SELinuxOptionsSchema)),
  windowsOptions: opt(8, ref(WindowsSecurityContextOptionsSchema)),
  runAsUser: opt(2, ptr(t.int64()), 'UID to run the entrypoint of the container processes.'),
  runAsGroup: opt(6, ptr(t.int64()), 'GID to run the entrypoint of the container processes.'),
  runAsNonRoot: opt(3, ptr(t.bool()), 'The containers must run as a non-root user.'),
  supplementalGroups: opt(4, t.array(t.int64()), 'Groups applied to the first process of each container.'),
  fsGroup: opt(5, ptr(t.int64()), 'Supplemental group owning the pod volumes.'),
  sysctls: opt(7, t.array(ref(SysctlSchema))),
  fsGroupChangePolicy: opt(9, ptr(t.enumOf(['OnRootMismatch', 'Always']))),
  seccompProfile: opt(10, ref(SeccompProfileSchema)),
});

/** PodSpec: the desired behaviour of a pod. */
export const PodSpecSchema = object(
  `${P}PodSpec`,
  {
    volumes: opt(
      1,
      t.array(ref(VolumeSchema), { patchMergeKey: 'name', patchStrategy: 'merge,retainKeys' }),
      'Volumes that can be mounted by containers of the pod.',
    ),
    initContainers: opt(
      20,
      t.array(ref(ContainerSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'Containers run in order, to completion, before the app containers start.',
    ),
    containers: req(
      2,
      t.array(ref(ContainerSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'Containers of the pod. There must be at least one.',
    ),
    ephemeralContainers: opt(
      34,
      t.array(ref(EphemeralContainerSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'Ephemeral (debugging) containers run in this pod.',
    ),
    restartPolicy: opt(
      3,
      t.enumOf(['Always', 'OnFailure', 'Never']),
      'Restart policy for all containers within the pod. Defaults to Always.',
    ),
    terminationGracePeriodSeconds: opt(
      4,
      ptr(t.int64()),
      'Seconds the pod needs to terminate gracefully. Defaults to 30.',
    ),
    activeDeadlineSeconds: opt(5, ptr(t.int64()), 'Seconds the pod may be active before it is failed.'),
    dnsPolicy: opt(
      6,
      t.enumOf(['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None']),
      'DNS policy for the pod. Defaults to ClusterFirst.',
    ),
    nodeSelector: opt(7, t.map(t.string()), 'Labels a node must have for the pod to be scheduled on it.'),
    serviceAccountName: opt(8, t.string(), 'Name of the ServiceAccount used to run this pod.'),
    serviceAccount: opt(9, t.string(), 'Deprecated alias for serviceAccountName.'),
    automountServiceAccountToken: opt(21, ptr(t.bool()), 'Whether a service account token is mounted.'),
    nodeName: opt(10, t.string(), 'The node this pod is scheduled to.'),
    hostNetwork: opt(11, t.bool(), "Use the host's network namespace."),
    hostPID: opt(12, t.bool(), "Use the host's pid namespace."),
    hostIPC: opt(13, t.bool(), "Use the host's ipc namespace."),
    shareProcessNamespace: opt(27, ptr(t.bool()), 'Share one process namespace between the containers.'),
    securityContext: opt(14, ref(PodSecurityContextSchema), 'Pod-level security attributes.'),
    imagePullSecrets: opt(
      15,
      t.array(ref(LocalObjectReferenceSchema), { patchMergeKey: 'name', patchStrategy: 'merge' }),
      'Secrets used to pull the images.',
    ),
    hostname: opt(16, t.string(), 'Hostname of the pod.'),
    subdomain: opt(17, t.string(), 'Subdomain of the pod (FQDN <hostname>.<subdomain>.<namespace>.svc...).'),
    affinity: opt(18, ref(AffinitySchema), "The pod's scheduling constraints."),
    schedulerName: opt(19, t.string(), 'The scheduler that dispatches the pod. Defaults to default-scheduler.'),
    tolerations: opt(22, t.array(ref(TolerationSchema)), "The pod's tolerations."),
    hostAliases: opt(
      23,
      t.array(ref(HostAliasSchema), { patchMergeKey: 'ip', patchStrategy: 'merge' }),
      "Entries injected into the pod's hosts file.",
    ),
    priorityClassName: opt(24, t.string(), 'Name of the PriorityClass of the pod.'),
    priority: opt(25, ptr(t.int32()), 'Priority value, set by admission from priorityClassName.'),
    dnsConfig: opt(26, ref(PodDNSConfigSchema), 'DNS parameters beyond dnsPolicy.'),
    readinessGates: opt(28, t.array(ref(PodReadinessGateSchema)), 'Extra conditions for pod readiness.'),
    runtimeClassName: opt(29, ptr(t.string()), 'RuntimeClass used to run this pod.'),
    enableServiceLinks: opt(30, ptr(t.bool()), 'Inject service environment variables. Defaults to true.'),
    preemptionPolicy: opt(31, ptr(t.enumOf(['Never', 'PreemptLowerPriority']))),
    overhead: opt(32, t.map(t.quantity()), 'Resource overhead of the pod sandbox.'),
    topologySpreadConstraints: opt(
      33,
      t.array(ref(TopologySpreadConstraintSchema), { patchMergeKey: 'topologyKey', patchStrategy: 'merge' }),
      'How pods spread across topology domains.',
    ),
    setHostnameAsFQDN: opt(35, ptr(t.bool()), "Use the pod's FQDN as its hostname."),
  },
  { description: 'PodSpec is a description of a pod.' },
);
/** A PodSpec object in its JSON form. */
export type PodSpec = Static<typeof PodSpecSchema>;

/** PodTemplateSpec: the pods a controller creates. */
export const PodTemplateSpecSchema = object(`${P}PodTemplateSpec`, {
  metadata: opt(1, ref(ObjectMetaSchema), 'Metadata of the pods created from this template.'),
  spec: opt(2, ref(PodSpecSchema), 'Specification of the pods.'),
});
/** A PodTemplateSpec object in its JSON form. */
export type PodTemplateSpec = Static<typeof PodTemplateSpecSchema>;

// ---- pod status -------------------------------------------------------------------------------------------------

/** PodCondition: one condition of a pod. */
export const PodConditionSchema = object(`${P}PodCondition`, {
  type: req(1, t.string(), 'PodScheduled, Initialized, ContainersReady, Ready, or a readiness gate.'),
  status: req(2, t.enumOf(['True', 'False', 'Unknown'])),
  lastProbeTime: opt(3, t.time()),
  lastTransitionTime: opt(4, t.time()),
  reason: opt(5, t.string()),
  message: opt(6, t.string()),
});
/** A PodCondition object in its JSON form. */
export type PodCondition = Static<typeof PodConditionSchema>;

/** ContainerStateWaiting: a container not yet running. */
export const ContainerStateWaitingSchema = object(`${P}ContainerStateWaiting`, {
  reason: opt(1, t.string(), 'Why the container is not yet running (e.g. CrashLoopBackOff).'),
  message: opt(2, t.string()),
});

/** ContainerStateRunning: a running container. */
export const ContainerStateRunningSchema = object(`${P}ContainerStateRunning`, {
  startedAt: opt(1, t.time()),
});

/** ContainerStateTerminated: a terminated container. */
export const ContainerStateTerminatedSchema = object(`${P}ContainerStateTerminated`, {
  exitCode: req(1, t.int32(), 'Exit status from the last termination of the container.'),
  signal: opt(2, t.int32()),
  reason: opt(3, t.string()),
  message: opt(4, t.string()),
  startedAt: opt(5, t.time()),
  finishedAt: opt(6, t.time()),
  containerID: opt(7, t.string()),
});

/** ContainerState: exactly one of waiting, running, terminated. */
export const ContainerStateSchema = object(`${P}ContainerState`, {
  waiting: opt(1, ref(ContainerStateWaitingSchema)),
  running: opt(2, ref(ContainerStateRunningSchema)),
  terminated: opt(3, ref(ContainerStateTerminatedSchema)),
});
/** A ContainerState object in its JSON form. */
export type ContainerState = Static<typeof ContainerStateSchema>;

/** ContainerStatus: the observed state of one container. */
export const ContainerStatusSchema = object(`${P}ContainerStatus`, {
  name: opt(1, t.string(), 'Name of the container.'),
  state: opt(2, ref(ContainerStateSchema), 'Current state of the container.'),
  lastState: opt(3, ref(ContainerStateSchema), 'Last termination state of the container.'),
  ready: opt(4, t.bool(), 'Whether the container passes its readiness probe.'),
  restartCount: opt(5, t.int32(), 'Number of times the container has been restarted.'),
  image: opt(6, t.string()),
  imageID: opt(7, t.string()),
  containerID: opt(8, t.string(), "Container ID as '<type>://<container_id>'."),
  started: opt(9, ptr(t.bool()), 'Whether the container has passed its startup probe.'),
});
/** A ContainerStatus object in its JSON form. */
export type ContainerStatus = Static<typeof ContainerStatusSchema>;

/** PodIP: one IP address of a pod. */
export const PodIPSchema = object(`${P}PodIP`, {
  ip: opt(1, t.string()),
});

/** PodStatus: the observed state of a pod. */
export const PodStatusSchema = object(`${P}PodStatus`, {
  phase: opt(1, t.enumOf(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']), 'Lifecycle phase of the pod.'),
  conditions: opt(
    2,
    t.array(ref(PodConditionSchema), { patchMergeKey: 'type', patchStrategy: 'merge' }),
    'Current service state of the pod.',
  ),
  message: opt(3, t.string()),
  reason: opt(4, t.string(), "Why the pod is in this state, e.g. 'Evicted'."),
  nominatedNodeName: opt(11, t.string(), 'Node where this pod preempted other pods.'),
  hostIP: opt(5, t.string()),
  podIP: opt(6, t.string()),
  podIPs: opt(12, t.array(ref(PodIPSchema), { patchMergeKey: 'ip', patchStrategy: 'merge' })),
  startTime: opt(7, t.time()),
  initContainerStatuses: opt(10, t.array(ref(ContainerStatusSchema))),
  containerStatuses: opt(8, t.array(ref(ContainerStatusSchema))),
  qosClass: opt(9, t.enumOf(['Guaranteed', 'Burstable', 'BestEffort'])),
  ephemeralContainerStatuses: opt(13, t.array(ref(ContainerStatusSchema))),
});
/** A PodStatus object in its JSON form. */
export type PodStatus = Static<typeof PodStatusSchema>;

// ---- nodes ------------------------------------------------------------------------------------------------------

/** Taint: repels pods that do not tolerate it. */
export const TaintSchema = object(`${P}Taint`, {
  key: req(1, t.string()),
  value: opt(2, t.string()),
  effect: req(3, t.enumOf(['NoSchedule', 'PreferNoSchedule', 'NoExecute'])),
  timeAdded: opt(4, t.time()),
});
/** A Taint object in its JSON form. */
export type Taint = Static<typeof TaintSchema>;

/** ConfigMapNodeConfigSource: a ConfigMap as a node's configuration source (deprecated). */
export const ConfigMapNodeConfigSourceSchema = object(`${P}ConfigMapNodeConfigSource`, {
  namespace: req(1, t.string()),
  name: req(2, t.string()),
  uid: opt(3, t.string()),
  resourceVersion: opt(4, t.string()),
  kubeletConfigKey: req(5, t.string()),
});

/** NodeConfigSource: a node's configuration source (deprecated). */
export const NodeConfigSourceSchema = object(`${P}NodeConfigSource`, {
  configMap: opt(2, ref(ConfigMapNodeConfigSourceSchema)),
});

/** NodeConfigStatus: the status of a node's assigned configuration (deprecated). */
export const NodeConfigStatusSchema = object(`${P}NodeConfigStatus`, {
  assigned: opt(1, ref(NodeConfigSourceSchema)),
  active: opt(2, ref(NodeConfigSourceSchema)),
  lastKnownGood: opt(3, ref(NodeConfigSourceSchema)),
  error: opt(4, t.string()),
});

/** NodeCondition: one condition of a node. */
export const NodeConditionSchema = object(`${P}NodeCondition`, {
  type: req(1, t.string(), 'Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable, ...'),
  status: req(2, t.enumOf(['True', 'False', 'Unknown'])),
  lastHeartbeatTime: opt(3, t.time()),
  lastTransitionTime: opt(4, t.time()),
  reason: opt(5, t.string()),
  message: opt(6, t.string()),
});
/** A NodeCondition object in its JSON form. */
export type NodeCondition = Static<typeof NodeConditionSchema>;

/** NodeAddress: one address of a node. */
export const NodeAddressSchema = object(`${P}NodeAddress`, {
  type: req(1, t.enumOf(['Hostname', 'ExternalIP', 'InternalIP', 'ExternalDNS', 'InternalDNS'])),
  address: req(2, t.string()),
});

/** DaemonEndpoint: one port of a node daemon. */
export const DaemonEndpointSchema = object(`${P}DaemonEndpoint`, {
  Port: req(1, t.int32()),
});

/** NodeDaemonEndpoints: ports of the daemons of a node. */
export const NodeDaemonEndpointsSchema = object(`${P}NodeDaemonEndpoints`, {
  kubeletEndpoint: opt(1, ref(DaemonEndpointSchema), 'Endpoint of the node agent.'),
});

/** NodeSystemInfo: identifiers and versions of a node. */
export const NodeSystemInfoSchema = object(`${P}NodeSystemInfo`, {
  machineID: opt(1, t.string()),
  systemUUID: opt(2, t.string()),
  bootID: opt(3, t.string()),
  kernelVersion: opt(4, t.string()),
  osImage: opt(5, t.string()),
  containerRuntimeVersion: opt(6, t.string()),
  kubeletVersion: opt(7, t.string(), 'Version of the node agent.'),
  kubeProxyVersion: opt(8, t.string()),
  operatingSystem: opt(9, t.string()),
  architecture: opt(10, t.string()),
});

/** ContainerImage: an image present on a node. */
export const ContainerImageSchema = object(`${P}ContainerImage`, {
  names: opt(1, t.array(t.string())),
  sizeBytes: opt(2, t.int64()),
});

/** AttachedVolume: a volume attached to a node. */
export const AttachedVolumeSchema = object(`${P}AttachedVolume`, {
  name: req(1, t.string()),
  devicePath: req(2, t.string()),
});

// ---- services and endpoints -------------------------------------------------------------------------------------

/** ServicePort: one port of a service. */
export const ServicePortSchema = object(`${P}ServicePort`, {
  name: opt(1, t.string(), 'Name of the port (DNS_LABEL); optional with a single port.'),
  protocol: opt(2, t.enumOf(['TCP', 'UDP', 'SCTP']), 'TCP (default), UDP or SCTP.'),
  appProtocol: opt(6, ptr(t.string()), 'Application protocol of the port.'),
  port: req(3, t.int32(), 'The port exposed by this service.'),
  targetPort: opt(4, t.intOrString(), 'Number or name of the port on the pods; defaults to port.'),
  nodePort: opt(5, t.int32(), 'Port on each node for NodePort and LoadBalancer services.'),
});
/** A ServicePort object in its JSON form. */
export type ServicePort = Static<typeof ServicePortSchema>;

/** ClientIPConfig: ClientIP session affinity settings. */
export const ClientIPConfigSchema = object(`${P}ClientIPConfig`, {
  timeoutSeconds: opt(1, ptr(t.int32()), 'Session sticky time. Defaults to 10800.'),
});

/** SessionAffinityConfig: session affinity settings. */
export const SessionAffinityConfigSchema = object(`${P}SessionAffinityConfig`, {
  clientIP: opt(1, ref(ClientIPConfigSchema)),
});

/** PortStatus: the error state of a service port. */
export const PortStatusSchema = object(`${P}PortStatus`, {
  port: req(1, t.int32()),
  protocol: req(2, t.enumOf(['TCP', 'UDP', 'SCTP'])),
  error: opt(3, ptr(t.string())),
});

/** LoadBalancerIngress: an ingress point of a load balancer. */
export const LoadBalancerIngressSchema = object(`${P}LoadBalancerIngress`, {
  ip: opt(1, t.string()),
  hostname: opt(2, t.string()),
  ports: opt(4, t.array(ref(PortStatusSchema))),
});

/** LoadBalancerStatus: the status of a load balancer. */
export const LoadBalancerStatusSchema = object(`${P}LoadBalancerStatus`, {
  ingress: opt(1, t.array(ref(LoadBalancerIngressSchema)), 'Ingress points of the load balancer.'),
});

/** EndpointAddress: one address of an endpoint. */
export const EndpointAddressSchema = object(`${P}EndpointAddress`, {
  ip: req(1, t.string()),
  hostname: opt(3, t.string()),
  nodeName: opt(4, ptr(t.string())),
  targetRef: opt(2, ref(ObjectReferenceSchema), 'Object providing the endpoint.'),
});

/** EndpointPort: one port of an endpoint. */
export const EndpointPortSchema = object(`${P}EndpointPort`, {
  name: opt(1, t.string()),
  port: req(2, t.int32()),
  protocol: opt(3, t.enumOf(['TCP', 'UDP', 'SCTP'])),
  appProtocol: opt(4, ptr(t.string())),
});

/** EndpointSubset: addresses sharing a set of ports. */
export const EndpointSubsetSchema = object(`${P}EndpointSubset`, {
  addresses: opt(1, t.array(ref(EndpointAddressSchema)), 'Ready addresses.'),
  notReadyAddresses: opt(2, t.array(ref(EndpointAddressSchema)), 'Addresses not ready yet.'),
  ports: opt(3, t.array(ref(EndpointPortSchema))),
});
/** A EndpointSubset object in its JSON form. */
export type EndpointSubset = Static<typeof EndpointSubsetSchema>;

// ---- events, limits, quotas -------------------------------------------------------------------------------------

/** EventSource: the component an event comes from. */
export const EventSourceSchema = object(`${P}EventSource`, {
  component: opt(1, t.string()),
  host: opt(2, t.string()),
});

/** EventSeries: a series of similar events. */
export const EventSeriesSchema = object(`${P}EventSeries`, {
  count: opt(1, t.int32()),
  lastObservedTime: opt(2, t.microTime()),
});

/** LimitRangeItem: limits for one kind of object (Pod, Container, PersistentVolumeClaim). */
export const LimitRangeItemSchema = object(`${P}LimitRangeItem`, {
  type: opt(1, t.string(), 'Pod, Container or PersistentVolumeClaim.'),
  max: opt(2, t.map(t.quantity())),
  min: opt(3, t.map(t.quantity())),
  default: opt(4, t.map(t.quantity()), 'Default limits.'),
  defaultRequest: opt(5, t.map(t.quantity()), 'Default requests.'),
  maxLimitRequestRatio: opt(6, t.map(t.quantity())),
});

/** ScopedResourceSelectorRequirement: a scope selector requirement of a quota. */
export const ScopedResourceSelectorRequirementSchema = object(`${P}ScopedResourceSelectorRequirement`, {
  scopeName: req(1, t.string()),
  operator: req(2, t.enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist'])),
  values: opt(3, t.array(t.string())),
});

/** ScopeSelector: scope selector requirements ANDed. */
export const ScopeSelectorSchema = object(`${P}ScopeSelector`, {
  matchExpressions: opt(1, t.array(ref(ScopedResourceSelectorRequirementSchema))),
});
