/**
 * The built-in resources over real HTTPS on a real embedded store: the special subresources (binding, eviction,
 * scale, finalize, status), a few 422s of the strategies, and the virtual reviews.
 */
import { startTestServer, type TestServer } from '../testing/test-server';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
}, 60_000);

afterAll(async () => {
  await t.stop();
  expect(t.errors).toEqual([]);
});

const NS = '/api/v1/namespaces';
const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

const pod = (name: string, labels: Record<string, string> = {}): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'busybox:1', env: [{ name: 'A', value: '1' }] }] },
});

const deployment = (name: string, replicas?: number): object => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    ...(replicas === undefined ? {} : { replicas }),
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
  },
});

function causes(json: { details?: { causes?: { field: string; reason: string }[] } }): string[] {
  return (json.details?.causes ?? []).map((c) => `${c.reason} ${c.field}`);
}

describe('discovery', () => {
  it('lists the special subresources and the virtual kinds', async () => {
    const core = (await t.request('GET', '/api/v1')).json.resources as { name: string; verbs: string[] }[];
    const names = core.map((r) => r.name);
    expect(names).toEqual(
      expect.arrayContaining(['pods/binding', 'pods/eviction', 'namespaces/finalize', 'replicationcontrollers/scale']),
    );
    expect(core.find((r) => r.name === 'bindings')?.verbs).toEqual(['create']);
    const apps = (await t.request('GET', '/apis/apps/v1')).json.resources as { name: string; kind: string }[];
    expect(apps.find((r) => r.name === 'deployments/scale')?.kind).toBe('Scale');
    const authz = (await t.request('GET', '/apis/authorization.platform/v1')).json.resources as { name: string }[];
    expect(authz.map((r) => r.name).sort()).toEqual([
      'localsubjectaccessreviews',
      'selfsubjectaccessreviews',
      'selfsubjectrulesreviews',
      'subjectaccessreviews',
    ]);
  });
});

describe('namespaces', () => {
  it('start Active with the platform finalizer, and reject names that are not DNS labels', async () => {
    const r = await t.request('POST', NS, { body: { metadata: { name: 'ns-a' } } });
    expect(r.status).toBe(201);
    expect(r.json.status).toEqual({ phase: 'Active' });
    expect(r.json.spec).toEqual({ finalizers: ['platform'] });
    const bad = await t.request('POST', NS, { body: { metadata: { name: 'a.b' } } });
    expect([bad.status, bad.json.reason]).toEqual([422, 'Invalid']);
    expect(causes(bad.json)).toEqual(['FieldValueInvalid metadata.name']);
  });

  it('stay Terminating until finalize removes the last finalizer', async () => {
    await t.request('POST', NS, { body: { metadata: { name: 'ns-del' } } });
    const del = await t.request('DELETE', `${NS}/ns-del`);
    expect(del.status).toBe(200);
    expect(del.json.status.phase).toBe('Terminating');
    expect(del.json.metadata.deletionTimestamp).toBeDefined();
    const still = await t.request('GET', `${NS}/ns-del`);
    expect(still.status).toBe(200);
    // An ordinary update neither removes it nor changes its finalizers.
    const put = await t.request('PUT', `${NS}/ns-del`, {
      body: { ...still.json, metadata: { ...still.json.metadata, labels: { a: 'b' } }, spec: { finalizers: [] } },
    });
    expect(put.status).toBe(200);
    expect(put.json.spec.finalizers).toEqual(['platform']);
    const fin = await t.request('PUT', `${NS}/ns-del/finalize`, { body: { ...put.json, spec: { finalizers: [] } } });
    expect(fin.status).toBe(200);
    expect((await t.request('GET', `${NS}/ns-del`)).status).toBe(404);
  });

  it('finalize rejects finalizers that are neither standard nor qualified', async () => {
    const ns = (await t.request('POST', NS, { body: { metadata: { name: 'ns-fin' } } })).json;
    const r = await t.request('PUT', `${NS}/ns-fin/finalize`, { body: { ...ns, spec: { finalizers: ['nope'] } } });
    expect([r.status, causes(r.json)]).toEqual([422, ['FieldValueInvalid spec.finalizers[0]']]);
  });

  it('status: the phase must agree with the deletion timestamp', async () => {
    const ns = (await t.request('POST', NS, { body: { metadata: { name: 'ns-status' } } })).json;
    const r = await t.request('PUT', `${NS}/ns-status/status`, { body: { ...ns, status: { phase: 'Terminating' } } });
    expect([r.status, causes(r.json)]).toEqual([422, ['FieldValueInvalid status.Phase']]);
  });
});

