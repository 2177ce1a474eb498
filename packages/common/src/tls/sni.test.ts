import { type CertKeyPair, generateSelfSignedCertKey, parseCertKeyPair } from './cert-key';
import { SniCertificateMap, certificateNames, parseNamedCertKey } from './sni';

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
