import { createPublicKey, generateKeyPairSync } from 'node:crypto';

import { type ApiObject } from '@platform/api';

import { AuthenticationError } from '../authenticator';
import { parseJwt } from './jwt';
import { staticObjectReader } from './objects';
import {
  EXTENDED_EXPIRATION_SECONDS,
  serviceAccountAuthenticator,
  ServiceAccountTokenIssuer,
  signLegacyToken,
  WARN_ONLY_EXPIRATION_SECONDS,
} from './service-account';

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
const T0 = 1_700_000_000_000;

function objects(extra: Record<string, ApiObject> = {}): ReturnType<typeof staticObjectReader> {
  return staticObjectReader({
    'serviceaccounts/ns/sa': { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', uid: 'sa-uid' } },
    'pods/ns/p': { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', uid: 'p-uid' } },
    ...extra,
  });
}

describe('service account tokens', () => {
  let now = T0;
  const issuer = new ServiceAccountTokenIssuer(
    { issuer: 'https://i', signingKey: key, apiAudiences: ['api'], maxExpirationSeconds: 7200, extendExpiration: true },
    () => now,
  );
  const verify = (reader = objects(), lookup = true) =>
    serviceAccountAuthenticator(
      { issuers: ['https://i'], publicKeys: [createPublicKey(key)], lookup },
      reader,
      () => now,
    );
  const base = { namespace: 'ns', serviceAccount: { name: 'sa', uid: 'sa-uid' }, audiences: ['api'] };

  beforeEach(() => (now = T0));

  it('issues tokens with Kubernetes’ claims, capped at the maximum, extended for pods asking 3607 s', () => {
    const t = issuer.issue({ ...base, expirationSeconds: 3600 });
    const claims = parseJwt(t.token).claims;
    expect(claims).toEqual({
      aud: ['api'],
      exp: T0 / 1000 + 3600,
      iat: T0 / 1000,
      nbf: T0 / 1000,
      iss: 'https://i',
      sub: 'system:serviceaccount:ns:sa',
      'kubernetes.io': { namespace: 'ns', serviceaccount: { name: 'sa', uid: 'sa-uid' } },
    });
    expect(issuer.issue({ ...base, expirationSeconds: 100_000 }).expiresAtMs).toBe(T0 + 7200_000);
    const ext = issuer.issue({
      ...base,
      expirationSeconds: WARN_ONLY_EXPIRATION_SECONDS,
      pod: { name: 'p', uid: 'p-uid' },
    });
    expect(ext.expiresAtMs).toBe(T0 + EXTENDED_EXPIRATION_SECONDS * 1000);
    expect((parseJwt(ext.token).claims['kubernetes.io'] as { warnafter: number }).warnafter).toBe(
      T0 / 1000 + WARN_ONLY_EXPIRATION_SECONDS,
    );
  });

  it('accepts valid tokens and refuses expired, wrong-audience, stale and deleted ones', async () => {
    const a = verify();
    const { token } = issuer.issue({ ...base, expirationSeconds: 3600, pod: { name: 'p', uid: 'p-uid' } });
    expect(await a.authenticateToken(token, ['api'])).toEqual({
      user: {
        name: 'system:serviceaccount:ns:sa',
        uid: 'sa-uid',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
        extra: { 'authentication.platform/pod-name': ['p'], 'authentication.platform/pod-uid': ['p-uid'] },
      },
      audiences: ['api'],
    });
    await expect(a.authenticateToken(token, ['other'])).rejects.toThrow('audiences');
    now = T0 + 3661_000;
    await expect(a.authenticateToken(token, ['api'])).rejects.toThrow('expired');
    now = T0;
    await expect(
      verify(objects({ 'pods/ns/p': { metadata: { name: 'p', uid: 'new' } } as ApiObject })).authenticateToken(token, [
        'api',
      ]),
    ).rejects.toThrow('pod UID');
    await expect(verify(staticObjectReader({})).authenticateToken(token, ['api'])).rejects.toBeInstanceOf(
      AuthenticationError,
    );
  });

  it('leaves tokens of other issuers and non-JWTs to other methods', async () => {
    const a = verify();
    expect(await a.authenticateToken('abc', ['api'])).toBeUndefined();
    const other = new ServiceAccountTokenIssuer(
      { issuer: 'https://elsewhere', signingKey: key, apiAudiences: ['api'], extendExpiration: false },
      () => now,
    );
    expect(await a.authenticateToken(other.issue({ ...base, expirationSeconds: 3600 }).token, ['api'])).toBeUndefined();
  });

  it('legacy tokens: checked against their Secret only with lookup on', async () => {
    const token = signLegacyToken(key, 'ns', 's', { name: 'sa', uid: 'sa-uid' });
    const user = {
      name: 'system:serviceaccount:ns:sa',
      uid: 'sa-uid',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
    };
    expect(await verify(objects(), false).authenticateToken(token, ['api'])).toEqual({ user });
    await expect(verify(objects(), true).authenticateToken(token, ['api'])).rejects.toThrow('invalidated');
    const secret = { metadata: { name: 's' }, data: { token: Buffer.from(token).toString('base64') } } as ApiObject;
    expect(await verify(objects({ 'secrets/ns/s': secret }), true).authenticateToken(token, ['api'])).toEqual({ user });
  });
});
