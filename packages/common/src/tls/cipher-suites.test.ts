import { INSECURE_CIPHER_SUITES, SECURE_CIPHER_SUITES, mapCipherSuites, mapTlsVersion } from './cipher-suites';

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
