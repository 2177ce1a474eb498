import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';

import { signJwt } from './jwt';
import { OidcAuthenticator, type OidcConfig } from './oidc';
import { testCA } from './testing/pki';

describe('OIDC', () => {
  let server: Server;
  let issuer: string;
  let caPem: string;
  let keys: { key: KeyObject; kid: string }[];
  let fetches = 0;
  let t = 1_700_000_000_000;
  const now = (): number => t;
  const sec = (): number => Math.floor(t / 1000);

  beforeAll(async () => {
    const ca = await testCA('oidc-ca');
    caPem = ca.certPem;
    const cert = await ca.sign({ cn: '127.0.0.1', usage: 'server', ips: ['127.0.0.1'] });
    keys = [{ key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, kid: 'a' }];
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') {
        res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
      } else if (req.url === '/jwks') {
        fetches++;
        res.end(
          JSON.stringify({
            keys: keys.map((k) => ({ ...createPublicKey(k.key).export({ format: 'jwk' }), kid: k.kid })),
          }),
        );
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  const config = (o: Partial<OidcConfig> = {}): OidcConfig => ({
    issuerUrl: issuer,
    clientId: 'cli',
    caPem,
    usernameClaim: 'sub',
    usernamePrefix: '',
    groupsClaim: 'groups',
    groupsPrefix: '',
    requiredClaims: new Map(),
    signingAlgs: ['RS256'],
    ...o,
  });
  const token = (claims: Record<string, unknown>, k = keys[0]!): string =>
    signJwt({ iss: issuer, aud: ['cli', 'other'], sub: 's', exp: sec() + 60, ...claims }, k.key, { kid: k.kid });

  it('refuses its issuer’s tokens until the key set is fetched; leaves other issuers alone', async () => {
    const a = new OidcAuthenticator(config(), now);
    await expect(a.authenticateToken(token({}))).rejects.toThrow('not initialized');
    expect(await a.authenticateToken(signJwt({ iss: 'https://else', exp: sec() + 60 }, keys[0]!.key))).toBeUndefined();
    await a.refresh();
    expect(await a.authenticateToken(token({}))).toEqual({ user: { name: `${issuer}#s`, groups: [] } });
  });

  it('user name claims and prefixes as Kubernetes applies them', async () => {
    const cases: [Partial<OidcConfig>, Record<string, unknown>, string | Error][] = [
      [{ usernameClaim: 'email' }, { email: 'a@x' }, 'a@x'],
      [{ usernameClaim: 'email' }, { email: 'a@x', email_verified: true }, 'a@x'],
      [{ usernameClaim: 'email' }, { email: 'a@x', email_verified: false }, new Error('email not verified')],
      [{ usernameClaim: 'email', usernamePrefix: 'oidc:' }, { email: 'a@x' }, 'oidc:a@x'],
      [{ usernamePrefix: '-' }, {}, 's'],
      [{ usernameClaim: 'name' }, { name: 'bob' }, `${issuer}#bob`],
      [{ usernameClaim: 'name' }, {}, new Error('claim "name" not present')],
    ];
    for (const [c, claims, want] of cases) {
      const a = new OidcAuthenticator(config(c), now);
      await a.refresh();
      const r = a.authenticateToken(token(claims));
      if (want instanceof Error) await expect(r).rejects.toThrow(want.message);
      else expect((await r)?.user.name).toBe(want);
    }
  });

  it('groups from a string or an array, with the prefix', async () => {
    const a = new OidcAuthenticator(config({ groupsPrefix: 'g:' }), now);
    await a.refresh();
    expect((await a.authenticateToken(token({ groups: 'one' })))?.user.groups).toEqual(['g:one']);
    expect((await a.authenticateToken(token({ groups: ['a', 'b'] })))?.user.groups).toEqual(['g:a', 'g:b']);
    await expect(a.authenticateToken(token({ groups: [1] }))).rejects.toThrow('groups claim');
  });

  it('a rotated key is found by refetching the set, at most once per interval', async () => {
    const a = new OidcAuthenticator(config(), now);
    await a.refresh();
    const rotated = { key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, kid: 'b' };
    keys.push(rotated);
    const before = fetches;
    // fetched less than the interval ago: no refetch, refused
    await expect(a.authenticateToken(token({}, rotated))).rejects.toThrow('failed to verify signature');
    expect(fetches).toBe(before);
    t += 10_000;
    expect((await a.authenticateToken(token({}, rotated)))?.user.name).toBe(`${issuer}#s`);
    expect(fetches).toBe(before + 1);
    // made-up key ids right after do not refetch again
    for (let i = 0; i < 20; i++)
      await expect(a.authenticateToken(token({}, { key: rotated.key, kid: `x${i}` }))).rejects.toThrow();
    expect(fetches).toBe(before + 1);
  });

  it('expired tokens, other audiences and missing required claims are refused', async () => {
    const a = new OidcAuthenticator(config({ requiredClaims: new Map([['hd', 'example.com']]) }), now);
    await a.refresh();
    await expect(a.authenticateToken(token({ hd: 'example.com', exp: sec() - 1 }))).rejects.toThrow('expired');
    await expect(a.authenticateToken(token({ hd: 'example.com', aud: 'x' }))).rejects.toThrow('audience');
    await expect(a.authenticateToken(token({}))).rejects.toThrow('required claim hd not present');
    await expect(a.authenticateToken(token({ hd: 'other' }))).rejects.toThrow('does not match');
    expect((await a.authenticateToken(token({ hd: 'example.com' })))?.user.name).toBe(`${issuer}#s`);
  });
});
