/**
 * Client certificate bootstrap (model: kubelet 1.21 `pkg/kubelet/certificate/bootstrap`): when `--clientconfig` is
 * missing (or its client certificate has expired) and `--bootstrap-clientconfig` is given, the agent makes a key,
 * asks for a node client certificate with a CertificateSigningRequest (signer
 * `platform.io/apiserver-client-node-agent`, `CN=system:node:<node>`, `O=system:nodes`) using the bootstrap
 * credentials, waits until it is issued, writes key and certificate to `<cert-dir>/agent-client-current.pem` and a
 * client configuration referencing it to `--clientconfig`. A denied or failed request is an error naming why.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { type CertificateSigningRequest, CertificateSigningRequestKind, SIGNER_NAMES } from '@platform/api';
import { Clientset, loadClientConfig, RestClient } from '@platform/client';
import { createCertificateRequest, type Logger } from '@platform/common';

/** What the bootstrap needs. */
export interface BootstrapOptions {
  clientConfigPath: string;
  bootstrapConfigPath: string;
  certDir: string;
  nodeName: string;
  log: Logger;
  signal: AbortSignal;
  /** How long to wait for the certificate (kubelet: no limit but its own restarts); default 15 minutes. */
  timeoutMs?: number;
}

/** The file holding the current client certificate and its key. */
export const CLIENT_PEM = 'agent-client-current.pem';

function writeAtomic(file: string, data: string, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  renameSync(tmp, file);
}

/** Whether `--clientconfig` exists with a client certificate (if it names one) that has not expired. */
export function clientConfigUsable(path: string, now = Date.now()): boolean {
  if (!existsSync(path)) return false;
  try {
    const c = loadClientConfig({ clientConfig: path });
    if (!c.cert) return true;
    return Date.parse(new X509Certificate(c.cert).validTo) > now;
  } catch {
    return false;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}

/**
 * Bootstraps the client certificate when `--clientconfig` is not usable. Resolves once `--clientconfig` can be
 * loaded; throws an Error saying what went wrong (unreadable bootstrap configuration, a refused or denied request,
 * no certificate in time).
 */
export async function bootstrapClientCertificate(o: BootstrapOptions): Promise<void> {
  if (clientConfigUsable(o.clientConfigPath)) return;
  const bootstrap = loadClientConfig({ clientConfig: o.bootstrapConfigPath });
  const rest = new RestClient({ ...bootstrap, contentType: 'application/json' });
  try {
    const csrs = new Clientset(rest).resource(CertificateSigningRequestKind);
    const { csrPem, keyPem } = await createCertificateRequest({
      commonName: `system:node:${o.nodeName}`,
      organizations: ['system:nodes'],
    });
    const name = `node-csr-${randomBytes(6).toString('hex')}`;
    await csrs.create(
      {
        metadata: { name },
        spec: {
          request: Buffer.from(csrPem).toString('base64'),
          signerName: SIGNER_NAMES.apiServerClientNodeAgent,
          usages: ['digital signature', 'key encipherment', 'client auth'],
        },
      },
      { signal: o.signal },
    );
    o.log.info('Requested a client certificate; waiting for it to be approved and issued', { csr: name });
    const deadline = Date.now() + (o.timeoutMs ?? 15 * 60_000);
    let csr: CertificateSigningRequest | undefined;
    for (;;) {
      if (o.signal.aborted) throw new Error('client certificate bootstrap interrupted');
      csr = await csrs.get(name, { signal: o.signal });
      const refused = (csr.status?.conditions ?? []).find((c) => c.type === 'Denied' || c.type === 'Failed');
      if (refused) {
        throw new Error(
          `certificate signing request ${name} was ${refused.type === 'Denied' ? 'denied' : 'failed'}: ${refused.reason ?? ''} ${refused.message ?? ''}`.trim(),
        );
      }
      if (csr.status?.certificate) break;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for certificate signing request ${name} to be issued`);
      await sleep(1000, o.signal);
    }
    const certPem = Buffer.from(csr.status.certificate, 'base64').toString();
    const pemFile = join(o.certDir, CLIENT_PEM);
    writeAtomic(pemFile, `${certPem.trimEnd()}\n${keyPem}`, 0o600);
    writeAtomic(
      o.clientConfigPath,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: default-cluster',
        '  cluster:',
        `    server: ${bootstrap.server}`,
        ...(bootstrap.ca ? [`    certificate-authority-data: ${bootstrap.ca.toString('base64')}`] : []),
        ...(bootstrap.insecureSkipTlsVerify ? ['    insecure-skip-tls-verify: true'] : []),
        ...(bootstrap.tlsServerName ? [`    tls-server-name: ${bootstrap.tlsServerName}`] : []),
        'users:',
        '- name: default-auth',
        '  user:',
        `    client-certificate: ${pemFile}`,
        `    client-key: ${pemFile}`,
        'contexts:',
        '- name: default-context',
        '  context: {cluster: default-cluster, user: default-auth, namespace: default}',
        'current-context: default-context',
        '',
      ].join('\n'),
      0o600,
    );
    o.log.info('Client certificate issued; wrote the client configuration', {
      csr: name,
      clientConfig: o.clientConfigPath,
      certificate: pemFile,
      notAfter: new X509Certificate(certPem).validTo,
    });
  } finally {
    rest.close();
  }
}

/** The key and certificate PEM of the current client certificate (tests). */
export function readClientPem(certDir: string): string {
  return readFileSync(join(certDir, CLIENT_PEM), 'utf8');
}