describe('pods', () => {
  it('validate the spec (422 with every cause) and start Pending with a QoS class', async () => {
    const bad = await t.request('POST', PODS, {
      body: {
        metadata: { name: 'bad' },
        spec: {
          containers: [
            { name: 'a', image: '' },
            { name: 'a', image: 'x', volumeMounts: [{ name: 'nope', mountPath: '/d' }] },
          ],
        },
      },
    });
    expect(bad.status).toBe(422);
    expect(causes(bad.json)).toEqual([
      'FieldValueRequired spec.containers[0].image',
      'FieldValueDuplicate spec.containers[1].name',
      'FieldValueNotFound spec.containers[1].volumeMounts[0].name',
    ]);
    const ok = await t.request('POST', PODS, { body: pod('p-ok') });
    expect(ok.status).toBe(201);
    expect(ok.json.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
  });

  it('allow image changes on update and forbid other spec changes', async () => {
    const p = (await t.request('POST', PODS, { body: pod('p-upd') })).json;
    const image = await t.request('PUT', `${PODS}/p-upd`, {
      body: { ...p, spec: { ...p.spec, containers: [{ ...p.spec.containers[0], image: 'busybox:2' }] } },
    });
    expect(image.status).toBe(200);
    const env = await t.request('PUT', `${PODS}/p-upd`, {
      body: {
        ...image.json,
        spec: { ...image.json.spec, containers: [{ ...image.json.spec.containers[0], env: [] }] },
      },
    });
    expect([env.status, causes(env.json)]).toEqual([422, ['FieldValueForbidden spec']]);
  });

  it('binding sets nodeName once (409 after) and validates the target', async () => {
    await t.request('POST', PODS, { body: pod('p-bind') });
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p-bind' }, target: { name: 'node-1' } };
    const bad = await t.request('POST', `${PODS}/p-bind/binding`, {
      body: { ...binding, target: { kind: 'Pod', name: 'x' } },
    });
    expect([bad.status, causes(bad.json)]).toEqual([422, ['FieldValueNotSupported target.kind']]);
    const r = await t.request('POST', `${PODS}/p-bind/binding`, { body: binding });
    expect([r.status, r.json.kind, r.json.status]).toEqual([201, 'Status', 'Success']);
    const bound = (await t.request('GET', `${PODS}/p-bind`)).json;
    expect(bound.spec.nodeName).toBe('node-1');
    expect(bound.status.conditions).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]);
    const again = await t.request('POST', `${PODS}/p-bind/binding`, {
      body: { ...binding, target: { name: 'node-2' } },
    });
    expect([again.status, again.json.reason]).toEqual([409, 'Conflict']);
    expect(again.json.message).toContain('is already assigned to node "node-1"');
    // The `bindings` collection does the same, naming the pod in the Binding.
    await t.request('POST', PODS, { body: pod('p-bind2') });
    const viaCollection = await t.request('POST', '/api/v1/namespaces/default/bindings', {
      body: { ...binding, metadata: { name: 'p-bind2' } },
    });
    expect(viaCollection.status).toBe(201);
    expect((await t.request('GET', `${PODS}/p-bind2`)).json.spec.nodeName).toBe('node-1');
  });

  it('eviction deletes a pod that no budget protects', async () => {
    await t.request('POST', PODS, { body: pod('p-evict') });
    const r = await t.request('POST', `${PODS}/p-evict/eviction`, {
      body: { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'p-evict' } },
    });
    expect([r.status, r.json.status]).toEqual([201, 'Success']);
    expect((await t.request('GET', `${PODS}/p-evict`)).status).toBe(404);
  });

  it('eviction of a running pod honours its PodDisruptionBudget (429, then a recorded disruption)', async () => {
    const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
    await t.request('POST', PODS, { body: pod('p-pdb', { app: 'guarded' }) });
    await t.request('POST', `${PODS}/p-pdb/binding`, {
      body: { kind: 'Binding', apiVersion: 'v1', metadata: { name: 'p-pdb' }, target: { name: 'node-1' } },
    });
    const running = (await t.request('GET', `${PODS}/p-pdb`)).json;
    expect(
      (
        await t.request('PUT', `${PODS}/p-pdb/status`, {
          body: { ...running, status: { ...running.status, phase: 'Running' } },
        })
      ).status,
    ).toBe(200);
    const pdb = await t.request('POST', PDBS, {
      body: { metadata: { name: 'guard' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } } },
    });
    expect(pdb.status).toBe(201);
    const status = {
      disruptionsAllowed: 0,
      currentHealthy: 1,
      desiredHealthy: 1,
      expectedPods: 1,
      observedGeneration: 1,
    };
    await t.request('PUT', `${PDBS}/guard/status`, { body: { ...pdb.json, status } });
    const eviction = { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'p-pdb' } };
    const refused = await t.request('POST', `${PODS}/p-pdb/eviction`, { body: eviction });
    expect([refused.status, refused.json.reason]).toEqual([429, 'TooManyRequests']);
    const latest = (await t.request('GET', `${PDBS}/guard`)).json;
    await t.request('PUT', `${PDBS}/guard/status`, {
      body: { ...latest, status: { ...status, disruptionsAllowed: 1 } },
    });
    const done = await t.request('POST', `${PODS}/p-pdb/eviction`, { body: eviction });
    expect(done.status).toBe(201);
    const after = (await t.request('GET', `${PDBS}/guard`)).json;
    expect(after.status.disruptionsAllowed).toBe(0);
    expect(Object.keys(after.status.disruptedPods)).toEqual(['p-pdb']);
    // A pod bound to a node is deleted gracefully: it is now terminating.
    const gone = (await t.request('GET', `${PODS}/p-pdb`)).json;
    expect(gone.metadata.deletionTimestamp).toBeDefined();
    expect(gone.metadata.deletionGracePeriodSeconds).toBe(30);
  });
});

