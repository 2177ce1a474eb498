/**
 * Helpers of the client's integration tests: the API server binary as a process (restartable on the same port
 * and data), a client configuration file for it, and polling with a deadline.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '@platform/apiserver';

const BIN = join(__dirname, '..', '..', '..', 'apiserver', 'bin', 'platform-apiserver');

/** Polls `check` every 25 ms until it holds, or throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ok = false;
    try {
      ok = await check();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An API server process on the embedded store; `restart` keeps its port, certificate and data. */
export interface ApiServerProcess {
  url: string;
  dir: string;
  /** A client configuration file (kubeconfig) for it, with CA path and token. */
  clientConfigPath: string;
  start(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
  output(): string;
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

/** Prepares (does not start) an API server process. */
export async function apiServerProcess(extraArgs: string[] = []): Promise<ApiServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'client-it-'));
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let out = '';
  const clientConfigPath = join(dir, 'client.conf');
  // The token of the client configuration below, known to the server as an admin.
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, 'integration-test-token,admin,admin,"system:masters"\n');
  const p: ApiServerProcess = {
    url,
    dir,
    clientConfigPath,
    output: () => out,
    start: async () => {
      child = spawn(
        process.execPath,
        [
          BIN,
          `--store-servers=sqlite://${join(dir, 'state.db')}`,
          `--secure-port=${port}`,
          '--bind-address=127.0.0.1',
          `--cert-dir=${join(dir, 'pki')}`,
          `--token-auth-file=${tokenFile}`,
          ...extraArgs,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
      // Generous: on a loaded 2-CPU machine the process has needed over 30 s to load and serve.
      await waitFor('the API server to be ready', async () => (await readyz(url)) === 200, 90_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}\n${out}`);
        },
      );
      readFileSync(join(dir, 'pki', 'apiserver.crt'));
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
          '    token: integration-test-token',
          'contexts:',
          '- name: local',
          '  context: {cluster: local, user: admin, namespace: default}',
          'current-context: local',
          '',
        ].join('\n'),
      );
    },
    stop: async (signal = 'SIGTERM') => {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.on('exit', () => resolve()));
      c.kill(signal);
      await exited;
    },
  };
  return p;
}
