/**
 * One realistic object of every built-in kind, keyed by `apiVersion/kind`, for tests that must cover every kind
 * (Protobuf round trips, structural validation). Values avoid non-pointer zero values (`false`, `0`, `''`), which
 * Protobuf reads back as unset, as Go's `omitempty` JSON does.
 */
import { BETA_COPIES } from '../beta-versions';
import { BETA_SAMPLES, SAME_AS_GA } from './beta-samples';
import { CERTIFICATES_SAMPLES } from './certificates-samples';
import { FLOWCONTROL_SAMPLES } from './flowcontrol-samples';
import { NETWORKING_STORAGE_SAMPLES } from './networking-storage-samples';

const META = {
  name: 'sample',
  namespace: 'default',
  uid: '6b1f1b9e-0000-4000-8000-000000000001',
  resourceVersion: '42',
  generation: 2,
  creationTimestamp: '2021-04-08T12:00:00Z',
  labels: { app: 'web', tier: 'frontend' },
  annotations: { 'example.com/note': 'sample' },
};
const { namespace: _namespace, ...CLUSTER_META } = META;

const CONTAINER = {
  name: 'web',
  image: 'registry.example.com/web:1.2.3',
  command: ['/bin/web'],
  args: ['--port=8080'],
  workingDir: '/srv',
  ports: [
    { name: 'http', containerPort: 8080, protocol: 'TCP' },
    { name: 'metrics', containerPort: 9090, hostPort: 19090, protocol: 'UDP', hostIP: '10.0.0.1' },
  ],
  envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'settings', optional: true } }],
  env: [
    { name: 'MODE', value: 'production' },
    { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
    { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password', optional: false } } },
  ],
  resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '64Mi' } },
  volumeMounts: [
    { name: 'data', mountPath: '/data', readOnly: true, subPath: 'web', mountPropagation: 'HostToContainer' },
  ],
  livenessProbe: {
    httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] },
    initialDelaySeconds: 5,
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
    terminationGracePeriodSeconds: 0,
  },
  readinessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 5 },
  startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, failureThreshold: 30 },
  lifecycle: { preStop: { exec: { command: ['sleep', '5'] } }, postStart: { httpGet: { port: 'http' } } },
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'FallbackToLogsOnError',
  imagePullPolicy: 'IfNotPresent',
  securityContext: {
    capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
    privileged: false,
    runAsUser: 1000,
    runAsNonRoot: true,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    seccompProfile: { type: 'RuntimeDefault' },
  },
  stdin: true,
  tty: true,
};

const POD_SPEC = {
  volumes: [
    { name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
    { name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } },
    { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
    {
      name: 'cfg',
      configMap: { name: 'settings', items: [{ key: 'a', path: 'a.conf', mode: 0o600 }], defaultMode: 420 },
    },
    { name: 'creds', secret: { secretName: 'db', defaultMode: 256, optional: true } },
    { name: 'nfs', nfs: { server: 'nfs.example.com', path: '/exports', readOnly: true } },
    { name: 'csi', csi: { driver: 'csi.example.com', volumeAttributes: { size: 'small' }, readOnly: true } },
    {
      name: 'info',
      downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }] },
    },
    {
      name: 'all-in-one',
      projected: {
        defaultMode: 420,
        sources: [
          { secret: { name: 'db', items: [{ key: 'password', path: 'pw' }] } },
          { configMap: { name: 'settings' } },
          { serviceAccountToken: { audience: 'vault', expirationSeconds: 3600, path: 'token' } },
        ],
      },
    },
  ],
  initContainers: [{ name: 'init', image: 'busybox:1.33', command: ['sh', '-c', 'true'] }],
  containers: [CONTAINER, { name: 'sidecar', image: 'registry.example.com/proxy:2' }],
  restartPolicy: 'Always',
  terminationGracePeriodSeconds: 30,
  activeDeadlineSeconds: 3600,
  dnsPolicy: 'ClusterFirst',
  nodeSelector: { 'kubernetes.io/os': 'linux' },
  serviceAccountName: 'web',
  automountServiceAccountToken: false,
  nodeName: 'node-1',
  hostNetwork: true,
  securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000, 5000] },
  imagePullSecrets: [{ name: 'registry' }],
  hostname: 'web-0',
  subdomain: 'web',
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }],
      },
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 10, preference: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } },
      ],
    },
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' },
        },
      ],
    },
  },
  schedulerName: 'default-scheduler',
  tolerations: [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' },
  ],
  hostAliases: [{ ip: '10.0.0.10', hostnames: ['db.local'] }],
  priorityClassName: 'high',
  priority: 1000,
  dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'ndots', value: '2' }] },
  readinessGates: [{ conditionType: 'example.com/ready' }],
  enableServiceLinks: false,
  preemptionPolicy: 'PreemptLowerPriority',
  overhead: { cpu: '10m' },
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'zone',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { app: 'web' } },
    },
  ],
};

