/**
 * The networking.platform, extensions, node.platform and storage.platform group versions of Kubernetes 1.21, on a
 * real API server: create, read, list, update and delete of each resource in each version, Ingresses read in every
 * version whichever wrote them, 1.21's validation messages, `--runtime-config` switching versions off (404), and
 * kubectl 1.20 (`create ingress`, the columns of `get`).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestServer, type TestServer } from '@platform/apiserver';

import { ensureKubectl, type KubectlResult, writeKubeconfig } from './support/kubectl';

let server: TestServer;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  ensureKubectl();
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'api-groups-'));
  kubeconfig = writeKubeconfig(dir, server);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function causes(json: { details?: { causes?: { field: string; reason: string; message: string }[] } }): string[] {
  return (json.details?.causes ?? []).map((c) => `${c.reason} ${c.field}: ${c.message}`);
}

const V1_INGRESS = {
  spec: {
    ingressClassName: 'nginx',
    rules: [
      {
        host: 'web.example.com',
        http: {
          paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
        },
      },
    ],
  },
};
const V1BETA1_INGRESS = {
  spec: {
    backend: { serviceName: 'default', servicePort: 'http' },
    rules: [
      {
        host: 'api.example.com',
        http: { paths: [{ path: '/v1', backend: { serviceName: 'api', servicePort: 8080 } }] },
      },
    ],
  },
};

/** One body per resource and version: [group/version, plural, namespaced, body, field an update changes]. */
const RESOURCES: [string, string, boolean, Record<string, unknown>, (o: Record<string, unknown>) => void][] = [
  [
    'networking.platform/v1',
    'ingresses',
    true,
    V1_INGRESS,
    (o) => ((o.spec as { ingressClassName: string }).ingressClassName = 'other'),
  ],
  [
    'networking.platform/v1beta1',
    'ingresses',
    true,
    V1BETA1_INGRESS,
    (o) => ((o.spec as { ingressClassName?: string }).ingressClassName = 'other'),
  ],
  [
    'extensions/v1beta1',
    'ingresses',
    true,
    V1BETA1_INGRESS,
    (o) => ((o.spec as { ingressClassName?: string }).ingressClassName = 'other'),
  ],
  [
    'networking.platform/v1',
    'ingressclasses',
    false,
    { spec: { controller: 'example.com/ingress' } },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'networking.platform/v1beta1',
    'ingressclasses',
    false,
    { spec: { controller: 'example.com/ingress' } },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'networking.platform/v1',
    'networkpolicies',
    true,
    {
      spec: {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: {} }], ports: [{ port: 5432 }] }],
      },
    },
    (o) => ((o.spec as { podSelector: object }).podSelector = {}),
  ],
  [
    'node.platform/v1',
    'runtimeclasses',
    false,
    { handler: 'runc' },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'node.platform/v1beta1',
    'runtimeclasses',
    false,
    { handler: 'runc' },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'storage.platform/v1',
    'storageclasses',
    false,
    { provisioner: 'csi.example.com' },
    (o) => (o.allowVolumeExpansion = true),
  ],
  [
    'storage.platform/v1beta1',
    'storageclasses',
    false,
    { provisioner: 'csi.example.com' },
    (o) => (o.allowVolumeExpansion = true),
  ],
  [
    'storage.platform/v1',
    'csidrivers',
    false,
    { spec: {} },
    (o) => ((o.spec as { storageCapacity: boolean }).storageCapacity = true),
  ],
  [
    'storage.platform/v1beta1',
    'csidrivers',
    false,
    { spec: {} },
    (o) => ((o.spec as { storageCapacity: boolean }).storageCapacity = true),
  ],
  [
    'storage.platform/v1',
    'csinodes',
    false,
    { spec: { drivers: [{ name: 'csi.example.com', nodeID: 'n1' }] } },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'storage.platform/v1beta1',
    'csinodes',
    false,
    { spec: { drivers: [{ name: 'csi.example.com', nodeID: 'n1' }] } },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'storage.platform/v1',
    'volumeattachments',
    false,
    { spec: { attacher: 'csi.example.com', source: { persistentVolumeName: 'pv1' }, nodeName: 'n1' } },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'storage.platform/v1beta1',
    'volumeattachments',
    false,
    { spec: { attacher: 'csi.example.com', source: { persistentVolumeName: 'pv1' }, nodeName: 'n1' } },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'storage.platform/v1beta1',
    'csistoragecapacities',
    true,
    { storageClassName: 'fast', capacity: '10Gi' },
    (o) => (o.capacity = '20Gi'),
  ],
  [
    'rbac.authorization.platform/v1beta1',
    'clusterroles',
    false,
    { rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  [
    'rbac.authorization.platform/v1beta1',
    'rolebindings',
    true,
    { roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'view' }, subjects: [] },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
  ['scheduling.platform/v1beta1', 'priorityclasses', false, { value: 100 }, (o) => (o.description = 'changed')],
  [
    'coordination.platform/v1beta1',
    'leases',
    true,
    { spec: { holderIdentity: 'a', leaseDurationSeconds: 10 } },
    (o) => ((o.spec as { holderIdentity: string }).holderIdentity = 'b'),
  ],
  [
    'events.platform/v1beta1',
    'events',
    true,
    {
      eventTime: '2026-11-24T01:00:00.000000Z',
      reportingController: 'platform.io/scheduler',
      reportingInstance: 'scheduler-1',
      action: 'Binding',
      reason: 'Scheduled',
      regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
      note: 'assigned',
      type: 'Normal',
    },
    (o) => ((o.metadata as { labels?: object }).labels = { a: 'b' }),
  ],
];

const KINDS: Record<string, string> = {
  ingresses: 'Ingress',
  ingressclasses: 'IngressClass',
  networkpolicies: 'NetworkPolicy',
  runtimeclasses: 'RuntimeClass',
  storageclasses: 'StorageClass',
  csidrivers: 'CSIDriver',
  csinodes: 'CSINode',
  volumeattachments: 'VolumeAttachment',
  csistoragecapacities: 'CSIStorageCapacity',
  clusterroles: 'ClusterRole',
  rolebindings: 'RoleBinding',
  priorityclasses: 'PriorityClass',
  leases: 'Lease',
  events: 'Event',
};

function collection(gv: string, plural: string, namespaced: boolean): string {
  return `/apis/${gv}/${namespaced ? 'namespaces/default/' : ''}${plural}`;
}

describe('each resource in each version: create, get, list, update, delete', () => {
  it.each(RESOURCES.map((r, i) => [`${r[0]} ${r[1]}`, i] as const))('%s', async (_name, i) => {
    const [gv, plural, namespaced, body, change] = RESOURCES[i]!;
    const base = collection(gv, plural, namespaced);
    const name = `crud-${gv.replace(/[./]/g, '-')}`;
    const created = await server.request('POST', base, {
      body: { apiVersion: gv, kind: KINDS[plural], metadata: { name }, ...body },
    });
    expect([created.status, created.text]).toEqual([201, expect.any(String)]);
    expect(created.json.apiVersion).toBe(gv);
    const got = await server.request('GET', `${base}/${name}`);
    expect([got.status, got.json.metadata.uid]).toEqual([200, created.json.metadata.uid]);
    const list = await server.request('GET', `${base}?fieldSelector=metadata.name=${name}`);
    expect(list.json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual([name]);
    const next = structuredClone(got.json) as Record<string, unknown>;
    change(next);
    const updated = await server.request('PUT', `${base}/${name}`, { body: next });
    expect([updated.status, updated.text]).toEqual([200, expect.any(String)]);
    expect(updated.json.metadata.resourceVersion).not.toBe(got.json.metadata.resourceVersion);
    expect((await server.request('DELETE', `${base}/${name}`)).status).toBe(200);
    expect((await server.request('GET', `${base}/${name}`)).status).toBe(404);
  });

  it('defaults as 1.21 does', async () => {
    const sc = await server.request('POST', '/apis/storage.platform/v1/storageclasses', {
      body: {
        apiVersion: 'storage.platform/v1',
        kind: 'StorageClass',
        metadata: { name: 'defaults' },
        provisioner: 'x.io/y',
      },
    });
    expect([sc.json.reclaimPolicy, sc.json.volumeBindingMode]).toEqual(['Delete', 'Immediate']);
    const d = await server.request('POST', '/apis/storage.platform/v1/csidrivers', {
      body: {
        apiVersion: 'storage.platform/v1',
        kind: 'CSIDriver',
        metadata: { name: 'defaults.example.com' },
        spec: {},
      },
    });
    expect(d.json.spec).toEqual({
      attachRequired: true,
      podInfoOnMount: false,
      volumeLifecycleModes: ['Persistent'],
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      requiresRepublish: false,
    });
    const np = await server.request('POST', '/apis/networking.platform/v1/namespaces/default/networkpolicies', {
      body: {
        apiVersion: 'networking.platform/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'defaults' },
        spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] },
      },
    });
    expect([np.json.spec.policyTypes, np.json.spec.egress[0].ports[0].protocol]).toEqual([
      ['Ingress', 'Egress'],
      'TCP',
    ]);
  });
});

