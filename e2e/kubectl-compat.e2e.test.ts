/**
 * Debian's kubectl 1.20 as it is, against an in-process API server: the requests it hard-codes with Kubernetes'
 * `.k8s.io` spellings (the `g=meta.k8s.io` Table of `kubectl get`) are answered as their `.platform` aliases, and
 * `kubectl certificate` finds `certificates.k8s.io` in discovery (the groups listed under both names).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startTestServer, type TestServer } from '@platform/apiserver';
import { createCertificateRequest } from '@platform/common';

import { ensureKubectl, writeKubeconfig, type KubectlResult } from './support/kubectl';

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
  kubeconfig = writeKubeconfig(dir, server);
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

describe("kubectl's typed commands on .k8s.io paths (aliases of the .platform groups)", () => {
  it('kubectl auth can-i create pods (authorization.k8s.io)', async () => {
    expect(ok(await k(['auth', 'can-i', 'create', 'pods'])).trim()).toBe('yes');
  });

  it('kubectl create clusterrole (rbac.authorization.k8s.io), stored in the .platform group', async () => {
    expect(ok(await k(['create', 'clusterrole', 'x', '--verb=get', '--resource=pods']))).toContain(
      'clusterrole.rbac.authorization.k8s.io/x created',
    );
    const stored = await server.request('GET', '/apis/rbac.authorization.platform/v1/clusterroles/x');
    expect([stored.status, stored.json.apiVersion, stored.json.rules]).toEqual([
      200,
      'rbac.authorization.platform/v1',
      [expect.objectContaining({ verbs: ['get'], resources: ['pods'] })],
    ]);
  });

  it('kubectl create rolebinding and clusterrolebinding', async () => {
    expect(ok(await k(['create', 'rolebinding', 'rb', '--clusterrole=x', '--user=alice']))).toContain(
      'rolebinding.rbac.authorization.k8s.io/rb created',
    );
    expect(ok(await k(['create', 'clusterrolebinding', 'crb', '--clusterrole=x', '--group=devs']))).toContain(
      'clusterrolebinding.rbac.authorization.k8s.io/crb created',
    );
    expect(ok(await k(['create', 'role', 'r', '--verb=list', '--resource=configmaps']))).toContain(
      'role.rbac.authorization.k8s.io/r created',
    );
    const rb = await server.request('GET', '/apis/rbac.authorization.platform/v1/namespaces/default/rolebindings/rb');
    expect([rb.json.roleRef.apiGroup, rb.json.subjects[0].apiGroup]).toEqual([
      'rbac.authorization.platform',
      'rbac.authorization.platform',
    ]);
  });

  it('kubectl create priorityclass (scheduling.k8s.io)', async () => {
    expect(ok(await k(['create', 'priorityclass', 'high', '--value=1000']))).toContain(
      'priorityclass.scheduling.k8s.io/high created',
    );
  });

  it('kubectl describe node (its Lease read from coordination.k8s.io)', async () => {
    // kubectl 1.20 reads the Lease from Kubernetes' `kube-node-lease` namespace (the platform's is `node-lease`).
    await mustCreate('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'kube-node-lease' },
    });
    const lease = await server.request('POST', '/apis/coordination.platform/v1/namespaces/kube-node-lease/leases', {
      body: {
        apiVersion: 'coordination.platform/v1',
        kind: 'Lease',
        metadata: { name: 'n1' },
        spec: { holderIdentity: 'n1', leaseDurationSeconds: 40 },
      },
    });
    expect(lease.status).toBe(201);
    const out = ok(await k(['describe', 'node', 'n1']));
    expect(out).toMatch(/^Name:\s+n1$/m);
    expect(out).toMatch(/^\s+HolderIdentity:\s+n1$/m);
  });

  it('answers objects in the spelling of the path, and reads Kubernetes-spelled bodies', async () => {
    const got = await server.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/x');
    expect([got.status, got.json.apiVersion]).toEqual([200, 'rbac.authorization.k8s.io/v1']);
    const list = await server.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles?limit=2');
    expect(list.json.apiVersion).toBe('rbac.authorization.k8s.io/v1');
    const missing = await server.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/nope');
    expect([missing.status, missing.json.details.group]).toEqual([404, 'rbac.authorization.k8s.io']);
    // Discovery lists .platform groups, and the Kubernetes name only of the groups kubectl looks up by it, each
    // directly before its .platform group (kubectl's RESTMapper takes the first).
    const names = ((await server.request('GET', '/apis')).json.groups as { name: string }[]).map((g) => g.name);
    expect(names.filter((n) => n.includes('k8s.io'))).toEqual(['certificates.k8s.io']);
    expect(names.indexOf('certificates.platform') - names.indexOf('certificates.k8s.io')).toBe(1);
    expect((await server.request('GET', '/apis/nothing.k8s.io/v1/things')).status).toBe(404);
  });
});

describe('kubectl certificate approve|deny (certificatesigningrequests.v1.certificates.k8s.io through discovery)', () => {
  async function csr(name: string): Promise<void> {
    const { csrPem } = await createCertificateRequest({ commonName: `user-${name}`, organizations: ['team'] });
    await mustCreate('/apis/certificates.platform/v1/certificatesigningrequests', {
      apiVersion: 'certificates.platform/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: {
        request: Buffer.from(csrPem).toString('base64'),
        signerName: 'platform.io/apiserver-client',
        usages: ['digital signature', 'key encipherment', 'client auth'],
      },
    });
  }

  async function conditions(name: string): Promise<{ type: string; status: string; reason?: string }[]> {
    const r = await server.request('GET', `/apis/certificates.platform/v1/certificatesigningrequests/${name}`);
    return r.json.status?.conditions ?? [];
  }

  it('kubectl certificate approve sets the Approved condition', async () => {
    await csr('csr-approve');
    expect(ok(await k(['certificate', 'approve', 'csr-approve']))).toContain(
      'certificatesigningrequest.certificates.k8s.io/csr-approve approved',
    );
    expect(await conditions('csr-approve')).toEqual([
      expect.objectContaining({ type: 'Approved', status: 'True', reason: 'KubectlApprove' }),
    ]);
  });

  it('kubectl certificate deny sets the Denied condition', async () => {
    await csr('csr-deny');
    expect(ok(await k(['certificate', 'deny', 'csr-deny']))).toContain(
      'certificatesigningrequest.certificates.k8s.io/csr-deny denied',
    );
    expect(await conditions('csr-deny')).toEqual([
      expect.objectContaining({ type: 'Denied', status: 'True', reason: 'KubectlDeny' }),
    ]);
  });

  it('kubectl get csr and api-resources work with the resource under both names', async () => {
    const got = await k(['get', 'csr']);
    expect(got.stderr).toBe('');
    expect(ok(got)).toMatch(/^csr-approve\s/m);
    const resources = await k(['api-resources']);
    expect(resources.stderr).toBe('');
    const csrLines = ok(resources)
      .split('\n')
      .filter((l) => l.startsWith('certificatesigningrequests '));
    expect(csrLines.map((l) => l.split(/\s+/)[2]).sort()).toEqual([
      'certificates.k8s.io/v1',
      'certificates.platform/v1',
    ]);
  });
});
