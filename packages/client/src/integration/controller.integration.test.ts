/**
 * A whole controller on the client library, as docs/client.md shows it: a shared informer from the factory,
 * handlers that only enqueue keys, a rate-limited work queue, workers whose sync reads the cache and writes
 * through the API, and an event recorder. Against the real API server (in-process).
 */
import { type ApiObject, type ConfigMap, ConfigMapKind, EventKind, isConflict, isNotFound } from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { MetricsRegistry } from '@platform/common';
import {
  Clientset,
  EventRecorder,
  InformerFactory,
  isDeletedFinalStateUnknown,
  metaNamespaceKey,
  RestClient,
  runWorkers,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';

import { waitFor } from './support';

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.stop();
});

it('runs a controller: informer → queue → sync → API, one list+watch per resource', async () => {
  const rest = new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't' });
  const clientset = new Clientset(rest);
  const factory = new InformerFactory(clientset, { minResyncPeriodMs: 0 });
  const configMaps = factory.informerFor(ConfigMapKind);
  expect(factory.informerFor(ConfigMapKind)).toBe(configMaps); // shared
  const metrics = new MetricsRegistry();
  const queue = new WorkQueue<string>({ name: 'stamp', metrics });
  const recorder = new EventRecorder({ events: clientset.resource(EventKind), component: 'stamp-controller' });
  const enqueue = (o: ApiObject): void => queue.add(metaNamespaceKey(o));
  configMaps.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_old, o) => enqueue(o),
    onDelete: (o) => enqueue(isDeletedFinalStateUnknown(o) ? o.obj : o),
  });

  // The level-triggered sync: stamp each ConfigMap labelled stamp=yes with its number of keys.
  const syncs: string[] = [];
  const sync = async (key: string): Promise<void> => {
    syncs.push(key);
    const cached = configMaps.indexer.get(key);
    if (!cached || cached.metadata?.labels?.stamp !== 'yes') return;
    const want = String(Object.keys(cached.data ?? {}).length);
    if (cached.metadata.annotations?.['example.platform/keys'] === want) return;
    const cm = structuredClone(cached) as ConfigMap & ApiObject;
    cm.metadata = { ...cm.metadata, annotations: { ...cm.metadata?.annotations, 'example.platform/keys': want } };
    const { namespace } = splitMetaNamespaceKey(key);
    await clientset.resource(ConfigMapKind, namespace).update(cm);
    recorder.event(cm, 'Normal', 'Stamped', `counted ${want} keys`);
  };
  const errors: unknown[] = [];
  const ac = new AbortController();
  factory.start(ac.signal);
  expect(await factory.waitForCacheSync(ac.signal)).toBe(true);
  const workers = runWorkers(queue, 2, sync, (_key, err) => {
    if (!isConflict(err) && !isNotFound(err)) errors.push(err);
  });

  const cms = clientset.resource(ConfigMapKind, 'default');
  await cms.create({ metadata: { name: 'a', labels: { stamp: 'yes' } }, data: { x: '1', y: '2' } });
  await cms.create({ metadata: { name: 'b' }, data: { x: '1' } });
  await waitFor('a stamped', async () => (await cms.get('a')).metadata?.annotations?.['example.platform/keys'] === '2');
  await cms.patch('a', 'merge', { data: { z: '3' } });
  await waitFor(
    'a re-stamped',
    async () => (await cms.get('a')).metadata?.annotations?.['example.platform/keys'] === '3',
  );
  expect((await cms.get('b')).metadata?.annotations).toBeUndefined();
  await recorder.flush();
  const events = (await clientset.resource(EventKind, 'default').list()).items.filter((e) => e.reason === 'Stamped');
  expect(events.length).toBeGreaterThanOrEqual(1);

  queue.shutDown();
  await workers;
  ac.abort();
  await factory.shutdown();
  rest.close();
  expect(errors).toEqual([]);
  expect(configMaps.stats.lists).toBe(1);
  expect(syncs).toContain('default/b');
  const { body } = await metrics.exposition();
  expect(body).toMatch(/workqueue_adds_total\{name="stamp"\} \d+/);
});
