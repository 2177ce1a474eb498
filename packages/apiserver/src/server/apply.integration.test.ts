/**
 * Server-side apply and managed fields over real HTTP: apply creates and updates, conflicts and force, managers
 * sharing fields, removal of fields dropped from a configuration, managed fields of every write, dry-run, and the
 * ServerSideApply gate.
 */
import { startTestServer, type TestResponse, type TestServer } from '../testing/test-server';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
}, 60_000);

afterAll(async () => {
  await t.stop();
  expect(t.errors).toEqual([]);
});

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const CM = '/api/v1/namespaces/default/configmaps';
const APPLY = 'application/apply-patch+yaml';

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  apiVersion: string;
  time?: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
}

function deployment(name: string, replicas: number, image = 'nginx:1.19'): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'nginx', image }] },
      },
    },
  };
}

function apply(path: string, body: unknown, query: string): Promise<TestResponse> {
  return t.request('PATCH', `${path}?${query}`, {
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': APPLY },
  });
}

function managers(obj: { metadata: { managedFields?: ManagedFieldsEntry[] } }): [string, string][] {
  return (obj.metadata.managedFields ?? []).map((e) => [e.manager, e.operation]);
}

function entry(
  obj: { metadata: { managedFields?: ManagedFieldsEntry[] } },
  manager: string,
  operation = 'Apply',
): ManagedFieldsEntry | undefined {
  return obj.metadata.managedFields?.find((e) => e.manager === manager && e.operation === operation);
}

