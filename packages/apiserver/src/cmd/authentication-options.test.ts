import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseOrExit } from '@platform/common';
import { Command } from 'commander';

import { testCA } from '../auth/authentication/testing/pki';
import { AuthenticationOptions } from './authentication-options';
import { main } from './main';

function parse(argv: string[]): { errors: string[]; options: AuthenticationOptions } {
  const options = new AuthenticationOptions();
  const cmd = new Command('test');
  options.addFlags(cmd);
  const out = parseOrExit(cmd, [options as never], argv, undefined, { stdout: () => {}, stderr: () => {} });
  return { errors: out.errors.map((e) => e.message), options };
}

describe('AuthenticationOptions', () => {
  let dir: string;
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'authn-options-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults: anonymous requests only, Kubernetes’ defaults for the rest', () => {
    const { errors, options } = parse([]);
    expect(errors).toEqual([]);
    const c = options.buildConfig();
    expect(c).toEqual({ anonymous: true, apiAudiences: [], bootstrapTokens: false });
    expect(options.webhookCacheTtlMs).toBe(120_000);
    expect(options.webhookVersion).toBe('v1beta1');
    expect(options.oidcSigningAlgs).toEqual(['RS256']);
    expect(options.oidcUsernameClaim).toBe('sub');
    expect(options.serviceAccountLookup).toBe(true);
    expect(options.serviceAccountExtendTokenExpiration).toBe(true);
  });

  it('rejects bad values and combinations, naming the option', () => {
    const cases: [string[], string][] = [
      [['--oidc-issuer-url=https://issuer'], '--oidc-issuer-url and --oidc-client-id should be specified together'],
      [
        ['--oidc-issuer-url=http://issuer', '--oidc-client-id=x'],
        '--oidc-issuer-url: "http://issuer" must use the https scheme',
      ],
      [['--oidc-signing-algs=HS256'], '--oidc-signing-algs: unsupported signing algorithm "HS256"'],
      [['--authentication-token-webhook-version=v2'], 'supported values: v1beta1, v1'],
      [
        ['--service-account-max-token-expiration=10m'],
        '--service-account-max-token-expiration: the expiration must be between 1 hour and 2^32 seconds',
      ],
      [
        ['--service-account-signing-key-file=/k'],
        '--service-account-signing-key-file requires --service-account-issuer',
      ],
      [['--service-account-issuer=https://[::1'], "contained a ':' but was not a valid URL"],
      [
        ['--service-account-jwks-uri=http://x', '--service-account-issuer=https://i'],
        '--service-account-jwks-uri requires the https scheme',
      ],
      [['--requestheader-client-ca-file=/ca'], '--requestheader-username-headers must name at least one header'],
      [['--requestheader-username-headers=X Remote'], 'is not a valid header name'],
      [['--anonymous-auth=maybe'], 'anonymous-auth'],
    ];
    for (const [argv, message] of cases) {
      const { errors } = parse(argv);
      expect(errors.join('\n')).toContain(message);
    }
  });

  it('a malformed token file stops the start with its line number', () => {
    const bad = file('tokens.csv', 'good,alice,1\n# comment\n\nonly,two\n');
    const { errors, options } = parse([`--token-auth-file=${bad}`]);
    expect(errors).toEqual([]);
    expect(() => options.buildConfig()).toThrow(`--token-auth-file ${bad}: line 4: expected at least 3 fields`);
    const missing = join(dir, 'nope.csv');
    expect(() => parse([`--token-auth-file=${missing}`]).options.buildConfig()).toThrow(
      `--token-auth-file: cannot read ${missing}: ENOENT`,
    );
  });

  it('loads every method from its files', async () => {
    const ca = await testCA('ca');
    const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const signingFile = file('sa.key', signing.export({ type: 'pkcs8', format: 'pem' }) as string);
    const kubeconfig = file(
      'webhook.yaml',
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: w',
        `  cluster: { server: "https://127.0.0.1:1/review", certificate-authority-data: "${Buffer.from(ca.certPem).toString('base64')}" }`,
        'users:',
        '- name: u',
        '  user: { token: secret }',
        'contexts:',
        '- name: c',
        '  context: { cluster: w, user: u }',
        'current-context: c',
      ].join('\n'),
    );
    const { errors, options } = parse([
      '--anonymous-auth=false',
      `--token-auth-file=${file('t.csv', 'tok,bob,7,"a,b"\n')}`,
      `--client-ca-file=${file('ca.crt', ca.certPem)}`,
      `--requestheader-client-ca-file=${file('proxy.crt', ca.certPem)}`,
      '--requestheader-username-headers=X-Remote-User',
      '--service-account-issuer=https://issuer.example',
      '--service-account-issuer=https://old.example',
      `--service-account-key-file=${signingFile}`,
      `--service-account-signing-key-file=${signingFile}`,
      '--service-account-max-token-expiration=2h',
      '--oidc-issuer-url=https://oidc.example',
      '--oidc-client-id=platform',
      '--oidc-required-claim=tenant=a',
      `--authentication-token-webhook-config-file=${kubeconfig}`,
      '--authentication-token-webhook-version=v1',
      '--enable-bootstrap-token-auth',
    ]);
    expect(errors).toEqual([]);
    const c = options.buildConfig();
    expect(c.anonymous).toBe(false);
    expect(c.apiAudiences).toEqual(['https://issuer.example']);
    expect(c.tokenFile?.get('tok')).toEqual({ name: 'bob', uid: '7', groups: ['a', 'b'] });
    expect(c.clientCA).toHaveLength(1);
    expect(c.requestHeader?.usernameHeaders).toEqual(['X-Remote-User']);
    expect(c.serviceAccounts).toMatchObject({
      issuers: ['https://issuer.example', 'https://old.example'],
      maxExpirationSeconds: 7200,
      lookup: true,
    });
    expect(c.oidc?.requiredClaims).toEqual(new Map([['tenant', 'a']]));
    expect(c.webhook).toMatchObject({
      version: 'v1',
      cacheTtlMs: 120_000,
      client: { server: 'https://127.0.0.1:1/review', token: 'secret' },
    });
    expect(c.bootstrapTokens).toBe(true);
  });

  it('service account keys: the TLS key by default; a signing key must be verifiable', () => {
    const a = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const b = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    const withTls = parse(['--service-account-issuer=https://i']).options.buildConfig(a);
    expect(withTls.serviceAccounts?.publicKeys).toHaveLength(1);
    expect(() => parse(['--service-account-issuer=https://i']).options.buildConfig()).toThrow(
      '--service-account-issuer needs keys to verify tokens',
    );
    const mismatch = parse([
      '--service-account-issuer=https://i',
      `--service-account-key-file=${file('a.key', a)}`,
      `--service-account-signing-key-file=${file('b.key', b)}`,
    ]).options;
    expect(() => mismatch.buildConfig()).toThrow('its public key is not among the --service-account-key-file keys');
    expect(() => parse([`--service-account-key-file=${file('junk.key', 'not a key')}`]).options.buildConfig()).toThrow(
      'data does not contain any valid RSA or ECDSA public keys',
    );
  });

  it('platform-apiserver stops at startup on a malformed token file, naming the line', async () => {
    const bad = file('bad-tokens.csv', 'tok,alice,1\n"unterminated,bob,2\n');
    const written: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    let code: number;
    try {
      code = await main([
        `--cert-dir=${join(dir, 'pki')}`,
        `--store-servers=sqlite://${join(dir, 'state.db')}`,
        '--secure-port=6443',
        `--token-auth-file=${bad}`,
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(1);
    expect(written.join('')).toContain(`--token-auth-file ${bad}: line 2: unterminated quoted field`);
  });
});
