/**
 * Debian's kubectl 1.20 as it is, against an in-process API server: the requests it hard-codes with Kubernetes'
 * `.k8s.io` spellings (the `g=meta.k8s.io` Table of `kubectl get`) are answered as their `.platform` aliases.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestServer, type TestServer } from '@platform/apiserver';

import { ensureKubectl, type KubectlResult } from './support/kubectl';

let server: TestServer;
let dir: string;
let kubeconfig: string;

async function mustCreate(path: string, body: unknown): Promise<void> {
  const r = await server.request('POST', path, { body });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
}

beforeAll(async () => {
  ensureKubectl();
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'kubectl-compat-'));
  writeFileSync(join(dir, 'ca.crt'), server.ca);
  kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
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
  await mustCreate('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p1' },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });
  await mustCreate('/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });
  await mustCreate('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs kubectl without blocking this process's event loop (the server runs in it). */
function k(args: string[]): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(ensureKubectl(), ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const status = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

function ok(r: KubectlResult): string {
  if (r.status !== 0) throw new Error(`kubectl failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout;
}

/** The header line of `kubectl get` output, split into its columns. */
function header(out: string): string[] {
  return (out.split('\n')[0] ?? '').trim().split(/\s{2,}/);
}

describe('kubectl get prints the columns of each kind (Table of meta.k8s.io)', () => {
  it.each([
    [['get', 'pods'], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'], 'p1'],
    [['get', 'deployments'], ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'], 'web'],
    [['get', 'nodes'], ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'], 'n1'],
    [['get', 'pods', '-o', 'wide'], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE'], 'p1'],
  ])('kubectl %p', async (args, columns, name) => {
    const out = ok(await k(args));
    expect(header(out).slice(0, columns.length)).toEqual(columns);
    expect(out.split('\n')[1]).toMatch(new RegExp(`^${name}\\s`));
  });
});