describe('services', () => {
  const SVCS = '/api/v1/namespaces/default/services';
  const svc = (name: string, spec: object): object => ({
    metadata: { name },
    spec: { ports: [{ port: 80, targetPort: 8080 }], selector: { app: name }, ...spec },
  });
  /** An address of the range no service holds now (others got theirs at random: a fixed one could be taken). */
  const freeClusterIP = async (): Promise<string> => {
    const list = await t.request('GET', '/api/v1/services');
    const used = new Set((list.json.items as { spec: { clusterIP?: string } }[]).map((i) => i.spec.clusterIP));
    for (let i = 200; i < 255; i++) if (!used.has(`10.0.0.${i}`)) return `10.0.0.${i}`;
    throw new Error('no free cluster IP in 10.0.0.200-254');
  };

  it('get a cluster IP from the range, once, and give it back on delete', async () => {
    const a = await t.request('POST', SVCS, { body: svc('ip-a', {}) });
    expect(a.status).toBe(201);
    const ip = a.json.spec.clusterIP as string;
    expect(ip).toMatch(/^10\.0\.0\.\d+$/);
    expect(a.json.spec.clusterIPs).toEqual([ip]);
    const taken = await t.request('POST', SVCS, { body: svc('ip-b', { clusterIP: ip }) });
    expect([taken.status, causes(taken.json)]).toEqual([422, ['FieldValueInvalid spec.clusterIPs[0]']]);
    expect(taken.json.message).toContain('provided IP is already allocated');
    const outside = await t.request('POST', SVCS, { body: svc('ip-c', { clusterIP: '192.168.0.1' }) });
    expect(outside.json.message).toContain('The range of valid IPs is 10.0.0.0/24');
    const headless = await t.request('POST', SVCS, { body: svc('ip-none', { clusterIP: 'None' }) });
    expect([headless.status, headless.json.spec.clusterIP]).toEqual([201, 'None']);
    // An update that leaves the IP out keeps it.
    const kept = await t.request('PUT', `${SVCS}/ip-a`, { body: { ...svc('ip-a', {}), metadata: a.json.metadata } });
    expect([kept.status, kept.json.spec.clusterIP]).toEqual([200, ip]);
    expect((await t.request('DELETE', `${SVCS}/ip-a`)).status).toBe(200);
    const reused = await t.request('POST', SVCS, { body: svc('ip-d', { clusterIP: ip }) });
    expect([reused.status, reused.json.spec.clusterIP]).toEqual([201, ip]);
  });

  it('get node ports for NodePort services, and release them when the type changes', async () => {
    const np = await t.request('POST', SVCS, { body: svc('np-a', { type: 'NodePort' }) });
    expect(np.status).toBe(201);
    const port = np.json.spec.ports[0].nodePort as number;
    expect(port).toBeGreaterThanOrEqual(30000);
    expect(port).toBeLessThanOrEqual(32767);
    const clash = await t.request('POST', SVCS, {
      body: svc('np-b', { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }),
    });
    expect([clash.status, causes(clash.json)]).toEqual([422, ['FieldValueInvalid spec.ports[0].nodePort']]);
    const back = await t.request('PUT', `${SVCS}/np-a`, {
      body: {
        ...np.json,
        spec: {
          ...np.json.spec,
          type: 'ClusterIP',
          externalTrafficPolicy: undefined,
          ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      },
    });
    expect([back.status, back.json.spec.clusterIP]).toEqual([200, np.json.spec.clusterIP]);
    const mine = await t.request('POST', SVCS, {
      body: svc('np-c', { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }),
    });
    expect([mine.status, mine.json.spec.ports[0].nodePort]).toEqual([201, port]);
  });

  it('release the IP of a service held by a finalizer when its last finalizer goes', async () => {
    const ip = await freeClusterIP();
    const held = await t.request('POST', SVCS, {
      body: { ...svc('fin', { clusterIP: ip }), metadata: { name: 'fin', finalizers: ['example.com/hold'] } },
    });
    expect(held.status).toBe(201);
    const del = await t.request('DELETE', `${SVCS}/fin`);
    expect(del.status).toBe(200);
    const fin = await t.request('PUT', `${SVCS}/fin`, {
      body: { ...del.json, metadata: { ...del.json.metadata, finalizers: [] } },
    });
    expect(fin.status).toBe(200);
    expect((await t.request('GET', `${SVCS}/fin`)).status).toBe(404);
    const reused = await t.request('POST', SVCS, { body: svc('fin2', { clusterIP: ip }) });
    expect(reused.status).toBe(201);
  });

  it('allocate nothing on a dry run', async () => {
    const ip = await freeClusterIP();
    const dry = await t.request('POST', `${SVCS}?dryRun=All`, { body: svc('dry', { clusterIP: ip }) });
    expect(dry.status).toBe(201);
    const real = await t.request('POST', SVCS, { body: svc('dry', { clusterIP: ip }) });
    expect([real.status, real.json.spec.clusterIP]).toEqual([201, ip]);
  });
});

describe('scale', () => {
  it('reads and writes replicas through autoscaling/v1 Scale', async () => {
    const d = await t.request('POST', DEPLOYMENTS, { body: deployment('web') });
    expect(d.status).toBe(201);
    const scale = await t.request('GET', `${DEPLOYMENTS}/web/scale`);
    expect(scale.json).toMatchObject({
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'web', namespace: 'default', resourceVersion: d.json.metadata.resourceVersion },
      spec: { replicas: 1 },
      status: { replicas: 0, selector: 'app=web' },
    });
    const put = await t.request('PUT', `${DEPLOYMENTS}/web/scale`, { body: { ...scale.json, spec: { replicas: 3 } } });
    expect([put.status, put.json.kind, put.json.spec.replicas]).toEqual([200, 'Scale', 3]);
    const after = (await t.request('GET', `${DEPLOYMENTS}/web`)).json;
    expect([after.spec.replicas, after.metadata.generation]).toEqual([3, 2]);
    const stale = await t.request('PUT', `${DEPLOYMENTS}/web/scale`, {
      body: { ...scale.json, spec: { replicas: 4 } },
    });
    expect(stale.status).toBe(409);
    const negative = await t.request('PUT', `${DEPLOYMENTS}/web/scale`, {
      body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: -1 } },
    });
    expect([negative.status, causes(negative.json)]).toEqual([422, ['FieldValueInvalid spec.replicas']]);
    const patch = await t.request('PATCH', `${DEPLOYMENTS}/web/scale`, {
      body: { spec: { replicas: 5 } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect([patch.status, patch.json.spec.replicas]).toEqual([200, 5]);
    expect((await t.request('GET', `${DEPLOYMENTS}/web`)).json.spec.replicas).toBe(5);
    expect((await t.request('GET', `${DEPLOYMENTS}/missing/scale`)).status).toBe(404);
  });

  it('serves replication controllers with their map selector', async () => {
    const RCS = '/api/v1/namespaces/default/replicationcontrollers';
    const rc = await t.request('POST', RCS, {
      body: {
        metadata: { name: 'rc' },
        spec: {
          replicas: 2,
          selector: { app: 'rc' },
          template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      },
    });
    expect(rc.status).toBe(201);
    const scale = await t.request('GET', `${RCS}/rc/scale`);
    expect(scale.json.spec.replicas).toBe(2);
    expect(scale.json.status.selector).toBe('app=rc');
  });
});

describe('workload validation', () => {
  it('rejects a selector that does not match the template, and a changed selector', async () => {
    const mismatch = deployment('mismatch') as { spec: { selector: object } };
    mismatch.spec.selector = { matchLabels: { app: 'other' } };
    const bad = await t.request('POST', DEPLOYMENTS, { body: mismatch });
    expect([bad.status, causes(bad.json)]).toEqual([422, ['FieldValueInvalid spec.template.metadata.labels']]);
    const d = (await t.request('POST', DEPLOYMENTS, { body: deployment('fixed') })).json;
    const changed = await t.request('PUT', `${DEPLOYMENTS}/fixed`, {
      body: {
        ...d,
        spec: {
          ...d.spec,
          selector: { matchLabels: { app: 'fixed', tier: 'x' } },
          template: { ...d.spec.template, metadata: { labels: { app: 'fixed', tier: 'x' } } },
        },
      },
    });
    expect([changed.status, causes(changed.json)]).toEqual([422, ['FieldValueInvalid spec.selector']]);
  });

  it('generates the selector of a job', async () => {
    const r = await t.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: {
        metadata: { name: 'once' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } },
      },
    });
    expect(r.status).toBe(201);
    const uid = r.json.metadata.uid as string;
    expect(r.json.spec.selector).toEqual({ matchLabels: { 'controller-uid': uid } });
    expect(r.json.spec.template.metadata.labels).toEqual({ 'controller-uid': uid, 'job-name': 'once' });
  });
});

