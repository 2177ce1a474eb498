/**
 * Transport options on a real server: HSTS and CORS headers (preflights answered before authentication),
 * `--max-connection-bytes-per-sec` on a watch, and the TLS options of the secure serving family taken from their
 * flags (`--tls-min-version`, `--tls-cipher-suites`, `--tls-sni-cert-key`) and checked with real handshakes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type SecureVersion } from 'node:tls';

import {
  generateSelfSignedCertKey,
  type OptionGroup,
  parseCommandLine,
  SecureServingOptions,
  type SecureServingInfo,
} from '@platform/common';
import { Command } from 'commander';

import { AuthenticationError, requestAuthenticator } from '../auth/authenticator';
import { startTestServer, type TestServer } from '../testing/test-server';

/** The serving information the secure serving flags produce. */
async function servingFromFlags(argv: string[]): Promise<SecureServingInfo> {
  const o = new SecureServingOptions({ port: 6443, certDir: '', pairName: 'apiserver', allowDisable: false });
  const cmd = new Command('test');
  o.addFlags(cmd);
  const r = parseCommandLine(cmd, [o] as OptionGroup<never>[], argv, () => {});
  expect(r.errors).toEqual([]);
  const config: { secureServing?: SecureServingInfo } = {};
  await o.applyTo(config);
  return config.secureServing!;
}

/** Handshakes with the server; resolves the certificate's CN and the protocol, or rejects with the TLS error. */
function handshake(
  port: number,
  o: { servername?: string; maxVersion?: SecureVersion; minVersion?: SecureVersion; ciphers?: string },
): Promise<{ cn: string; protocol: string; cipher: string }> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...o }, () => {
      resolve({
        cn: String(s.getPeerCertificate().subject.CN),
        protocol: String(s.getProtocol()),
        cipher: s.getCipher().standardName,
      });
      s.end();
    });
    s.on('error', reject);
  });
}

describe('transport', () => {
  describe('HSTS, CORS, connection throttling, minimum TLS version and SNI', () => {
    let server: TestServer;

    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), 'transport-'));
      const other = await generateSelfSignedCertKey({ host: 'other.example', alternateDNS: ['other.example'] });
      writeFileSync(join(dir, 'other.crt'), other.certPem);
      writeFileSync(join(dir, 'other.key'), other.keyPem);
      const fromFlags = await servingFromFlags([
        '--tls-min-version=VersionTLS13',
        `--tls-sni-cert-key=${join(dir, 'other.crt')},${join(dir, 'other.key')}`,
      ]);
      server = await startTestServer((c) => {
        // The test server's own certificate stays the default (its client trusts it); the rest is the flags'.
        c.serving = {
          ...c.serving,
          sni: fromFlags.sni,
          ...(fromFlags.minVersion ? { minVersion: fromFlags.minVersion } : {}),
        };
        c.transport = {
          hstsDirectives: ['max-age=31536000', 'includeSubDomains'],
          corsAllowedOrigins: ['^https://([a-z]+\\.)?example\\.com$'],
          maxConnectionBytesPerSec: 4096,
        };
        c.security = {
          authenticator: requestAuthenticator(
            [
              {
                async authenticate(req) {
                  if (req.headers.authorization === 'Bearer bad') throw new AuthenticationError('rejected');
                  return undefined;
                },
              },
            ],
            true,
          ),
        };
      });
    });
    afterAll(() => server.stop());

    it('adds Strict-Transport-Security to every response', async () => {
      for (const path of ['/api/v1/namespaces', '/healthz', '/no/such/path']) {
        const r = await server.request('GET', path);
        expect(r.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      }
    });

    it('answers allowed origins with the CORS headers, and their preflights before authentication', async () => {
      const r = await server.request('GET', '/api/v1/namespaces', { headers: { origin: 'https://app.example.com' } });
      expect(r.status).toBe(200);
      expect(r.headers).toMatchObject({
        'access-control-allow-origin': 'https://app.example.com',
        'access-control-allow-methods': 'POST, GET, OPTIONS, PUT, DELETE, PATCH',
        'access-control-allow-headers':
          'Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since',
        'access-control-expose-headers': 'Date',
        'access-control-allow-credentials': 'true',
      });
      const preflight = await server.request('OPTIONS', '/api/v1/namespaces/default/pods', {
        headers: { origin: 'https://example.com', authorization: 'Bearer bad' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://example.com');
      // Other origins get nothing, and their OPTIONS goes through authentication like any request.
      const denied = await server.request('OPTIONS', '/api/v1/namespaces/default/pods', {
        headers: { origin: 'https://evil.example.org', authorization: 'Bearer bad' },
      });
      expect(denied.status).toBe(401);
      expect(denied.headers['access-control-allow-origin']).toBeUndefined();
      const plain = await server.request('GET', '/api/v1/namespaces');
      expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('a throttled watch still delivers every event intact', async () => {
      for (let i = 0; i < 3; i++) {
        const r = await server.request('POST', '/api/v1/namespaces/default/configmaps', {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `t${i}` }, data: { pad: 'x'.repeat(500) } },
        });
        expect(r.status).toBe(201);
      }
      const w = await server.request('GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1');
      expect(w.status).toBe(200);
      const events = w.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
      expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 't0'],
        ['ADDED', 't1'],
        ['ADDED', 't2'],
      ]);
    });

    it('refuses clients that offer only TLS 1.2 under --tls-min-version=VersionTLS13', async () => {
      const port = Number(new URL(server.url).port);
      await expect(handshake(port, { maxVersion: 'TLSv1.2' })).rejects.toThrow(/protocol version|alert/i);
      expect((await handshake(port, {})).protocol).toBe('TLSv1.3');
    });

    it('serves the --tls-sni-cert-key certificate to clients asking for its name', async () => {
      const port = Number(new URL(server.url).port);
      expect((await handshake(port, { servername: 'other.example' })).cn).toMatch(/^other\.example@/);
      expect((await handshake(port, { servername: 'unknown.example' })).cn).toMatch(/^127\.0\.0\.1@/);
    });
  });

  it('--tls-cipher-suites limits the TLS 1.2 suites the server accepts', async () => {
    const fromFlags = await servingFromFlags(['--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256']);
    const server = await startTestServer((c) => {
      c.serving = { ...c.serving, ...(fromFlags.ciphers ? { ciphers: fromFlags.ciphers } : {}) };
    });
    try {
      const port = Number(new URL(server.url).port);
      const ok = await handshake(port, {
        maxVersion: 'TLSv1.2',
        ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384',
      });
      expect(ok).toMatchObject({ protocol: 'TLSv1.2', cipher: 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256' });
      await expect(handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-GCM-SHA384' })).rejects.toThrow(
        /handshake failure|alert|no shared cipher/i,
      );
    } finally {
      await server.stop();
    }
  });
});
