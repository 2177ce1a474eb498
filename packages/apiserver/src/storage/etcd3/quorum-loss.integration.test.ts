/**
 * An etcd cluster that lost its majority: the API server answers writes with a 5xx Status saying the store is
 * unavailable within its store deadline (no hang), `/readyz` fails on its `store` check, and once the members are
 * back everything resumes by itself.
 */
import { startTestServer, type TestServer } from '../../testing/test-server';
import { startEtcd, type EtcdCluster } from '../testing/etcd';
import { waitHealthy } from '../testing/failover';

let cluster: EtcdCluster;
let server: TestServer;

beforeAll(async () => {
  cluster = await startEtcd({ members: 3 });
  server = await startTestServer({ store: 'etcd', etcd: cluster });
}, 90000);

afterAll(async () => {
  await server?.stop();
  await cluster?.stop();
});

test('with 2 of 3 members down: fast 5xx naming the store, readyz fails, then everything resumes', async () => {
  const ns = await server.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'quorum' } } });
  expect(ns.status).toBe(201);
  const [a, b] = cluster.members;
  await a!.kill();
  await b!.kill();
  const t = Date.now();
  const w = await server.request('POST', '/api/v1/namespaces/quorum/configmaps', { body: { metadata: { name: 'x' } } });
  const took = Date.now() - t;
  console.log(`write with the majority lost: ${w.status} after ${took} ms: ${w.text}`);
  expect(w.status).toBeGreaterThanOrEqual(500);
  expect(w.json?.kind).toBe('Status');
  expect(w.text).toMatch(/store (unreachable|timeout)/);
  expect(took).toBeLessThan(20000); // the store's deadline (10 s) and a margin: an answer, not a hang
  // readyz says so.
  const deadline = Date.now() + 30000;
  let ready = await server.request('GET', '/readyz?verbose');
  while (ready.status === 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    ready = await server.request('GET', '/readyz?verbose');
  }
  console.log(
    `readyz with the majority lost: ${ready.status}: ${ready.text
      .split('\n')
      .filter((l) => l.includes('store'))
      .join(' ')}`,
  );
  expect(ready.status).not.toBe(200);
  expect(ready.text).toMatch(/store/);
  // Back: writes and readyz recover by themselves.
  const back = Date.now();
  await a!.restart();
  await b!.restart();
  await waitHealthy(cluster, server.url, server.ca);
  let ok = await server.request('POST', '/api/v1/namespaces/quorum/configmaps', { body: { metadata: { name: 'y' } } });
  while (ok.status !== 201 && Date.now() - back < 60000) {
    await new Promise((r) => setTimeout(r, 200));
    ok = await server.request('POST', '/api/v1/namespaces/quorum/configmaps', { body: { metadata: { name: 'y' } } });
  }
  console.log(`writes resumed ${Date.now() - back} ms after the members were restarted`);
  expect(ok.status).toBe(201);
}, 120000);
