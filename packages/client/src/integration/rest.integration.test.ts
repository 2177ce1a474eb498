/**
 * The REST client against the real API server (in-process, SQLite, HTTPS on 127.0.0.1), in every content type
 * (JSON, the platform's Protobuf, and Protobuf under Kubernetes' name as client-go asks for it):
 * every verb, subresources, each patch type, typed errors from Status bodies, watch errors, the client rate limit
 * measured on real calls, the event recorder's aggregation.
 */
import {
  type ApiObject,
  ConfigMapKind,
  DeploymentKind,
  EventKind,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  isResourceExpired,
  isStatusError,
  JSON_MEDIA_TYPE,
  KUBERNETES_PROTOBUF_MEDIA_TYPE,
  NamespaceKind,
  PROTOBUF_MEDIA_TYPE,
} from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, EventRecorder, RestClient } from '@platform/client';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer((c) => {
    c.watchCache.enabled = false;
  });
});
afterAll(async () => {
  await ts.stop();
});

const deployment = (name: string): ApiObject & Record<string, unknown> => ({
  metadata: { name, labels: { app: name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  },
});

describe.each([PROTOBUF_MEDIA_TYPE, JSON_MEDIA_TYPE, KUBERNETES_PROTOBUF_MEDIA_TYPE])('over %s', (contentType) => {
  let rest: RestClient;
  let cs: Clientset;
  const ns = {
    [JSON_MEDIA_TYPE]: 'json',
    [PROTOBUF_MEDIA_TYPE]: 'proto',
    [KUBERNETES_PROTOBUF_MEDIA_TYPE]: 'k8s-proto',
  }[contentType];
  beforeAll(async () => {
    rest = new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't', contentType, qps: 0 });
    cs = new Clientset(rest);
    await cs.resource(NamespaceKind).create({ metadata: { name: ns } });
  });
  afterAll(() => rest.close());

  it('creates, gets, lists, updates, patches (json, merge, strategic) and deletes', async () => {
    const cms = cs.resource(ConfigMapKind, ns);
    const created = await cms.create({ metadata: { name: 'one', labels: { tier: 'a' } }, data: { k: '1' } });
    expect(created.metadata?.uid).toBeTruthy();
    expect((await cms.get('one')).data).toEqual({ k: '1' });
    const updated = await cms.update({ ...created, data: { k: '2' } });
    expect(updated.data).toEqual({ k: '2' });
    expect(isConflict(await cms.update({ ...created, data: { k: '3' } }).catch((e: unknown) => e))).toBe(true);
    expect((await cms.patch('one', 'merge', { data: { m: 'x' } })).data).toEqual({ k: '2', m: 'x' });
    expect((await cms.patch('one', 'json', [{ op: 'remove', path: '/data/k' }])).data).toEqual({ m: 'x' });
    expect((await cms.patch('one', 'strategic', { data: { s: 'y' } })).data).toEqual({ m: 'x', s: 'y' });
    await cms.create({ metadata: { name: 'two', labels: { tier: 'b' } } });
    const onlyA = await cms.list({ labelSelector: 'tier=a' });
    expect(onlyA.items.map((o) => o.metadata?.name)).toEqual(['one']);
    expect(onlyA.metadata?.resourceVersion).toBeTruthy();
    const page = await cms.list({ limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.metadata?.continue).toBeTruthy();
    const rest2 = await cms.list({ limit: 1, continue: page.metadata?.continue });
    expect(rest2.items.map((o) => o.metadata?.name)).toEqual(['two']);
    await cms.delete('one');
    expect(isNotFound(await cms.get('one').catch((e: unknown) => e))).toBe(true);
    await cms.deleteCollection({ labelSelector: 'tier=b' });
    expect((await cms.list()).items).toEqual([]);
  });

  it('lists every listable kind of the scheme', async () => {
    const kinds = rest.scheme.kinds().filter((k) => k.verbs.includes('list'));
    expect(kinds.length).toBeGreaterThan(30);
    for (const k of kinds) {
      const client = cs.resource(k);
      const list = await client.list({ limit: 5 }).catch((e: unknown) => {
        throw new Error(`${k.apiVersion} ${k.plural}: ${String(e)}`);
      });
      expect(Array.isArray(list.items)).toBe(true);
      expect(list.metadata?.resourceVersion).toBeTruthy();
    }
  });

  it('gives typed errors carrying the server Status', async () => {
    const cms = cs.resource(ConfigMapKind, ns);
    await cms.create({ metadata: { name: 'dup' } });
    const exists = await cms.create({ metadata: { name: 'dup' } }).catch((e: unknown) => e);
    expect(isAlreadyExists(exists)).toBe(true);
    const invalid = await cms.create({ metadata: { name: 'Not_Valid' } }).catch((e: unknown) => e);
    expect(isInvalid(invalid)).toBe(true);
    expect(isStatusError(invalid) && invalid.status.details?.causes?.[0]?.field).toBe('metadata.name');
  });

  it('reads and writes subresources (status, scale)', async () => {
    const deps = cs.resource(DeploymentKind, ns);
    const d = await deps.create(deployment('web'));
    const withStatus = await deps.updateStatus({ ...d, status: { observedGeneration: 1, replicas: 1 } } as typeof d);
    expect((withStatus as { status?: { replicas?: number } }).status?.replicas).toBe(1);
    const scale = await deps.getSubresource<ApiObject & { spec?: { replicas?: number } }>('web', 'scale');
    expect(scale.kind).toBe('Scale');
    expect(scale.spec?.replicas).toBe(1);
    await deps.updateSubresource('web', 'scale', { ...scale, spec: { replicas: 3 } } as ApiObject);
    expect(((await deps.get('web')) as { spec?: { replicas?: number } }).spec?.replicas).toBe(3);
  });

  it('watches from a resourceVersion, with bookmarks allowed, and throws a typed 410 for a compacted one', async () => {
    const cms = cs.resource(ConfigMapKind, ns);
    const start = await cms.list();
    const ac = new AbortController();
    const w = await cms.watch({
      resourceVersion: start.metadata?.resourceVersion,
      allowWatchBookmarks: true,
      signal: ac.signal,
    });
    await cms.create({ metadata: { name: 'watched' } });
    await cms.delete('watched');
    const seen: string[] = [];
    for await (const e of w) {
      if (e.type === 'BOOKMARK') continue;
      seen.push(`${e.type} ${e.object.metadata?.name}`);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['ADDED watched', 'DELETED watched']);
    await cms.create({ metadata: { name: 'bump' } });
    for (let i = 0; i < 5; i++) await cms.patch('bump', 'merge', { data: { i: String(i) } });
    await ts.server.compactNow();
    let err: unknown;
    try {
      const old = await cms.watch({ resourceVersion: start.metadata?.resourceVersion, timeoutSeconds: 5 });
      for await (const e of old) throw new Error(`unexpected ${e.type} from a compacted resourceVersion`);
    } catch (e) {
      err = e;
    }
    expect(isResourceExpired(err) || (isStatusError(err) && err.code === 410)).toBe(true);
  });

  it('records events, aggregating repeats into one Event with a count', async () => {
    const cms = cs.resource(ConfigMapKind, ns);
    const target = await cms.create({ metadata: { name: 'evented' } });
    const rec = new EventRecorder({ events: cs.resource(EventKind), component: 'test-controller', host: 'h1', qps: 0 });
    for (let i = 0; i < 5; i++) rec.event(target, 'Warning', 'FailedSync', 'could not sync');
    rec.event(target, 'Normal', 'Synced', 'synced');
    await rec.shutdown();
    const events = (await cs.resource(EventKind, ns).list()).items.filter((e) => e.involvedObject.name === 'evented');
    const byReason = Object.fromEntries(events.map((e) => [e.reason, e]));
    expect(events).toHaveLength(2);
    expect(byReason.FailedSync?.count).toBe(5);
    expect(byReason.FailedSync?.source?.component).toBe('test-controller');
    expect(byReason.Synced?.count).toBe(1);
    expect(byReason.FailedSync?.involvedObject.uid).toBe(target.metadata?.uid);
  });
});

