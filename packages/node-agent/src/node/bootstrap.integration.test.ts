import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type CertificateSigningRequest, CertificateSigningRequestKind } from '@platform/api';
import { startTestServer, testCA, type TestCA, testLogger, type TestServer } from '@platform/apiserver';
import { Clientset, loadClientConfig, RestClient } from '@platform/client';
import { parseCertificateRequest, signCertificateRequest } from '@platform/common';

import { bootstrapClientCertificate, clientConfigUsable } from './bootstrap';

// The agent's side of the bootstrap against a real API server; the test plays the approver and the signer (the
// controller manager's side has its own test).
let server: TestServer;
let ca: TestCA;
let dir: string;
let admin: Clientset;

beforeAll(async () => {
  server = await startTestServer();
  ca = await testCA('cluster-ca');
  dir = mkdtempSync(join(tmpdir(), 'agent-bootstrap-'));
  admin = new Clientset(new RestClient({ server: server.url, ca: Buffer.from(server.ca), token: 't', qps: 0 }));
  writeFileSync(
    join(dir, 'bootstrap.conf'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: c\n  cluster:\n    server: ${server.url}\n    certificate-authority-data: ${Buffer.from(server.ca).toString('base64')}`,
      'users:',
      '- name: u\n  user:\n    token: bootstrap-token',
      'contexts:',
      '- name: x\n  context: {cluster: c, user: u}',
      'current-context: x',
      '',
    ].join('\n'),
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Answers the first request that shows up: approves and signs it, or denies it. */
async function answer(decision: 'sign' | 'deny'): Promise<CertificateSigningRequest> {
  const csrs = admin.resource(CertificateSigningRequestKind);
  for (let i = 0; ; i++) {
    const [csr] = (await csrs.list()).items.filter((c) => !c.status?.conditions?.length);
    if (csr) {
      const name = csr.metadata!.name!;
      const type = decision === 'sign' ? 'Approved' : 'Denied';
      const approved = await csrs.updateSubresource<CertificateSigningRequest>(name, 'approval', {
        ...csr,
        status: { conditions: [{ type, status: 'True', reason: 'Test', message: 'by the test' }] },
      } as never);
      if (decision === 'deny') return approved;
      const request = parseCertificateRequest(Buffer.from(csr.spec.request, 'base64'));
      const pem = await signCertificateRequest(ca, { request, usages: csr.spec.usages ?? [], durationMs: 3600_000 });
      return csrs.updateStatus({
        ...approved,
        status: { ...approved.status, certificate: Buffer.from(pem).toString('base64') },
      });
    }
    if (i > 600) throw new Error('no certificate signing request showed up');
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a missing client configuration is bootstrapped: key, request, certificate, client configuration', async () => {
  const clientConfigPath = join(dir, 'agent.conf');
  expect(clientConfigUsable(clientConfigPath)).toBe(false);
  const [, issued] = await Promise.all([
    bootstrapClientCertificate({
      clientConfigPath,
      bootstrapConfigPath: join(dir, 'bootstrap.conf'),
      certDir: join(dir, 'pki'),
      nodeName: 'node-1',
      log: testLogger(),
      signal: new AbortController().signal,
    }),
    answer('sign'),
  ]);
  expect(issued.spec).toMatchObject({
    signerName: 'platform.io/apiserver-client-node-agent',
    usages: ['digital signature', 'key encipherment', 'client auth'],
  });
  expect(clientConfigUsable(clientConfigPath)).toBe(true);
  const c = loadClientConfig({ clientConfig: clientConfigPath });
  expect(c.server).toBe(server.url);
  const cert = new X509Certificate(c.cert!);
  expect(cert.subject.split('\n').sort()).toEqual(['CN=system:node:node-1', 'O=system:nodes']);
  expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  // The written configuration works: the server answers with it (it trusts the bootstrap configuration's CA).
  const agent = new Clientset(new RestClient({ ...c, qps: 0 }));
  expect((await agent.resource(CertificateSigningRequestKind).list()).items.length).toBeGreaterThan(0);
  agent.rest.close();
  // A usable configuration is kept: no new request.
  const before = (await admin.resource(CertificateSigningRequestKind).list()).items.length;
  await bootstrapClientCertificate({
    clientConfigPath,
    bootstrapConfigPath: join(dir, 'bootstrap.conf'),
    certDir: join(dir, 'pki'),
    nodeName: 'node-1',
    log: testLogger(),
    signal: new AbortController().signal,
  });
  expect((await admin.resource(CertificateSigningRequestKind).list()).items.length).toBe(before);
}, 180_000);

test('a denied request fails the bootstrap, saying so', async () => {
  await expect(
    Promise.all([
      bootstrapClientCertificate({
        clientConfigPath: join(dir, 'other.conf'),
        bootstrapConfigPath: join(dir, 'bootstrap.conf'),
        certDir: join(dir, 'pki-2'),
        nodeName: 'node-2',
        log: testLogger(),
        signal: new AbortController().signal,
      }),
      answer('deny'),
    ]),
  ).rejects.toThrow(/was denied: Test by the test/);
}, 180_000);
