import { SECURE_SERVING_DEFAULTS, SecureServingOptions } from './secure-serving-options';
import { parseForTest } from './testing/parse';

const parse = parseForTest;

describe('secure serving options', () => {
  const make = (allowDisable = true) =>
    new SecureServingOptions({ port: 10257, certDir: '', pairName: 'controller-manager', allowDisable });

  it('parses every flag', () => {
    const o = make();
    const r = parse(
      [o],
      [
        '--bind-address=::1',
        '--secure-port=9443',
        '--cert-dir=/tmp/certs',
        '--tls-cert-file=/a.crt',
        '--tls-private-key-file=/a.key',
        '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
        '--tls-cipher-suites=TLS_AES_128_GCM_SHA256',
        '--tls-min-version=VersionTLS12',
        '--tls-sni-cert-key=foo.crt,foo.key:*.foo.com,foo.com',
        '--tls-sni-cert-key=bar.crt,bar.key',
        '--permit-address-sharing',
        '--http2-max-streams-per-connection=100',
      ],
    );
    expect(r.errors).toEqual([]);
    expect(o).toMatchObject({
      bindAddress: '::1',
      port: 9443,
      certDir: '/tmp/certs',
      tlsCertFile: '/a.crt',
      tlsPrivateKeyFile: '/a.key',
      cipherSuites: ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256'],
      minTLSVersion: 'VersionTLS12',
      sniCertKeys: [
        { certFile: 'foo.crt', keyFile: 'foo.key', names: ['*.foo.com', 'foo.com'] },
        { certFile: 'bar.crt', keyFile: 'bar.key', names: [] },
      ],
      permitAddressSharing: true,
      http2MaxStreamsPerConnection: 100,
    });
  });

  it('rejects every kind of bad value', () => {
    const r = parse(
      [make()],
      [
        '--bind-address=localhost',
        '--secure-port=70000',
        '--tls-cert-file=/only.crt',
        '--tls-cipher-suites=TLS_FAKE_SUITE,TLS_RSA_WITH_AES_128_GCM_SHA256',
        '--tls-min-version=VersionTLS14',
        '--tls-sni-cert-key=onlyone.crt',
        '--http2-max-streams-per-connection=-1',
        '--permit-port-sharing=x',
      ],
    );
    expect(r.messages).toEqual([
      'invalid argument "localhost" for "--bind-address" flag: failed to parse IP: "localhost"',
      'invalid argument "onlyone.crt" for "--tls-sni-cert-key" flag: expected comma separated certificate and key file paths',
      'invalid argument "x" for "--permit-port-sharing" flag: strconv.ParseBool: parsing "x": invalid syntax',
      '--secure-port 70000 must be between 0 and 65535, inclusive. 0 for turning off secure port',
      '--tls-cert-file and --tls-private-key-file must be given together',
      "--tls-cipher-suites: cipher suite TLS_FAKE_SUITE not supported or doesn't exist",
      '--tls-min-version: unknown tls version "VersionTLS14": allowed values are VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13',
      '--http2-max-streams-per-connection must not be negative',
    ]);
    expect(parse([make(false)], ['--secure-port=0']).messages).toEqual([
      '--secure-port 0 must be between 1 and 65535, inclusive. It cannot be turned off with 0',
    ]);
    expect(parse([make()], ['--tls-sni-cert-key=a.crt,a.key:bad_name!']).messages[0]).toMatch(
      /invalid domain pattern "bad_name!"/,
    );
  });

  it('warns about insecure cipher suites', () => {
    const r = parse([make()], ['--tls-cipher-suites=TLS_RSA_WITH_AES_128_CBC_SHA256']);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual(["Use of insecure cipher 'TLS_RSA_WITH_AES_128_CBC_SHA256' detected."]);
  });

  it('allows 0 to switch HTTPS off where the daemon allows it', async () => {
    const o = make();
    expect(parse([o], ['--secure-port=0']).errors).toEqual([]);
    const config: Parameters<SecureServingOptions['applyTo']>[0] = {};
    await o.applyTo(config);
    expect(config.secureServing).toBeUndefined();
  });

  it("has each daemon's defaults", () => {
    const api = new SecureServingOptions(SECURE_SERVING_DEFAULTS.apiserver);
    expect([api.port, api.certDir]).toEqual([6443, '/var/run/platform']);
    expect(parse([api], ['--secure-port=0']).messages).toEqual([
      '--secure-port 0 must be between 1 and 65535, inclusive. It cannot be turned off with 0',
    ]);
    expect(new SecureServingOptions(SECURE_SERVING_DEFAULTS.controllerManager).port).toBe(10257);
    expect(new SecureServingOptions(SECURE_SERVING_DEFAULTS.scheduler).port).toBe(10259);
    expect(new SecureServingOptions(SECURE_SERVING_DEFAULTS.nodeAgent).certDir).toBe('/var/lib/agent/pki');
  });

  it('accepts a blank --bind-address (all interfaces)', () => {
    const o = make();
    expect(parse([o], ['--bind-address=']).errors).toEqual([]);
    expect(o.bindAddress).toBe('');
  });

  it('generates the pair in memory when --cert-dir is empty, for the bind address', async () => {
    const o = make();
    expect(parse([o], ['--bind-address=127.0.0.2']).errors).toEqual([]);
    const config: Parameters<SecureServingOptions['applyTo']>[0] = {};
    await o.applyTo(config);
    const s = config.secureServing!;
    expect(s.generatedSelfSigned).toBe(true);
    expect(s.cert.source).toBe('self-signed certificate generated in memory');
    expect(s.cert.leaf.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.2, IP Address:127.0.0.1');
  });

  it('names unreadable certificate files when applying', async () => {
    const o = make();
    parse([o], ['--tls-cert-file=/nonexistent/a.crt', '--tls-private-key-file=/nonexistent/a.key']);
    await expect(o.applyTo({})).rejects.toThrow('unable to read certificate file "/nonexistent/a.crt": ENOENT');
  });
});
