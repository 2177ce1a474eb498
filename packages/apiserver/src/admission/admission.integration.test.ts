/**
 * The admission plugins that read or write the store, on a real server over HTTPS (SQLite): the default chain plus
 * the optional plugins, each checked through the API as a client sees it. Users are told apart by bearer tokens
 * (`Authorization: Bearer <user>`; groups after a colon-free `|`).
 */
import { type IncomingMessage } from 'node:http';

import { type Authenticator, requestAuthenticator } from '../auth/authenticator';
import { startTestServer, type TestServer } from '../testing/test-server';
import { parseAdmissionConfig } from './config';
import { enabledPlugins } from './registry';
import { DEFAULT_ADMISSION_SETTINGS } from './server-admission';

/** `Bearer name|group1,group2`: a test user (the test's own authentication method). */
const bearerUsers: Authenticator = {
  async authenticate(req: IncomingMessage) {
    const h = req.headers.authorization;
    if (!h?.startsWith('Bearer ')) return undefined;
    const [name, groups] = h.slice(7).split('|');
    return { user: { name: name as string, groups: groups ? groups.split(',') : [] } };
  },
};

const as = (user: string, groups: string[] = []): Record<string, string> => ({
  authorization: `Bearer ${user}${groups.length ? `|${groups.join(',')}` : ''}`,
});
const NODE_A = as('system:node:a', ['system:nodes']);

function pod(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra },
  };
}

let s: TestServer;

beforeAll(async () => {
  const configs = parseAdmissionConfig(
    JSON.stringify({
      apiVersion: 'apiserver.config.platform/v1',
      kind: 'AdmissionConfiguration',
      plugins: [
        { name: 'EventRateLimit', configuration: { limits: [{ type: 'Namespace', qps: 1, burst: 3 }] } },
        {
          name: 'PodNodeSelector',
          configuration: { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: '', restricted: 'zone=a' } },
        },
      ],
    }),
    '/nonexistent/admission.yaml',
  );
  s = await startTestServer((c) => {
    c.security = { authenticator: requestAuthenticator([bearerUsers], true) };
    c.admission = {
      plugins: enabledPlugins(
        ['NodeRestriction', 'DenyServiceExternalIPs', 'PodNodeSelector', 'PodTolerationRestriction', 'EventRateLimit'],
        [],
      ),
      configs,
      settings: { ...DEFAULT_ADMISSION_SETTINGS, defaultNotReadyTolerationSeconds: 120 },
    };
  });
  for (const ns of ['team', 'restricted', 'quota', 'limits']) {
    expect((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).toBe(201);
    const sa = await s.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { metadata: { name: 'default' }, imagePullSecrets: [{ name: 'registry' }] },
    });
    expect(sa.status).toBe(201);
  }
}, 30_000);

afterAll(async () => {
  await s?.stop();
  expect(s?.errors ?? []).toEqual([]);
});

describe('NamespaceLifecycle', () => {
  it('refuses creates in a namespace that does not exist with 404', async () => {
    const r = await s.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: { metadata: { name: 'x' } } });
    expect(r.status).toBe(404);
    expect(r.json.message).toBe('namespaces "nowhere" not found');
  });

  it('refuses deleting the system namespaces', async () => {
    for (const ns of ['default', 'system', 'public']) {
      const r = await s.request('DELETE', `/api/v1/namespaces/${ns}`);
      expect([r.status, r.json.reason, r.json.message]).toEqual([
        403,
        'Forbidden',
        `namespaces "${ns}" is forbidden: this namespace may not be deleted`,
      ]);
    }
  });

  it('refuses creates in a terminating namespace, naming the cause', async () => {
    await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'dying', finalizers: ['x/y'] } } });
    expect((await s.request('DELETE', '/api/v1/namespaces/dying')).status).toBe(200);
    const r = await s.request('POST', '/api/v1/namespaces/dying/configmaps', { body: { metadata: { name: 'x' } } });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('unable to create new content in namespace dying because it is being terminated');
    expect(r.json.details.causes).toEqual([
      { reason: 'NamespaceTerminating', message: 'namespace dying is being terminated', field: 'metadata.namespace' },
    ]);
  });
});

