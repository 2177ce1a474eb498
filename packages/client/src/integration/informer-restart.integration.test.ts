/**
 * An informer stays exactly in sync across restarts of the API server process (a clean SIGTERM and a SIGKILL),
 * with the client configured from a kubeconfig file, and no handler hears of a change twice.
 *
 * Note: the server's SIGTERM currently waits about 60 s while a watch is open (its drain of in-flight requests
 * does not end long-running watches), so this test is slow.
 */
import { rmSync } from 'node:fs';

import { type ApiObject, type ConfigMap, ConfigMapKind } from '@platform/api';
import {
  Clientset,
  isDeletedFinalStateUnknown,
  loadClientConfig,
  type ResourceClient,
  RestClient,
  SharedIndexInformer,
} from '@platform/client';

import { apiServerProcess, type ApiServerProcess, waitFor } from './support';

type CM = ConfigMap & ApiObject;

let server: ApiServerProcess;
beforeAll(async () => {
  server = await apiServerProcess();
  await server.start();
}, 40_000);
afterAll(async () => {
  await server.stop('SIGKILL');
  rmSync(server.dir, { recursive: true, force: true });
});

async function state(cms: ResourceClient<CM>): Promise<string[]> {
  return (await cms.list()).items.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
}

it('stays in sync across API server restarts', async () => {
  const config = loadClientConfig({ clientConfig: server.clientConfigPath });
  expect(config.token).toBe('integration-test-token');
  const rest = new RestClient({ ...config, qps: 0 }, {});
  const cms = new Clientset(rest).resource(ConfigMapKind, config.namespace);
  for (let i = 0; i < 20; i++) await cms.create({ metadata: { name: `cm-${i}` }, data: { i: String(i) } });

  const inf = new SharedIndexInformer<CM>(cms);
  const seen = new Set<string>();
  const dupes: string[] = [];
  const note = (what: string, o: CM): void => {
    const id = `${what} ${o.metadata?.name} ${o.metadata?.resourceVersion}`;
    if (seen.has(id)) dupes.push(id);
    seen.add(id);
  };
  inf.addEventHandler({
    onAdd: (o) => note('add', o),
    onUpdate: (_o, n) => note('update', n),
    onDelete: (o) => note('delete', isDeletedFinalStateUnknown(o) ? o.obj : o),
  });
  const ac = new AbortController();
  const run = inf.run(ac.signal);
  const cached = (): string[] =>
    inf.indexer
      .list()
      .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
      .sort();
  try {
    await waitFor('sync', () => inf.hasSynced());
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      await server.stop(signal);
      await server.start();
      await cms.patch('cm-1', 'merge', { data: { after: signal } });
      await cms.delete(`cm-${signal === 'SIGTERM' ? 2 : 3}`);
      await cms.create({ metadata: { name: `new-${signal.toLowerCase()}` } });
      const want = await state(cms);
      await waitFor(
        `the cache to match a fresh list after ${signal}`,
        () => JSON.stringify(cached()) === JSON.stringify(want),
        30_000,
      );
    }
    expect(dupes).toEqual([]);
    expect(inf.stats.watchErrors).toBeGreaterThan(0); // it did see the server go away
  } finally {
    ac.abort();
    await run;
    rest.close();
  }
}, 120_000);
