/**
 * Samples of the networking.platform, extensions, node.platform and storage.platform kinds (see `samples.ts`),
 * keyed by `apiVersion/kind`.
 */
const META = {
  name: 'sample',
  namespace: 'default',
  uid: '6b1f1b9e-0000-4000-8000-000000000002',
  resourceVersion: '42',
  creationTimestamp: '2021-04-08T12:00:00Z',
  labels: { app: 'web' },
  annotations: { 'example.com/note': 'sample' },
};
const { namespace: _namespace, ...CLUSTER_META } = META;

const LB_STATUS = { loadBalancer: { ingress: [{ ip: '192.0.2.10' }, { hostname: 'lb.example.com' }] } };

const V1_INGRESS = {
  metadata: META,
  spec: {
    ingressClassName: 'nginx',
    defaultBackend: { service: { name: 'default-http', port: { number: 80 } } },
    tls: [{ hosts: ['www.example.com'], secretName: 'www-tls' }],
    rules: [
      {
        host: 'www.example.com',
        http: {
          paths: [
            { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { name: 'http' } } } },
            {
              path: '/static',
              pathType: 'Exact',
              backend: { resource: { apiGroup: 'example.com', kind: 'Bucket', name: 'assets' } },
            },
          ],
        },
      },
    ],
  },
  status: LB_STATUS,
};

const V1BETA1_INGRESS = {
  metadata: META,
  spec: {
    ingressClassName: 'nginx',
    backend: { serviceName: 'default-http', servicePort: 80 },
    tls: [{ hosts: ['www.example.com'], secretName: 'www-tls' }],
    rules: [
      {
        host: 'www.example.com',
        http: {
          paths: [{ path: '/', pathType: 'Prefix', backend: { serviceName: 'web', servicePort: 'http' } }],
        },
      },
    ],
  },
  status: LB_STATUS,
};

const INGRESS_CLASS = {
  metadata: { ...CLUSTER_META, annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
  spec: {
    controller: 'example.com/ingress-controller',
    parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'external-lb', scope: 'Cluster' },
  },
};

const RUNTIME_CLASS = {
  metadata: CLUSTER_META,
  handler: 'runc',
  overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
  scheduling: {
    nodeSelector: { 'runtime.example.com/runc': 'true' },
    tolerations: [{ key: 'runtime', operator: 'Equal', value: 'runc', effect: 'NoSchedule' }],
  },
};

const STORAGE_CLASS = {
  metadata: CLUSTER_META,
  provisioner: 'csi.example.com',
  parameters: { type: 'ssd' },
  reclaimPolicy: 'Retain',
  mountOptions: ['debug'],
  allowVolumeExpansion: true,
  volumeBindingMode: 'WaitForFirstConsumer',
  allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['zone-a'] }] }],
};

const CSI_DRIVER = {
  metadata: { ...CLUSTER_META, name: 'csi.example.com' },
  spec: {
    attachRequired: true,
    podInfoOnMount: true,
    volumeLifecycleModes: ['Persistent', 'Ephemeral'],
    storageCapacity: true,
    fsGroupPolicy: 'File',
    tokenRequests: [{ audience: 'vault', expirationSeconds: 3600 }],
    requiresRepublish: true,
  },
};

const CSI_NODE = {
  metadata: { ...CLUSTER_META, name: 'node-1' },
  spec: {
    drivers: [
      {
        name: 'csi.example.com',
        nodeID: 'node-1',
        topologyKeys: ['topology.kubernetes.io/zone'],
        allocatable: { count: 16 },
      },
    ],
  },
};

const VOLUME_ATTACHMENT = {
  metadata: CLUSTER_META,
  spec: { attacher: 'csi.example.com', source: { persistentVolumeName: 'pv-1' }, nodeName: 'node-1' },
  status: {
    attached: true,
    attachmentMetadata: { device: '/dev/sdb' },
    detachError: { time: '2021-04-08T12:00:00Z', message: 'busy' },
  },
};

/** The samples of these groups' kinds. */
export const NETWORKING_STORAGE_SAMPLES: Record<string, Record<string, unknown>> = {
  'networking.platform/v1/Ingress': V1_INGRESS,
  'networking.platform/v1beta1/Ingress': V1BETA1_INGRESS,
  'extensions/v1beta1/Ingress': V1BETA1_INGRESS,
  'networking.platform/v1/IngressClass': INGRESS_CLASS,
  'networking.platform/v1beta1/IngressClass': INGRESS_CLASS,
  'networking.platform/v1/NetworkPolicy': {
    metadata: META,
    spec: {
      podSelector: { matchLabels: { app: 'db' } },
      ingress: [
        {
          ports: [{ protocol: 'TCP', port: 5432, endPort: 5440 }],
          from: [
            { podSelector: { matchLabels: { app: 'web' } }, namespaceSelector: { matchLabels: { team: 'a' } } },
            { ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.1.0/24'] } },
          ],
        },
      ],
      egress: [{ ports: [{ protocol: 'UDP', port: 'dns' }], to: [{ namespaceSelector: {} }] }],
      policyTypes: ['Ingress', 'Egress'],
    },
  },
  'node.platform/v1/RuntimeClass': RUNTIME_CLASS,
  'node.platform/v1beta1/RuntimeClass': RUNTIME_CLASS,
  'storage.platform/v1/StorageClass': STORAGE_CLASS,
  'storage.platform/v1beta1/StorageClass': STORAGE_CLASS,
  'storage.platform/v1/CSIDriver': CSI_DRIVER,
  'storage.platform/v1beta1/CSIDriver': CSI_DRIVER,
  'storage.platform/v1/CSINode': CSI_NODE,
  'storage.platform/v1beta1/CSINode': CSI_NODE,
  'storage.platform/v1/VolumeAttachment': VOLUME_ATTACHMENT,
  'storage.platform/v1beta1/VolumeAttachment': VOLUME_ATTACHMENT,
  'autoscaling/v2beta2/HorizontalPodAutoscaler': {
    metadata: META,
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
        {
          type: 'Pods',
          pods: {
            metric: { name: 'qps', selector: { matchLabels: { app: 'web' } } },
            target: { type: 'AverageValue', averageValue: '100' },
          },
        },
        {
          type: 'External',
          external: { metric: { name: 'queue' }, target: { type: 'Value', value: '30' } },
        },
      ],
      behavior: {
        scaleUp: {
          stabilizationWindowSeconds: 10,
          selectPolicy: 'Max',
          policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }],
        },
        scaleDown: {
          stabilizationWindowSeconds: 300,
          selectPolicy: 'Min',
          policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }],
        },
      },
    },
    status: {
      observedGeneration: 3,
      lastScaleTime: '2021-04-08T12:00:00Z',
      currentReplicas: 3,
      desiredReplicas: 4,
      currentMetrics: [
        { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 85, averageValue: '425m' } } },
        { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '120' } } },
      ],
      conditions: [
        {
          type: 'AbleToScale',
          status: 'True',
          lastTransitionTime: '2021-04-08T12:00:00Z',
          reason: 'ReadyForNewScale',
          message: 'ok',
        },
      ],
    },
  },
  'storage.platform/v1beta1/CSIStorageCapacity': {
    metadata: META,
    nodeTopology: { matchLabels: { 'topology.kubernetes.io/zone': 'zone-a' } },
    storageClassName: 'fast',
    capacity: '100Gi',
    maximumVolumeSize: '10Gi',
  },
};
