/**
 * Document 1, "Metadata fields that the conventions refer to", and the object lifecycle around them: generateName,
 * uid, creationTimestamp, resourceVersion, generation (bumped by spec changes only), status subresources that change
 * only status, main resources that ignore status, 409 on a stale update. Runs on both stores.
 */
import { configMap, freshNamespace, mustCreate, STORES, useServer } from './harness';

const MERGE = { 'content-type': 'application/merge-patch+json' };

const deployment = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  },
});

describe.each(STORES)('object lifecycle on %s', (store) => {
  const server = useServer(store);
  let ns: string;
  let cms: string;
  let deployments: string;
  beforeAll(async () => {
    ns = await freshNamespace(server(), 'life');
    cms = `/api/v1/namespaces/${ns}/configmaps`;
    deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
  });

  describe('generateName', () => {
    it('gives a unique name from the prefix', async () => {
      const t = server();
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } };
      const [a, b] = [await mustCreate(t, cms, body), await mustCreate(t, cms, body)];
      expect(a.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
      expect(b.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
      expect(a.metadata.name).not.toBe(b.metadata.name);
      expect(a.metadata.generateName).toBe('gen-');
      expect((await t.request('GET', `${cms}/${a.metadata.name as string}`)).status).toBe(200);
    });

    it('is ignored when a name is given, and validated as a name prefix', async () => {
      const t = server();
      const named = await mustCreate(t, cms, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'given', generateName: 'gen-' },
      });
      expect(named.metadata.name).toBe('given');
      const bad = await t.request('POST', cms, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'Bad_' } },
      });
      expect([bad.status, bad.json.reason]).toEqual([422, 'Invalid']);
      expect(bad.json.details.causes).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'metadata.generateName' })]),
      );
    });
  });

  describe('system fields', () => {
    it('sets uid, creationTimestamp and resourceVersion on create, whatever the body says', async () => {
      const t = server();
      const created = await mustCreate(t, cms, {
        ...configMap('system'),
        metadata: { name: 'system', uid: 'mine', creationTimestamp: '2000-01-01T00:00:00Z' },
      });
      const m = created.metadata;
      expect(m.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(m.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(m.creationTimestamp).not.toBe('2000-01-01T00:00:00Z');
      expect(Math.abs(Date.parse(m.creationTimestamp) - Date.now())).toBeLessThan(10 * 60_000);
      expect(m.resourceVersion).toEqual(expect.any(String));
      const other = await mustCreate(t, cms, configMap('system-2'));
      expect(other.metadata.uid).not.toBe(m.uid);
    });

    it('keeps uid and creationTimestamp across updates, and gives each update a new resourceVersion', async () => {
      const t = server();
      const created = await mustCreate(t, cms, configMap('keeps'));
      const { uid: _uid, ...withoutUid } = created.metadata;
      const updated = await t.request('PUT', `${cms}/keeps`, {
        body: { ...created, metadata: withoutUid, data: { a: '2' } },
      });
      expect(updated.status).toBe(200);
      expect(updated.json.metadata).toMatchObject({
        uid: created.metadata.uid,
        creationTimestamp: created.metadata.creationTimestamp,
      });
      expect(updated.json.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
      const otherUid = await t.request('PUT', `${cms}/keeps`, {
        body: { ...updated.json, metadata: { ...updated.json.metadata, uid: 'another' } },
      });
      // The uid of a replacement is a precondition (Kubernetes): another object's uid is a conflict.
      expect([otherUid.status, otherUid.json.reason]).toEqual([409, 'Conflict']);
      expect(otherUid.json.message).toContain('Precondition failed: UID in precondition: another');
    });

    it('answers 400 when the name in the body is not the name in the path', async () => {
      const t = server();
      const created = await mustCreate(t, cms, configMap('path-name'));
      const r = await t.request('PUT', `${cms}/path-name`, {
        body: { ...created, metadata: { ...created.metadata, name: 'body-name' } },
      });
      expect([r.status, r.json.reason]).toEqual([400, 'BadRequest']);
      expect(r.json.message).toContain('does not match the name on the URL');
    });
  });

  describe('updates', () => {
    it('answer 409 for a stale resourceVersion, and apply unconditionally without one', async () => {
      const t = server();
      const created = await mustCreate(t, cms, configMap('stale'));
      const first = await t.request('PUT', `${cms}/stale`, { body: { ...created, data: { a: '2' } } });
      expect(first.status).toBe(200);
      const stale = await t.request('PUT', `${cms}/stale`, { body: { ...created, data: { a: '3' } } });
      expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
      expect(stale.json.message).toBe(
        'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
      );
      const { resourceVersion: _rv, ...noRv } = created.metadata;
      const unconditional = await t.request('PUT', `${cms}/stale`, {
        body: { ...created, metadata: noRv, data: { a: '4' } },
      });
      expect([unconditional.status, unconditional.json.data]).toEqual([200, { a: '4' }]);
    });

    it('of a missing object are 404, except for kinds that create on update', async () => {
      const t = server();
      const missing = await t.request('PUT', `${cms}/missing`, { body: configMap('missing') });
      expect(missing.status).toBe(404);
      const endpoints = await t.request('PUT', `/api/v1/namespaces/${ns}/endpoints/created-by-put`, {
        body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'created-by-put' } },
      });
      expect(endpoints.status).toBe(201);
    });

    it('that change nothing keep the resourceVersion', async () => {
      const t = server();
      const created = await mustCreate(t, cms, configMap('no-op'));
      const same = await t.request('PUT', `${cms}/no-op`, { body: created });
      expect([same.status, same.json.metadata.resourceVersion]).toEqual([200, created.metadata.resourceVersion]);
    });
  });

  describe('generation and status', () => {
    it('bumps generation on spec changes only', async () => {
      const t = server();
      const created = await mustCreate(t, deployments, deployment('gen'));
      expect(created.metadata.generation).toBe(1);
      const labels = await t.request('PATCH', `${deployments}/gen`, {
        body: { metadata: { labels: { x: 'y' } } },
        headers: MERGE,
      });
      expect(labels.json.metadata.generation).toBe(1);
      const spec = await t.request('PATCH', `${deployments}/gen`, { body: { spec: { replicas: 3 } }, headers: MERGE });
      expect(spec.json.metadata.generation).toBe(2);
      const again = await t.request('PATCH', `${deployments}/gen`, { body: { spec: { replicas: 4 } }, headers: MERGE });
      expect(again.json.metadata.generation).toBe(3);
    });

    it('ignores status on the main resource', async () => {
      const t = server();
      const created = await mustCreate(t, deployments, { ...deployment('main-status'), status: { replicas: 7 } });
      expect(created.status?.replicas).toBeUndefined();
      const put = await t.request('PUT', `${deployments}/main-status`, {
        body: { ...created, status: { replicas: 9, observedGeneration: 5 } },
      });
      expect(put.status).toBe(200);
      expect(put.json.status?.replicas).toBeUndefined();
      const patched = await t.request('PATCH', `${deployments}/main-status`, {
        body: { status: { replicas: 9 } },
        headers: MERGE,
      });
      expect(patched.json.status?.replicas).toBeUndefined();
    });

    it('changes only status through the status subresource, without a generation bump', async () => {
      const t = server();
      const created = await mustCreate(t, deployments, deployment('sub-status'));
      const put = await t.request('PUT', `${deployments}/sub-status/status`, {
        body: { ...created, spec: { ...created.spec, replicas: 5 }, status: { replicas: 1, observedGeneration: 1 } },
      });
      expect(put.status).toBe(200);
      expect(put.json.status).toMatchObject({ replicas: 1, observedGeneration: 1 });
      expect(put.json.spec.replicas).toBe(1);
      expect(put.json.metadata.generation).toBe(1);
      const patched = await t.request('PATCH', `${deployments}/sub-status/status`, {
        body: { spec: { replicas: 8 }, status: { readyReplicas: 1 } },
        headers: MERGE,
      });
      expect([patched.status, patched.json.spec.replicas, patched.json.status.readyReplicas]).toEqual([200, 1, 1]);
      const got = (await t.request('GET', `${deployments}/sub-status/status`)).json;
      expect([got.kind, got.spec.replicas, got.status.readyReplicas]).toEqual(['Deployment', 1, 1]);
      const stale = await t.request('PUT', `${deployments}/sub-status/status`, { body: created });
      expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    });

    it('validates status updates with field causes', async () => {
      const t = server();
      const created = await mustCreate(t, deployments, deployment('bad-status'));
      const r = await t.request('PUT', `${deployments}/bad-status/status`, {
        body: { ...created, status: { replicas: -1 } },
      });
      expect([r.status, r.json.reason]).toEqual([422, 'Invalid']);
      expect(r.json.details.causes).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'status.replicas' })]),
      );
    });
  });
});