describe('Ingress in every version', () => {
  it('reads an Ingress written as v1beta1 in v1 and extensions/v1beta1, and one written as v1 in v1beta1', async () => {
    const w = await server.request('POST', '/apis/networking.platform/v1beta1/namespaces/default/ingresses', {
      body: {
        apiVersion: 'networking.platform/v1beta1',
        kind: 'Ingress',
        metadata: { name: 'beta' },
        ...V1BETA1_INGRESS,
      },
    });
    expect(w.status).toBe(201);
    expect(w.json.spec.rules[0].http.paths[0]).toEqual({
      path: '/v1',
      pathType: 'ImplementationSpecific',
      backend: { serviceName: 'api', servicePort: 8080 },
    });
    const v1 = await server.request('GET', '/apis/networking.platform/v1/namespaces/default/ingresses/beta');
    expect(v1.json.apiVersion).toBe('networking.platform/v1');
    expect(v1.json.spec.defaultBackend).toEqual({ service: { name: 'default', port: { name: 'http' } } });
    expect(v1.json.spec.rules[0].http.paths[0].backend).toEqual({ service: { name: 'api', port: { number: 8080 } } });
    const ext = await server.request('GET', '/apis/extensions/v1beta1/namespaces/default/ingresses/beta');
    expect([ext.json.apiVersion, ext.json.spec.backend]).toEqual([
      'extensions/v1beta1',
      { serviceName: 'default', servicePort: 'http' },
    ]);

    await server.request('POST', '/apis/networking.platform/v1/namespaces/default/ingresses', {
      body: { apiVersion: 'networking.platform/v1', kind: 'Ingress', metadata: { name: 'ga' }, ...V1_INGRESS },
    });
    const beta = await server.request('GET', '/apis/networking.platform/v1beta1/namespaces/default/ingresses/ga');
    expect(beta.json.spec.rules[0].http.paths[0].backend).toEqual({ serviceName: 'web', servicePort: 80 });
    const list = await server.request('GET', '/apis/extensions/v1beta1/namespaces/default/ingresses');
    expect(list.json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(
      expect.arrayContaining(['beta', 'ga']),
    );
    expect(list.json.items.every((o: { apiVersion: string }) => o.apiVersion === 'extensions/v1beta1')).toBe(true);
  });

  it('writes the status through its subresource only', async () => {
    const path = '/apis/networking.platform/v1/namespaces/default/ingresses/ga';
    const cur = (await server.request('GET', path)).json;
    const lb = { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } };
    const main = await server.request('PUT', path, { body: { ...cur, status: lb } });
    expect(main.json.status ?? {}).toEqual({});
    const status = await server.request('PUT', `${path}/status`, { body: { ...main.json, status: lb } });
    expect([status.status, status.json.status]).toEqual([200, lb]);
  });
});