it('drops events over --event-qps/--event-burst', async () => {
  const rest = new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), qps: 0 });
  const cs = new Clientset(rest);
  const target = await cs.resource(ConfigMapKind, 'default').create({ metadata: { name: 'spammy' } });
  const rec = new EventRecorder({ events: cs.resource(EventKind), component: 'spam', qps: 1, burst: 3 });
  for (let i = 0; i < 10; i++) rec.event(target, 'Normal', 'Reason', `message ${i}`);
  await rec.shutdown();
  expect(rec.dropped).toBe(7);
  const events = (await cs.resource(EventKind, 'default').list()).items.filter(
    (e) => e.involvedObject.name === 'spammy',
  );
  expect(events).toHaveLength(3);
  rest.close();
});

it('names events uniquely within a millisecond, and takes the next name when another recorder holds one', async () => {
  const rest = new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), qps: 0 });
  const cs = new Clientset(rest);
  const target = await cs.resource(ConfigMapKind, 'default').create({ metadata: { name: 'same-ms' } });
  const now = Date.parse('2026-01-01T00:00:00Z');
  const clock = { now: () => now, sleep: () => Promise.resolve() };
  // Another writer already holds the name this recorder tries first.
  await cs.resource(EventKind, 'default').create({
    metadata: { name: `same-ms.${(now * 1000).toString(16)}` },
    involvedObject: { kind: 'ConfigMap', namespace: 'default', name: 'other' },
    reason: 'Other',
    message: 'held',
  } as never);
  const rec = new EventRecorder({ events: cs.resource(EventKind), component: 'names', qps: 0, clock });
  (rec as unknown as { seq: number }).seq = 0;
  for (let i = 0; i < 50; i++) rec.event(target, 'Normal', 'Reason', `message ${i}`);
  await rec.shutdown();
  const events = (await cs.resource(EventKind, 'default').list()).items.filter(
    (e) => e.involvedObject.name === 'same-ms',
  );
  expect(new Set(events.map((e) => e.message)).size).toBe(50);
  expect(events.map((e) => e.metadata?.name)).not.toContain(`same-ms.${(now * 1000).toString(16)}`);
  rest.close();
});