describe('ServiceAccount, Priority, DefaultTolerationSeconds, PodTolerationRestriction', () => {
  it('refuses a pod whose service account does not exist', async () => {
    const r = await s.request('POST', '/api/v1/namespaces/team/pods', {
      body: pod('p0', { serviceAccountName: 'ghost' }),
    });
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(
      'pods "p0" is forbidden: error looking up service account team/ghost: serviceaccount "ghost" not found',
    );
  });

  it('fills in the service account, its token volume, pull secrets, priority and tolerations', async () => {
    const r = await s.request('POST', '/api/v1/namespaces/team/pods', { body: pod('p1') });
    expect(r.status).toBe(201);
    const spec = r.json.spec;
    expect(spec.serviceAccountName).toBe('default');
    expect(spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
    expect(spec.priority).toBe(0);
    expect(spec.preemptionPolicy).toBe('PreemptLowerPriority');
    const volume = spec.volumes.find((v: { name: string }) => v.name.startsWith('kube-api-access-'));
    expect(volume.name).toMatch(/^kube-api-access-[a-z0-9]{5}$/);
    expect(volume.projected.sources).toEqual([
      { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ]);
    expect(spec.containers[0].volumeMounts).toEqual([
      { name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ]);
    expect(spec.tolerations).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ]);
  });

  it('leaves the token out when the pod opts out', async () => {
    const r = await s.request('POST', '/api/v1/namespaces/team/pods', {
      body: pod('p2', { automountServiceAccountToken: false }),
    });
    expect(r.status).toBe(201);
    expect(r.json.spec.volumes ?? []).toEqual([]);
  });

  it('resolves priorityClassName, the global default, and refuses unknown classes and mismatched values', async () => {
    const pc = (name: string, value: number, globalDefault = false): Promise<unknown> =>
      s.request('POST', '/apis/scheduling.platform/v1/priorityclasses', {
        body: { metadata: { name }, value, globalDefault },
      });
    await pc('high', 1000);
    await pc('everyday', 10, true);
    let r = await s.request('POST', '/api/v1/namespaces/team/pods', {
      body: pod('pr1', { priorityClassName: 'high' }),
    });
    expect([r.status, r.json.spec.priority]).toEqual([201, 1000]);
    r = await s.request('POST', '/api/v1/namespaces/team/pods', { body: pod('pr2') });
    expect([r.status, r.json.spec.priority, r.json.spec.priorityClassName]).toEqual([201, 10, 'everyday']);
    r = await s.request('POST', '/api/v1/namespaces/team/pods', { body: pod('pr3', { priorityClassName: 'nope' }) });
    expect([r.status, r.json.message]).toEqual([
      403,
      'pods "pr3" is forbidden: no PriorityClass with name nope was found',
    ]);
    r = await s.request('POST', '/api/v1/namespaces/team/pods', {
      body: pod('pr4', { priorityClassName: 'high', priority: 5 }),
    });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('the integer value of priority (5) must not be provided in pod spec');
    r = await s.request('POST', '/api/v1/namespaces/team/pods', {
      body: pod('pr5', { priorityClassName: 'system-node-critical' }),
    });
    expect([r.status, r.json.spec.priority]).toEqual([201, 2000001000]);
    await s.request('DELETE', '/apis/scheduling.platform/v1/priorityclasses/everyday');
  });

  it('merges namespace default tolerations and enforces the namespace allow-list', async () => {
    await s.request('POST', '/api/v1/namespaces', {
      body: {
        metadata: {
          name: 'tolerant',
          annotations: {
            'scheduler.alpha.kubernetes.io/defaultTolerations': JSON.stringify([
              { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' },
            ]),
            'scheduler.alpha.kubernetes.io/tolerationsWhitelist': JSON.stringify([
              { key: 'dedicated', operator: 'Equal', value: 'db' },
            ]),
          },
        },
      },
    });
    await s.request('POST', '/api/v1/namespaces/tolerant/serviceaccounts', { body: { metadata: { name: 'default' } } });
    let r = await s.request('POST', '/api/v1/namespaces/tolerant/pods', { body: pod('t1') });
    expect(r.status).toBe(201);
    expect(r.json.spec.tolerations).toContainEqual({
      key: 'dedicated',
      operator: 'Equal',
      value: 'db',
      effect: 'NoSchedule',
    });
    r = await s.request('POST', '/api/v1/namespaces/tolerant/pods', {
      body: pod('t2', { tolerations: [{ key: 'gpu', operator: 'Exists' }] }),
    });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('conflict with its namespace whitelist');
    r = await s.request('POST', '/api/v1/namespaces/tolerant/pods', {
      body: pod('t3', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }] }),
    });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('namespace default tolerations');
  });
});

