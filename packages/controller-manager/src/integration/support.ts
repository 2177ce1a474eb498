/**
 * Helpers of the controller manager's process tests: the API server binary (SQLite in a temporary directory, an
 * admin token, a client configuration file), the controller manager binary and the scheduler binary as processes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '@platform/apiserver';
import { Clientset, loadClientConfig, RestClient } from '@platform/client';

import { waitFor } from '../testing/harness';

const ROOT = join(__dirname, '..', '..', '..');
const APISERVER = join(ROOT, 'apiserver', 'bin', 'platform-apiserver');
const CONTROLLER_MANAGER = join(ROOT, 'controller-manager', 'bin', 'platform-controller-manager');
const SCHEDULER = join(ROOT, 'scheduler', 'bin', 'platform-scheduler');

/** A daemon started as a process. */
export interface DaemonProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or the signal) once it exited. */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

function launch(bin: string, args: string[], nodeArgs: string[] = []): DaemonProcess {
  const child = spawn(process.execPath, [...nodeArgs, bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return {
    child,
    output: () => out,
    exited,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

function readyz(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest(`${url}/readyz`, { rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** A running API server process with an admin client. */
export interface ApiServer {
  url: string;
  dir: string;
  clientConfigPath: string;
  client: Clientset;
  process: DaemonProcess;
  stop(): Promise<void>;
}

/**
 * Starts the API server binary on a free port, with a token file of one admin and a client configuration.
 * `nodeOptions` (space-separated) are given to its Node.js (`--cpu-prof` for the benchmark).
 */
export async function startApiServer(
  nodeOptions?: string,
  extraArgs: string[] | ((dir: string) => string[]) = [],
  o: { tokens?: string[]; files?: Record<string, string> } = {},
): Promise<ApiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'cm-it-'));
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const tokenFile = join(dir, 'tokens.csv');
  // More users (`token,user,uid,"group1,group2"` lines) and files (relative to the server's directory) a test needs.
  writeFileSync(tokenFile, ['cm-test-token,admin,admin,"system:masters"', ...(o.tokens ?? []), ''].join('\n'));
  for (const [name, content] of Object.entries(o.files ?? {})) writeFileSync(join(dir, name), content);
  const args = typeof extraArgs === 'function' ? extraArgs(dir) : extraArgs;
  const p = launch(
    APISERVER,
    [
      // The embedded store, unless the caller names its own (the flag adds to a list: it may not be given twice).
      ...(args.some((a) => a.startsWith('--store-servers='))
        ? []
        : [`--store-servers=sqlite://${join(dir, 'state.db')}`]),
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      `--cert-dir=${join(dir, 'pki')}`,
      `--token-auth-file=${tokenFile}`,
      ...args,
    ],
    nodeOptions ? nodeOptions.split(' ') : [],
  );
  // Generous: on a machine shared by many test runs (load 30 on 2 CPUs) the bootstrap hooks take over a minute.
  await waitFor('the API server to be ready', async () => (await readyz(url)) === 200, 180_000).catch(
    async (err: Error) => {
      // A server that never became ready is stopped here: the caller gets no handle to stop it.
      await p.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`${err.message}\n${p.output()}`);
    },
  );
  const clientConfigPath = join(dir, 'client.conf');
  writeFileSync(
    clientConfigPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: local',
      '  cluster:',
      `    server: ${url}`,
      '    certificate-authority: pki/apiserver.crt',
      'users:',
      '- name: admin',
      '  user:',
      '    token: cm-test-token',
      'contexts:',
      '- name: local',
      '  context: {cluster: local, user: admin, namespace: default}',
      'current-context: local',
      '',
    ].join('\n'),
  );
  const client = new Clientset(new RestClient({ ...loadClientConfig({ clientConfig: clientConfigPath }), qps: 0 }));
  return {
    url,
    dir,
    clientConfigPath,
    client,
    process: p,
    stop: async () => {
      client.rest.close();
      await p.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the controller manager binary against `api` (secure serving off unless `args` turn it on). */
export function startControllerManager(api: ApiServer, args: string[] = []): DaemonProcess {
  return launch(CONTROLLER_MANAGER, [`--clientconfig=${api.clientConfigPath}`, '--secure-port=0', ...args]);
}

/** Starts the scheduler binary against `api` (without leader election or serving; tests of controllers it works with). */
export function startScheduler(api: ApiServer, args: string[] = []): DaemonProcess {
  return launch(SCHEDULER, [
    `--clientconfig=${api.clientConfigPath}`,
    '--secure-port=0',
    '--port=0',
    '--leader-elect=false',
    ...args,
  ]);
}

/** Runs the controller manager binary to its exit (for bad command lines). */
export async function runControllerManager(args: string[]): Promise<{ code: number | string; output: string }> {
  const p = launch(CONTROLLER_MANAGER, args);
  const code = await p.exited;
  return { code, output: p.output() };
}
