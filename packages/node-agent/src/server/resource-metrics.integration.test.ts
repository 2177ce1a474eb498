/**
 * `/metrics/resource` of a real agent process (builtin runtime) running a real pod whose shell loop burns a little
 * CPU: the node's, the containers' and the pod's values are present with 1.21's names, labels and timestamps, the
 * CPU counter grows, the main port authenticates (client certificates) and authorizes (`nodes/metrics` through a
 * SubjectAccessReview) every request, and the read-only port serves the same text without credentials.
 */
import { writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';

import { type Pod, PodKind } from '@platform/api';
import { generateCertificateAuthority, issueCertificate, type PemPair } from '@platform/common';

import { type AgentProcess, startAgent, startCluster, type TestCluster, waitFor } from '../testing/support';

jest.setTimeout(180_000);

const NODE = 'metrics-node-1';
const READER = 'metrics-reader';

let cluster: TestCluster;
let agent: AgentProcess;
let reader: PemPair;
let other: PemPair;

beforeAll(async () => {
  const ca = await generateCertificateAuthority('agent-client-ca');
  reader = await issueCertificate(ca, { commonName: READER, usage: 'client' });
  other = await issueCertificate(ca, { commonName: 'someone-else', usage: 'client' });
  // Only READER may read node metrics; everything else (the agent's own calls among them) is allowed.
  cluster = await startCluster({
    configure: (c) => {
      c.security = {
        authorizer: {
          authorize: (a) =>
            Promise.resolve(
              a.resource === 'nodes' && a.subresource === 'metrics' && a.user.name !== READER
                ? { decision: 'deny' as const, reason: `only ${READER} reads node metrics` }
                : { decision: 'allow' as const, reason: '' },
            ),
        },
      };
    },
  });
  const caFile = join(cluster.dir, 'client-ca.crt');
  writeFileSync(caFile, ca.certPem);
  agent = await startAgent(cluster, NODE, [
    '--anonymous-auth=false',
    `--client-ca-file=${caFile}`,
    '--authorization-mode=Webhook',
  ]);
  await cluster.clientset.resource(PodKind, 'default').create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'burner', namespace: 'default' },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'burn',
          image: 'busybox',
          command: ['sh', '-c', 'while :; do head -c 100000 /dev/urandom | md5sum >/dev/null; sleep 0.2; done'],
        },
        { name: 'idle', image: 'busybox', command: ['sleep', '3600'] },
      ],
    },
  } as Pod);
  await waitFor(
    'the pod Running',
    async () =>
      ((await cluster.clientset.resource(PodKind, 'default').get('burner')) as Pod).status?.phase === 'Running',
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${agent.output().slice(-3000)}`);
  });
});

afterAll(async () => {
  if (process.env.AGENT_LOG) process.stderr.write(agent?.output() ?? '');
  await agent?.stop();
  await cluster?.stop();
});

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

function scrape(as?: PemPair): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `https://127.0.0.1:${agent.ports.port}/metrics/resource`,
      { rejectUnauthorized: false, ...(as ? { cert: as.certPem, key: as.keyPem } : {}), agent: false },
      (res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Sample {
  name: string;
  labels: string;
  value: number;
  timestamp?: number;
}

/** The samples of a Prometheus text answer. */
function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\w+)(\{[^}]*\})? (\S+)(?: (\d+))?$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      return { name: m[1]!, labels: m[2] ?? '', value: Number(m[3]), ...(m[4] ? { timestamp: Number(m[4]) } : {}) };
    });
}

function one(all: Sample[], name: string, labels = ''): Sample {
  const s = all.find((x) => x.name === name && x.labels === labels);
  if (!s) throw new Error(`no ${name}${labels} in\n${all.map((x) => `${x.name}${x.labels}`).join('\n')}`);
  return s;
}

const BURN = '{container="burn",namespace="default",pod="burner"}';
const IDLE = '{container="idle",namespace="default",pod="burner"}';
const POD = '{namespace="default",pod="burner"}';

