import { generateKeyPairSync, type KeyObject } from 'node:crypto';

import {
  checkTimes,
  JwtError,
  keyFromJwk,
  keyId,
  looksLikeJwt,
  parseJwt,
  publicJwk,
  signJwt,
  SUPPORTED_ALGORITHMS,
  verifySignature,
} from './jwt';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const ec: Record<string, KeyObject> = {
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  ES384: generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
  ES512: generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey,
};

describe('jwt', () => {
  it.each(SUPPORTED_ALGORITHMS.map((a) => [a]))('%s: signs and verifies; a changed payload fails', (alg) => {
    const key = alg.startsWith('ES') ? ec[alg]! : rsa;
    const token = signJwt({ sub: 'x', n: 1 }, key, { alg, kid: keyId(key) });
    const jwt = parseJwt(token);
    expect(jwt.header).toEqual({ alg, kid: keyId(key) });
    expect(verifySignature(jwt, alg, keyFromJwk(publicJwk(key))!)).toBe(true);
    const [h, , s] = token.split('.');
    const forged = parseJwt(`${h}.${Buffer.from('{"sub":"y","n":1}').toString('base64url')}.${s}`);
    expect(verifySignature(forged, alg, key)).toBe(false);
    // a key of another type never verifies
    expect(verifySignature(jwt, alg, alg.startsWith('ES') ? rsa : ec.ES256!)).toBe(false);
  });

  it('never throws anything but JwtError on garbage', () => {
    const samples = ['', '.', '..', 'a.b', 'a.b.c.d', '!!.??.**', 'eyJ.eyJ.x', `${'A'.repeat(70_000)}.a.a`];
    const rnd = (n: number): number => Math.floor(Math.random() * n);
    for (let i = 0; i < 2000; i++) {
      const parts = Array.from({ length: 1 + rnd(4) }, () =>
        Buffer.from(Array.from({ length: rnd(40) }, () => rnd(256))).toString(rnd(2) ? 'base64url' : 'latin1'),
      );
      samples.push(parts.join('.'));
    }
    for (const s of samples) {
      try {
        const jwt = parseJwt(s);
        expect(typeof jwt.claims).toBe('object');
      } catch (err) {
        expect(err).toBeInstanceOf(JwtError);
      }
      expect(typeof looksLikeJwt(s)).toBe('boolean');
    }
  });

  it('checks exp and nbf with leeway', () => {
    const now = 1_000_000_000_000;
    const s = now / 1000;
    expect(() => checkTimes({ exp: s - 30 }, now, { leewaySeconds: 60, requireExp: true })).not.toThrow();
    expect(() => checkTimes({ exp: s - 61 }, now, { leewaySeconds: 60, requireExp: true })).toThrow('expired');
    expect(() => checkTimes({}, now, { leewaySeconds: 0, requireExp: true })).toThrow('no expiry');
    expect(() => checkTimes({ exp: 'tomorrow' }, now, { leewaySeconds: 0, requireExp: true })).toThrow('not a number');
    expect(() => checkTimes({ exp: s + 10, nbf: s + 100 }, now, { leewaySeconds: 0, requireExp: true })).toThrow(
      'not valid yet',
    );
  });
});
