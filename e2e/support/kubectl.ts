/**
 * Debian's kubectl 1.20 for end-to-end tests, unpacked into the ignored `.cache/kubectl/` of the repository (never
 * installed system-wide, and never a kubectl already on PATH): `apt-get download kubernetes-client`, then
 * `dpkg -x`. Needs apt (CI runs as root); fails with a message saying what is missing otherwise.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from './process';

const DIR = join(ROOT, '.cache', 'kubectl');
const BIN = join(DIR, 'root', 'usr', 'bin', 'kubectl');

/** The path of the kubectl binary, fetching it on first use. */
export function ensureKubectl(): string {
  if (existsSync(BIN)) return BIN;
  mkdirSync(DIR, { recursive: true });
  let download = spawnSync('apt-get', ['download', 'kubernetes-client'], { cwd: DIR, encoding: 'utf8' });
  if (download.status !== 0) {
    // The package lists may be missing on a fresh machine.
    spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8' });
    download = spawnSync('apt-get', ['download', 'kubernetes-client'], { cwd: DIR, encoding: 'utf8' });
  }
  const deb = readdirSync(DIR).find((f) => f.startsWith('kubernetes-client_') && f.endsWith('.deb'));
  if (!deb)
    throw new Error(`could not download Debian's kubernetes-client with apt-get: ${download.stderr ?? download.error}`);
  execFileSync('dpkg', ['-x', join(DIR, deb), join(DIR, 'root')]);
  if (!existsSync(BIN)) throw new Error(`kubernetes-client unpacked but ${BIN} is missing`);
  return BIN;
}

/** The outcome of one kubectl run. */
export interface KubectlResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs kubectl with an explicit client configuration. */
export function kubectl(
  kubeconfig: string,
  args: string[],
  input?: string,
  env?: Record<string, string>,
): KubectlResult {
  const r = spawnSync(ensureKubectl(), ['--kubeconfig', kubeconfig, ...args], {
    encoding: 'utf8',
    input,
    timeout: 60_000,
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Writes a client configuration for a test server into `dir` (its CA as `ca.crt`, a bearer token the test servers
 * accept, namespace `default`) and returns its path.
 */
export function writeKubeconfig(dir: string, server: { url: string; ca: string | Buffer }): string {
  writeFileSync(join(dir, 'ca.crt'), server.ca);
  const path = join(dir, 'config');
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "${server.url}", certificate-authority: "${join(dir, 'ca.crt')}"}
users:
- name: anonymous
  user: {token: test-token}
contexts:
- name: test
  context: {cluster: test, user: anonymous, namespace: default}
current-context: test
`,
  );
  return path;
}