const TEMPLATE = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.21' }] } };
const SELECTOR = {
  matchLabels: { app: 'web' },
  matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }],
};

/** One sample object per built-in kind, keyed by `apiVersion/kind`. */
export const SAMPLES: Record<string, Record<string, unknown>> = {
  'v1/Binding': { metadata: META, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } },
  'v1/ConfigMap': { metadata: META, data: { 'app.conf': 'a=1\n' }, binaryData: { blob: 'AAEC/w==' }, immutable: true },
  'v1/Endpoints': {
    metadata: META,
    subsets: [
      {
        addresses: [
          { ip: '10.1.0.5', nodeName: 'node-1', targetRef: { kind: 'Pod', name: 'web-0', namespace: 'default' } },
        ],
        notReadyAddresses: [{ ip: '10.1.0.6', hostname: 'web-1' }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
      },
    ],
  },
  'v1/Event': {
    metadata: META,
    involvedObject: {
      kind: 'Pod',
      namespace: 'default',
      name: 'web-0',
      uid: 'u-1',
      apiVersion: 'v1',
      fieldPath: 'spec.containers{web}',
    },
    reason: 'BackOff',
    message: 'Back-off restarting failed container',
    source: { component: 'node-agent', host: 'node-1' },
    firstTimestamp: '2021-04-08T12:00:00Z',
    lastTimestamp: '2021-04-08T12:05:00Z',
    count: 7,
    type: 'Warning',
    eventTime: '2021-04-08T12:00:00.123456Z',
    series: { count: 3, lastObservedTime: '2021-04-08T12:05:00.654321Z' },
    action: 'Restarting',
    reportingComponent: 'node-agent',
    reportingInstance: 'node-1',
  },
  'v1/LimitRange': {
    metadata: META,
    spec: {
      limits: [
        {
          type: 'Container',
          max: { cpu: '2' },
          min: { cpu: '10m' },
          default: { cpu: '500m' },
          defaultRequest: { cpu: '100m' },
          maxLimitRequestRatio: { cpu: '10' },
        },
      ],
    },
  },
  'v1/Namespace': {
    metadata: CLUSTER_META,
    spec: { finalizers: ['kubernetes'] },
    status: {
      phase: 'Terminating',
      conditions: [
        {
          type: 'NamespaceDeletionContentFailure',
          status: 'False',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'ContentDeleted',
          message: 'done',
        },
      ],
    },
  },
  'v1/Node': {
    metadata: {
      ...CLUSTER_META,
      labels: { 'node-role.platform/control-plane': '', 'kubernetes.io/hostname': 'node-1' },
    },
    spec: {
      podCIDR: '10.1.0.0/24',
      podCIDRs: ['10.1.0.0/24'],
      providerID: 'local://node-1',
      unschedulable: true,
      taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2021-04-08T12:00:00Z' }],
    },
    status: {
      capacity: { cpu: '4', memory: '16Gi', pods: '110', 'ephemeral-storage': '100Gi' },
      allocatable: { cpu: '3800m', memory: '15Gi', pods: '110' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: '2021-04-08T12:00:00Z',
          lastTransitionTime: '2021-04-08T11:00:00Z',
          reason: 'NodeAgentReady',
          message: 'ready',
        },
        { type: 'MemoryPressure', status: 'False', reason: 'NodeHasSufficientMemory' },
      ],
      addresses: [
        { type: 'InternalIP', address: '192.168.1.10' },
        { type: 'Hostname', address: 'node-1' },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: 'm',
        systemUUID: 's',
        bootID: 'b',
        kernelVersion: '5.10.0',
        osImage: 'Debian GNU/Linux 11',
        containerRuntimeVersion: 'process://1.0',
        kubeletVersion: 'v1.21.0',
        kubeProxyVersion: 'v1.21.0',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images: [{ names: ['nginx:1.21'], sizeBytes: 133000000 }],
      volumesInUse: ['csi/vol-1'],
      volumesAttached: [{ name: 'csi/vol-1', devicePath: '/dev/sdb' }],
    },
  },
  'v1/PersistentVolumeClaim': {
    metadata: META,
    spec: {
      accessModes: ['ReadWriteOnce'],
      selector: { matchLabels: { tier: 'fast' } },
      resources: { requests: { storage: '10Gi' } },
      volumeName: 'pv-1',
      storageClassName: '',
      volumeMode: 'Filesystem',
      dataSource: { kind: 'PersistentVolumeClaim', name: 'source' },
    },
    status: {
      phase: 'Bound',
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '10Gi' },
      conditions: [{ type: 'Resizing', status: 'True' }],
    },
  },
  'v1/PersistentVolume': {
    metadata: CLUSTER_META,
    spec: {
      capacity: { storage: '10Gi' },
      hostPath: { path: '/mnt/data', type: 'DirectoryOrCreate' },
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data' },
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: 'manual',
      mountOptions: ['ro'],
      volumeMode: 'Filesystem',
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
          ],
        },
      },
    },
    status: { phase: 'Bound', message: 'bound', reason: 'Bound' },
  },
  'v1/Pod': {
    metadata: {
      ...META,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-5d4f',
          uid: 'u-2',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: ['example.com/cleanup'],
    },
    spec: POD_SPEC,
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2021-04-08T12:00:05Z' },
        { type: 'PodScheduled', status: 'True', lastProbeTime: '2021-04-08T12:00:00Z' },
      ],
      message: 'running',
      reason: 'Started',
      nominatedNodeName: 'node-2',
      hostIP: '192.168.1.10',
      podIP: '10.1.0.5',
      podIPs: [{ ip: '10.1.0.5' }, { ip: 'fd00::5' }],
      startTime: '2021-04-08T12:00:01Z',
      initContainerStatuses: [
        {
          name: 'init',
          state: {
            terminated: {
              exitCode: 0,
              reason: 'Completed',
              startedAt: '2021-04-08T12:00:01Z',
              finishedAt: '2021-04-08T12:00:02Z',
              containerID: 'process://1',
            },
          },
          ready: true,
          image: 'busybox:1.33',
          imageID: 'sha256:1',
        },
      ],
      containerStatuses: [
        {
          name: 'web',
          state: { running: { startedAt: '2021-04-08T12:00:03Z' } },
          lastState: { terminated: { exitCode: 137, signal: 9, reason: 'OOMKilled', message: 'killed' } },
          ready: true,
          restartCount: 2,
          image: 'registry.example.com/web:1.2.3',
          imageID: 'sha256:2',
          containerID: 'process://2',
          started: false,
        },
        { name: 'sidecar', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } }, restartCount: 5 },
      ],
      qosClass: 'Burstable',
    },
  },
  'v1/PodTemplate': { metadata: META, template: { metadata: { labels: { app: 'web' } }, spec: POD_SPEC } },
  'v1/ReplicationController': {
    metadata: META,
    spec: { replicas: 0, minReadySeconds: 5, selector: { app: 'web' }, template: TEMPLATE },
    status: {
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 2,
      conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate' }],
    },
  },
  'v1/ResourceQuota': {
    metadata: META,
    spec: {
      hard: { pods: '10', 'requests.cpu': '4', 'limits.memory': '8Gi' },
      scopes: ['NotTerminating'],
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
    },
    status: { hard: { pods: '10' }, used: { pods: '3' } },
  },
  'v1/Secret': {
    metadata: META,
    immutable: false,
    data: { password: Buffer.from('s3cr3t\u0000\u00ff').toString('base64') },
    stringData: { user: 'admin' },
    type: 'kubernetes.io/basic-auth',
  },
  'v1/ServiceAccount': {
    metadata: META,
    secrets: [{ name: 'web-token-abcde' }],
    imagePullSecrets: [{ name: 'registry' }],
    automountServiceAccountToken: true,
  },
  'v1/Service': {
    metadata: META,
    spec: {
      ports: [
        { name: 'http', protocol: 'TCP', appProtocol: 'http', port: 80, targetPort: 'http', nodePort: 30080 },
        { name: 'metrics', protocol: 'UDP', port: 9090, targetPort: 9091 },
      ],
      selector: { app: 'web' },
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      type: 'LoadBalancer',
      externalIPs: ['203.0.113.7'],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 31000,
      publishNotReadyAddresses: true,
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      allocateLoadBalancerNodePorts: true,
    },
    status: {
      loadBalancer: { ingress: [{ ip: '198.51.100.1', ports: [{ port: 80, protocol: 'TCP', error: 'Pending' }] }] },
      conditions: [
        {
          type: 'LoadBalancerReady',
          status: 'True',
          observedGeneration: 2,
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'Ready',
          message: 'ok',
        },
      ],
    },
  },
  'apps/v1/ControllerRevision': {
    metadata: {
      ...META,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u-3', controller: true }],
    },
    data: { spec: { template: TEMPLATE } },
    revision: 3,
  },
  'apps/v1/DaemonSet': {
    metadata: META,
    spec: {
      selector: SELECTOR,
      template: TEMPLATE,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 0 } },
      minReadySeconds: 3,
      revisionHistoryLimit: 5,
    },
    status: {
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      desiredNumberScheduled: 3,
      numberReady: 2,
      observedGeneration: 2,
      updatedNumberScheduled: 3,
      numberAvailable: 2,
      numberUnavailable: 1,
      collisionCount: 0,
    },
  },
  'apps/v1/Deployment': {
    metadata: META,
    spec: {
      replicas: 3,
      selector: SELECTOR,
      template: { metadata: { labels: { app: 'web' } }, spec: POD_SPEC },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      minReadySeconds: 10,
      revisionHistoryLimit: 10,
      paused: true,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 2,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      unavailableReplicas: 1,
      conditions: [
        {
          type: 'Available',
          status: 'False',
          lastUpdateTime: '2021-04-08T12:00:00Z',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'MinimumReplicasUnavailable',
          message: 'no',
        },
      ],
      collisionCount: 1,
    },
  },
  'apps/v1/ReplicaSet': {
    metadata: META,
    spec: { replicas: 2, minReadySeconds: 1, selector: SELECTOR, template: TEMPLATE },
    status: { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, observedGeneration: 2 },
  },
  'apps/v1/StatefulSet': {
    metadata: META,
    spec: {
      replicas: 3,
      selector: SELECTOR,
      template: TEMPLATE,
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
            volumeMode: 'Filesystem',
          },
          status: { phase: 'Pending' },
        },
      ],
      serviceName: 'web',
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      revisionHistoryLimit: 10,
    },
    status: {
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      currentRevision: 'web-1',
      updateRevision: 'web-1',
      collisionCount: 0,
      conditions: [{ type: 'Healthy', status: 'True' }],
    },
  },
  'events.platform/v1/Event': {
    metadata: META,
    eventTime: '2021-04-08T12:00:00.000001Z',
    series: { count: 2, lastObservedTime: '2021-04-08T12:01:00.500000Z' },
    reportingController: 'platform.example/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    reason: 'Scheduled',
    regarding: { kind: 'Pod', namespace: 'default', name: 'web-0' },
    related: { kind: 'Node', name: 'node-1' },
    note: 'Successfully assigned default/web-0 to node-1',
    type: 'Normal',
    deprecatedCount: 2,
  },
  'authentication.platform/v1/TokenReview': {
    spec: { token: 'abc.def.ghi', audiences: ['api'] },
    status: {
      authenticated: true,
      user: {
        username: 'alice',
        uid: '1',
        groups: ['dev', 'system:authenticated'],
        extra: { scopes: ['read', 'write'], empty: [] },
      },
      audiences: ['api'],
      error: 'none',
    },
  },
  'authentication.platform/v1/TokenRequest': {
    metadata: META,
    spec: {
      audiences: ['api'],
      expirationSeconds: 600,
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web-0', uid: 'u-1' },
    },
    status: { token: 'abc.def.ghi', expirationTimestamp: '2021-04-08T13:00:00Z' },
  },
  'authorization.platform/v1/LocalSubjectAccessReview': {
    metadata: { namespace: 'default' },
    spec: {
      resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods', name: 'web-0' },
      user: 'alice',
      groups: ['dev'],
      uid: '1',
    },
    status: { allowed: true, reason: 'RBAC: allowed by RoleBinding "dev"' },
  },
  'authorization.platform/v1/SelfSubjectAccessReview': {
    spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' } },
    status: { allowed: false, denied: true, evaluationError: 'x' },
  },
  'authorization.platform/v1/SelfSubjectRulesReview': {
    spec: { namespace: 'default' },
    status: {
      resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['web-0'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*'] }],
      incomplete: true,
    },
  },
  'authorization.platform/v1/SubjectAccessReview': {
    spec: {
      resourceAttributes: {
        namespace: 'default',
        verb: 'create',
        group: 'apps',
        version: 'v1',
        resource: 'deployments',
        subresource: 'scale',
      },
      user: 'alice',
      groups: ['dev'],
      extra: { 'example.com/team': ['platform'] },
    },
    status: { allowed: true },
  },
  'autoscaling/v1/HorizontalPodAutoscaler': {
    metadata: META,
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 10,
      targetCPUUtilizationPercentage: 80,
    },
    status: {
      observedGeneration: 1,
      lastScaleTime: '2021-04-08T12:00:00Z',
      currentReplicas: 2,
      desiredReplicas: 3,
      currentCPUUtilizationPercentage: 95,
    },
  },
  'autoscaling/v1/Scale': {
    metadata: META,
    spec: { replicas: 5 },
    status: { replicas: 3, selector: 'app=web,tier notin (db)' },
  },
  'batch/v1/CronJob': {
    metadata: META,
    spec: {
      schedule: '*/5 * * * *',
      startingDeadlineSeconds: 60,
      concurrencyPolicy: 'Forbid',
      suspend: false,
      jobTemplate: {
        metadata: { labels: { job: 'report' } },
        spec: {
          backoffLimit: 2,
          template: { spec: { containers: [{ name: 'report', image: 'report:1' }], restartPolicy: 'OnFailure' } },
        },
      },
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    },
    status: {
      active: [{ kind: 'Job', name: 'report-1', namespace: 'default' }],
      lastScheduleTime: '2021-04-08T12:00:00Z',
      lastSuccessfulTime: '2021-04-08T11:55:00Z',
    },
  },
  'batch/v1/Job': {
    metadata: META,
    spec: {
      parallelism: 2,
      completions: 4,
      activeDeadlineSeconds: 600,
      backoffLimit: 0,
      selector: { matchLabels: { 'controller-uid': 'u-4' } },
      manualSelector: false,
      template: {
        metadata: { labels: { 'controller-uid': 'u-4' } },
        spec: { containers: [{ name: 'work', image: 'work:1' }], restartPolicy: 'Never' },
      },
      ttlSecondsAfterFinished: 100,
      completionMode: 'Indexed',
      suspend: true,
    },
    status: {
      conditions: [
        {
          type: 'Complete',
          status: 'True',
          lastProbeTime: '2021-04-08T12:00:00Z',
          lastTransitionTime: '2021-04-08T12:00:00Z',
        },
      ],
      startTime: '2021-04-08T11:58:00Z',
      completionTime: '2021-04-08T12:00:00Z',
      active: 1,
      succeeded: 3,
      failed: 1,
      completedIndexes: '0-2',
    },
  },
  'batch/v1beta1/CronJob': {
    metadata: META,
    spec: {
      schedule: '@hourly',
      jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'c:1' }] } } } },
      suspend: true,
    },
  },
  'policy/v1/PodDisruptionBudget': {
    metadata: META,
    spec: { minAvailable: '50%', selector: SELECTOR },
    status: {
      observedGeneration: 2,
      disruptedPods: { 'web-0': '2021-04-08T12:00:00Z' },
      disruptionsAllowed: 1,
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: 'True',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'SufficientPods',
          message: '',
        },
      ],
    },
  },
  'policy/v1beta1/Eviction': {
    metadata: { name: 'web-0', namespace: 'default' },
    deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'u-1' }, dryRun: ['All'] },
  },
  'policy/v1beta1/PodDisruptionBudget': {
    metadata: META,
    spec: { maxUnavailable: 1, selector: SELECTOR },
    status: { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 },
  },
  'rbac.authorization.platform/v1/ClusterRoleBinding': {
    metadata: CLUSTER_META,
    subjects: [
      { kind: 'User', apiGroup: 'rbac.authorization.platform', name: 'alice' },
      { kind: 'ServiceAccount', name: 'web', namespace: 'default' },
    ],
    roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'view' },
  },
  'rbac.authorization.platform/v1/ClusterRole': {
    metadata: CLUSTER_META,
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-view': 'true' } }] },
    rules: [
      {
        apiGroups: ['', 'apps'],
        resources: ['pods', 'deployments'],
        verbs: ['get', 'list', 'watch'],
        resourceNames: ['web'],
      },
      { nonResourceURLs: ['/healthz', '/api/*'], verbs: ['get'] },
    ],
  },
  'rbac.authorization.platform/v1/RoleBinding': {
    metadata: META,
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.platform', name: 'dev' }],
    roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'Role', name: 'editor' },
  },
  'rbac.authorization.platform/v1/Role': {
    metadata: META,
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }],
  },
  'admissionregistration.platform/v1/MutatingWebhookConfiguration': {
    metadata: CLUSTER_META,
    webhooks: [
      {
        name: 'pods.policy.example.com',
        clientConfig: {
          url: 'https://webhook.example.com:8443/admit',
          caBundle: Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64'),
        },
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['pods', 'pods/status'],
            scope: 'Namespaced',
          },
        ],
        failurePolicy: 'Ignore',
        matchPolicy: 'Exact',
        namespaceSelector: { matchLabels: { team: 'a' } },
        objectSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] },
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: 5,
        admissionReviewVersions: ['v1', 'v1beta1'],
        reinvocationPolicy: 'IfNeeded',
      },
      {
        name: 'svc.policy.example.com',
        clientConfig: { service: { namespace: 'system', name: 'hooks', path: '/check', port: 8443 } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  },
  'admissionregistration.platform/v1/ValidatingWebhookConfiguration': {
    metadata: CLUSTER_META,
    webhooks: [
      {
        name: 'pods.policy.example.com',
        clientConfig: {
          url: 'https://webhook.example.com:8443/admit',
          caBundle: Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64'),
        },
        rules: [
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['pods', 'pods/status'],
            scope: 'Namespaced',
          },
        ],
        failurePolicy: 'Ignore',
        matchPolicy: 'Exact',
        namespaceSelector: { matchLabels: { team: 'a' } },
        objectSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] },
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: 5,
        admissionReviewVersions: ['v1', 'v1beta1'],
      },
      {
        name: 'svc.policy.example.com',
        clientConfig: { service: { namespace: 'system', name: 'hooks', path: '/check', port: 8443 } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  },
  'apiregistration.platform/v1/APIService': {
    metadata: { ...CLUSTER_META, name: 'v1beta1.metrics.platform' },
    spec: {
      service: { namespace: 'kube-system', name: 'metrics-server', port: 443 },
      group: 'metrics.platform',
      version: 'v1beta1',
      caBundle: Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64'),
      groupPriorityMinimum: 100,
      versionPriority: 100,
    },
    status: {
      conditions: [
        {
          type: 'Available',
          status: 'False',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'MissingEndpoints',
          message: 'endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"',
        },
      ],
    },
  },
  'apiregistration.platform/v1beta1/APIService': {
    metadata: { ...CLUSTER_META, name: 'v1.apps' },
    spec: {
      group: 'apps',
      version: 'v1',
      groupPriorityMinimum: 17800,
      versionPriority: 15,
    },
    status: {
      conditions: [
        {
          type: 'Available',
          status: 'True',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'Local',
          message: 'Local APIServices are always available',
        },
      ],
    },
  },
  'scheduling.platform/v1/PriorityClass': {
    metadata: CLUSTER_META,
    value: 1000000,
    globalDefault: true,
    description: 'For critical workloads.',
    preemptionPolicy: 'Never',
  },
  'coordination.platform/v1/Lease': {
    metadata: { ...META, namespace: 'platform-node-lease' },
    spec: {
      holderIdentity: 'node-1',
      leaseDurationSeconds: 40,
      acquireTime: '2021-04-08T12:00:00.000000Z',
      renewTime: '2021-04-08T12:00:10.123456Z',
      leaseTransitions: 0,
    },
  },
  'discovery.platform/v1/EndpointSlice': {
    metadata: { ...META, labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['10.1.0.5'],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: 'web-0',
        targetRef: { kind: 'Pod', name: 'web-0', namespace: 'default' },
        zone: 'zone-a',
        nodeName: 'node-1',
        hints: { forZones: [{ name: 'zone-a' }] },
      },
    ],
    ports: [{ name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' }],
  },
  'discovery.platform/v1beta1/EndpointSlice': {
    metadata: { ...META, labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['10.1.0.5'],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: 'web-0',
        targetRef: { kind: 'Pod', name: 'web-0', namespace: 'default' },
        topology: { 'kubernetes.io/hostname': 'node-1' },
        nodeName: 'node-1',
        hints: { forZones: [{ name: 'zone-a' }] },
      },
    ],
    ports: [{ name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' }],
  },
  'apiextensions.platform/v1/CustomResourceDefinition': {
    metadata: { ...CLUSTER_META, name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: {
        plural: 'widgets',
        singular: 'widget',
        shortNames: ['wd'],
        kind: 'Widget',
        listKind: 'WidgetList',
        categories: ['all'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          deprecated: true,
          deprecationWarning: 'use v2',
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } },
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.replicas',
              statusReplicasPath: '.status.replicas',
              labelSelectorPath: '.status.selector',
            },
          },
          additionalPrinterColumns: [
            {
              name: 'Size',
              type: 'integer',
              format: 'int32',
              description: 'size',
              priority: 1,
              jsonPath: '.spec.size',
            },
          ],
        },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: {
            service: { namespace: 'default', name: 'conv', path: '/convert', port: 443 },
            caBundle: 'AAEC/w==',
          },
          conversionReviewVersions: ['v1', 'v1beta1'],
        },
      },
      preserveUnknownFields: true,
    },
    status: {
      conditions: [
        {
          type: 'Established',
          status: 'True',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
      ],
      acceptedNames: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      storedVersions: ['v1'],
    },
  },
  'apiextensions.platform/v1beta1/CustomResourceDefinition': {
    metadata: { ...CLUSTER_META, name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      version: 'v1',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      scope: 'Cluster',
      validation: { openAPIV3Schema: { type: 'object' } },
      subresources: { status: {} },
      versions: [{ name: 'v1', served: true, storage: true }],
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', priority: 1, JSONPath: '.spec.size' }],
      conversion: {
        strategy: 'Webhook',
        webhookClientConfig: { url: 'https://conv.example.com/convert' },
        conversionReviewVersions: ['v1beta1'],
      },
      preserveUnknownFields: true,
    },
    status: { acceptedNames: { plural: 'widgets', kind: 'Widget' }, storedVersions: ['v1'] },
  },
  ...FLOWCONTROL_SAMPLES,
  ...CERTIFICATES_SAMPLES,
  ...NETWORKING_STORAGE_SAMPLES,
  ...BETA_SAMPLES,
};

// A beta version with the GA fields shares the GA kind's sample.
for (const [ga, beta] of [...BETA_COPIES, ...SAME_AS_GA]) SAMPLES[beta] = SAMPLES[ga]!;