describe('rbac', () => {
  it('applies Document 1 rules to ClusterRole and Role rules', async () => {
    const both = await t.request('POST', '/apis/rbac.authorization.platform/v1/clusterroles', {
      body: {
        metadata: { name: 'both' },
        rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], nonResourceURLs: ['/healthz'] }],
      },
    });
    expect([both.status, causes(both.json)]).toEqual([422, ['FieldValueInvalid rules[0].nonResourceURLs']]);
    const star = await t.request('POST', '/apis/rbac.authorization.platform/v1/clusterroles', {
      body: { metadata: { name: 'star' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/api*'] }] },
    });
    expect([star.status, causes(star.json)]).toEqual([422, ['FieldValueInvalid rules[0].nonResourceURLs[0]']]);
    const ok = await t.request('POST', '/apis/rbac.authorization.platform/v1/clusterroles', {
      body: { metadata: { name: 'system:ok' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/apis/*', '*'] }] },
    });
    expect(ok.status).toBe(201);
    const role = await t.request('POST', '/apis/rbac.authorization.platform/v1/namespaces/default/roles', {
      body: { metadata: { name: 'r' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] },
    });
    expect([role.status, causes(role.json)]).toEqual([422, ['FieldValueInvalid rules[0].nonResourceURLs']]);
  });
});

describe('priority classes', () => {
  const PCS = '/apis/scheduling.platform/v1/priorityclasses';
  it('allow one global default, and reserve the system- prefix', async () => {
    const first = await t.request('POST', PCS, {
      body: { metadata: { name: 'default-a' }, value: 10, globalDefault: true },
    });
    expect(first.status).toBe(201);
    const second = await t.request('POST', PCS, {
      body: { metadata: { name: 'default-b' }, value: 20, globalDefault: true },
    });
    expect([second.status, second.json.reason]).toEqual([403, 'Forbidden']);
    expect(second.json.message).toContain('PriorityClass default-a is already marked as default');
    const plain = await t.request('POST', PCS, { body: { metadata: { name: 'plain' }, value: 5 } });
    expect(plain.status).toBe(201);
    const promote = await t.request('PUT', `${PCS}/plain`, { body: { ...plain.json, globalDefault: true } });
    expect(promote.status).toBe(403);
    const again = await t.request('PUT', `${PCS}/default-a`, {
      body: { ...first.json, description: 'still the default' },
    });
    expect(again.status).toBe(200);
    const reserved = await t.request('POST', PCS, { body: { metadata: { name: 'system-mine' }, value: 1 } });
    expect([reserved.status, causes(reserved.json)]).toEqual([422, ['FieldValueForbidden metadata.name']]);
  });
});

describe('reviews', () => {
  it('answer access reviews with the AlwaysAllow decision, and store nothing', async () => {
    const r = await t.request('POST', '/apis/authorization.platform/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.platform/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } },
      },
    });
    expect([r.status, r.json.status.allowed]).toEqual([201, true]);
    const invalid = await t.request('POST', '/apis/authorization.platform/v1/subjectaccessreviews', {
      body: { spec: { resourceAttributes: { verb: 'get' } } },
    });
    expect([invalid.status, causes(invalid.json)]).toEqual([422, ['FieldValueInvalid spec.user']]);
    const list = await t.request('GET', '/apis/authorization.platform/v1/subjectaccessreviews');
    expect(list.status).toBe(405);
    const rules = await t.request('POST', '/apis/authorization.platform/v1/selfsubjectrulesreviews', {
      body: { spec: { namespace: 'default' } },
    });
    expect(rules.json.status.resourceRules).toEqual([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]);
  });

  it('answer token reviews as not authenticated until token authentication is configured', async () => {
    const r = await t.request('POST', '/apis/authentication.platform/v1/tokenreviews', {
      body: { spec: { token: 'abc' } },
    });
    expect(r.status).toBe(201);
    expect(r.json.status).toEqual({
      authenticated: false,
      error: 'token authentication is not configured on this server',
    });
  });
});

describe('configured service ranges', () => {
  it('allocate from --service-cluster-ip-range and --service-node-port-range, and say when a range is full', async () => {
    const small = await startTestServer((c) => {
      c.services = { clusterIPRange: '10.9.0.0/29', nodePortRange: '30100-30100' };
    });
    try {
      const SVCS = '/api/v1/namespaces/default/services';
      const svc = (name: string, type = 'ClusterIP'): object => ({
        metadata: { name },
        spec: { type, ports: [{ port: 80 }] },
      });
      // Six addresses; the `platform` service of the bootstrap controller holds the first.
      const a = await small.request('POST', SVCS, { body: svc('a', 'NodePort') });
      expect([a.status, a.json.spec.ports[0].nodePort]).toEqual([201, 30100]);
      expect(a.json.spec.clusterIP).toMatch(/^10\.9\.0\.[2-6]$/);
      const noPort = await small.request('POST', SVCS, { body: svc('b', 'NodePort') });
      expect([noPort.status, causes(noPort.json)]).toEqual([422, ['FieldValueInvalid spec.ports[0].nodePort']]);
      expect(noPort.json.message).toContain('failed to allocate a port: range 30100-30100 is full');
      // The IP taken for the refused service was given back: four are still free.
      for (const name of ['c', 'd', 'e', 'f']) {
        expect((await small.request('POST', SVCS, { body: svc(name) })).status).toBe(201);
      }
      const full = await small.request('POST', SVCS, { body: svc('g') });
      expect([full.status, full.json.message]).toEqual([
        422,
        expect.stringContaining('failed to allocate an IP: range 10.9.0.0/29 is full'),
      ]);
    } finally {
      await small.stop();
    }
    expect(small.errors).toEqual([]);
  }, 60_000);
});