describe('autoscaling/v2beta2 HorizontalPodAutoscaler', () => {
  it('is stored as v1 with the other metrics in annotations, and read back in v2beta2', async () => {
    const created = await server.request(
      'POST',
      '/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers',
      {
        body: {
          apiVersion: 'autoscaling/v2beta2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'web' },
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
            maxReplicas: 5,
            metrics: [
              { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
              { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
            ],
          },
        },
      },
    );
    expect([created.status, created.json.spec.minReplicas]).toEqual([201, 1]);
    const v1 = await server.request('GET', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web');
    expect(v1.json.spec.targetCPUUtilizationPercentage).toBe(60);
    expect(JSON.parse(v1.json.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'])).toEqual([
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
    ]);
    const v2 = await server.request('GET', '/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers/web');
    expect(v2.json.metadata.annotations).toBeUndefined();
    expect(v2.json.spec.metrics.map((m: { type: string }) => m.type)).toEqual(['Pods', 'Resource']);
    const table = await server.request('GET', '/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers', {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(table.json.rows[0].cells.slice(0, 3)).toEqual(['web', 'Deployment/web', '<unknown>/10, <unknown>/60%']);
  });
});

describe("1.21's validation", () => {
  it.each([
    [
      'networking.platform/v1',
      'ingresses',
      true,
      { spec: {} },
      ['FieldValueInvalid spec.rules: Invalid value: "null": either `defaultBackend` or `rules` must be specified'],
    ],
    [
      'networking.platform/v1',
      'ingresses',
      true,
      { spec: { rules: [{ host: '1.2.3.4', http: { paths: [{ path: 'x', backend: { service: { name: 's' } } }] } }] } },
      [
        'FieldValueInvalid spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address',
        'FieldValueRequired spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
        'FieldValueRequired spec.rules[0].http.paths[0].backend.service.port: Required value: port name or number is required',
      ],
    ],
    [
      'storage.platform/v1',
      'storageclasses',
      false,
      { provisioner: 'x.io/y', reclaimPolicy: 'Recycle' },
      ['FieldValueNotSupported reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"'],
    ],
    [
      'storage.platform/v1',
      'volumeattachments',
      false,
      { spec: { attacher: 'a.io', source: {}, nodeName: 'n1' } },
      [
        'FieldValueRequired spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
      ],
    ],
    [
      'node.platform/v1',
      'runtimeclasses',
      false,
      { handler: 'Not_A_Label' },
      [expect.stringMatching(/^FieldValueInvalid handler: Invalid value: "Not_A_Label": a lowercase RFC 1123 label/)],
    ],
  ])('%s %s', async (gv, plural, namespaced, body, want) => {
    const r = await server.request('POST', collection(gv, plural, namespaced), {
      body: { apiVersion: gv, kind: KINDS[plural], metadata: { name: 'invalid' }, ...body },
    });
    expect([r.status, r.json.reason]).toEqual([422, 'Invalid']);
    expect(causes(r.json)).toEqual(want);
  });

  it('keeps a StorageClass provisioner and a RuntimeClass handler', async () => {
    const sc = (await server.request('GET', '/apis/storage.platform/v1/storageclasses/defaults')).json;
    const r = await server.request('PUT', '/apis/storage.platform/v1/storageclasses/defaults', {
      body: { ...sc, provisioner: 'other.io/z' },
    });
    expect(causes(r.json)).toEqual([
      'FieldValueForbidden provisioner: Forbidden: updates to provisioner are forbidden.',
    ]);
  });
});

describe('--runtime-config', () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startTestServer((c) => {
      c.runtimeConfig = new Map([
        ['networking.platform/v1beta1', 'false'],
        ['extensions/v1beta1', 'false'],
        ['node.platform/v1', 'false'],
        ['storage.platform/v1beta1/csistoragecapacities', 'false'],
      ]);
    });
  }, 60_000);
  afterAll(async () => {
    await off?.stop();
  });

  it('answers 404 for switched-off versions and resources, and serves the rest', async () => {
    for (const path of [
      '/apis/networking.platform/v1beta1/namespaces/default/ingresses',
      '/apis/extensions/v1beta1/namespaces/default/ingresses',
      '/apis/node.platform/v1/runtimeclasses',
      '/apis/storage.platform/v1beta1/namespaces/default/csistoragecapacities',
    ]) {
      expect([path, (await off.request('GET', path)).status]).toEqual([path, 404]);
    }
    for (const path of [
      '/apis/networking.platform/v1/namespaces/default/ingresses',
      '/apis/node.platform/v1beta1/runtimeclasses',
      '/apis/storage.platform/v1beta1/storageclasses',
    ]) {
      expect([path, (await off.request('GET', path)).status]).toEqual([path, 200]);
    }
    const groups = (await off.request('GET', '/apis')).json.groups as { name: string }[];
    expect(groups.map((g) => g.name)).not.toContain('extensions');
  });

  it('serves every one of these versions by default', async () => {
    const groups = (await server.request('GET', '/apis')).json.groups as {
      name: string;
      versions: { version: string }[];
      preferredVersion: { version: string };
    }[];
    const of = (name: string): [string[], string] | undefined => {
      const g = groups.find((x) => x.name === name);
      return g && [g.versions.map((v) => v.version), g.preferredVersion.version];
    };
    expect(of('networking.platform')).toEqual([['v1', 'v1beta1'], 'v1']);
    expect(of('extensions')).toEqual([['v1beta1'], 'v1beta1']);
    expect(of('node.platform')).toEqual([['v1', 'v1beta1'], 'v1']);
    expect(of('storage.platform')).toEqual([['v1', 'v1beta1'], 'v1']);
    expect(of('autoscaling')).toEqual([['v1', 'v2beta1', 'v2beta2'], 'v1']);
    for (const g of [
      'rbac.authorization.platform',
      'scheduling.platform',
      'coordination.platform',
      'events.platform',
      'authentication.platform',
      'authorization.platform',
      'admissionregistration.platform',
    ]) {
      expect([g, of(g)]).toEqual([g, [['v1', 'v1beta1'], 'v1']]);
    }
  });

  it('reviews tokens in authentication.platform/v1beta1', async () => {
    const r = await server.request('POST', '/apis/authentication.platform/v1beta1/tokenreviews', {
      body: { apiVersion: 'authentication.platform/v1beta1', kind: 'TokenReview', spec: { token: 'x' } },
    });
    expect([r.status, r.json.apiVersion, r.json.status?.authenticated ?? false]).toEqual([
      201,
      'authentication.platform/v1beta1',
      false,
    ]);
  });
});

/** Runs kubectl without blocking this process's event loop (the server runs in it). */
function k(args: string[]): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(ensureKubectl(), ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const status = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

/** The header line and the first row of `kubectl get` output, split into columns. */
function table(out: string): string[][] {
  return out
    .split('\n')
    .slice(0, 2)
    .map((l) => l.trim().split(/\s{2,}/));
}

describe('kubectl 1.20', () => {
  beforeAll(async () => {
    await server.request('POST', '/apis/node.platform/v1/runtimeclasses', {
      body: { apiVersion: 'node.platform/v1', kind: 'RuntimeClass', metadata: { name: 'rc1' }, handler: 'runc' },
    });
    await server.request('POST', '/apis/networking.platform/v1/ingressclasses', {
      body: {
        apiVersion: 'networking.platform/v1',
        kind: 'IngressClass',
        metadata: { name: 'ic1' },
        spec: { controller: 'example.com/ingress', parameters: { apiGroup: 'example.com', kind: 'Params', name: 'p' } },
      },
    });
  });

  it('kubectl create ingress (networking.k8s.io/v1), stored in networking.platform', async () => {
    expect(ok(await k(['create', 'ingress', 'kc', '--rule=foo.com/bar=svc1:8080,tls=my-cert']))).toContain(
      'ingress.networking.k8s.io/kc created',
    );
    const stored = await server.request('GET', '/apis/networking.platform/v1/namespaces/default/ingresses/kc');
    expect(stored.json.spec.rules[0]).toEqual({
      host: 'foo.com',
      http: {
        paths: [{ path: '/bar', pathType: 'Exact', backend: { service: { name: 'svc1', port: { number: 8080 } } } }],
      },
    });
  });

  it.each([
    [
      ['get', 'ingress', 'kc'],
      [
        ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE'],
        ['kc', '<none>', 'foo.com', '80, 443'],
      ],
    ],
    [
      ['get', 'storageclass', 'defaults'],
      [
        ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE'],
        ['defaults', 'x.io/y', 'Delete', 'Immediate', 'false'],
      ],
    ],
    [
      ['get', 'runtimeclass', 'rc1'],
      [
        ['NAME', 'HANDLER', 'AGE'],
        ['rc1', 'runc'],
      ],
    ],
    [
      ['get', 'networkpolicy', 'defaults'],
      [
        ['NAME', 'POD-SELECTOR', 'AGE'],
        ['defaults', '<none>'],
      ],
    ],
    [
      ['get', 'ingressclass', 'ic1'],
      [
        ['NAME', 'CONTROLLER', 'PARAMETERS', 'AGE'],
        ['ic1', 'example.com/ingress', 'Params.example.com/p'],
      ],
    ],
    [
      ['get', 'csidriver', 'defaults.example.com'],
      [
        [
          'NAME',
          'ATTACHREQUIRED',
          'PODINFOONMOUNT',
          'STORAGECAPACITY',
          'TOKENREQUESTS',
          'REQUIRESREPUBLISH',
          'MODES',
          'AGE',
        ],
        ['defaults.example.com', 'true', 'false', 'false', '<unset>', 'false', 'Persistent'],
      ],
    ],
  ])('kubectl %p', async (args, want) => {
    const got = table(ok(await k(args)));
    want.forEach((row, i) => expect(got[i]?.slice(0, row.length)).toEqual(row));
  });
});
