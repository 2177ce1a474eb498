/**
 * ResourceQuota across two API servers on one etcd: concurrent creates through both never overshoot the quota,
 * because every charge is a compare-and-swap of the quota's status in the shared store.
 */
import { startEtcd, type EtcdCluster } from '../storage/testing/etcd';
import { startTestServer, type TestServer } from '../testing/test-server';
import { DEFAULT_ADMISSION_SETTINGS } from './server-admission';

let etcd: EtcdCluster;
const servers: TestServer[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  for (let i = 0; i < 2; i++) {
    servers.push(
      await startTestServer({
        store: 'etcd',
        etcd,
        configure: (c) => {
          c.storage.prefix = '/registry-quota';
          c.admission = { plugins: ['NamespaceLifecycle', 'ResourceQuota'], settings: DEFAULT_ADMISSION_SETTINGS };
        },
      }),
    );
  }
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.stop();
  await etcd?.stop();
});

it('admits exactly the quota of 50 concurrent creates spread over two API servers', async () => {
  const [a, b] = servers as [TestServer, TestServer];
  expect((await a.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'shared' } } })).status).toBe(201);
  const q = await a.request('POST', '/api/v1/namespaces/shared/resourcequotas', {
    body: { metadata: { name: 'q' }, spec: { hard: { secrets: '10' } } },
  });
  expect(q.status).toBe(201);
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      (i % 2 ? a : b).request('POST', '/api/v1/namespaces/shared/secrets', { body: { metadata: { name: `s-${i}` } } }),
    ),
  );
  const codes = results.map((r) => r.status);
  expect(codes.filter((c) => c === 201)).toHaveLength(10);
  expect(codes.filter((c) => c === 403)).toHaveLength(40);
  expect((await b.request('GET', '/api/v1/namespaces/shared/secrets')).json.items).toHaveLength(10);
  expect((await b.request('GET', '/api/v1/namespaces/shared/resourcequotas/q')).json.status.used).toEqual({
    secrets: '10',
  });
});