describe('PodNodeSelector', () => {
  it('merges the namespace selector, refuses conflicts and selectors outside the allow-list', async () => {
    await s.request('PATCH', '/api/v1/namespaces/restricted', {
      body: { metadata: { annotations: { 'scheduler.alpha.kubernetes.io/node-selector': 'zone=a' } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    let r = await s.request('POST', '/api/v1/namespaces/restricted/pods', { body: pod('n1') });
    expect([r.status, r.json.spec.nodeSelector]).toEqual([201, { zone: 'a' }]);
    r = await s.request('POST', '/api/v1/namespaces/restricted/pods', {
      body: pod('n2', { nodeSelector: { zone: 'b' } }),
    });
    expect([r.status, r.json.message]).toEqual([
      403,
      'pods "n2" is forbidden: pod node label selector conflicts with its namespace node label selector',
    ]);
    r = await s.request('POST', '/api/v1/namespaces/restricted/pods', {
      body: pod('n3', { nodeSelector: { disk: 'ssd' } }),
    });
    expect([r.status, r.json.message]).toEqual([
      403,
      'pods "n3" is forbidden: pod node label selector labels conflict with its namespace whitelist',
    ]);
  });
});

describe('LimitRanger', () => {
  it('applies container defaults and refuses what is out of range', async () => {
    const lr = await s.request('POST', '/api/v1/namespaces/limits/limitranges', {
      body: {
        metadata: { name: 'lr' },
        spec: {
          limits: [
            {
              type: 'Container',
              default: { cpu: '500m', memory: '256Mi' },
              defaultRequest: { cpu: '100m', memory: '128Mi' },
              max: { cpu: '1' },
              min: { cpu: '50m' },
            },
            { type: 'PersistentVolumeClaim', max: { storage: '1Gi' } },
          ],
        },
      },
    });
    expect(lr.status).toBe(201);
    let r = await s.request('POST', '/api/v1/namespaces/limits/pods', { body: pod('l1') });
    expect(r.status).toBe(201);
    expect(r.json.spec.containers[0].resources).toEqual({
      limits: { cpu: '500m', memory: '256Mi' },
      requests: { cpu: '100m', memory: '128Mi' },
    });
    r = await s.request('POST', '/api/v1/namespaces/limits/pods', {
      body: pod('l2', { containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: '2' } } }] }),
    });
    expect([r.status, r.json.message]).toEqual([
      403,
      'pods "l2" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    ]);
    r = await s.request('POST', '/api/v1/namespaces/limits/persistentvolumeclaims', {
      body: {
        metadata: { name: 'big' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } },
      },
    });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('maximum storage usage per PersistentVolumeClaim is 1Gi');
  });
});

describe('ResourceQuota', () => {
  it('admits exactly the quota of 50 concurrent creates, and charges status.used', async () => {
    const q = await s.request('POST', '/api/v1/namespaces/quota/resourcequotas', {
      body: { metadata: { name: 'q' }, spec: { hard: { configmaps: '10', pods: '2' } } },
    });
    expect(q.status).toBe(201);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.request('POST', '/api/v1/namespaces/quota/configmaps', { body: { metadata: { name: `cm-${i}` } } }),
      ),
    );
    const codes = results.map((r) => r.status);
    expect(codes.filter((c) => c === 201)).toHaveLength(10);
    expect(codes.filter((c) => c === 403)).toHaveLength(40);
    const refused = results.find((r) => r.status === 403);
    expect(refused?.json.message).toMatch(
      /^configmaps "cm-\d+" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=10, limited: configmaps=10$/,
    );
    const list = await s.request('GET', '/api/v1/namespaces/quota/configmaps');
    expect(list.json.items).toHaveLength(10);
    const after = await s.request('GET', '/api/v1/namespaces/quota/resourcequotas/q');
    expect(after.json.status).toEqual({ hard: { configmaps: '10', pods: '2' }, used: { configmaps: '10', pods: '0' } });
  });

  it('checks a dry-run without charging it', async () => {
    const r = await s.request('POST', '/api/v1/namespaces/quota/pods?dryRun=All', { body: pod('dry') });
    expect(r.status).toBe(201);
    const q = await s.request('GET', '/api/v1/namespaces/quota/resourcequotas/q');
    expect(q.json.status.used.pods).toBe('0');
  });

  it('requires compute resources a quota limits', async () => {
    await s.request('POST', '/api/v1/namespaces/quota/resourcequotas', {
      body: { metadata: { name: 'compute' }, spec: { hard: { 'limits.memory': '1Gi' } } },
    });
    let r = await s.request('POST', '/api/v1/namespaces/quota/pods', { body: pod('bare') });
    expect([r.status, r.json.message]).toEqual([
      403,
      'pods "bare" is forbidden: failed quota: compute: must specify limits.memory',
    ]);
    const sized = (name: string, memory: string): Record<string, unknown> =>
      pod(name, { containers: [{ name: 'c', image: 'x', resources: { limits: { memory } } }] });
    r = await s.request('POST', '/api/v1/namespaces/quota/pods', { body: sized('m1', '768Mi') });
    expect(r.status).toBe(201);
    r = await s.request('POST', '/api/v1/namespaces/quota/pods', { body: sized('m2', '512Mi') });
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(
      'pods "m2" is forbidden: exceeded quota: compute, requested: limits.memory=512Mi, used: limits.memory=768Mi, limited: limits.memory=1Gi',
    );
  });
});

