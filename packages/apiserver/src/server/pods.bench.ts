/**
 * Pod create and bind benchmark (`npm run bench -- pods`): the API server's CPU per pod in the load the controller
 * manager and the scheduler put on it (issues 11, 12 and 18). The server runs as a child process (as in
 * `apiserver.bench.ts`), on SQLite and on a real etcd; this process sends, with CONCURRENCY keep-alive HTTPS
 * connections and Protobuf bodies, POST pods as the ReplicaSet controller does (labels, a controller
 * ownerReference, one container) and then POST pods/binding as the scheduler does, while WATCHERS Protobuf watches
 * of the namespace's pods (the informers of the controller manager and the scheduler) receive every event.
 *
 * Printed per phase: pods/s (wall time) and the server's CPU ms per request (utime + stime of its process, from
 * /proc, so the figure holds on a busy machine where wall time does not). A warm-up round (JIT, schema compilation)
 * is not counted. BENCH_PODS sets the pods per phase (1,000); BENCH_STORES picks stores (`sqlite,etcd`);
 * BENCH_SERVER_NODE_ARGS passes options to the server's Node (`--cpu-prof --cpu-prof-dir=<dir>` for a profile).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { builtinScheme, PROTOBUF_MEDIA_TYPE, ProtobufCodec, type ApiObject } from '@platform/api';

import { freePort, startEtcd, type EtcdCluster } from '../storage/testing/etcd';
import { type ServerProcess, startServerProcess, step } from '../testing/bench-server';

const PODS = Number(process.env.BENCH_PODS ?? 1000);
const WARMUP = 200;
const CONCURRENCY = 16;
const WATCHERS = 2;
const NAMESPACE = 'bench';
const codec = new ProtobufCodec(builtinScheme());

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** One request; resolves with the status, failing on a transport error. */
function send(
  server: ServerProcess,
  agent: Agent,
  method: string,
  path: string,
  body?: Buffer,
  contentType = PROTOBUF_MEDIA_TYPE,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${server.url}${path}`,
      {
        method,
        agent,
        headers: {
          accept: `${PROTOBUF_MEDIA_TYPE}, application/json`,
          ...(body ? { 'content-type': contentType, 'content-length': String(body.length) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function expect(want: number, r: Promise<{ status: number; body: Buffer }>, what: string): Promise<void> {
  const { status, body } = await r;
  if (status !== want) throw new Error(`${what}: ${status}, want ${want}: ${body.toString('utf8').slice(0, 300)}`);
}

/** A pod as the ReplicaSet controller creates it from a Deployment's template. */
function pod(name: string): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { app: 'bench', 'pod-template-hash': '5d8f7c9b4' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'bench-5d8f7c9b4',
          uid: '6f1f2c1e-3d3b-4c51-9a57-0f0c6a1b2c3d',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  } as ApiObject;
}

function binding(name: string): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name, namespace: NAMESPACE },
    target: { apiVersion: 'v1', kind: 'Node', name: `node-${name.length % 10}` },
  } as ApiObject;
}

/** Runs `op(i)` for i in [from, to) with CONCURRENCY workers. */
async function each(from: number, to: number, op: (i: number) => Promise<void>): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < to; i = next++) await op(i);
    }),
  );
}

/** Protobuf watches of the namespace's pods, counting the bytes and events they receive. */
function watchPods(server: ServerProcess): { events: () => number; stop: () => void } {
  const agent = new Agent({ keepAlive: false, ca: server.ca, maxSockets: WATCHERS });
  let frames = 0;
  for (let i = 0; i < WATCHERS; i++) {
    const req = httpsRequest(
      `${server.url}/api/v1/namespaces/${NAMESPACE}/pods?watch=true&allowWatchBookmarks=true`,
      { agent, headers: { accept: `${PROTOBUF_MEDIA_TYPE};stream=watch` } },
      (res) => {
        // Frames are 4-byte big-endian lengths and their messages; count them as an informer would see them.
        let buf: Buffer = Buffer.alloc(0);
        res.on('data', (c: Buffer) => {
          buf = buf.length ? Buffer.concat([buf, c]) : c;
          while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
            buf = buf.subarray(4 + buf.readUInt32BE(0));
            frames++;
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', () => undefined);
    req.end();
  }
  return { events: () => frames, stop: () => agent.destroy() };
}

interface Phase {
  podsPerSecond: number;
  cpuMsPerPod: number;
}

async function phase(
  server: ServerProcess,
  from: number,
  to: number,
  op: (i: number) => Promise<void>,
): Promise<Phase> {
  const pid = server.child.pid!;
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  await each(from, to, op);
  const seconds = (performance.now() - t0) / 1000;
  return { podsPerSecond: (to - from) / seconds, cpuMsPerPod: ((cpuSeconds(pid) - cpu0) * 1000) / (to - from) };
}

async function benchStore(label: string, dir: string, storeServers: string): Promise<string[]> {
  const port = await freePort();
  const certDir = join(dir, 'pki');
  const server = await startServerProcess({
    args: [
      `--store-servers=${storeServers}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${certDir}`,
      '--endpoint-reconciler-type=none',
      '--enable-priority-and-fairness=false',
      '--max-requests-inflight=10000',
      '--max-mutating-requests-inflight=10000',
    ],
    port,
    certDir,
    readyTimeoutMs: 180_000, // from sources on a loaded machine, start-up alone took over a minute
  });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.ca });
  const watches = watchPods(server);
  try {
    const json = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));
    await expect(
      201,
      send(server, agent, 'POST', '/api/v1/namespaces', json({ metadata: { name: NAMESPACE } }), 'application/json'),
      'namespace',
    );
    await expect(
      201,
      send(
        server,
        agent,
        'POST',
        `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`,
        json({ metadata: { name: 'default' } }),
        'application/json',
      ),
      'service account',
    );
    const create = (i: number): Promise<void> =>
      expect(
        201,
        send(server, agent, 'POST', `/api/v1/namespaces/${NAMESPACE}/pods`, codec.encode(pod(`p-${i}`))),
        'create',
      );
    const bind = (i: number): Promise<void> =>
      expect(
        201,
        send(
          server,
          agent,
          'POST',
          `/api/v1/namespaces/${NAMESPACE}/pods/p-${i}/binding`,
          codec.encode(binding(`p-${i}`)),
        ),
        'bind',
      );
    step(`${label}: warm-up (${WARMUP} pods)`);
    await each(0, WARMUP, create);
    await each(0, WARMUP, bind);
    step(`${label}: ${PODS} creates`);
    const created = await phase(server, WARMUP, WARMUP + PODS, create);
    step(`${label}: ${PODS} bindings`);
    const bound = await phase(server, WARMUP, WARMUP + PODS, bind);
    const want = WATCHERS * 2 * (WARMUP + PODS);
    const deadline = Date.now() + 60_000;
    while (watches.events() < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const row = (what: string, p: Phase): string =>
      `${label.padEnd(28)} ${what.padEnd(8)} ${p.podsPerSecond.toFixed(0).padStart(6)} pods/s  ${p.cpuMsPerPod.toFixed(2).padStart(6)} ms CPU/pod`;
    return [
      row('create', created),
      row('bind', bound),
      `${label.padEnd(28)} watch events received: ${watches.events()} of ${want}`,
    ];
  } finally {
    watches.stop();
    agent.destroy();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const stores = (process.env.BENCH_STORES ?? 'sqlite,etcd').split(',');
  const lines: string[] = [];
  if (stores.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'pods-bench-'));
    try {
      lines.push(...(await benchStore('SQLite', dir, `sqlite://${join(dir, 'state.db')}`)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (stores.includes('etcd')) {
    const dir = mkdtempSync(join(tmpdir(), 'pods-bench-'));
    let cluster: EtcdCluster | undefined;
    try {
      cluster = await startEtcd({ timing: 'defaults', progressNotifyInterval: '' });
      lines.push(...(await benchStore('etcd (1 member, durable)', dir, cluster.endpoints.join(','))));
    } finally {
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(
    `pods: ${PODS} Protobuf creates (ReplicaSet-owned), then ${PODS} bindings, concurrency ${CONCURRENCY}, ${WATCHERS} Protobuf pod watches`,
  );
  for (const l of lines) console.log(l);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
