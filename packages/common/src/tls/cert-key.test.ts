import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request, createServer } from 'node:https';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TLSSocket } from 'node:tls';

import {
  ensureSelfSignedCertKey,
  generateCertificateAuthority,
  generateSelfSignedCertKey,
  issueCertificate,
  loadCertKeyPair,
} from './cert-key';

describe('certificate files', () => {
  it('rejects a key that does not match, and garbage, naming the files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pairs-'));
    const a = await generateSelfSignedCertKey({ host: 'a.test' });
    const b = await generateSelfSignedCertKey({ host: 'b.test' });
    writeFileSync(join(dir, 'a.crt'), a.certPem);
    writeFileSync(join(dir, 'b.key'), b.keyPem);
    writeFileSync(join(dir, 'junk.crt'), 'not a certificate');
    writeFileSync(join(dir, 'junk.key'), '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
    await expect(loadCertKeyPair(join(dir, 'a.crt'), join(dir, 'b.key'))).rejects.toThrow(
      `${join(dir, 'b.key')}: private key does not match the certificate in ${join(dir, 'a.crt')}`,
    );
    await expect(loadCertKeyPair(join(dir, 'junk.crt'), join(dir, 'b.key'))).rejects.toThrow(
      `${join(dir, 'junk.crt')}: no PEM certificate found`,
    );
    await expect(loadCertKeyPair(join(dir, 'a.crt'), join(dir, 'junk.key'))).rejects.toThrow(
      `${join(dir, 'junk.key')}: invalid private key`,
    );
  }, 30_000);

  it('replaces a stored self-signed pair whose certificate has expired', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'expired-'));
    const twoYearsAgo = new Date(Date.now() - 2 * 365 * 24 * 3600 * 1000);
    const old = await ensureSelfSignedCertKey(dir, 'scheduler', { host: 'localhost', now: () => twoYearsAgo });
    expect(old.generated).toBe(true);
    const again = await ensureSelfSignedCertKey(dir, 'scheduler', { host: 'localhost', now: () => twoYearsAgo });
    expect(again.generated).toBe(false);
    const fresh = await ensureSelfSignedCertKey(dir, 'scheduler', { host: 'localhost' });
    expect(fresh.generated).toBe(true);
    expect(new Date(fresh.leaf.validTo).getTime()).toBeGreaterThan(Date.now());
  }, 30_000);

  it('refuses to generate over a half pair', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'half-'));
    writeFileSync(join(dir, 'apiserver.crt'), 'x');
    await expect(ensureSelfSignedCertKey(dir, 'apiserver', { host: 'localhost' })).rejects.toThrow(
      `found ${join(dir, 'apiserver.crt')} but not ${join(dir, 'apiserver.key')}`,
    );
  });

  it('issues the serving certificate for the public address and alternates, signed by its CA', async () => {
    const { certPem } = await generateSelfSignedCertKey({
      host: '10.1.2.3',
      alternateDNS: ['platform.default.svc'],
      alternateIPs: ['10.96.0.1'],
      now: () => new Date('2026-01-01T00:00:00Z'),
    });
    const [leafPem, caPem] = certPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
    const { X509Certificate } = await import('node:crypto');
    const leaf = new X509Certificate(leafPem!);
    const ca = new X509Certificate(caPem!);
    expect(leaf.subject).toBe('CN=10.1.2.3@1767225600');
    expect(ca.subject).toBe('CN=10.1.2.3-ca@1767225600');
    expect(leaf.subjectAltName).toBe(
      'DNS:platform.default.svc, DNS:localhost, IP Address:10.1.2.3, IP Address:10.96.0.1, IP Address:127.0.0.1',
    );
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(new Date(leaf.validTo).getTime() - new Date('2026-01-01T00:00:00Z').getTime()).toBe(365 * 24 * 3600 * 1000);
  });
});

describe('a certificate authority', () => {
  it('issues a serving and a client certificate that a real TLS handshake accepts, with the subject asked for', async () => {
    const ca = await generateCertificateAuthority('test-ca');
    const server = await issueCertificate(ca, {
      commonName: 'node-1',
      usage: 'server',
      dns: ['localhost'],
      ips: ['127.0.0.1'],
    });
    const client = await issueCertificate(ca, {
      commonName: 'apiserver-client',
      organizations: ['system:masters'],
      usage: 'client',
    });
    expect(new X509Certificate(client.certPem).verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    const srv = createServer(
      { cert: server.certPem, key: server.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.end(JSON.stringify({ cn: peer.subject.CN, o: peer.subject.O }));
      },
    );
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: (srv.address() as AddressInfo).port,
            ca: ca.certPem,
            cert: client.certPem,
            key: client.keyPem,
            agent: false,
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve(text));
          },
        );
        req.on('error', reject);
        req.end();
      });
      expect(JSON.parse(body)).toEqual({ cn: 'apiserver-client', o: 'system:masters' });
    } finally {
      srv.close();
    }
  }, 30_000);

  it('refuses a CA key that is not ECDSA P-256', async () => {
    const rsa = await generateSelfSignedCertKey({ host: 'rsa.test' });
    await expect(issueCertificate(rsa, { commonName: 'x', usage: 'client' })).rejects.toThrow(
      "the CA's key is not an ECDSA P-256 key",
    );
  }, 30_000);
});
