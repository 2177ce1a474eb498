/**
 * Security benchmark (`npm run bench -- security`): GET throughput of the API server with its security on
 * (`--authorization-mode=Node,RBAC` and Metadata-level audit to a log file in batch mode) against the same server
 * with `--authorization-mode=AlwaysAllow` and no audit. Both use the same static tokens (`--token-auth-file`), so
 * authentication costs the same; the difference is authorization and audit. Issue 5's target: at least 85%.
 *
 * Each server runs as a child process (the `platform-apiserver` command, compiled or from its sources) on the
 * embedded store; the clients (this process) send GETs from 32 concurrent keep-alive HTTPS connections: half by a
 * user allowed by an RBAC binding to the `view` ClusterRole (a ConfigMap), half by the node agent `system:node:n1`
 * (its Node, through the Node authorizer). Each round runs both servers back to back, in alternating order, and the
 * figures are medians over the rounds (of the per-round ratios for the comparison).
 * Figures are printed, never asserted. BENCH_SERVER_NODE_ARGS adds options to the servers' Node (profiling).
 * BENCH_GETS sets the GETs per run (default 20000); BENCH_BREAKDOWN=1 also
 * measures RBAC/Node alone and audit alone.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../storage/testing/etcd';
import { BenchClient, type ServerProcess, startServerProcess, step } from '../testing/bench-server';

const CONCURRENCY = 32;
const GETS = Number(process.env.BENCH_GETS ?? 20000);
/** Rounds; each runs every server once, in alternating order (ABBA), and ratios are taken per round. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);

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
  return startServerProcess({ args, port, certDir, readyTimeoutMs: 90_000, readyToken: 'admin-token' });
}

/** Objects the GETs read, and the RBAC binding of the reader (the Node authorizer needs none). */
async function prepare(c: BenchClient): Promise<void> {
  await c.as('admin-token').expect(201, 'POST', '/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm-0' },
    data: { 'config.yaml': `padding: ${'x'.repeat(400)}\n` },
  });
  await c.as('admin-token').expect(201, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1' },
  });
  await c.as('admin-token').expect(201, 'POST', '/apis/rbac.authorization.platform/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.platform/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'readers-view' },
    roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.platform', name: 'readers' }],
  });
  // The RBAC index follows its watch: wait until the binding takes effect.
  for (let i = 0; ; i++) {
    const r = await c.as('reader-token').request('GET', '/api/v1/namespaces/default/configmaps/cm-0');
    if (r.status === 200) break;
    if (i > 200) throw new Error(`the reader is still refused: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  await c.as('node-token').expect(200, 'GET', '/api/v1/nodes/n1');
}

/** CPU seconds (user + system) the process has used, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** GETs per second: `n` requests from CONCURRENCY connections, alternating the reader and the node agent. */
async function getRate(c: BenchClient, n: number): Promise<number> {
  const reader = c.as('reader-token');
  const node = c.as('node-token');
  let next = 0;
  let failures = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) {
        const r =
          i % 2 === 0
            ? await reader.request('GET', '/api/v1/namespaces/default/configmaps/cm-0')
            : await node.request('GET', '/api/v1/nodes/n1');
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
  const servers: { name: string; server: ServerProcess; client: BenchClient; rates: number[]; cpuMs: number[] }[] = [];
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
      const client = new BenchClient(server.url, server.ca, CONCURRENCY);
      await prepare(client);
      await getRate(client, Math.min(2000, GETS)); // warm up
      servers.push({ name, server, client, rates: [], cpuMs: [] });
    }
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating order, so that whatever the previous run leaves behind (its GC, the audit log's last writes) and
      // slow drifts of the machine weigh on every server alike.
      for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
        step(`round ${round + 1}: ${s.name}`);
        const cpu = cpuSeconds(s.server.child.pid!);
        s.rates.push(await getRate(s.client, GETS));
        s.cpuMs.push(((cpuSeconds(s.server.child.pid!) - cpu) * 1e6) / GETS);
      }
    }
    // The log rotates every 100 MB: its backups (audit-<time>.log) count too.
    let auditLines = 0;
    for (const name of readdirSync(root).filter((n) => /^audit(-.*)?\.log$/.test(n)))
      for (const l of readFileSync(join(root, name), 'utf8').split('\n')) if (l !== '') auditLines++;
    console.log(`\nGET throughput, ${CONCURRENCY} concurrent HTTPS clients, ${GETS} GETs per run, ${ROUNDS} rounds`);
    console.log(`(${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)} at the end)\n`);
    const median = (xs: number[]): number => {
      const sorted = [...xs].sort((a, b) => a - b);
      const mid = sorted.length >> 1;
      return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    };
    for (const s of servers) {
      console.log(
        `${s.name.padEnd(40)} ${median(s.rates)
          .toFixed(0)
          .padStart(
            6,
          )} GETs/s median (runs: ${s.rates.map((r) => r.toFixed(0)).join(', ')})   server CPU ${median(s.cpuMs).toFixed(0).padStart(5)} µs/GET (runs: ${s.cpuMs.map((c) => c.toFixed(0)).join(', ')})`,
      );
    }
    const base = servers[0]!;
    console.log(
      "\nagainst AlwaysAllow, no audit, the median over rounds of each round's ratio (the two servers ran back to back):",
    );
    console.log(
      'throughput, and CPU-bound throughput (the inverse ratio of server CPU per GET: what throughput becomes when the',
    );
    console.log('server is the bottleneck; steadier on a busy machine):');
    for (const s of servers.slice(1)) {
      const throughput = median(s.rates.map((r, i) => r / base.rates[i]!));
      const cpu = median(s.cpuMs.map((c, i) => base.cpuMs[i]! / c));
      console.log(
        `  ${s.name.padEnd(40)} throughput ${(throughput * 100).toFixed(0)}%   CPU-bound throughput ${(cpu * 100).toFixed(0)}%${s === servers[1] ? '   [target >= 85%]' : ''}`,
      );
    }
    const served = Math.min(2000, GETS) + ROUNDS * GETS;
    console.log(
      `audit events written: ${auditLines} (two per request: ${served} GETs and the few requests of the set-up)`,
    );
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