test('the main port refuses requests without credentials (401) and users not allowed nodes/metrics (403)', async () => {
  expect((await scrape()).status).toBe(401);
  const forbidden = await scrape(other);
  expect(forbidden.status).toBe(403);
  expect(forbidden.body).toContain('user=someone-else');
});

test("node, container and pod usage with 1.21's names, labels and timestamps; the CPU counter grows", async () => {
  let first: Sample[] = [];
  await waitFor('the containers in the metrics', async () => {
    const r = await scrape(reader);
    if (r.status !== 200) throw new Error(`status ${r.status}: ${r.body}`);
    expect(r.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    first = samples(r.body);
    return first.some((s) => s.labels === BURN) && first.some((s) => s.labels === IDLE);
  });
  const now = Date.now();
  for (const [name, labels] of [
    ['node_cpu_usage_seconds_total', ''],
    ['node_memory_working_set_bytes', ''],
    ['container_cpu_usage_seconds_total', BURN],
    ['container_memory_working_set_bytes', BURN],
    ['container_cpu_usage_seconds_total', IDLE],
    ['pod_cpu_usage_seconds_total', POD],
    ['pod_memory_working_set_bytes', POD],
  ] as const) {
    const s = one(first, name, labels);
    expect(s.value).toBeGreaterThanOrEqual(0);
    expect(Math.abs((s.timestamp ?? 0) - now)).toBeLessThan(120_000);
  }
  expect(one(first, 'node_memory_working_set_bytes').value).toBeGreaterThan(0);
  expect(one(first, 'container_memory_working_set_bytes', BURN).value).toBeGreaterThan(0);
  expect(one(first, 'scrape_error')).toEqual({ name: 'scrape_error', labels: '', value: 0 });
  // The pod is the sum of its containers, read in the same scrape.
  const sum =
    one(first, 'container_cpu_usage_seconds_total', BURN).value +
    one(first, 'container_cpu_usage_seconds_total', IDLE).value;
  expect(one(first, 'pod_cpu_usage_seconds_total', POD).value).toBeCloseTo(sum, 6);

  const before = one(first, 'container_cpu_usage_seconds_total', BURN).value;
  const nodeBefore = one(first, 'node_cpu_usage_seconds_total').value;
  await waitFor('the CPU counters to grow', async () => {
    const now2 = samples((await scrape(reader)).body);
    return (
      one(now2, 'container_cpu_usage_seconds_total', BURN).value > before &&
      one(now2, 'node_cpu_usage_seconds_total').value > nodeBefore
    );
  });
});

test('the text is exposed as client_golang writes it: HELP with the stability mark, TYPE, families by name', async () => {
  const r = await scrape(reader);
  const headers = r.body.split('\n').filter((l) => l.startsWith('#'));
  expect(headers).toEqual([
    '# HELP container_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the container in core-seconds',
    '# TYPE container_cpu_usage_seconds_total counter',
    '# HELP container_memory_working_set_bytes [ALPHA] Current working set of the container in bytes',
    '# TYPE container_memory_working_set_bytes gauge',
    '# HELP node_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the node in core-seconds',
    '# TYPE node_cpu_usage_seconds_total counter',
    '# HELP node_memory_working_set_bytes [ALPHA] Current working set of the node in bytes',
    '# TYPE node_memory_working_set_bytes gauge',
    '# HELP pod_cpu_usage_seconds_total [ALPHA] Cumulative cpu time consumed by the pod in core-seconds',
    '# TYPE pod_cpu_usage_seconds_total counter',
    '# HELP pod_memory_working_set_bytes [ALPHA] Current working set of the pod in bytes',
    '# TYPE pod_memory_working_set_bytes gauge',
    '# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise',
    '# TYPE scrape_error gauge',
  ]);
});

test('the read-only port serves the same metrics without credentials', async () => {
  const r = await fetch(`http://127.0.0.1:${agent.ports.readOnly}/metrics/resource`);
  expect(r.status).toBe(200);
  const all = samples(await r.text());
  expect(one(all, 'container_cpu_usage_seconds_total', BURN).value).toBeGreaterThanOrEqual(0);
});
