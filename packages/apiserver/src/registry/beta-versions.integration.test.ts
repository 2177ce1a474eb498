/**
 * autoscaling/v2beta1, authorization.platform/v1beta1 and admissionregistration.platform/v1beta1 on real API
 * servers over HTTPS (RBAC authorization, the webhook admission plugins, a webhook served on 127.0.0.1): objects
 * written in one version read in the others, defaults per version, Protobuf, Tables, discovery, OpenAPI, the
 * `.k8s.io` spelling, v1beta1 access reviews answering as v1's, a webhook registered through v1beta1 called, and
 * `--runtime-config` switching each version off.
 */
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';

import { generateSelfSignedCertKey } from '@platform/common';

import { DEFAULT_ADMISSION_SETTINGS } from '../admission/server-admission';
import { testSecurity } from '../testing/test-auth';
import { startTestServer, type TestResponse, type TestServer } from '../testing/test-server';

interface Review {
  apiVersion: string;
  request: { uid: string; name?: string; object?: { metadata?: { name?: string } } };
}

let server: TestServer;
let hook: Server;
let hookUrl: string;
let hookCa: string;
const calls: Review[] = [];

type As = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<TestResponse>;

function as(token: string): As {
  return (method, path, body, headers = {}) =>
    server.request(method, path, {
      headers: { authorization: `Bearer ${token}`, ...headers },
      ...(body === undefined ? {} : { body }),
    });
}

const admin = as('root|system:masters');

/** Retries `check` until it passes or the deadline (changes reach RBAC and admission through watches). */
async function eventually(check: () => Promise<void>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

beforeAll(async () => {
  const serving = await generateSelfSignedCertKey({ host: '127.0.0.1', alternateIPs: ['127.0.0.1'] });
  hookCa = serving.certPem;
  hook = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      calls.push(review);
      const name = review.request.object?.metadata?.name ?? '';
      const response = name.startsWith('refused')
        ? { uid: review.request.uid, allowed: false, status: { code: 403, message: 'the v1beta1 webhook says no' } }
        : { uid: review.request.uid, allowed: true };
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  server = await startTestServer((c) => {
    c.security = testSecurity();
    c.admission = {
      plugins: ['NamespaceLifecycle', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'],
      settings: DEFAULT_ADMISSION_SETTINGS,
    };
  });
  for (const name of ['team', 'hooked']) {
    const r = await admin('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { hooks: name === 'hooked' ? 'on' : 'off' } },
    });
    expect(r.status).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await server?.stop();
  hook?.closeAllConnections();
  await new Promise((resolve) => hook?.close(resolve));
});

describe('discovery, OpenAPI and the .k8s.io spelling', () => {
  it('lists the versions, preferred first, and their resources', async () => {
    const versions = async (group: string): Promise<string[]> =>
      (await admin('GET', `/apis/${group}`)).json.versions.map((v: { version: string }) => v.version);
    expect(await versions('autoscaling')).toEqual(['v1', 'v2beta1', 'v2beta2']);
    expect(await versions('authorization.platform')).toEqual(['v1', 'v1beta1']);
    expect(await versions('admissionregistration.platform')).toEqual(['v1', 'v1beta1']);
    const resources = async (gv: string): Promise<string[]> =>
      (await admin('GET', `/apis/${gv}`)).json.resources.map((r: { name: string }) => r.name).sort();
    expect(await resources('autoscaling/v2beta1')).toEqual([
      'horizontalpodautoscalers',
      'horizontalpodautoscalers/status',
    ]);
    expect(await resources('authorization.platform/v1beta1')).toEqual([
      'localsubjectaccessreviews',
      'selfsubjectaccessreviews',
      'selfsubjectrulesreviews',
      'subjectaccessreviews',
    ]);
    expect(await resources('admissionregistration.platform/v1beta1')).toEqual([
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
    ]);
  });

  it('describes the v1beta1 and v2beta1 types in /openapi/v2 (the v1beta1 spec field `group`)', async () => {
    const defs = (await admin('GET', '/openapi/v2')).json.definitions as Record<
      string,
      { properties?: Record<string, unknown>; required?: string[] }
    >;
    const def = (suffix: string): { properties?: Record<string, unknown>; required?: string[] } | undefined =>
      Object.entries(defs).find(([k]) => k.endsWith(suffix))?.[1];
    expect(Object.keys(def('autoscaling.v2beta1.ResourceMetricSource')?.properties ?? {})).toEqual(
      expect.arrayContaining(['name', 'targetAverageUtilization', 'targetAverageValue']),
    );
    expect(Object.keys(def('authorization.v1beta1.SubjectAccessReviewSpec')?.properties ?? {})).toContain('group');
    expect(def('admissionregistration.v1beta1.ValidatingWebhook')?.required).toEqual(['name', 'clientConfig']);
    expect(def('admissionregistration.v1.ValidatingWebhook')?.required).toContain('sideEffects');
  });

  it('answers the .k8s.io spelling of the v1beta1 groups in that spelling', async () => {
    const r = await admin('POST', '/apis/authorization.k8s.io/v1beta1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1beta1',
      kind: 'SubjectAccessReview',
      spec: { user: 'root', group: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'pods' } },
    });
    expect([r.status, r.json.apiVersion, r.json.status?.allowed]).toEqual([201, 'authorization.k8s.io/v1beta1', true]);
    const l = await admin('GET', '/apis/admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations');
    expect([l.status, l.json.apiVersion]).toEqual([200, 'admissionregistration.k8s.io/v1beta1']);
  });
});

