/** Kubernetes 1.21 defaulting of the main kinds: input → defaulted output, table-driven. */
import { type Kind } from '../scheme/kind';
import { DaemonSetKind } from './apps/v1/daemon-set';
import { DeploymentKind } from './apps/v1/deployment';
import { ReplicaSetKind } from './apps/v1/replica-set';
import { StatefulSetKind } from './apps/v1/stateful-set';
import { TokenRequestKind } from './authentication/v1/token';
import { CronJobKind, CronJobV1beta1Kind } from './batch/cron-job';
import { JobKind } from './batch/v1/job';
import { EndpointsKind } from './core/v1/endpoints';
import { LimitRangeKind } from './core/v1/limit-range';
import { NamespaceKind } from './core/v1/namespace';
import { NodeKind } from './core/v1/node';
import { PersistentVolumeClaimKind, PersistentVolumeKind } from './core/v1/persistent-volume';
import { PodKind } from './core/v1/pod';
import { imageTag } from './core/v1/pod-defaults';
import { ReplicationControllerKind } from './core/v1/replication-controller';
import { SecretKind } from './core/v1/secret';
import { ServiceKind } from './core/v1/service';
import { EndpointSliceKind } from './discovery/endpoint-slice';
import { ClusterRoleBindingKind, RoleBindingKind } from './rbac/v1/rbac';
import { PriorityClassKind } from './scheduling/v1/priority-class';

/** What every defaulted pod template spec gains (`SetDefaults_PodSpec`). */
const POD_SPEC_DEFAULTS = {
  restartPolicy: 'Always',
  dnsPolicy: 'ClusterFirst',
  terminationGracePeriodSeconds: 30,
  schedulerName: 'default-scheduler',
  securityContext: {},
};
/** What every defaulted container gains (`SetDefaults_Container`), for an image with a tag other than latest. */
const CONTAINER_DEFAULTS = {
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
};
const TEMPLATE = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.21' }] } };
const DEFAULTED_TEMPLATE = {
  metadata: { labels: { app: 'web' } },
  spec: { ...POD_SPEC_DEFAULTS, containers: [{ name: 'c', image: 'nginx:1.21', ...CONTAINER_DEFAULTS }] },
};

function defaulted(kind: Kind, input: Record<string, unknown>): Record<string, unknown> {
  const obj = structuredClone(input);
  kind.spec.defaults?.(obj as never);
  return obj;
}

