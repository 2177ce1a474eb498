import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureSelfSignedCertKey, generateSelfSignedCertKey, loadCertKeyPair } from './cert-key';

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
