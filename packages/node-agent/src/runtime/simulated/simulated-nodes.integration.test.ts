/**
 * `--simulate-nodes`: one agent process hosts several nodes against a real API server; each registers Ready,
 * renews its Lease, and runs the pods bound to it as no-op containers that are Running and Ready at once; each
 * serves its resource metrics on its own address.
 */
import { get } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { type Lease, LeaseKind, type Node, NodeKind, type Pod, PodKind } from '@platform/api';

import { type AgentProcess, startAgent, startCluster, type TestCluster, waitFor } from '../../testing/support';

jest.setTimeout(240_000);

let cluster: TestCluster;
let agent: AgentProcess;
const N = 5;

beforeAll(async () => {
  cluster = await startCluster();
  agent = await startAgent(cluster, 'unused', [
    `--simulate-nodes=${N}`,
    '--simulate-node-prefix=sim',
    '--node-lease-duration-seconds=4',
  ]);
});

afterAll(async () => {
  if (process.env.AGENT_LOG) process.stderr.write(agent?.output() ?? '');
  await agent?.stop();
  await cluster?.stop();
});

test('every simulated node is Ready and keeps renewing its Lease', async () => {
  await waitFor(
    'all nodes Ready',
    async () => {
      const nodes = (await cluster.clientset.resource(NodeKind).list()).items as Node[];
      const ready = nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === N;
    },
    150_000,
  );
  const renewals = async (): Promise<Map<string, string>> =>
    new Map(
      ((await cluster.clientset.resource(LeaseKind, 'node-lease').list()).items as Lease[]).map((l) => [
        l.metadata?.name ?? '',
        String(l.spec?.renewTime),
      ]),
    );
  await waitFor('every lease created', async () => (await renewals()).size === N);
  const first = await renewals();
  await waitFor('every lease renewed again', async () => {
    const now = await renewals();
    return [...first].every(([name, t]) => now.get(name) !== undefined && now.get(name) !== t);
  });
});

test('the agent answers its health check on --healthz-port (its supervisor probes it)', async () => {
  const status = (path: string): Promise<number> =>
    new Promise((resolve) => {
      get({ host: '127.0.0.1', port: agent.ports.healthz, path, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', () => resolve(0));
    });
  await waitFor('/healthz answering 200', async () => (await status('/healthz')) === 200, 60_000);
  expect(await status('/pods')).toBe(404);
});

test('pods bound to simulated nodes are Running and Ready, and deleted at once', async () => {
  const pods = cluster.clientset.resource(PodKind, 'default');
  for (let i = 0; i < 10; i++)
    await pods.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${i}` },
      spec: { nodeName: `sim-${i % N}`, containers: [{ name: 'c', image: 'busybox' }] },
    } as never);
  await waitFor('10 pods Ready', async () => {
    const items = (await pods.list()).items as Pod[];
    return (
      items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 10
    );
  });
  await pods.delete('p0');
  await waitFor('p0 gone', async () => !((await pods.list()).items as Pod[]).some((p) => p.metadata?.name === 'p0'));
});

test("each simulated node serves /metrics/resource on its own address at --port, with its pods' usage", async () => {
  const scrape = (host: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(
        { host, port: agent.ports.port, path: '/metrics/resource', rejectUnauthorized: false, agent: false },
        (res) => {
          let body = '';
          res.on('data', (b: Buffer) => (body += b.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  // sim-0 (127.1.0.1) runs p5 (p0 was deleted above); sim-1 (127.1.0.2) runs p1 and p6.
  let text = '';
  await waitFor('the metrics of sim-0 with its pod', async () => {
    const r = await scrape('127.1.0.1');
    text = r.body;
    return r.status === 200 && text.includes('pod="p5"');
  });
  expect(text).toMatch(/^container_cpu_usage_seconds_total\{container="c",namespace="default",pod="p5"\} \S+ \d+$/m);
  expect(text).toMatch(
    /^container_memory_working_set_bytes\{container="c",namespace="default",pod="p5"\} 8\.388608e\+06 \d+$/m,
  );
  expect(text).toMatch(/^node_cpu_usage_seconds_total \S+ \d+$/m);
  expect(text).toMatch(/^scrape_error 0$/m);
  expect(text).not.toContain('pod="p1"');
  await waitFor('the metrics of sim-1 with its pods', async () => {
    const other = (await scrape('127.1.0.2')).body;
    return other.includes('pod="p1"') && other.includes('pod="p6"') && !other.includes('pod="p5"');
  });
});
