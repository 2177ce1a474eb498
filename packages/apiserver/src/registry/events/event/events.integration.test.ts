/**
 * core/v1 and events.platform/v1 Events are one resource: an event written in either version is read in both,
 * converted field by field, and listed, selected and watched in each version's shape.
 */
import { startTestServer, type TestServer } from '../../../testing/test-server';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
}, 60_000);

afterAll(async () => {
  await t.stop();
  expect(t.errors).toEqual([]);
});

const CORE = '/api/v1/namespaces/default/events';
const V1 = '/apis/events.platform/v1/namespaces/default/events';

const newEvent = (name: string, regarding = 'web') => ({
  apiVersion: 'events.platform/v1',
  kind: 'Event',
  metadata: { name },
  eventTime: '2026-11-24T01:00:00.000000Z',
  reportingController: 'platform.io/scheduler',
  reportingInstance: 'scheduler-1',
  action: 'Binding',
  reason: 'Scheduled',
  regarding: { kind: 'Pod', namespace: 'default', name: regarding },
  note: 'assigned to node-1',
  type: 'Normal',
});

it('reads an events.platform/v1 event through core/v1', async () => {
  expect((await t.request('POST', V1, { body: newEvent('a') })).status).toBe(201);
  const core = await t.request('GET', `${CORE}/a`);
  expect(core.status).toBe(200);
  expect(core.json).toMatchObject({
    apiVersion: 'v1',
    kind: 'Event',
    involvedObject: { kind: 'Pod', name: 'web' },
    message: 'assigned to node-1',
    reportingComponent: 'platform.io/scheduler',
    reportingInstance: 'scheduler-1',
    action: 'Binding',
    eventTime: '2026-11-24T01:00:00.000000Z',
  });
});

it('reads a core/v1 event through events.platform/v1', async () => {
  const created = await t.request('POST', CORE, {
    body: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'b' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'db' },
      reason: 'Pulled',
      message: 'image pulled',
      source: { component: 'node-agent', host: 'node-1' },
      count: 3,
      firstTimestamp: '2026-11-24T00:00:00Z',
      lastTimestamp: '2026-11-24T00:05:00Z',
      type: 'Normal',
    },
  });
  expect(created.status).toBe(201);
  const v1 = await t.request('GET', `${V1}/b`);
  expect(v1.json).toMatchObject({
    apiVersion: 'events.platform/v1',
    regarding: { kind: 'Pod', name: 'db' },
    note: 'image pulled',
    deprecatedSource: { component: 'node-agent', host: 'node-1' },
    deprecatedCount: 3,
    deprecatedFirstTimestamp: '2026-11-24T00:00:00Z',
    deprecatedLastTimestamp: '2026-11-24T00:05:00Z',
  });
  expect(v1.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
});

it('lists both versions from one set of events, with each version’s field selectors', async () => {
  const names = (r: { json: { items: { metadata: { name: string } }[] } }) => r.json.items.map((i) => i.metadata.name);
  expect(names(await t.request('GET', CORE))).toEqual(expect.arrayContaining(['a', 'b']));
  expect(names(await t.request('GET', `${V1}?fieldSelector=regarding.name%3Ddb`))).toEqual(['b']);
  expect(names(await t.request('GET', `${CORE}?fieldSelector=involvedObject.name%3Dweb`))).toEqual(['a']);
});

it('watches in the version asked for', async () => {
  const list = await t.request('GET', V1);
  const rv = list.json.metadata.resourceVersion;
  const watch = t.request('GET', `${V1}?watch=1&resourceVersion=${rv}&timeoutSeconds=2`);
  await new Promise((r) => setTimeout(r, 200));
  expect((await t.request('POST', V1, { body: newEvent('c') })).status).toBe(201);
  const lines = (await watch).text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines[0]).toMatchObject({
    type: 'ADDED',
    object: { apiVersion: 'events.platform/v1', metadata: { name: 'c' }, note: 'assigned to node-1' },
  });
});

it('validates events.platform/v1 events as new events', async () => {
  const r = await t.request('POST', V1, {
    body: { ...newEvent('d'), eventTime: undefined, reportingController: '', action: '', deprecatedCount: 2 },
  });
  expect(r.status).toBe(422);
  expect(r.json.details.causes.map((c: { field: string }) => c.field).sort()).toEqual([
    'action',
    'deprecatedCount',
    'eventTime',
    'reportingController',
  ]);
  const update = await t.request('GET', `${V1}/a`);
  const changed = await t.request('PUT', `${V1}/a`, { body: { ...update.json, note: 'changed' } });
  expect(changed.status).toBe(422);
  expect(changed.json.message).toContain('note: Invalid value');
});