describe('server-side apply', () => {
  it('creates a missing object (201) and records an Apply entry with the applied fields', async () => {
    const r = await apply(`${DEPLOYMENTS}/web`, deployment('web', 2), 'fieldManager=deployer');
    expect(r.status).toBe(201);
    expect(r.json.spec.replicas).toBe(2);
    // Defaults are applied to what apply created.
    expect(r.json.spec.strategy.type).toBe('RollingUpdate');
    const e = entry(r.json, 'deployer');
    expect(e).toMatchObject({ operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1' });
    expect(e?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(e?.fieldsV1).toEqual({
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    });
    const got = await t.request('GET', `${DEPLOYMENTS}/web`);
    expect(got.json.metadata.managedFields).toEqual(r.json.metadata.managedFields);
  });

  it('updates with a YAML configuration (200) and keeps what it does not mention', async () => {
    const yaml = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: web',
      '  labels:',
      '    app: web',
      'spec:',
      '  replicas: 2',
      '  selector:',
      '    matchLabels:',
      '      app: web',
      '  template:',
      '    metadata:',
      '      labels:',
      '        app: web',
      '    spec:',
      '      containers:',
      '      - name: nginx',
      '        image: nginx:1.20',
      '',
    ].join('\n');
    const r = await apply(`${DEPLOYMENTS}/web`, yaml, 'fieldManager=deployer');
    expect(r.status).toBe(200);
    expect(r.json.spec.template.spec.containers[0].image).toBe('nginx:1.20');
    expect(r.json.spec.strategy.type).toBe('RollingUpdate');
    expect(r.json.metadata.generation).toBe(2);
  });

  it('answers a conflicting apply with 409 FieldManagerConflict causes; force takes the field over', async () => {
    const scaled = await t.request('PATCH', `${DEPLOYMENTS}/web?fieldManager=scaler`, {
      body: { spec: { replicas: 5 } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(scaled.status).toBe(200);
    expect(entry(scaled.json, 'scaler', 'Update')?.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });

    const r = await apply(`${DEPLOYMENTS}/web`, deployment('web', 3, 'nginx:1.20'), 'fieldManager=deployer');
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      code: 409,
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas',
      details: {
        causes: [
          { type: 'FieldManagerConflict', message: 'conflict with "scaler" using apps/v1', field: '.spec.replicas' },
        ],
      },
    });
    expect((await t.request('GET', `${DEPLOYMENTS}/web`)).json.spec.replicas).toBe(5);

    const forced = await apply(
      `${DEPLOYMENTS}/web`,
      deployment('web', 3, 'nginx:1.20'),
      'fieldManager=deployer&force=true',
    );
    expect(forced.status).toBe(200);
    expect(forced.json.spec.replicas).toBe(3);
    expect(managers(forced.json)).not.toContainEqual(['scaler', 'Update']);
  });

  it('lets two managers share a field applied with the same value', async () => {
    const name = 'shared';
    const cm = (data: Record<string, string>): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data,
    });
    expect((await apply(`${CM}/${name}`, cm({ a: '1', b: '2' }), 'fieldManager=one')).status).toBe(201);
    const two = await apply(`${CM}/${name}`, cm({ a: '1' }), 'fieldManager=two');
    expect(two.status).toBe(200);
    expect(entry(two.json, 'one')?.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    expect(entry(two.json, 'two')?.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    // "one" drops both keys: b goes (nobody else owns it), a stays (two still applies it).
    const dropped = await apply(`${CM}/${name}`, cm({}), 'fieldManager=one');
    expect(dropped.status).toBe(200);
    expect(dropped.json.data).toEqual({ a: '1' });
    // A different value for the shared field conflicts with the other applier.
    const conflict = await apply(`${CM}/${name}`, cm({ a: '2' }), 'fieldManager=one');
    expect(conflict.status).toBe(409);
    expect(conflict.json.details.causes).toEqual([
      { type: 'FieldManagerConflict', message: 'conflict with "two"', field: '.data.a' },
    ]);
  });

  it('removes fields dropped from the configuration, list elements included', async () => {
    const two = deployment('drop', 1);
    (two.spec as { template: { spec: { containers: unknown[] } } }).template.spec.containers.push({
      name: 'sidecar',
      image: 'busybox',
    });
    (two.metadata as { labels: Record<string, string> }).labels.extra = 'yes';
    expect((await apply(`${DEPLOYMENTS}/drop`, two, 'fieldManager=deployer')).status).toBe(201);
    const r = await apply(`${DEPLOYMENTS}/drop`, deployment('drop', 1), 'fieldManager=deployer');
    expect(r.status).toBe(200);
    expect(r.json.metadata.labels).toEqual({ app: 'drop' });
    expect((r.json.spec.template.spec.containers as { name: string }[]).map((c) => c.name)).toEqual(['nginx']);
  });

  it('creates cluster-scoped objects too', async () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'applied', labels: { team: 'a' } } };
    const r = await apply('/api/v1/namespaces/applied', ns, 'fieldManager=admin');
    expect([r.status, r.json.metadata.labels]).toEqual([201, { team: 'a' }]);
    expect(entry(r.json, 'admin')?.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:team': {} } } });
    const again = await apply('/api/v1/namespaces/applied', ns, 'fieldManager=admin');
    expect([again.status, again.json.metadata.resourceVersion]).toEqual([200, r.json.metadata.resourceVersion]);
  });

  it('does not persist a dry-run apply', async () => {
    const created = await apply(
      `${CM}/dry`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' }, data: { a: '0' } },
      'fieldManager=m&dryRun=All',
    );
    expect(created.status).toBe(201);
    expect(entry(created.json, 'm')).toBeDefined();
    expect((await t.request('GET', `${CM}/dry`)).status).toBe(404);

    expect(
      (
        await apply(
          `${CM}/dry`,
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' }, data: { a: '1' } },
          'fieldManager=m',
        )
      ).status,
    ).toBe(201);
    const changed = await apply(
      `${CM}/dry`,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' }, data: { a: '2' } },
      'fieldManager=m&dryRun=All',
    );
    expect(changed.status).toBe(200);
    expect(changed.json.data).toEqual({ a: '2' });
    expect((await t.request('GET', `${CM}/dry`)).json.data).toEqual({ a: '1' });
  });

  it('checks the options and the configuration', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'opts' } };
    const noManager = await apply(`${CM}/opts`, cm, '');
    expect([noManager.status, noManager.json.reason]).toEqual([422, 'Invalid']);
    expect(noManager.json.details.causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' },
    ]);
    const forceOnMerge = await t.request('PATCH', `${CM}/opts?force=true`, {
      body: { data: {} },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect([forceOnMerge.status, forceOnMerge.json.reason]).toEqual([422, 'Invalid']);
    expect(forceOnMerge.json.details.causes[0]).toMatchObject({ reason: 'FieldValueForbidden', field: 'force' });
    const badForce = await apply(`${CM}/opts`, cm, 'fieldManager=m&force=maybe');
    expect(badForce.status).toBe(400);
    const badYaml = await apply(`${CM}/opts`, 'a: [', 'fieldManager=m');
    expect([badYaml.status, badYaml.json.reason]).toEqual([400, 'BadRequest']);
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      );
    const bomb = await apply(`${CM}/opts`, `${levels.join('\n')}\n`, 'fieldManager=m');
    expect([bomb.status, bomb.json.message]).toEqual([
      400,
      'error decoding YAML: the document expands to too many values (excessive aliasing)',
    ]);
    const wrongVersion = await apply(`${CM}/opts`, { ...cm, apiVersion: 'v2' }, 'fieldManager=m');
    expect(wrongVersion.status).toBe(400);
    expect(wrongVersion.json.message).toBe(
      'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1',
    );
    const unknownField = await apply(`${CM}/opts`, { ...cm, bogus: 1 }, 'fieldManager=m');
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.message).toContain('.bogus: field not declared in schema');
    const withManagedFields = await apply(
      `${CM}/opts`,
      { ...cm, metadata: { name: 'opts', managedFields: [] } },
      'fieldManager=m',
    );
    expect(withManagedFields.status).toBe(400);
    const wrongName = await apply(`${CM}/opts`, { ...cm, metadata: { name: 'other' } }, 'fieldManager=m');
    expect(wrongName.status).toBe(400);
    expect((await t.request('GET', `${CM}/opts`)).status).toBe(404);
  });
});

