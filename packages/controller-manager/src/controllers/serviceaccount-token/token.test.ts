import { createPublicKey, createVerify, generateKeyPairSync } from 'node:crypto';

import { Command } from 'commander';
import { parseOrExit } from '@platform/common';

import { RootCAPublisherOptions } from '../root-ca-cert-publisher';
import { ServiceAccountTokenOptions } from './options';
import { LEGACY_ISSUER, loadSigningKey, signLegacyToken } from './token';

const decode = (part: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('signLegacyToken', () => {
  test.each([
    ['RSA', () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'RS256', 'sha256', {}],
    [
      'P-256',
      () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      'ES256',
      'sha256',
      { dsaEncoding: 'ieee-p1363' },
    ],
    [
      'P-384',
      () => generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
      'ES384',
      'sha384',
      { dsaEncoding: 'ieee-p1363' },
    ],
  ] as const)('%s keys sign %s tokens with the legacy claims', (_n, make, alg, digest, extra) => {
    const key = loadSigningKey(make().export({ type: 'pkcs8', format: 'pem' }));
    const token = signLegacyToken(key, 'ns', 'sa-token-abcde', { name: 'sa', uid: 'u1' });
    const [h, c, s] = token.split('.') as [string, string, string];
    expect(decode(h)).toEqual({ alg, kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(decode(c)).toEqual({
      iss: LEGACY_ISSUER,
      'kubernetes.io/serviceaccount/namespace': 'ns',
      'kubernetes.io/serviceaccount/secret.name': 'sa-token-abcde',
      'kubernetes.io/serviceaccount/service-account.name': 'sa',
      'kubernetes.io/serviceaccount/service-account.uid': 'u1',
      sub: 'system:serviceaccount:ns:sa',
    });
    const ok = createVerify(digest)
      .update(`${h}.${c}`)
      .verify({ key: createPublicKey(key), ...extra }, Buffer.from(s, 'base64url'));
    expect(ok).toBe(true);
  });

  test('keys that cannot sign are refused', () => {
    expect(() => loadSigningKey('not a key')).toThrow();
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
    expect(() => loadSigningKey(ed)).toThrow(/RSA or ECDSA/);
  });
});

describe('ServiceAccountTokenOptions', () => {
  const parse = (args: string[], withPublisher: boolean): { errors: string[]; rootCAFile: string } => {
    const cmd = new Command('test');
    const o = new ServiceAccountTokenOptions();
    const groups: { addFlags(c: Command): void }[] = [o];
    if (withPublisher) groups.push(new RootCAPublisherOptions());
    for (const g of groups) g.addFlags(cmd);
    const out = parseOrExit(cmd, groups as never[], args, undefined, { stdout: () => {}, stderr: () => {} });
    return { errors: out.errors.map((e) => e.message), rootCAFile: o.values().rootCAFile };
  };

  test('--root-ca-file is read from the root CA publisher, registered before or after', () => {
    for (const before of [true, false]) {
      const cmd = new Command('test');
      const publisher = new RootCAPublisherOptions();
      const o = new ServiceAccountTokenOptions();
      const groups = before ? [publisher, o] : [o, publisher];
      for (const g of groups) g.addFlags(cmd);
      const out = parseOrExit(cmd, groups as never[], ['--root-ca-file=/dev/null'], undefined, {
        stdout: () => {},
        stderr: () => {},
      });
      // /dev/null is readable but holds no certificate: the publisher, which owns the flag, says so, once.
      expect(out.errors.map((e) => e.message)).toEqual(['--root-ca-file: /dev/null holds no PEM certificate']);
      expect(o.values().rootCAFile).toBe('/dev/null');
    }
  });

  test('an unreadable or unusable private key is refused, naming the flag', () => {
    expect(parse(['--service-account-private-key-file=/nonexistent/key'], true).errors).toEqual([
      expect.stringMatching(/^--service-account-private-key-file: cannot use \/nonexistent\/key: .*ENOENT/),
    ]);
    expect(parse(['--service-account-private-key-file=/dev/null'], true).errors).toEqual([
      expect.stringMatching(/^--service-account-private-key-file: cannot use \/dev\/null/),
    ]);
    expect(parse(['--concurrent-serviceaccount-token-syncs=0'], true).errors).toEqual([
      '--concurrent-serviceaccount-token-syncs must be at least 1, got 0',
    ]);
    expect(parse([], true).errors).toEqual([]);
  });
});
