/**
 * Helpers of the node agent's integration tests: an in-process API server (`startTestServer`), a client
 * configuration file for it, the agent binary as a process, and polling with a deadline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort, startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, loadClientConfig, RestClient } from '@platform/client';

const BIN = join(__dirname, '..', '..', 'bin', 'platform-node-agent');

/**
 * The V8 flag the agent is deployed with (deploy/systemd): semi-spaces of at most 1 MiB instead of V8's 16 MiB. The
 * agent allocates little that lives long; the default young generation grew to 32 MiB of resident memory (a quarter
 * of the agent's RSS with 100 pods) for no measurable gain. (`--optimize-for-size`, refused by NODE_OPTIONS, the agent
 * sets itself.)
 */
export const AGENT_NODE_FLAGS = ['--max-semi-space-size=1'];

/** Polls `check` every 50 ms until it holds, or throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    let ok = false;
    try {
      ok = await check();
    } catch (err) {
      last = err;
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An API server and a client of it. */
export interface TestCluster {
  server: TestServer;
  dir: string;
  clientConfigPath: string;
  clientset: Clientset;
  stop(): Promise<void>;
}

/**
 * Starts an in-process API server and writes a client configuration for it; `options` are the test server's (e.g. an
 * authorizer of the test's own).
 */
export async function startCluster(options?: Parameters<typeof startTestServer>[0]): Promise<TestCluster> {
  const server = await startTestServer(options);
  const dir = mkdtempSync(join(tmpdir(), 'node-agent-it-'));
  const clientConfigPath = join(dir, 'client.conf');
  writeFileSync(join(dir, 'ca.crt'), server.ca);
  writeFileSync(
    clientConfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: local',
      '  cluster:',
      `    server: ${server.url}`,
      '    certificate-authority: ca.crt',
      'users:',
      '- name: admin',
      '  user: {token: test-token}',
      'contexts:',
      '- name: local',
      '  context: {cluster: local, user: admin, namespace: default}',
      'current-context: local',
      '',
    ].join('\n'),
  );
  const rest = new RestClient({ ...loadClientConfig({ clientConfig: clientConfigPath }), qps: 0 });
  return {
    server,
    dir,
    clientConfigPath,
    clientset: new Clientset(rest),
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A node agent process. */
export interface AgentProcess {
  child: ChildProcess;
  rootDir: string;
  ports: { port: number; readOnly: number; healthz: number };
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `platform-node-agent` against the cluster (`lib/` must be built). `PLATFORM_AGENT_NODE_FLAGS` adds Node
 * flags to the agent's (e.g. `--cpu-prof` or `--heapsnapshot-signal=SIGUSR2` in a benchmark).
 */
export async function startAgent(c: TestCluster, nodeName: string, extra: string[] = []): Promise<AgentProcess> {
  const rootDir = mkdtempSync(join(tmpdir(), 'node-agent-root-'));
  const ports = { port: await freePort(), readOnly: await freePort(), healthz: await freePort() };
  const child = spawn(
    process.execPath,
    [
      // As deployed (deploy/systemd): a small young generation keeps the agent's RSS down (docs/node-agent.md).
      ...AGENT_NODE_FLAGS,
      ...(process.env.PLATFORM_AGENT_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      BIN,
      `--clientconfig=${c.clientConfigPath}`,
      `--hostname-override=${nodeName}`,
      '--node-ip=127.0.0.1',
      `--root-dir=${rootDir}`,
      `--cert-dir=${join(rootDir, 'pki')}`,
      '--address=127.0.0.1',
      `--port=${ports.port}`,
      `--read-only-port=${ports.readOnly}`,
      `--healthz-port=${ports.healthz}`,
      '--fail-swap-on=false',
      '--api-qps=50',
      '--api-burst=100',
      '--logtostderr',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  return {
    child,
    rootDir,
    ports,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill(signal);
        const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(rootDir, { recursive: true, force: true });
    },
  };
}
