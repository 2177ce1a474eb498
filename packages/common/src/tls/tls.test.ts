import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  type CertKeyPair,
  ensureSelfSignedCertKey,
  generateSelfSignedCertKey,
  loadCertKeyPair,
  parseCertKeyPair,
} from './cert-key';
import { INSECURE_CIPHER_SUITES, SECURE_CIPHER_SUITES, mapCipherSuites, mapTlsVersion } from './cipher-suites';
import { SniCertificateMap, certificateNames, parseNamedCertKey } from './sni';

describe('cipher suites', () => {
  it('maps IANA names to OpenSSL names in order, dropping duplicates', () => {
    expect(
      mapCipherSuites([
        'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
        'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305',
        'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
        'TLS_RSA_WITH_AES_256_CBC_SHA',
        'TLS_AES_256_GCM_SHA384',
      ]),
    ).toEqual({
      ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:AES256-SHA:TLS_AES_256_GCM_SHA384',
      warnings: [],
    });
    expect(mapCipherSuites([])).toEqual({ warnings: [] });
  });

  it('covers every suite of Document 2', () => {
    expect(Object.keys(SECURE_CIPHER_SUITES)).toHaveLength(21);
    expect(Object.keys(INSECURE_CIPHER_SUITES)).toHaveLength(6);
  });

  it('warns for insecure suites and for suites this OpenSSL lacks', () => {
    const r = mapCipherSuites([
      'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
      'TLS_RSA_WITH_RC4_128_SHA',
      'TLS_RSA_WITH_AES_128_GCM_SHA256',
    ]);
    expect(r.ciphers).toBe('ECDHE-RSA-AES128-SHA256:AES128-GCM-SHA256');
    expect(r.warnings).toEqual([
      "Use of insecure cipher 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256' detected.",
      "Use of insecure cipher 'TLS_RSA_WITH_RC4_128_SHA' detected.",
      'cipher suite TLS_RSA_WITH_RC4_128_SHA (RC4-SHA) is not available in this Node.js build of OpenSSL; it is ignored',
    ]);
  });

  it('fails naming unknown suites, or when nothing usable remains', () => {
    expect(() => mapCipherSuites(['TLS_NOPE', 'TLS_AES_128_GCM_SHA256', 'ALSO_NOPE'])).toThrow(
      "--tls-cipher-suites: cipher suite TLS_NOPE, ALSO_NOPE not supported or doesn't exist",
    );
    expect(() => mapCipherSuites(['TLS_RSA_WITH_RC4_128_SHA'])).toThrow(
      'none of TLS_RSA_WITH_RC4_128_SHA is available',
    );
  });

  it('maps minimum versions', () => {
    expect(mapTlsVersion('')).toBeUndefined();
    expect(mapTlsVersion('VersionTLS10')).toBe('TLSv1');
    expect(mapTlsVersion('VersionTLS11')).toBe('TLSv1.1');
    expect(mapTlsVersion('VersionTLS12')).toBe('TLSv1.2');
    expect(mapTlsVersion('VersionTLS13')).toBe('TLSv1.3');
    expect(() => mapTlsVersion('TLS1.2')).toThrow('unknown tls version "TLS1.2"');
  });
});

describe('SNI', () => {
  let pairs: Record<string, CertKeyPair>;
  beforeAll(async () => {
    const make = async (host: string, dns: string[] = []) => {
      const { certPem, keyPem } = await generateSelfSignedCertKey({ host, alternateDNS: dns });
      return parseCertKeyPair(certPem, keyPem, host);
    };
    pairs = {
      wildcard: await make('wild.example.com', ['*.example.com']),
      exact: await make('api.example.com'),
      explicit: await make('other.test'),
      first: await make('dup.example.org'),
      second: await make('dup.example.org'),
    };
  }, 30_000);

  it('extracts names from the certificate: CN when a DNS name, DNS SANs, never IPs', () => {
    // Generated certificates have CN `<host>@<timestamp>`, not a DNS name: only the SANs count.
    expect(certificateNames(pairs.wildcard!)).toEqual(['wild.example.com', '*.example.com', 'localhost']);
  });

  it('prefers non-wildcard over wildcard, explicit over extracted, earlier over later', () => {
    const map = new SniCertificateMap([
      { pair: pairs.wildcard!, names: [] },
      { pair: pairs.exact!, names: [] },
      // Explicit patterns win over the names extracted from the certificates above, whatever the order.
      { pair: pairs.explicit!, names: ['localhost', '*.example.net', '10.0.0.1'] },
      { pair: pairs.first!, names: [] },
      { pair: pairs.second!, names: [] },
    ]);
    expect(map.select('api.example.com')).toBe(pairs.exact);
    expect(map.select('API.Example.com')).toBe(pairs.exact);
    expect(map.select('www.example.com')).toBe(pairs.wildcard);
    expect(map.select('a.b.example.com')).toBeUndefined(); // a wildcard covers one label
    expect(map.select('localhost')).toBe(pairs.explicit);
    expect(map.select('x.example.net')).toBe(pairs.explicit);
    expect(map.select('dup.example.org')).toBe(pairs.first);
    expect(map.select('unknown.test')).toBeUndefined();
    // No server name: the local IP decides.
    expect(map.select(undefined, '10.0.0.1')).toBe(pairs.explicit);
    expect(map.select(undefined, '::ffff:10.0.0.1')).toBe(pairs.explicit);
    expect(map.select(undefined, '10.0.0.2')).toBeUndefined();
    expect(map.ipNames()).toEqual(['10.0.0.1']);
  });

  it('parses --tls-sni-cert-key values', () => {
    expect(parseNamedCertKey('a.crt,a.key')).toEqual({ certFile: 'a.crt', keyFile: 'a.key', names: [] });
    expect(parseNamedCertKey('a.crt,a.key:*.Foo.com,foo.com,10.1.2.3')).toEqual({
      certFile: 'a.crt',
      keyFile: 'a.key',
      names: ['*.foo.com', 'foo.com', '10.1.2.3'],
    });
    expect(() => parseNamedCertKey('a.crt')).toThrow('expected comma separated certificate and key file paths');
    expect(() => parseNamedCertKey('a.crt,a.key,b')).toThrow('expected comma separated certificate and key file paths');
    expect(() => parseNamedCertKey('a.crt,a.key:foo..com')).toThrow('invalid domain pattern "foo..com"');
  });
});

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
