/**
 * Kubernetes 1.21 defaulting of the PodSpec tree (`pkg/apis/core/v1/defaults.go` and the generated defaulters
 * that walk PodSpec): shared by Pod and by every kind that embeds a pod template (ReplicationController, the apps
 * workloads, Job, CronJob). Every function mutates its argument in place, is cheap, and never throws: the input
 * has passed structural validation.
 */
import {
  type Container,
  type PersistentVolumeClaimSpec,
  type PodSpec,
  type PodTemplateSpec,
  type Probe,
  type Volume,
} from './types';

/** File mode 0644, the default of Secret, ConfigMap, downward API and projected volumes. */
export const DEFAULT_FILE_MODE = 0o644;
/** The default grace period of a pod, in seconds. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
/** The scheduler that dispatches pods that name none. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/**
 * The tag of an image reference as Kubernetes' `parsers.ParseImageName` reads it: `latest` when there is neither
 * tag nor digest, `''` when there is only a digest or the reference is empty.
 */
export function imageTag(image: string): string {
  if (image === '') return '';
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const tag = colon > slash ? name.slice(colon + 1) : '';
  if (tag === '' && at < 0) return 'latest';
  return tag;
}

/** Probe defaults: timeout 1 s, period 10 s, success threshold 1, failure threshold 3; HTTP GET path and scheme. */
export function defaultProbe(p: Probe): void {
  p.timeoutSeconds ||= 1;
  p.periodSeconds ||= 10;
  p.successThreshold ||= 1;
  p.failureThreshold ||= 3;
  if (p.httpGet) {
    p.httpGet.path ||= '/';
    p.httpGet.scheme ||= 'HTTP';
  }
}

/** Defaults of one container (also applied to init and ephemeral containers). */
export function defaultContainer(c: Container): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(c.image ?? '') === 'latest' ? 'Always' : 'IfNotPresent';
  c.terminationMessagePath ||= '/dev/termination-log';
  c.terminationMessagePolicy ||= 'File';
  for (const port of c.ports ?? []) port.protocol ||= 'TCP';
  for (const env of c.env ?? []) {
    const fieldRef = env.valueFrom?.fieldRef;
    if (fieldRef) fieldRef.apiVersion ||= 'v1';
  }
  for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) if (probe) defaultProbe(probe);
  for (const handler of [c.lifecycle?.postStart, c.lifecycle?.preStop]) {
    if (handler?.httpGet) {
      handler.httpGet.path ||= '/';
      handler.httpGet.scheme ||= 'HTTP';
    }
  }
}

const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
] as const;

/** Defaults of a PersistentVolumeClaimSpec inside a claim template (volumeMode Filesystem). */
export function defaultClaimSpec(spec: PersistentVolumeClaimSpec): void {
  spec.volumeMode ??= 'Filesystem';
}

/** Defaults of one volume: `emptyDir: {}` when no source is set, and each source's own defaults. */
export function defaultVolume(v: Volume): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined)) v.emptyDir = {};
  if (v.hostPath) v.hostPath.type ??= '';
  if (v.secret) v.secret.defaultMode ??= DEFAULT_FILE_MODE;
  if (v.configMap) v.configMap.defaultMode ??= DEFAULT_FILE_MODE;
  if (v.downwardAPI) {
    v.downwardAPI.defaultMode ??= DEFAULT_FILE_MODE;
    for (const item of v.downwardAPI.items ?? []) if (item.fieldRef) item.fieldRef.apiVersion ||= 'v1';
  }
  if (v.projected) {
    v.projected.defaultMode ??= DEFAULT_FILE_MODE;
    for (const source of v.projected.sources ?? []) {
      if (source.serviceAccountToken) source.serviceAccountToken.expirationSeconds ??= 3600;
      for (const item of source.downwardAPI?.items ?? []) if (item.fieldRef) item.fieldRef.apiVersion ||= 'v1';
    }
  }
  if (v.iscsi) v.iscsi.iscsiInterface ||= 'default';
  if (v.rbd) {
    v.rbd.pool ||= 'rbd';
    v.rbd.user ||= 'admin';
    v.rbd.keyring ||= '/etc/ceph/keyring';
  }
  if (v.azureDisk) {
    v.azureDisk.cachingMode ??= 'ReadWrite';
    v.azureDisk.kind ??= 'Shared';
    v.azureDisk.fsType ??= 'ext4';
    v.azureDisk.readOnly ??= false;
  }
  if (v.scaleIO) {
    v.scaleIO.storageMode ||= 'ThinProvisioned';
    v.scaleIO.fsType ||= 'xfs';
  }
  const claim = v.ephemeral?.volumeClaimTemplate;
  if (claim) defaultClaimSpec(claim.spec);
}

/** Kubernetes' `SetDefaults_PodSpec` and the defaults of everything inside a PodSpec. */
export function defaultPodSpec(spec: PodSpec): void {
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.restartPolicy ||= 'Always';
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  spec.schedulerName ||= DEFAULT_SCHEDULER_NAME;
  // `containers` is required by the schema; `?? []` keeps defaulting total on anything else.
  const all: Container[] = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  for (const c of all) {
    // With the host's network, the host port is the container port.
    if (spec.hostNetwork) for (const port of c.ports ?? []) port.hostPort ||= port.containerPort;
    defaultContainer(c);
  }
  for (const c of spec.ephemeralContainers ?? []) defaultContainer(c as Container);
  for (const v of spec.volumes ?? []) defaultVolume(v);
}

/** Defaults of a pod template (the spec's defaults, when it has one). */
export function defaultPodTemplate(template: PodTemplateSpec | undefined): void {
  if (template?.spec) defaultPodSpec(template.spec);
}

/**
 * Kubernetes' `SetDefaults_Pod` on top of the PodSpec defaults: requests default to limits for each container,
 * and `enableServiceLinks` to true. (Only for Pod objects, not templates.)
 */
export function defaultPodOnly(spec: PodSpec): void {
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    const limits = c.resources?.limits;
    // An empty map adds nothing (Go would create an empty requests map, which JSON then omits).
    if (!limits || !c.resources || Object.keys(limits).length === 0) continue;
    const requests = (c.resources.requests ??= {});
    for (const [name, value] of Object.entries(limits)) if (requests[name] === undefined) requests[name] = value;
  }
  spec.enableServiceLinks ??= true;
}
