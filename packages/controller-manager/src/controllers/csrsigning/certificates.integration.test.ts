import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
  ClusterRoleBindingKind,
  isNotFound,
  NodeKind,
  SIGNER_NAMES,
} from '@platform/api';
import { testCA, type TestCA } from '@platform/apiserver';
import { Clientset, RestClient } from '@platform/client';
import { createCertificateRequest } from '@platform/common';

import { type ApiServer, type DaemonProcess, startApiServer, startControllerManager } from '../../integration/support';
import { waitFor } from '../../testing/harness';

// A real API server (RBAC, client certificates of the cluster CA) and a real controller manager running the three
// certificate controllers as their ServiceAccount (certificate-controller), within its bootstrap role.
const KUBECTL = join(__dirname, '..', '..', '..', '..', '..', '.cache', 'kubectl', 'root', 'usr', 'bin', 'kubectl');
const BOOTSTRAP = { token: 'bootstrap-abcdef', user: 'system:bootstrap:abcdef' };
const NOBODY = { token: 'nobody-token', user: 'nobody' };
// May create requests (system:node-bootstrapper) but not have node client requests approved automatically.
const REQUESTER = { token: 'requester-token', user: 'requester' };
const HOUR = 3600_000;
// Each test waits on two processes that share a busy machine: generous deadlines, never timings.

let api: ApiServer;
let cm: DaemonProcess | undefined;
let ca: TestCA;

function clientAs(o: { token?: string; cert?: string; key?: string; json?: boolean }): Clientset {
  return new Clientset(
    new RestClient({
      server: api.url,
      ca: readFileSync(join(api.dir, 'pki', 'apiserver.crt')),
      ...(o.token ? { token: o.token } : {}),
      ...(o.cert ? { cert: Buffer.from(o.cert), key: Buffer.from(o.key ?? '') } : {}),
      ...(o.json ? { contentType: 'application/json' } : {}),
      qps: 0,
    }),
  );
}

const csrs = (c: Clientset = api.client) => c.resource(CertificateSigningRequestKind);

async function requestAs(
  client: Clientset,
  name: string,
  signerName: string,
  subject: { cn: string; orgs?: string[] },
  usages = ['digital signature', 'key encipherment', 'client auth'],
): Promise<string> {
  const { csrPem, keyPem } = await createCertificateRequest({
    commonName: subject.cn,
    organizations: subject.orgs ?? [],
  });
  await client.resource(CertificateSigningRequestKind).create({
    metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName, usages },
  });
  return keyPem;
}

async function waitForCsr(
  name: string,
  what: string,
  check: (csr: CertificateSigningRequest) => boolean,
): Promise<CertificateSigningRequest> {
  let csr: CertificateSigningRequest | undefined;
  await waitFor(
    `${what} (${name})`,
    async () => {
      csr = await csrs().get(name);
      return check(csr);
    },
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${JSON.stringify(csr?.status)}\n${cm?.output().slice(-3000) ?? ''}`);
  });
  return csr!;
}

function certificateOf(csr: CertificateSigningRequest): X509Certificate {
  return new X509Certificate(Buffer.from(csr.status?.certificate ?? '', 'base64'));
}

beforeAll(async () => {
  ca = await testCA('cluster-ca');
  api = await startApiServer(
    undefined,
    (dir) => [
      '--authorization-mode=RBAC',
      `--client-ca-file=${join(dir, 'ca.crt')}`,
      '--service-account-issuer=https://platform.local',
      `--service-account-key-file=${join(dir, 'sa.key')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
    ],
    {
      tokens: [
        `${BOOTSTRAP.token},${BOOTSTRAP.user},u-boot,"system:bootstrappers"`,
        `${NOBODY.token},${NOBODY.user},u-nobody`,
        `${REQUESTER.token},${REQUESTER.user},u-requester,"requesters"`,
      ],
      files: {
        'ca.crt': ca.certPem,
        'ca.key': ca.keyPem,
        'sa.key': generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
          type: 'pkcs8',
          format: 'pem',
        }) as string,
      },
    },
  );
  // What a cluster's bootstrap-token setup binds (kubeadm does in Kubernetes): bootstrappers may request node
  // client certificates, and have them approved automatically.
  for (const role of [
    'system:node-bootstrapper',
    'system:certificates.platform:certificatesigningrequests:nodeclient',
  ]) {
    await api.client.resource(ClusterRoleBindingKind).create({
      metadata: { name: `bootstrappers-${role.replace(/[^a-z-]/g, '-')}` },
      roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.platform', kind: 'Group', name: 'system:bootstrappers' }],
    });
  }
  await api.client.resource(ClusterRoleBindingKind).create({
    metadata: { name: 'requesters' },
    roleRef: { apiGroup: 'rbac.authorization.platform', kind: 'ClusterRole', name: 'system:node-bootstrapper' },
    subjects: [{ apiGroup: 'rbac.authorization.platform', kind: 'Group', name: 'requesters' }],
  });
  // Finished long ago, before the controller manager started: the cleaner's first pass deletes it.
  await requestAs(api.client, 'old-denied', 'example.com/custom', { cn: 'someone' });
  const stale = new Date(Date.now() - 2 * HOUR).toISOString().replace(/\.\d+Z$/, 'Z');
  const old = await csrs().get('old-denied');
  await csrs().updateSubresource('old-denied', 'approval', {
    ...old,
    status: { conditions: [{ type: 'Denied', status: 'True', reason: 'Test', lastUpdateTime: stale }] },
  } as never);
  cm = startControllerManager(api, [
    '--leader-elect=false',
    '--use-service-account-credentials',
    '--controllers=csrapproving,csrsigning,csrcleaner',
    `--cluster-signing-cert-file=${join(api.dir, 'ca.crt')}`,
    `--cluster-signing-key-file=${join(api.dir, 'ca.key')}`,
    '--cluster-signing-duration=2h',
  ]);
}, 300_000);