it('holds --api-qps on real calls: 1,000 GETs at qps 500, burst 50', async () => {
  const rest = new RestClient({
    server: ts.url,
    ca: Buffer.from(ts.ca),
    qps: 500,
    burst: 50,
    contentType: PROTOBUF_MEDIA_TYPE,
  });
  const cms = new Clientset(rest).resource(ConfigMapKind, 'default');
  await cms.create({ metadata: { name: 'rate' } });
  const t0 = Date.now();
  await Promise.all(Array.from({ length: 1000 }, () => cms.get('rate')));
  const elapsed = Date.now() - t0;
  rest.close();
  // (1000 − 50) / 500 s = 1.9 s at least; the server keeps up, so not much more.
  expect(elapsed).toBeGreaterThanOrEqual(1900);
  process.stdout.write(
    `1,000 GETs at --api-qps=500 --api-burst=50: ${elapsed} ms (${Math.round(1000 / (elapsed / 1000))} calls/s)\n`,
  );
}, 30_000);

it('watches over a WebSocket', async () => {
  const rest = new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), qps: 0 });
  const cms = new Clientset(rest, { watchTransport: 'websocket' }).resource(ConfigMapKind, 'default');
  const start = await cms.list();
  const w = await cms.watch({ resourceVersion: start.metadata?.resourceVersion });
  await cms.create({ metadata: { name: 'ws' } });
  for await (const e of w) {
    expect(`${e.type} ${e.object.metadata?.name}`).toBe('ADDED ws');
    break;
  }
  rest.close();
});