describe('managed fields of other writes', () => {
  it('records an Update entry for create, update and patch, by fieldManager or User-Agent', async () => {
    const created = await t.request('POST', `${CM}?fieldManager=kubectl-create`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tracked' }, data: { a: '1' } },
    });
    expect(created.status).toBe(201);
    expect(created.json.metadata.managedFields).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: expect.stringMatching(/Z$/),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
      },
    ]);

    const put = await t.request('PUT', `${CM}/tracked`, {
      body: { ...created.json, data: { a: '1', b: '2' } },
      headers: { 'user-agent': 'kubectl/v1.20.15 (linux/amd64) kubernetes/8f1e5bf' },
    });
    expect(put.status).toBe(200);
    expect(entry(put.json, 'kubectl', 'Update')?.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });
    expect(entry(put.json, 'kubectl-create', 'Update')?.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });

    for (const [type, body] of [
      ['application/json-patch+json', [{ op: 'add', path: '/data/c', value: '3' }]],
      ['application/merge-patch+json', { data: { a: 'changed' } }],
      ['application/strategic-merge-patch+json', { metadata: { labels: { l: 'v' } } }],
    ] as const) {
      const r = await t.request('PATCH', `${CM}/tracked?fieldManager=patcher`, {
        body,
        headers: { 'content-type': type },
      });
      expect(r.status).toBe(200);
    }
    const got = (await t.request('GET', `${CM}/tracked`)).json;
    expect(entry(got, 'patcher', 'Update')?.fieldsV1).toEqual({
      'f:data': { 'f:a': {}, 'f:c': {} },
      'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } },
    });
    // "a" moved to the patcher.
    expect(entry(got, 'kubectl-create', 'Update')?.fieldsV1).toEqual({ 'f:data': {} });
  });

  it('records status writes through the status subresource, and applies to it', async () => {
    expect(
      (await apply(`${DEPLOYMENTS}/status-writes`, deployment('status-writes', 1), 'fieldManager=deployer')).status,
    ).toBe(201);
    const current = (await t.request('GET', `${DEPLOYMENTS}/status-writes`)).json;
    const put = await t.request('PUT', `${DEPLOYMENTS}/status-writes/status?fieldManager=controller`, {
      body: { ...current, status: { replicas: 1, observedGeneration: 1 } },
    });
    expect(put.status).toBe(200);
    expect(entry(put.json, 'controller', 'Update')?.fieldsV1).toEqual({
      'f:status': { 'f:observedGeneration': {}, 'f:replicas': {} },
    });
    expect(entry(put.json, 'deployer')).toBeDefined();
    const applied = await apply(
      `${DEPLOYMENTS}/status-writes/status`,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'status-writes' }, status: { readyReplicas: 1 } },
      'fieldManager=status-applier',
    );
    expect(applied.status).toBe(200);
    expect(applied.json.status).toMatchObject({ replicas: 1, readyReplicas: 1 });
    expect(entry(applied.json, 'status-applier')?.fieldsV1).toEqual({ 'f:status': { 'f:readyReplicas': {} } });
    expect(applied.json.spec.replicas).toBe(1);
  });

  it('moves the ownership of replicas through the scale subresource', async () => {
    expect((await apply(`${DEPLOYMENTS}/scaled`, deployment('scaled', 1), 'fieldManager=deployer')).status).toBe(201);
    const scale = (await t.request('GET', `${DEPLOYMENTS}/scaled/scale`)).json;
    const put = await t.request('PUT', `${DEPLOYMENTS}/scaled/scale?fieldManager=autoscaler`, {
      body: { ...scale, spec: { replicas: 4 } },
    });
    expect([put.status, put.json.spec.replicas]).toEqual([200, 4]);
    const after = (await t.request('GET', `${DEPLOYMENTS}/scaled`)).json;
    expect(entry(after, 'autoscaler', 'Update')).toMatchObject({
      apiVersion: 'apps/v1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
    });
    expect(entry(after, 'deployer')?.fieldsV1).not.toHaveProperty(['f:spec', 'f:replicas']);
    // The deployer applying another replica count now conflicts with the autoscaler.
    const conflict = await apply(`${DEPLOYMENTS}/scaled`, deployment('scaled', 2), 'fieldManager=deployer');
    expect(conflict.status).toBe(409);
    expect(conflict.json.details.causes).toEqual([
      { type: 'FieldManagerConflict', message: 'conflict with "autoscaler" using apps/v1', field: '.spec.replicas' },
    ]);
    // Apply to the scale subresource itself, forcing the field back.
    const applied = await apply(
      `${DEPLOYMENTS}/scaled/scale`,
      { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled' }, spec: { replicas: 6 } },
      'fieldManager=scale-applier&force=true',
    );
    expect([applied.status, applied.json.spec.replicas]).toEqual([200, 6]);
    const last = (await t.request('GET', `${DEPLOYMENTS}/scaled`)).json;
    expect(managers(last)).toContainEqual(['scale-applier', 'Apply']);
    expect(entry(last, 'autoscaler', 'Update')).toBeUndefined();
  });

  it('does not change managed fields of a write that changes nothing', async () => {
    const before = (await t.request('GET', `${CM}/tracked`)).json;
    const r = await t.request('PUT', `${CM}/tracked?fieldManager=noop`, { body: before });
    expect(r.status).toBe(200);
    expect(r.json.metadata.managedFields).toEqual(before.metadata.managedFields);
    expect(r.json.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('clears managed fields on [{}] and replaces unreadable ones by the stored ones', async () => {
    const before = (await t.request('GET', `${CM}/tracked`)).json;
    const invalid = await t.request('PUT', `${CM}/tracked`, {
      body: {
        ...before,
        metadata: { ...before.metadata, managedFields: [{ manager: 'x', operation: 'Bogus', fieldsType: 'FieldsV9' }] },
      },
    });
    expect(invalid.status).toBe(200);
    expect(invalid.json.metadata.managedFields).toEqual(before.metadata.managedFields);

    const reset = await t.request('PUT', `${CM}/tracked`, {
      body: { ...before, metadata: { ...before.metadata, managedFields: [{}] } },
    });
    expect(reset.status).toBe(200);
    expect(reset.json.metadata.managedFields).toBeUndefined();
    expect((await t.request('GET', `${CM}/tracked`)).json.metadata.managedFields).toBeUndefined();

    // The same through a patch, after a write has recorded a manager again.
    const relabeled = await t.request('PATCH', `${CM}/tracked?fieldManager=labeler`, {
      body: { metadata: { labels: { again: 'yes' } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(managers(relabeled.json)).toEqual([['labeler', 'Update']]);
    const cleared = await t.request('PATCH', `${CM}/tracked`, {
      body: { metadata: { managedFields: [{}] } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.json.metadata.managedFields).toBeUndefined();
  });
});

describe('the ServerSideApply gate off', () => {
  let off: TestServer;

  beforeAll(async () => {
    off = await startTestServer((c) => {
      c.serverSideApply = false;
    });
  }, 60_000);

  afterAll(async () => {
    await off.stop();
    expect(off.errors).toEqual([]);
  });

  it('answers apply with 415 naming the served patch types and tracks no managed fields', async () => {
    const r = await off.request('PATCH', `${CM}/x?fieldManager=m`, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
      headers: { 'content-type': APPLY },
    });
    expect([r.status, r.json.reason]).toEqual([415, 'UnsupportedMediaType']);
    expect(r.json.message).toMatch(
      /accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/strategic-merge-patch\+json \(got/,
    );

    const created = await off.request('POST', `${CM}?fieldManager=m`, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'x',
          managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }],
        },
        data: { a: '1' },
      },
    });
    expect(created.status).toBe(201);
    expect(created.json.metadata.managedFields).toBeUndefined();
  });
});