describe('NodeRestriction', () => {
  it('lets a node create only its own Node, without restricted labels, and not change its taints', async () => {
    let r = await s.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'b' } }, headers: NODE_A });
    expect([r.status, r.json.message]).toEqual([
      403,
      'nodes "b" is forbidden: node "a" is not allowed to modify node "b"',
    ]);
    r = await s.request('POST', '/api/v1/nodes', {
      body: { metadata: { name: 'a', labels: { 'node-restriction.kubernetes.io/x': 'y' } } },
      headers: NODE_A,
    });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('is not allowed to modify labels: node-restriction.kubernetes.io/x');
    r = await s.request('POST', '/api/v1/nodes', {
      body: { metadata: { name: 'a', labels: { 'kubernetes.io/hostname': 'a', 'example.com/rack': '1' } } },
      headers: NODE_A,
    });
    expect(r.status).toBe(201);
    // TaintNodesByCondition: a new node is not ready until the node controller says so.
    expect(r.json.spec.taints).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    r = await s.request('PATCH', '/api/v1/nodes/a', {
      body: { spec: { taints: [] } },
      headers: { ...NODE_A, 'content-type': 'application/merge-patch+json' },
    });
    expect([r.status, r.json.message]).toEqual([
      403,
      'nodes "a" is forbidden: node "a" is not allowed to modify taints',
    ]);
  });

  it('lets a node create only mirror pods bound to itself, and delete only its pods', async () => {
    let r = await s.request('POST', '/api/v1/namespaces/team/pods', {
      body: pod('np1', { nodeName: 'a' }),
      headers: NODE_A,
    });
    expect(r.status).toBe(403);
    expect(r.json.message).toContain('can only create mirror pods');
    const mirror = pod('np2', { nodeName: 'a' });
    (mirror.metadata as Record<string, unknown>).annotations = { 'kubernetes.io/config.mirror': 'x' };
    r = await s.request('POST', '/api/v1/namespaces/team/pods', { body: mirror, headers: NODE_A });
    expect(r.status).toBe(201);
    await s.request('POST', '/api/v1/namespaces/team/pods', { body: pod('other', { nodeName: 'b' }) });
    r = await s.request('DELETE', '/api/v1/namespaces/team/pods/other', { headers: NODE_A });
    expect([r.status, r.json.message]).toEqual([
      403,
      'pods "other" is forbidden: node "a" can only delete pods with spec.nodeName set to itself',
    ]);
    r = await s.request('DELETE', '/api/v1/namespaces/team/pods/np2?gracePeriodSeconds=0', { headers: NODE_A });
    expect(r.status).toBe(200);
  });
});

describe('DenyServiceExternalIPs', () => {
  it('refuses services with external IPs', async () => {
    const r = await s.request('POST', '/api/v1/namespaces/team/services', {
      body: { metadata: { name: 'ext' }, spec: { ports: [{ port: 80 }], externalIPs: ['1.2.3.4'] } },
    });
    expect([r.status, r.json.message]).toEqual([
      403,
      'services "ext" is forbidden: Use of external IPs is denied by admission control',
    ]);
  });
});

describe('EventRateLimit', () => {
  it('answers 429 once a namespace has used its burst', async () => {
    const event = (i: number, namespace = 'limits'): Record<string, unknown> => ({
      metadata: { name: `e${i}` },
      involvedObject: { kind: 'Pod', name: 'p', namespace },
      reason: 'Test',
    });
    const codes: number[] = [];
    for (let i = 0; i < 5; i++)
      codes.push((await s.request('POST', '/api/v1/namespaces/limits/events', { body: event(i) })).status);
    expect(codes.slice(0, 3)).toEqual([201, 201, 201]);
    expect(codes.slice(3)).toContain(429);
    // Another namespace has its own bucket.
    const r = await s.request('POST', '/api/v1/namespaces/team/events', { body: event(9, 'team') });
    expect(r.status).toBe(201);
  });
});