describe('autoscaling/v2beta1 HorizontalPodAutoscaler', () => {
  const path = (version: string, name = ''): string =>
    `/apis/autoscaling/${version}/namespaces/team/horizontalpodautoscalers${name ? `/${name}` : ''}`;
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  const metrics = [
    { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '100' } },
    {
      type: 'Object',
      object: { target: { kind: 'Ingress', name: 'web' }, metricName: 'rps', targetValue: '2k', averageValue: '200' },
    },
    { type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 70 } },
  ];

  it('creates, gets and lists in v2beta1, stored as v1 with 1.21 annotations, and read in v2beta2', async () => {
    const created = await admin('POST', path('v2beta1'), {
      apiVersion: 'autoscaling/v2beta1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'beta1' },
      spec: { scaleTargetRef: target, minReplicas: 2, maxReplicas: 5, metrics },
    });
    expect([created.status, created.text]).toEqual([201, expect.any(String)]);
    expect(created.json.apiVersion).toBe('autoscaling/v2beta1');
    const got = await admin('GET', path('v2beta1', 'beta1'));
    expect(got.json.spec).toEqual({ scaleTargetRef: target, minReplicas: 2, maxReplicas: 5, metrics });
    expect(got.json.metadata.annotations).toBeUndefined();
    const list = await admin('GET', path('v2beta1'));
    expect(list.json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toContain('beta1');
    const v1 = await admin('GET', path('v1', 'beta1'));
    expect(v1.json.spec.targetCPUUtilizationPercentage).toBe(70);
    expect(JSON.parse(v1.json.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'])).toEqual(
      metrics.slice(0, 2),
    );
    const v2 = await admin('GET', path('v2beta2', 'beta1'));
    expect(v2.json.spec.metrics[1]).toEqual({
      type: 'Object',
      object: {
        describedObject: { kind: 'Ingress', name: 'web' },
        metric: { name: 'rps' },
        target: { type: 'AverageValue', value: '2k', averageValue: '200' },
      },
    });
  });

  it('reads every version in v2beta1 and keeps what v2beta1 cannot hold through its updates', async () => {
    await admin('POST', path('v1'), {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'plain' },
      spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 50 },
    });
    const plain = await admin('GET', path('v2beta1', 'plain'));
    expect(plain.json.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 50 } },
    ]);
    const behavior = {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [{ type: 'Pods', value: 2, periodSeconds: 30 }],
      },
      scaleDown: {
        stabilizationWindowSeconds: 300,
        selectPolicy: 'Min',
        policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }],
      },
    };
    const beta2 = await admin('POST', path('v2beta2'), {
      apiVersion: 'autoscaling/v2beta2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'beta2' },
      spec: { scaleTargetRef: target, maxReplicas: 4, behavior },
    });
    expect(beta2.status).toBe(201);
    const asBeta1 = await admin('GET', path('v2beta1', 'beta2'));
    expect(JSON.parse(asBeta1.json.metadata.annotations['autoscaling.alpha.kubernetes.io/behavior'])).toEqual(behavior);
    const updated = await admin('PUT', path('v2beta1', 'beta2'), {
      ...asBeta1.json,
      spec: { ...asBeta1.json.spec, maxReplicas: 6 },
    });
    expect(updated.status).toBe(200);
    const back = await admin('GET', path('v2beta2', 'beta2'));
    expect([back.json.spec.maxReplicas, back.json.spec.behavior, back.json.metadata.annotations]).toEqual([
      6,
      behavior,
      undefined,
    ]);
  });

  it('defaults as 1.21 does, and serves Tables and Protobuf', async () => {
    const r = await admin('POST', path('v2beta1'), {
      apiVersion: 'autoscaling/v2beta1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'defaults' },
      spec: { scaleTargetRef: target, maxReplicas: 3 },
    });
    expect([r.json.spec.minReplicas, r.json.spec.metrics]).toEqual([
      1,
      [{ type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 80 } }],
    ]);
    const table = await admin('GET', path('v2beta1'), undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    const row = table.json.rows.find((x: { cells: unknown[] }) => x.cells[0] === 'beta1');
    // kubectl's Targets: two metrics at most (the object's average target, as 1.21 prints it), then a count.
    expect(row.cells.slice(0, 3)).toEqual([
      'beta1',
      'Deployment/web',
      '<unknown>/100, <unknown>/200 (avg) + 1 more...',
    ]);
    const pb = await admin('GET', path('v2beta1', 'beta1'), undefined, { accept: 'application/vnd.platform.protobuf' });
    expect([pb.status, pb.headers['content-type'], pb.body.subarray(0, 4)]).toEqual([
      200,
      'application/vnd.platform.protobuf',
      Buffer.from('k8s\0'),
    ]);
    expect(pb.body.includes(Buffer.from('autoscaling/v2beta1'))).toBe(true);
  });
});

