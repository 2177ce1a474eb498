/**
 * Document 1, "States and transitions" (two-phase deletion) and the delete operation's options: deletionTimestamp,
 * removal when the last finalizer goes, propagationPolicy recorded as the orphan / foregroundDeletion finalizers,
 * preconditions, gracePeriodSeconds. Runs on both stores.
 *
 * A delete that leaves the object in place answers 200, as Kubernetes does, except 202 when the client asked for
 * cascading deletion with `orphanDependents: false` (Document 1's delete lists both codes).
 */
import { configMap, describeEvents, freshNamespace, mustCreate, openWatch, STORES, useServer } from './harness';

const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };

describe.each(STORES)('finalizers and deletion on %s', (store) => {
  const server = useServer(store);
  let ns: string;
  let cms: string;
  beforeAll(async () => {
    ns = await freshNamespace(server(), 'fin');
    cms = `/api/v1/namespaces/${ns}/configmaps`;
  });

  const withFinalizers = (name: string, finalizers: string[]) => ({
    ...configMap(name),
    metadata: { name, finalizers },
  });

  it('answers 202 to a delete with orphanDependents=false that leaves the object terminating', async () => {
    const t = server();
    await mustCreate(t, cms, withFinalizers('cascade', ['example.com/a']));
    const r = await t.request('DELETE', `${cms}/cascade`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: false },
    });
    expect([r.status, r.json.metadata.deletionTimestamp]).toEqual([202, expect.any(String)]);
    await t.request('PATCH', `${cms}/cascade`, { body: { metadata: { finalizers: null } }, headers: MERGE });
  });

  it('a delete sets deletionTimestamp and keeps the object until the last finalizer is removed', async () => {
    const t = server();
    const created = await mustCreate(t, cms, withFinalizers('two', ['example.com/a', 'example.com/b']));
    const watch = await openWatch(t, `${cms}?watch=1&resourceVersion=${created.metadata.resourceVersion as string}`);
    try {
      const del = await t.request('DELETE', `${cms}/two`);
      expect(del.status).toBe(200);
      expect(del.json.metadata).toMatchObject({
        deletionTimestamp: expect.any(String),
        deletionGracePeriodSeconds: 0,
        finalizers: ['example.com/a', 'example.com/b'],
      });
      const terminating = (await t.request('GET', `${cms}/two`)).json;
      expect(terminating.metadata.deletionTimestamp).toBe(del.json.metadata.deletionTimestamp);

      // Deleting again changes nothing.
      const again = await t.request('DELETE', `${cms}/two`);
      expect(again.json.metadata.deletionTimestamp).toBe(del.json.metadata.deletionTimestamp);

      // Finalizers go in any order; new ones may not be added now.
      const added = await t.request('PATCH', `${cms}/two`, {
        body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/c' }],
        headers: JSON_PATCH,
      });
      expect([added.status, added.json.reason]).toEqual([422, 'Invalid']);
      expect(added.json.message).toContain('no new finalizers can be added if the object is being deleted');
      const oneLeft = await t.request('PATCH', `${cms}/two`, {
        body: [{ op: 'remove', path: '/metadata/finalizers/1' }],
        headers: JSON_PATCH,
      });
      expect([oneLeft.status, oneLeft.json.metadata.finalizers]).toEqual([200, ['example.com/a']]);
      expect((await t.request('GET', `${cms}/two`)).status).toBe(200);

      const last = await t.request('PATCH', `${cms}/two`, { body: { metadata: { finalizers: null } }, headers: MERGE });
      expect(last.status).toBe(200);
      expect((await t.request('GET', `${cms}/two`)).status).toBe(404);
      await watch.waitUntil((e) => e.type === 'DELETED');
      expect(describeEvents(watch.events)).toEqual(['MODIFIED two', 'MODIFIED two', 'MODIFIED two', 'DELETED two']);
    } finally {
      watch.close();
    }
  });

  it('an update that removes the last finalizer by PUT removes the object', async () => {
    const t = server();
    await mustCreate(t, cms, withFinalizers('by-put', ['example.com/a']));
    const del = (await t.request('DELETE', `${cms}/by-put`)).json;
    const put = await t.request('PUT', `${cms}/by-put`, {
      body: { ...del, metadata: { ...del.metadata, finalizers: [] } },
    });
    expect(put.status).toBe(200);
    expect((await t.request('GET', `${cms}/by-put`)).status).toBe(404);
  });

  describe('propagationPolicy', () => {
    it.each([
      ['Orphan', ['orphan']],
      ['Foreground', ['foregroundDeletion']],
    ])('%s is recorded as a finalizer for the garbage collector', async (policy, finalizers) => {
      const t = server();
      const name = `policy-${policy.toLowerCase()}`;
      await mustCreate(t, cms, configMap(name));
      const r = await t.request('DELETE', `${cms}/${name}?propagationPolicy=${policy}`);
      expect(r.status).toBe(200);
      const got = (await t.request('GET', `${cms}/${name}`)).json;
      expect(got.metadata).toMatchObject({ deletionTimestamp: expect.any(String), finalizers });
      await t.request('PATCH', `${cms}/${name}`, { body: { metadata: { finalizers: null } }, headers: MERGE });
      expect((await t.request('GET', `${cms}/${name}`)).status).toBe(404);
    });

    it('is read from the DeleteOptions body too', async () => {
      const t = server();
      await mustCreate(t, cms, configMap('policy-body'));
      await t.request('DELETE', `${cms}/policy-body`, {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground' },
      });
      expect((await t.request('GET', `${cms}/policy-body`)).json.metadata.finalizers).toEqual(['foregroundDeletion']);
      await t.request('PATCH', `${cms}/policy-body`, { body: { metadata: { finalizers: null } }, headers: MERGE });
    });

    it('Background deletes at once', async () => {
      const t = server();
      await mustCreate(t, cms, configMap('policy-background'));
      const r = await t.request('DELETE', `${cms}/policy-background?propagationPolicy=Background`);
      expect(r.status).toBe(200);
      expect((await t.request('GET', `${cms}/policy-background`)).status).toBe(404);
    });

    it('anything else is 422', async () => {
      const t = server();
      await mustCreate(t, cms, configMap('policy-bad'));
      const r = await t.request('DELETE', `${cms}/policy-bad?propagationPolicy=Sideways`);
      expect([r.status, r.json.reason]).toEqual([422, 'Invalid']);
      expect(r.json.message).toContain('"Sideways"');
      expect((await t.request('GET', `${cms}/policy-bad`)).status).toBe(200);
    });
  });

  describe('preconditions', () => {
    it('delete only when uid and resourceVersion match', async () => {
      const t = server();
      const created = await mustCreate(t, cms, configMap('pre'));
      const options = (preconditions: object) => ({
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions },
      });
      const wrongUid = await t.request('DELETE', `${cms}/pre`, options({ uid: 'another' }));
      expect([wrongUid.status, wrongUid.json.reason]).toEqual([409, 'Conflict']);
      expect(wrongUid.json.message).toContain('Precondition failed: UID in precondition: another');
      const wrongRv = await t.request('DELETE', `${cms}/pre`, options({ resourceVersion: '1' }));
      expect([wrongRv.status, wrongRv.json.reason]).toEqual([409, 'Conflict']);
      expect((await t.request('GET', `${cms}/pre`)).status).toBe(200);
      const right = await t.request(
        'DELETE',
        `${cms}/pre`,
        options({ uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion }),
      );
      expect(right.status).toBe(200);
      expect((await t.request('GET', `${cms}/pre`)).status).toBe(404);
    });
  });

  describe('gracePeriodSeconds', () => {
    const pod = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      // Bound to a node: only then does a pod get a graceful deletion (an unbound one goes at once).
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox' }] },
    });

    it('keeps a bound pod for its grace period, and 0 removes it', async () => {
      const t = server();
      const pods = `/api/v1/namespaces/${ns}/pods`;
      await mustCreate(t, pods, pod('graceful'));
      const r = await t.request('DELETE', `${pods}/graceful?gracePeriodSeconds=30`);
      expect(r.status).toBe(200);
      const got = (await t.request('GET', `${pods}/graceful`)).json;
      expect(got.metadata).toMatchObject({ deletionTimestamp: expect.any(String), deletionGracePeriodSeconds: 30 });
      // A shorter grace period replaces the longer one; 0 removes the pod now.
      const shorter = await t.request('DELETE', `${pods}/graceful?gracePeriodSeconds=10`);
      expect(shorter.json.metadata.deletionGracePeriodSeconds).toBe(10);
      const now = await t.request('DELETE', `${pods}/graceful?gracePeriodSeconds=0`);
      expect(now.status).toBe(200);
      expect((await t.request('GET', `${pods}/graceful`)).status).toBe(404);
    });

    it('uses the pod default when none is given, and does not apply to kinds without graceful deletion', async () => {
      const t = server();
      const pods = `/api/v1/namespaces/${ns}/pods`;
      await mustCreate(t, pods, pod('default-grace'));
      await t.request('DELETE', `${pods}/default-grace`);
      const got = (await t.request('GET', `${pods}/default-grace`)).json;
      expect(got.metadata.deletionGracePeriodSeconds).toBe(30);
      await t.request('DELETE', `${pods}/default-grace?gracePeriodSeconds=0`);
      await mustCreate(t, cms, configMap('no-grace'));
      expect((await t.request('DELETE', `${cms}/no-grace?gracePeriodSeconds=60`)).status).toBe(200);
      expect((await t.request('GET', `${cms}/no-grace`)).status).toBe(404);
    });

    it('rejects a value that is not an integer with 400', async () => {
      const r = await server().request('DELETE', `${cms}/anything?gracePeriodSeconds=soon`);
      expect([r.status, r.json.reason]).toEqual([400, 'BadRequest']);
      expect(r.json.message).toContain('gracePeriodSeconds');
    });
  });

  it('deletecollection deletes what has no finalizers and marks the rest', async () => {
    const t = server();
    const dns = await freshNamespace(t, 'fin-dc');
    const path = `/api/v1/namespaces/${dns}/configmaps`;
    await mustCreate(t, path, configMap('plain'));
    await mustCreate(t, path, withFinalizers('held', ['example.com/a']));
    const r = await t.request('DELETE', path);
    expect(r.status).toBe(200);
    expect((await t.request('GET', `${path}/plain`)).status).toBe(404);
    const held = (await t.request('GET', `${path}/held`)).json;
    expect(held.metadata.deletionTimestamp).toEqual(expect.any(String));
    await t.request('PATCH', `${path}/held`, { body: { metadata: { finalizers: null } }, headers: MERGE });
    expect((await t.request('GET', `${path}/held`)).status).toBe(404);
  });
});