describe('defaults', () => {
  it.each<[string, Kind, Record<string, unknown>, Record<string, unknown>]>([
    [
      'a minimal Pod',
      PodKind,
      { spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      {
        spec: {
          ...POD_SPEC_DEFAULTS,
          enableServiceLinks: true,
          containers: [{ name: 'c', image: 'nginx', ...CONTAINER_DEFAULTS, imagePullPolicy: 'Always' }],
        },
      },
    ],
    [
      'a Pod with ports, probes, env, resources and volumes',
      PodKind,
      {
        spec: {
          hostNetwork: true,
          initContainers: [{ name: 'i', image: 'busybox:latest' }],
          containers: [
            {
              name: 'c',
              image: 'registry.example.com:5000/web@sha256:abc',
              ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP', hostPort: 1053 }],
              livenessProbe: { httpGet: { port: 80 } },
              readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 2 },
              lifecycle: { preStop: { httpGet: { port: 'http' } } },
              env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
              resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } },
            },
          ],
          volumes: [
            { name: 'a' },
            { name: 'b', secret: { secretName: 's' } },
            { name: 'c', configMap: { name: 'cm', defaultMode: 0o400 } },
            { name: 'd', hostPath: { path: '/x' } },
            { name: 'e', downwardAPI: { items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels' } }] } },
            { name: 'f', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
          ],
        },
      },
      {
        spec: {
          ...POD_SPEC_DEFAULTS,
          enableServiceLinks: true,
          hostNetwork: true,
          initContainers: [{ name: 'i', image: 'busybox:latest', ...CONTAINER_DEFAULTS, imagePullPolicy: 'Always' }],
          containers: [
            {
              name: 'c',
              image: 'registry.example.com:5000/web@sha256:abc',
              ...CONTAINER_DEFAULTS,
              ports: [
                { containerPort: 80, protocol: 'TCP', hostPort: 80 },
                { containerPort: 53, protocol: 'UDP', hostPort: 1053 },
              ],
              livenessProbe: {
                httpGet: { port: 80, path: '/', scheme: 'HTTP' },
                timeoutSeconds: 1,
                periodSeconds: 10,
                successThreshold: 1,
                failureThreshold: 3,
              },
              readinessProbe: {
                tcpSocket: { port: 80 },
                timeoutSeconds: 1,
                periodSeconds: 2,
                successThreshold: 1,
                failureThreshold: 3,
              },
              lifecycle: { preStop: { httpGet: { port: 'http', path: '/', scheme: 'HTTP' } } },
              env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }],
              // Requests default to limits, key by key, on Pods only.
              resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } },
            },
          ],
          volumes: [
            { name: 'a', emptyDir: {} },
            { name: 'b', secret: { secretName: 's', defaultMode: 0o644 } },
            { name: 'c', configMap: { name: 'cm', defaultMode: 0o400 } },
            { name: 'd', hostPath: { path: '/x', type: '' } },
            {
              name: 'e',
              downwardAPI: {
                defaultMode: 0o644,
                items: [{ path: 'l', fieldRef: { fieldPath: 'metadata.labels', apiVersion: 'v1' } }],
              },
            },
            {
              name: 'f',
              projected: {
                defaultMode: 0o644,
                sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }],
              },
            },
          ],
        },
      },
    ],
    [
      'a Pod whose explicit values stay',
      PodKind,
      {
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 0,
          enableServiceLinks: false,
          schedulerName: 'other',
          dnsPolicy: 'None',
          securityContext: { runAsUser: 1 },
          containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'Never', terminationMessagePolicy: 'File' }],
        },
      },
      {
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 0,
          enableServiceLinks: false,
          schedulerName: 'other',
          dnsPolicy: 'None',
          securityContext: { runAsUser: 1 },
          containers: [{ name: 'c', image: 'nginx', ...CONTAINER_DEFAULTS, imagePullPolicy: 'Never' }],
        },
      },
    ],
    [
      'a Service',
      ServiceKind,
      { spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP', targetPort: 'dns' }] } },
      {
        spec: {
          type: 'ClusterIP',
          sessionAffinity: 'None',
          ports: [
            { port: 80, protocol: 'TCP', targetPort: 80 },
            { port: 53, protocol: 'UDP', targetPort: 'dns' },
          ],
        },
      },
    ],
    [
      'a NodePort Service with ClientIP affinity',
      ServiceKind,
      { spec: { type: 'NodePort', sessionAffinity: 'ClientIP', ports: [{ port: 80, targetPort: 0 }] } },
      {
        spec: {
          type: 'NodePort',
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
          externalTrafficPolicy: 'Cluster',
          ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
        },
      },
    ],
    [
      'a Deployment',
      DeploymentKind,
      { spec: { selector: { matchLabels: { app: 'web' } }, template: TEMPLATE } },
      {
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          template: DEFAULTED_TEMPLATE,
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
          revisionHistoryLimit: 10,
          progressDeadlineSeconds: 600,
        },
      },
    ],
    [
      'a Recreate Deployment scaled to zero',
      DeploymentKind,
      { spec: { replicas: 0, strategy: { type: 'Recreate' }, selector: {}, template: TEMPLATE } },
      {
        spec: {
          replicas: 0,
          selector: {},
          template: DEFAULTED_TEMPLATE,
          strategy: { type: 'Recreate' },
          revisionHistoryLimit: 10,
          progressDeadlineSeconds: 600,
        },
      },
    ],
    [
      'a ReplicaSet',
      ReplicaSetKind,
      { spec: { selector: {}, template: TEMPLATE } },
      { spec: { replicas: 1, selector: {}, template: DEFAULTED_TEMPLATE } },
    ],
    [
      'a ReplicationController (selector and labels from the template)',
      ReplicationControllerKind,
      { metadata: { name: 'rc' }, spec: { template: TEMPLATE } },
      {
        metadata: { name: 'rc', labels: { app: 'web' } },
        spec: { replicas: 1, selector: { app: 'web' }, template: DEFAULTED_TEMPLATE },
      },
    ],
    [
      'a StatefulSet (claim templates defaulted as claims)',
      StatefulSetKind,
      {
        spec: {
          selector: {},
          serviceName: 'web',
          template: TEMPLATE,
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }],
        },
      },
      {
        spec: {
          replicas: 1,
          selector: {},
          serviceName: 'web',
          template: DEFAULTED_TEMPLATE,
          podManagementPolicy: 'OrderedReady',
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
          revisionHistoryLimit: 10,
          volumeClaimTemplates: [
            {
              metadata: { name: 'data' },
              spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' },
              status: { phase: 'Pending' },
            },
          ],
        },
      },
    ],
    [
      'an OnDelete StatefulSet',
      StatefulSetKind,
      { spec: { selector: {}, serviceName: 'w', template: TEMPLATE, updateStrategy: { type: 'OnDelete' } } },
      {
        spec: {
          replicas: 1,
          selector: {},
          serviceName: 'w',
          template: DEFAULTED_TEMPLATE,
          podManagementPolicy: 'OrderedReady',
          updateStrategy: { type: 'OnDelete' },
          revisionHistoryLimit: 10,
        },
      },
    ],
    [
      'a DaemonSet',
      DaemonSetKind,
      { spec: { selector: {}, template: TEMPLATE } },
      {
        spec: {
          selector: {},
          template: DEFAULTED_TEMPLATE,
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
          revisionHistoryLimit: 10,
        },
      },
    ],
    [
      'a Job (labels from the template)',
      JobKind,
      { spec: { template: TEMPLATE } },
      {
        metadata: { labels: { app: 'web' } },
        spec: { completions: 1, parallelism: 1, backoffLimit: 6, template: DEFAULTED_TEMPLATE },
      },
    ],
    [
      'a parallel Job without completions',
      JobKind,
      { metadata: { labels: { own: 'x' } }, spec: { parallelism: 3, template: TEMPLATE } },
      {
        metadata: { labels: { own: 'x' } },
        spec: { parallelism: 3, backoffLimit: 6, template: DEFAULTED_TEMPLATE },
      },
    ],
    [
      'a batch/v1beta1 CronJob (pod template only in the job template)',
      CronJobV1beta1Kind,
      { spec: { schedule: '@daily', jobTemplate: { spec: { template: TEMPLATE } } } },
      {
        spec: {
          schedule: '@daily',
          concurrencyPolicy: 'Allow',
          suspend: false,
          successfulJobsHistoryLimit: 3,
          failedJobsHistoryLimit: 1,
          jobTemplate: { spec: { template: DEFAULTED_TEMPLATE } },
        },
      },
    ],
    [
      'a batch/v1 CronJob keeps explicit limits',
      CronJobKind,
      {
        spec: {
          schedule: '@daily',
          suspend: true,
          successfulJobsHistoryLimit: 0,
          jobTemplate: { spec: { template: { spec: { containers: [] } } } },
        },
      },
      {
        spec: {
          schedule: '@daily',
          concurrencyPolicy: 'Allow',
          suspend: true,
          successfulJobsHistoryLimit: 0,
          failedJobsHistoryLimit: 1,
          jobTemplate: { spec: { template: { spec: { ...POD_SPEC_DEFAULTS, containers: [] } } } },
        },
      },
    ],
    ['a Secret', SecretKind, { data: {} }, { data: {}, type: 'Opaque' }],
    [
      'a Namespace',
      NamespaceKind,
      { metadata: { name: 'n' } },
      { metadata: { name: 'n' }, status: { phase: 'Active' } },
    ],
    [
      'a PersistentVolume',
      PersistentVolumeKind,
      { spec: { capacity: { storage: '1Gi' }, hostPath: { path: '/x' } } },
      {
        spec: {
          capacity: { storage: '1Gi' },
          hostPath: { path: '/x' },
          persistentVolumeReclaimPolicy: 'Retain',
          volumeMode: 'Filesystem',
        },
        status: { phase: 'Pending' },
      },
    ],
    [
      'a PersistentVolumeClaim',
      PersistentVolumeClaimKind,
      { spec: { accessModes: ['ReadWriteOnce'] } },
      { spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' }, status: { phase: 'Pending' } },
    ],
    [
      'a Node (allocatable from capacity)',
      NodeKind,
      { status: { capacity: { cpu: '2' } } },
      { status: { capacity: { cpu: '2' }, allocatable: { cpu: '2' } } },
    ],
    [
      'Endpoints',
      EndpointsKind,
      { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
      { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }] },
    ],
    [
      'an EndpointSlice',
      EndpointSliceKind,
      { addressType: 'IPv4', endpoints: [], ports: [{ port: 80 }] },
      { addressType: 'IPv4', endpoints: [], ports: [{ port: 80, name: '', protocol: 'TCP' }] },
    ],
    [
      'a LimitRange (default limit from max, default request from default, else min)',
      LimitRangeKind,
      {
        spec: {
          limits: [
            { type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '10m', 'ephemeral-storage': '1Gi' } },
            { type: 'Pod', max: { cpu: '4' } },
          ],
        },
      },
      {
        spec: {
          limits: [
            {
              type: 'Container',
              max: { cpu: '2', memory: '1Gi' },
              min: { cpu: '10m', 'ephemeral-storage': '1Gi' },
              default: { cpu: '2', memory: '1Gi' },
              defaultRequest: { cpu: '2', memory: '1Gi', 'ephemeral-storage': '1Gi' },
            },
            { type: 'Pod', max: { cpu: '4' } },
          ],
        },
      },
    ],
    [
      'a RoleBinding (role and subject groups)',
      RoleBindingKind,
      {
        roleRef: { apiGroup: '', kind: 'Role', name: 'r' },
        subjects: [
          { kind: 'User', name: 'alice' },
          { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
          { kind: 'Group', name: 'dev', apiGroup: 'example.com' },
        ],
      },
      {
        roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'Role', name: 'r' },
        subjects: [
          { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.platform' },
          { kind: 'ServiceAccount', name: 'sa', namespace: 'ns', apiGroup: '' },
          { kind: 'Group', name: 'dev', apiGroup: 'example.com' },
        ],
      },
    ],
    [
      'a ClusterRoleBinding',
      ClusterRoleBindingKind,
      { roleRef: { apiGroup: '', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'g' }] },
      {
        roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'Group', name: 'g', apiGroup: 'rbac.authorization.platform' }],
      },
    ],
    ['a PriorityClass', PriorityClassKind, { value: 10 }, { value: 10, preemptionPolicy: 'PreemptLowerPriority' }],
    [
      'a TokenRequest',
      TokenRequestKind,
      { spec: { audiences: ['api'] } },
      { spec: { audiences: ['api'], expirationSeconds: 3600 } },
    ],
  ])('%s', (_what, kind, input, expected) => {
    expect(defaulted(kind, input)).toEqual(expected);
    // Defaulting a defaulted object changes nothing.
    expect(defaulted(kind, expected)).toEqual(expected);
  });

  it.each([
    ['nginx', 'latest'],
    ['nginx:latest', 'latest'],
    ['nginx:1.21', '1.21'],
    ['registry.example.com:5000/team/web', 'latest'],
    ['registry.example.com:5000/team/web:v2', 'v2'],
    ['web@sha256:0123', ''],
    ['web:v1@sha256:0123', 'v1'],
    ['', ''],
  ])('reads the tag of %j as %j', (image, tag) => {
    expect(imageTag(image)).toBe(tag);
  });
});