afterAll(async () => {
  await cm?.kill('SIGKILL');
  await api?.stop();
}, 60_000);

test('a node client request from a bootstrap token is approved and signed, and the certificate authenticates the node', async () => {
  const bootstrap = clientAs({ token: BOOTSTRAP.token });
  const keyPem = await requestAs(bootstrap, 'node-1-client', SIGNER_NAMES.apiServerClientNodeAgent, {
    cn: 'system:node:node-1',
    orgs: ['system:nodes'],
  });
  const csr = await waitForCsr('node-1-client', 'a certificate', (c) => !!c.status?.certificate);
  // The requester is the authenticated user, whatever the body said.
  expect(csr.spec.username).toBe(BOOTSTRAP.user);
  expect(csr.spec.groups).toEqual(expect.arrayContaining(['system:bootstrappers', 'system:authenticated']));
  expect(csr.status?.conditions?.[0]).toMatchObject({ type: 'Approved', status: 'True', reason: 'AutoApproved' });
  const cert = certificateOf(csr);
  expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  expect(cert.subject.split('\n').sort()).toEqual(['CN=system:node:node-1', 'O=system:nodes']);
  expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
  expect(cert.ca).toBe(false);
  const lifetime = Date.parse(cert.validTo) - Date.now();
  expect(lifetime).toBeGreaterThan(2 * HOUR - 10 * 60_000);
  expect(lifetime).toBeLessThanOrEqual(2 * HOUR);
  // The API server takes the certificate as system:node:node-1 (RBAC alone lets a node do little: the 403 names it).
  const node = clientAs({ cert: Buffer.from(csr.status!.certificate!, 'base64').toString(), key: keyPem });
  await expect(node.resource(NodeKind).list()).rejects.toThrow(/system:node:node-1/);
}, 180_000);

test('a request the requester may not have approved stays pending; one the signer refuses fails', async () => {
  // The requester has no nodeclient permission: the approver leaves it (an admin may still decide).
  await requestAs(clientAs({ token: REQUESTER.token }), 'not-mine', SIGNER_NAMES.apiServerClientNodeAgent, {
    cn: 'system:node:node-2',
    orgs: ['system:nodes'],
  });
  // Approved by hand, but not a valid node client request (wrong organization): the signer marks it Failed.
  await requestAs(api.client, 'bad-node', SIGNER_NAMES.apiServerClientNodeAgent, {
    cn: 'system:node:node-3',
    orgs: ['x'],
  });
  const bad = await csrs().get('bad-node');
  await csrs().updateSubresource('bad-node', 'approval', {
    ...bad,
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test' }] },
  } as never);
  const failed = await waitForCsr('bad-node', 'a Failed condition', (c) =>
    (c.status?.conditions ?? []).some((x) => x.type === 'Failed'),
  );
  expect(failed.status?.conditions?.find((x) => x.type === 'Failed')).toMatchObject({
    reason: 'SignerValidationFailure',
    message: 'subject organization is not system:nodes',
  });
  expect(failed.status?.certificate).toBeUndefined();
  await waitFor('the approver to give up on not-mine for now', () =>
    (cm?.output() ?? '').includes(
      'recognized csr \\"not-mine\\" as [nodeclient] but subject access review was not approved',
    ),
  );
  const pending = await csrs().get('not-mine');
  expect(pending.status?.conditions ?? []).toEqual([]);
}, 180_000);

