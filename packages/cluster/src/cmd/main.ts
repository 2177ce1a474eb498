/**
 * `platform up` (what `npm start` runs): a whole local cluster on this machine. The daemons run as child processes
 * on the embedded store in the state directory (`.platform/` by default), so data survives restarts; Ctrl-C (or
 * SIGTERM) stops them all gracefully. The other daemons join as they are built.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join, resolve } from 'node:path';

import { Command, InvalidArgumentError } from 'commander';

import { Clientset, loadClientConfig, RestClient } from '@platform/client';

import { ensureAnonymousDiscovery } from '../anonymous-discovery';
import { runClusterRoleAggregationController } from '../cluster-role-aggregation';
import { clusterFiles, ensureCredentials, writeKubeconfig } from '../pki';
import { runServiceAccountsController } from '../service-accounts';

const READY_TIMEOUT_MS = 60_000;

function apiServerBin(): string {
  return join(dirname(require.resolve('@platform/apiserver')), '..', 'bin', 'platform-apiserver');
}

function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 65535)
    throw new InvalidArgumentError('must be a port number between 1 and 65535');
  return n;
}

/** Whether a GET of `path` without credentials answers 200. */
function anonymousOK(url: string, ca: string, path: string): Promise<boolean> {
  return new Promise((done) => {
    const req = request(`${url}${path}`, { ca, timeout: 2000 }, (res) => {
      res.resume();
      done(res.statusCode === 200);
    });
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** A daemon child whose output is prefixed with its name. */
function run(name: string, bin: string, args: string[]): ChildProcess {
  // Its own process group: a terminal's Ctrl-C reaches only the launcher, which stops the children once, gracefully
  // (a second signal would make a daemon exit at once).
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  process.on('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const prefix = (stream: NodeJS.ReadableStream | null, out: NodeJS.WritableStream): void => {
    let partial = '';
    stream?.on('data', (c: Buffer) => {
      const lines = (partial + c.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) out.write(`[${name}] ${line}\n`);
    });
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  return child;
}

/** Runs `platform` with `argv`; resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command('platform').description('A local cluster of the platform on this machine.');
  let code = 0;
  program
    .command('up')
    .description('start the API server (and the other daemons as they exist) on the embedded store; Ctrl-C stops them')
    .option('--dir <path>', 'state directory: the store, certificates, token and client configuration', '.platform')
    .option('--port <port>', 'secure port of the API server', parsePort, 6443)
    .option('--bind-address <ip>', 'address the API server listens on', '127.0.0.1')
    .action(async (o: { dir: string; port: number; bindAddress: string }) => {
      code = await up(resolve(o.dir), o.port, o.bindAddress);
    });
  program.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version') return 0;
    return e.exitCode ?? 1;
  }
  return code;
}

async function up(dir: string, port: number, bindAddress: string): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const f = clusterFiles(dir);
  const host = bindAddress === '0.0.0.0' ? '127.0.0.1' : bindAddress;
  const token = await ensureCredentials(f, host);
  const url = `https://${host}:${port}`;
  writeKubeconfig(f, url, token);
  const ca = readFileSync(f.caFile, 'utf8');

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  const exited = new Promise<number>((resolveExit) => {
    const apiserver = run('apiserver', apiServerBin(), [
      `--store-servers=sqlite://${f.store}`,
      `--secure-port=${port}`,
      `--bind-address=${bindAddress}`,
      `--cert-dir=${f.pkiDir}`,
      `--token-auth-file=${f.tokenAuthFile}`,
      '--authorization-mode=Node,RBAC',
    ]);
    children.set('apiserver', apiserver);
    apiserver.on('exit', (c) => {
      children.delete('apiserver');
      if (!stopping) {
        process.stderr.write(`platform: the API server exited unexpectedly (code ${String(c)}); stopping\n`);
        void stopAll().then(() => resolveExit(1));
      } else if (children.size === 0) resolveExit(0);
    });
  });
  const controllers = new AbortController();
  const stopAll = async (): Promise<void> => {
    stopping = true;
    controllers.abort();
    for (const child of children.values()) child.kill('SIGTERM');
  };
  const onSignal = (): void => {
    if (stopping) return;
    process.stdout.write('\nplatform: stopping...\n');
    void stopAll();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!stopping && !(await anonymousOK(url, ca, '/readyz'))) {
    if (Date.now() > deadline) {
      process.stderr.write(
        `platform: the API server did not become ready within ${READY_TIMEOUT_MS / 1000}s; stopping\n`,
      );
      await stopAll();
      return (await exited) || 1;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!stopping) {
    const clientset = new Clientset(new RestClient(loadClientConfig({ clientConfig: f.kubeconfig })));
    // Anonymous requests: health checks, the version and discovery.
    try {
      await ensureAnonymousDiscovery(clientset);
      // The authorizer follows the bindings through a watch: ready once it has this one.
      for (let i = 0; i < 50 && !stopping && !(await anonymousOK(url, ca, '/api')); i++)
        await new Promise((r) => setTimeout(r, 100));
    } catch (err) {
      process.stderr.write(`platform: could not open discovery to anonymous requests: ${String(err)}\n`);
    }
    // The controller manager's serviceaccount and clusterrole-aggregation controllers, until that daemon joins:
    // pods need a `default` ServiceAccount in their namespace, and ClusterRoles labelled to aggregate into `view`,
    // `edit` or `admin` (or any role with an aggregation rule) extend it. Both stop when `controllers` aborts.
    void runServiceAccountsController(clientset, controllers.signal, (namespace, err) =>
      process.stderr.write(
        `[serviceaccounts] could not create the default ServiceAccount of ${namespace}: ${String(err)}\n`,
      ),
    );
    void runClusterRoleAggregationController(clientset, controllers.signal, (name, err) =>
      process.stderr.write(
        `[clusterrole-aggregation] could not aggregate the rules of ClusterRole ${name}: ${String(err)}\n`,
      ),
    );
    process.stdout.write(
      [
        '',
        'platform is running.',
        `  API server:   ${url}`,
        `  admin token:  ${token}  (kept in ${f.tokenFile})`,
        `  kubeconfig:   ${f.kubeconfig}`,
        `  state:        ${f.store}`,
        '',
        `  Try: kubectl --kubeconfig ${f.kubeconfig} get namespaces`,
        '',
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
  }
  return exited;
}