describe('authorization.platform/v1beta1 reviews answer as v1', () => {
  beforeAll(async () => {
    const rbac = '/apis/rbac.authorization.platform/v1beta1';
    const role = await admin('POST', `${rbac}/namespaces/team/roles`, {
      apiVersion: 'rbac.authorization.platform/v1beta1',
      kind: 'Role',
      metadata: { name: 'pod-reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    });
    expect(role.status).toBe(201);
    const binding = await admin('POST', `${rbac}/namespaces/team/rolebindings`, {
      apiVersion: 'rbac.authorization.platform/v1beta1',
      kind: 'RoleBinding',
      metadata: { name: 'dev-reads' },
      roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.platform', name: 'dev' }],
    });
    expect(binding.status).toBe(201);
  });

  /** The status of the same question asked as a v1 and a v1beta1 SubjectAccessReview. */
  async function both(subject: { user?: string; groups?: string[] }, verb: string): Promise<unknown[]> {
    const attrs = { namespace: 'team', verb, resource: 'pods' };
    const v1 = await admin('POST', '/apis/authorization.platform/v1/subjectaccessreviews', {
      apiVersion: 'authorization.platform/v1',
      kind: 'SubjectAccessReview',
      spec: { ...subject, resourceAttributes: attrs },
    });
    const { groups, ...rest } = subject;
    const beta = await admin('POST', '/apis/authorization.platform/v1beta1/subjectaccessreviews', {
      apiVersion: 'authorization.platform/v1beta1',
      kind: 'SubjectAccessReview',
      spec: { ...rest, ...(groups ? { group: groups } : {}), resourceAttributes: attrs },
    });
    expect([v1.status, beta.status, beta.json.apiVersion]).toEqual([201, 201, 'authorization.platform/v1beta1']);
    expect(beta.json.spec.group).toEqual(groups);
    expect(beta.json.spec.groups).toBeUndefined();
    return [v1.json.status, beta.json.status];
  }

  it('SubjectAccessReview: allowed and denied exactly as v1 (the v1beta1 `group` field is read)', async () => {
    await eventually(async () => {
      const [v1, beta] = await both({ user: 'dana', groups: ['dev'] }, 'list');
      expect(v1).toEqual({ allowed: true, reason: expect.stringContaining('dev-reads') });
      expect(beta).toEqual(v1);
    });
    const [v1, beta] = await both({ user: 'dana', groups: ['dev'] }, 'delete');
    expect((v1 as { allowed: boolean }).allowed).toBe(false);
    expect(beta).toEqual(v1);
    const [v1Nobody, betaNobody] = await both({ user: 'nobody' }, 'list');
    expect([(v1Nobody as { allowed: boolean }).allowed, betaNobody]).toEqual([false, v1Nobody]);
    const invalid = await admin('POST', '/apis/authorization.platform/v1beta1/subjectaccessreviews', {
      apiVersion: 'authorization.platform/v1beta1',
      kind: 'SubjectAccessReview',
      spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    });
    expect([invalid.status, invalid.json.details.causes[0].message]).toEqual([
      422,
      expect.stringContaining('at least one of user or group must be specified'),
    ]);
  });

  it('LocalSubjectAccessReview, SelfSubjectAccessReview and SelfSubjectRulesReview', async () => {
    const local = await admin(
      'POST',
      '/apis/authorization.platform/v1beta1/namespaces/team/localsubjectaccessreviews',
      {
        apiVersion: 'authorization.platform/v1beta1',
        kind: 'LocalSubjectAccessReview',
        spec: {
          user: 'erin',
          group: ['dev'],
          resourceAttributes: { namespace: 'team', verb: 'get', resource: 'pods' },
        },
      },
    );
    expect([local.status, local.json.status.allowed]).toEqual([201, true]);
    const dev = as('erin|dev');
    const self = await dev('POST', '/apis/authorization.platform/v1beta1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.platform/v1beta1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'team', verb: 'get', resource: 'pods' } },
    });
    expect([self.status, self.json.apiVersion, self.json.status.allowed]).toEqual([
      201,
      'authorization.platform/v1beta1',
      true,
    ]);
    const rules = await dev('POST', '/apis/authorization.platform/v1beta1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.platform/v1beta1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'team' },
    });
    expect(rules.status).toBe(201);
    expect(rules.json.status.resourceRules).toContainEqual({
      verbs: ['get', 'list'],
      apiGroups: [''],
      resources: ['pods'],
    });
  });
});

describe('admissionregistration.platform/v1beta1 webhook configurations', () => {
  const path = (version: string, kind: string, name = ''): string =>
    `/apis/admissionregistration.platform/${version}/${kind}webhookconfigurations${name ? `/${name}` : ''}`;
  const hookOf = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    name,
    clientConfig: { url: `${hookUrl}/check`, caBundle: Buffer.from(hookCa).toString('base64') },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    namespaceSelector: { matchLabels: { hooks: 'on' } },
    ...extra,
  });

  it("defaults in v1beta1 as 1.21 does, and reads back in v1 (and v1's objects in v1beta1)", async () => {
    const created = await admin('POST', path('v1beta1', 'validating'), {
      apiVersion: 'admissionregistration.platform/v1beta1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'beta-defaults' },
      webhooks: [{ name: 'a.example.com', clientConfig: { service: { namespace: 'x', name: 'y' } } }],
    });
    expect(created.status).toBe(201);
    const want = {
      name: 'a.example.com',
      clientConfig: { service: { namespace: 'x', name: 'y', port: 443 } },
      failurePolicy: 'Ignore',
      matchPolicy: 'Exact',
      namespaceSelector: {},
      objectSelector: {},
      sideEffects: 'Unknown',
      timeoutSeconds: 30,
      admissionReviewVersions: ['v1beta1'],
    };
    expect(created.json.webhooks).toEqual([want]);
    const v1 = await admin('GET', path('v1', 'validating', 'beta-defaults'));
    expect([v1.json.apiVersion, v1.json.webhooks]).toEqual(['admissionregistration.platform/v1', [want]]);
    const list = await admin('GET', path('v1', 'validating'));
    expect(list.json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toContain('beta-defaults');
    // A v1 client may update what a v1beta1 client wrote (sideEffects Unknown): 1.21 checks only new breakage.
    const relabelled = await admin('PUT', path('v1', 'validating', 'beta-defaults'), {
      ...v1.json,
      metadata: { ...v1.json.metadata, labels: { a: 'b' } },
    });
    expect(relabelled.status).toBe(200);

    const mutating = await admin('POST', path('v1', 'mutating'), {
      apiVersion: 'admissionregistration.platform/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'ga-defaults' },
      webhooks: [
        {
          name: 'b.example.com',
          clientConfig: { url: 'https://hooks.example.com/m' },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    expect(mutating.status).toBe(201);
    const beta = await admin('GET', path('v1beta1', 'mutating', 'ga-defaults'));
    expect(beta.json.apiVersion).toBe('admissionregistration.platform/v1beta1');
    expect(beta.json.webhooks[0]).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      timeoutSeconds: 10,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      reinvocationPolicy: 'Never',
    });
    const betaList = await admin('GET', path('v1beta1', 'mutating'));
    expect(betaList.json.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toContain('ga-defaults');
  });

  it('validates as 1.21: v1beta1 allows every side-effect class and repeated names, v1 does not', async () => {
    const body = (version: string, name: string): Record<string, unknown> => ({
      apiVersion: `admissionregistration.platform/${version}`,
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        hookOf('dup.example.com', { sideEffects: 'Some', admissionReviewVersions: ['v1beta1'] }),
        hookOf('dup.example.com', { sideEffects: 'None', admissionReviewVersions: ['v1beta1'] }),
      ],
    });
    const beta = await admin('POST', path('v1beta1', 'validating'), body('v1beta1', 'lax'));
    expect(beta.status).toBe(201);
    await admin('DELETE', path('v1beta1', 'validating', 'lax'));
    const ga = await admin('POST', path('v1', 'validating'), body('v1', 'strict'));
    expect(ga.status).toBe(422);
    expect(ga.json.details.causes.map((c: { field: string; reason: string }) => `${c.reason} ${c.field}`)).toEqual([
      'FieldValueNotSupported webhooks[0].sideEffects',
      'FieldValueDuplicate webhooks[1].name',
    ]);
    const noVersion = await admin('POST', path('v1beta1', 'validating'), {
      ...body('v1beta1', 'bad-version'),
      webhooks: [hookOf('v.example.com', { admissionReviewVersions: ['v2'] })],
    });
    expect([noVersion.status, noVersion.json.details?.causes?.[0]?.field]).toEqual([
      422,
      'webhooks[0].admissionReviewVersions',
    ]);
  });

  it('calls a webhook registered through v1beta1 (AdmissionReview v1beta1) and obeys it', async () => {
    const created = await admin('POST', path('v1beta1', 'validating'), {
      apiVersion: 'admissionregistration.platform/v1beta1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'called' },
      webhooks: [hookOf('called.example.com', { failurePolicy: 'Fail' })],
    });
    expect(created.status).toBe(201);
    const cm = (name: string, query = ''): Promise<TestResponse> =>
      admin('POST', `/api/v1/namespaces/hooked/configmaps${query}`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
      });
    // Admission reads configurations from the watch cache: wait until the webhook refuses.
    await eventually(async () => {
      const r = await cm(`refused-${Date.now()}`);
      expect([r.status, r.json.message]).toEqual([403, expect.stringContaining('the v1beta1 webhook says no')]);
    });
    expect((await cm('accepted')).status).toBe(201);
    const mine = calls.filter((c) => c.request.object?.metadata?.name === 'accepted');
    expect(mine.map((c) => c.apiVersion)).toEqual([expect.stringMatching(/^admission\.[a-z.]+\/v1beta1$/)]);
    // sideEffects Unknown (v1beta1's default): a dry run cannot call it.
    const dry = await cm('dry', '?dryRun=All');
    expect([dry.status, dry.json.message]).toEqual([400, expect.stringContaining('does not support dry run')]);
    await admin('DELETE', path('v1beta1', 'validating', 'called'));
  });
});

describe('--runtime-config', () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startTestServer((c) => {
      c.runtimeConfig = new Map([
        ['autoscaling/v2beta1', 'false'],
        ['authorization.platform/v1beta1', 'false'],
        ['admissionregistration.platform/v1beta1', 'false'],
      ]);
    });
  }, 180_000);
  afterAll(async () => {
    await off?.stop();
  });

  it('switches each version off (404) and leaves the others served', async () => {
    for (const p of [
      '/apis/autoscaling/v2beta1',
      '/apis/autoscaling/v2beta1/namespaces/default/horizontalpodautoscalers',
      '/apis/authorization.platform/v1beta1',
      '/apis/admissionregistration.platform/v1beta1',
      '/apis/admissionregistration.platform/v1beta1/validatingwebhookconfigurations',
    ]) {
      expect([p, (await off.request('GET', p)).status]).toEqual([p, 404]);
    }
    const review = await off.request('POST', '/apis/authorization.platform/v1beta1/selfsubjectaccessreviews', {
      body: {
        apiVersion: 'authorization.platform/v1beta1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
      },
    });
    expect(review.status).toBe(404);
    for (const p of [
      '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers',
      '/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers',
      '/apis/admissionregistration.platform/v1/validatingwebhookconfigurations',
    ]) {
      expect([p, (await off.request('GET', p)).status]).toEqual([p, 200]);
    }
    const groups = (await off.request('GET', '/apis')).json.groups as {
      name: string;
      versions: { version: string }[];
    }[];
    const versions = (name: string): string[] | undefined =>
      groups.find((g) => g.name === name)?.versions.map((v) => v.version);
    expect(versions('autoscaling')).toEqual(['v1', 'v2beta2']);
    expect(versions('authorization.platform')).toEqual(['v1']);
    expect(versions('admissionregistration.platform')).toEqual(['v1']);
  });
});