test('approval needs the approve verb on the signer; nobody cannot approve', async () => {
  await requestAs(api.client, 'for-nobody', SIGNER_NAMES.apiServerClient, { cn: 'nobody' });
  const obj = await csrs().get('for-nobody');
  const body = { ...obj, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Mine' }] } };
  await expect(
    csrs(clientAs({ token: NOBODY.token })).updateSubresource('for-nobody', 'approval', body as never),
  ).rejects.toThrow(/forbidden/);
  // An API server client request may not ask for system:masters (CertificateSubjectRestriction).
  await expect(
    requestAs(api.client, 'masters', SIGNER_NAMES.apiServerClient, { cn: 'root', orgs: ['system:masters'] }),
  ).rejects.toThrow(/system:masters group is not allowed/);
}, 180_000);

test('approved and denied as kubectl does, listed by kubectl get with their columns', async () => {
  await requestAs(api.client, 'by-kubectl', SIGNER_NAMES.apiServerClient, { cn: 'alice', orgs: ['devs'] });
  await requestAs(api.client, 'denied-by-kubectl', SIGNER_NAMES.apiServerClient, { cn: 'mallory' });
  // kubectl 1.20's `certificate approve|deny` reads the object through discovery (certificates.platform) and then
  // insists on a certificates.k8s.io typed object, which the platform's spelling is not: it cannot run here (see
  // docs/certificates.md). Its write is this PUT of /approval, through the .k8s.io path its typed client uses.
  for (const [name, type, reason] of [
    ['by-kubectl', 'Approved', 'KubectlApprove'],
    ['denied-by-kubectl', 'Denied', 'KubectlDeny'],
  ] as const) {
    const obj = await csrs().get(name);
    const body = {
      ...obj,
      apiVersion: 'certificates.k8s.io/v1',
      status: {
        conditions: [
          {
            type,
            status: 'True',
            reason,
            message: `This CSR was ${type.toLowerCase()} by kubectl certificate ${reason === 'KubectlApprove' ? 'approve' : 'deny'}.`,
          },
        ],
      },
    };
    // JSON, as kubectl sends and reads it.
    await clientAs({ token: 'cm-test-token', json: true }).rest.request({
      method: 'PUT',
      path: `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}/approval`,
      body,
    });
  }
  const signed = await waitForCsr('by-kubectl', 'a certificate', (c) => !!c.status?.certificate);
  expect(signed.status?.conditions?.[0]).toMatchObject({ type: 'Approved', reason: 'KubectlApprove' });
  expect(certificateOf(signed).subject.split('\n').sort()).toEqual(['CN=alice', 'O=devs']);
  expect(existsSync(KUBECTL)).toBe(true);
  const r = spawnSync(
    KUBECTL,
    ['--kubeconfig', api.clientConfigPath, 'get', 'csr', 'by-kubectl', 'denied-by-kubectl'],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  expect(r.stderr).toBe('');
  expect(r.stdout).toMatch(/NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+CONDITION/);
  expect(r.stdout).toMatch(/by-kubectl\s+\S+\s+platform\.io\/apiserver-client\s+admin\s+Approved,Issued/);
  expect(r.stdout).toMatch(/denied-by-kubectl\s+\S+\s+platform\.io\/apiserver-client\s+admin\s+Denied/);
}, 180_000);

test('the cleaner deleted the request denied two hours ago, and keeps the recent ones', async () => {
  await waitFor('old-denied to be deleted', async () => {
    try {
      await csrs().get('old-denied');
      return false;
    } catch (err) {
      return isNotFound(err);
    }
  });
  expect((await csrs().get('node-1-client')).metadata?.name).toBe('node-1-client');
}, 180_000);
