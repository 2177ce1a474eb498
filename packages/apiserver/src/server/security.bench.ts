/**
 * Security benchmark (`npm run bench -- security`): GET throughput of the API server with its security on
 * (`--authorization-mode=Node,RBAC` and Metadata-level audit to a log file in batch mode) against the same server
 * with `--authorization-mode=AlwaysAllow` and no audit. Both use the same static tokens (`--token-auth-file`), so
 * authentication costs the same; the difference is authorization and audit. Issue 5's target: at least 85%.
 *
 * Each server runs as a child process (the `platform-apiserver` command, compiled or from its sources) on the
 * embedded store; the clients (this process) send GETs from 32 concurrent keep-alive HTTPS connections: half by a
 * user allowed by an RBAC binding to the `view` ClusterRole (a ConfigMap), half by the node agent `system:node:n1`
 * (its Node, through the Node authorizer). Runs alternate between the two servers and the best of each is kept.
 * Figures are printed, never asserted. BENCH_SERVER_NODE_ARGS adds options to the servers' Node (profiling).
 * BENCH_GETS sets the GETs per run (default 20000); BENCH_BREAKDOWN=1 also
 * measures RBAC/Node alone and audit alone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { freePort } from '../storage/testing/etcd';

const CONCURRENCY = 32;
const GETS = Number(process.env.BENCH_GETS ?? 20000);
const ROUNDS = 3;

const TOKENS = [
  'admin-token,admin,1,"system:masters"',
  'reader-token,reader,2,"readers"',
  'node-token,system:node:n1,3,"system:nodes"',
];

const POLICY = `apiVersion: audit.platform/v1
kind: Policy
rules:
  - level: Metadata
`;

interface Response {
  status: number;
  body: Buffer;
}

/** An HTTPS client with a keep-alive agent. */
class Client {
  readonly agent: Agent;
  constructor(
    readonly url: string,
    ca: string,
    sockets: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets, ca });
  }

  request(method: string, path: string, token: string, body?: unknown): Promise<Response> {
    return new Promise((resolvePromise, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = httpsRequest(
        `${this.url}${path}`,
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  async expect(want: number, method: string, path: string, token: string, body?: unknown): Promise<Response> {
    const r = await this.request(method, path, token, body);
    if (r.status !== want)
      throw new Error(`${method} ${path}: ${r.status}, want ${want}: ${r.body.toString('utf8').slice(0, 400)}`);
    return r;
  }

  close(): void {
    this.agent.destroy();
  }
}

const started = performance.now();
function step(what: string): void {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${what}\n`);
}

const packageRoot = resolve(__dirname, '..', '..');

interface ServerProcess {
  child: ChildProcess;
  url: string;
  ca: string;
  stop(): Promise<void>;
}

async function startServer(dir: string, extra: string[]): Promise<ServerProcess> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const certDir = join(dir, 'pki');
  const args = [
    `--store-servers=sqlite://${join(dir, 'state.db')}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    '--endpoint-reconciler-type=none',
    '--enable-priority-and-fairness=false',
    `--token-auth-file=${join(dir, '..', 'tokens.csv')}`,
    ...extra,
  ];
  const compiled = __filename.endsWith('.js');
  const nodeArgs = compiled
    ? [join(packageRoot, 'bin', 'platform-apiserver'), ...args]
    : [
        '-r',
        join(packageRoot, 'src', 'storage', 'testing', 'ts-register.js'),
        '-e',
        `require(${JSON.stringify(join(packageRoot, 'src', 'cmd', 'main.ts'))}).main(process.argv.slice(1)).then((c) => process.exit(c))`,
        '--',
        ...args,
      ];
  // BENCH_SERVER_NODE_ARGS: options of the server's Node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeOptions = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeOptions, ...nodeArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `https://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  let ca = '';
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API server exited with ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the API server did not become ready within 90s: ${stderr}`);
    }
    const crt = join(certDir, 'apiserver.crt');
    if (!ca && existsSync(crt)) ca = readFileSync(crt, 'utf8');
    if (ca) {
      const probe = new Client(url, ca, 1);
      const ok = await probe.request('GET', '/readyz', 'admin-token').then(
        (r) => r.status === 200,
        () => false,
      );
      probe.close();
      if (ok) break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    ca,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Objects the GETs read, and the RBAC binding of the reader (the Node authorizer needs none). */
async function prepare(c: Client): Promise<void> {
  await c.expect(201, 'POST', '/api/v1/namespaces/default/configmaps', 'admin-token', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm-0' },
    data: { 'config.yaml': `padding: ${'x'.repeat(400)}\n` },
  });
  await c.expect(201, 'POST', '/api/v1/nodes', 'admin-token', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1' },
  });
  await c.expect(201, 'POST', '/apis/rbac.authorization.platform/v1/clusterrolebindings', 'admin-token', {
    apiVersion: 'rbac.authorization.platform/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'readers-view' },
    roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.platform', name: 'readers' }],
  });
  // The RBAC index follows its watch: wait until the binding takes effect.
  for (let i = 0; ; i++) {
    const r = await c.request('GET', '/api/v1/namespaces/default/configmaps/cm-0', 'reader-token');
    if (r.status === 200) break;
    if (i > 200) throw new Error(`the reader is still refused: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  await c.expect(200, 'GET', '/api/v1/nodes/n1', 'node-token');
}

/** CPU seconds (user + system) the process has used, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** GETs per second: `n` requests from CONCURRENCY connections, alternating the reader and the node agent. */
async function getRate(c: Client, n: number): Promise<number> {
  let next = 0;
  let failures = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) {
        const r =
          i % 2 === 0
            ? await c.request('GET', '/api/v1/namespaces/default/configmaps/cm-0', 'reader-token')
            : await c.request('GET', '/api/v1/nodes/n1', 'node-token');
        if (r.status !== 200) failures++;
      }
    }),
  );
  const perSecond = n / ((performance.now() - t) / 1000);
  if (failures > 0) throw new Error(`${failures} of ${n} GETs failed`);
  return perSecond;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'security-bench-'));
  writeFileSync(join(root, 'tokens.csv'), `${TOKENS.join('\n')}\n`);
  writeFileSync(join(root, 'policy.yaml'), POLICY);
  const auditLog = join(root, 'audit.log');
  const servers: { name: string; server: ServerProcess; client: Client; rates: number[]; cpuMs: number[] }[] = [];
  try {
    const audit = [
      `--audit-policy-file=${join(root, 'policy.yaml')}`,
      `--audit-log-path=${auditLog}`,
      '--audit-log-mode=batch',
    ];
    const configs: [string, string[]][] = [
      ['AlwaysAllow, no audit', ['--authorization-mode=AlwaysAllow']],
      ['Node,RBAC + Metadata audit (batch)', ['--authorization-mode=Node,RBAC', ...audit]],
    ];
    // BENCH_BREAKDOWN=1: also each half alone, to see where the cost is.
    if (process.env.BENCH_BREAKDOWN)
      configs.push(
        ['Node,RBAC, no audit', ['--authorization-mode=Node,RBAC']],
        [
          'AlwaysAllow + Metadata audit (batch)',
          ['--authorization-mode=AlwaysAllow', ...audit.map((a) => a.replace('audit.log', 'audit2.log'))],
        ],
      );
    for (const [name, flags] of configs) {
      step(`starting the server: ${name}`);
      const dir = join(root, String(servers.length));
      const server = await startServer(dir, [...flags]);
      const client = new Client(server.url, server.ca, CONCURRENCY);
      await prepare(client);
      await getRate(client, Math.min(2000, GETS)); // warm up
      servers.push({ name, server, client, rates: [], cpuMs: [] });
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of servers) {
        step(`round ${round + 1}: ${s.name}`);
        const cpu = cpuSeconds(s.server.child.pid!);
        s.rates.push(await getRate(s.client, GETS));
        s.cpuMs.push(((cpuSeconds(s.server.child.pid!) - cpu) * 1e6) / GETS);
      }
    }
    const auditLines = readFileSync(auditLog, 'utf8')
      .split('\n')
      .filter((l) => l !== '').length;
    console.log(`\nGET throughput, ${CONCURRENCY} concurrent HTTPS clients, ${GETS} GETs per run, best of ${ROUNDS}`);
    console.log(`(${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)} at the end)\n`);
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const s of servers) {
      console.log(
        `${s.name.padEnd(40)} ${Math.max(...s.rates)
          .toFixed(0)
          .padStart(
            6,
          )} GETs/s (runs: ${s.rates.map((r) => r.toFixed(0)).join(', ')})   server CPU ${median(s.cpuMs).toFixed(0).padStart(5)} µs/GET (runs: ${s.cpuMs.map((c) => c.toFixed(0)).join(', ')})`,
      );
    }
    const base = servers[0]!;
    console.log(
      '\nagainst AlwaysAllow, no audit (throughput: best runs; CPU: the inverse ratio of the median CPU per GET,',
    );
    console.log('which is what throughput becomes when the server is the bottleneck, and steadier on a busy machine):');
    for (const s of servers.slice(1)) {
      const throughput = Math.max(...s.rates) / Math.max(...base.rates);
      const cpu = median(base.cpuMs) / median(s.cpuMs);
      console.log(
        `  ${s.name.padEnd(40)} throughput ${(throughput * 100).toFixed(0)}%   CPU-bound throughput ${(cpu * 100).toFixed(0)}%${s === servers[1] ? '   [target >= 85%]' : ''}`,
      );
    }
    console.log(`audit events written: ${auditLines}`);
  } finally {
    for (const s of servers) {
      s.client.close();
      await s.server.stop();
    }
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
