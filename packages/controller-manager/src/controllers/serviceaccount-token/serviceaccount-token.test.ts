/**
 * The service account token controller against a real API server: a token Secret per account, referenced from
 * it, with the CA and the namespace; a new one when it is deleted; completed when emptied; deleted with its account
 * and when the account is made again under the same name; an account that already has a token gets no second one.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Secret, SecretKind, type ServiceAccount, ServiceAccountKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { SERVICE_ACCOUNT_NAME_ANNOTATION, SERVICE_ACCOUNT_TOKEN_TYPE, serviceAccountTokenController } from './index';

jest.setTimeout(120_000);

const NS = 'default';
const dir = mkdtempSync(join(tmpdir(), 'sa-token-test-'));
const keyFile = join(dir, 'sa.key');
let h: ControllerHarness;
beforeAll(async () => {
  writeFileSync(
    keyFile,
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
  );
  h = await startControllerHarness();
  h.start(serviceAccountTokenController, (o) => Object.assign(o, { privateKeyFile: keyFile }));
}, 90_000);
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const unb64 = (s: string | undefined): string | undefined =>
  s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');
const tokensOf = async (sa: string): Promise<Secret[]> =>
  (await h.client.resource(SecretKind, NS).list()).items.filter(
    (s) => s.type === SERVICE_ACCOUNT_TOKEN_TYPE && s.metadata?.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] === sa,
  );
const account = async (name: string): Promise<ServiceAccount> =>
  (await h.client.resource(ServiceAccountKind, NS).get(name)) as ServiceAccount;
const referenced = async (name: string): Promise<string[]> =>
  ((await account(name)).secrets ?? []).map((r) => r.name ?? '');

test('a token Secret per account, kept whole, and gone with its account', async () => {
  const sas = h.client.resource(ServiceAccountKind, NS);
  await sas.create({ metadata: { name: 'robot' } });
  await waitFor('robot has a token Secret', async () => (await tokensOf('robot')).length === 1);
  const [secret] = await tokensOf('robot');
  const name = secret!.metadata?.name ?? '';
  expect(name).toMatch(/^robot-token-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  expect(unb64(secret!.data?.['ca.crt'])).toBe(h.server.ca);
  expect(unb64(secret!.data?.namespace)).toBe(NS);
  const token = unb64(secret!.data?.token) ?? '';
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, string>;
  expect(claims.sub).toBe('system:serviceaccount:default:robot');
  expect(claims['kubernetes.io/serviceaccount/secret.name']).toBe(name);
  expect(claims['kubernetes.io/serviceaccount/service-account.uid']).toBe((await account('robot')).metadata?.uid);
  await waitFor('robot references it', async () => (await referenced('robot')).includes(name));

  // Emptied: completed (the token kept).
  const cur = await h.client.resource(SecretKind, NS).get(name);
  await h.client.resource(SecretKind, NS).update({ ...cur, data: { token: cur.data?.token ?? '' } });
  await waitFor('the Secret completed', async () => {
    const s = await h.client.resource(SecretKind, NS).get(name);
    return unb64(s.data?.namespace) === NS && unb64(s.data?.['ca.crt']) === h.server.ca;
  });
  expect(unb64((await h.client.resource(SecretKind, NS).get(name)).data?.token)).toBe(token);

  // Deleted: a new one replaces it, and the reference follows.
  await h.client.resource(SecretKind, NS).delete(name);
  await waitFor('a new token Secret', async () => {
    const t = await tokensOf('robot');
    return t.length === 1 && t[0]!.metadata?.name !== name;
  });
  const second = (await tokensOf('robot'))[0]!.metadata?.name ?? '';
  await waitFor('the new one referenced, the old one not', async () => {
    const refs = await referenced('robot');
    return refs.includes(second) && !refs.includes(name);
  });

  // Made again under the same name: the old account's token goes, the new account gets its own.
  await sas.delete('robot');
  await sas.create({ metadata: { name: 'robot' } });
  await waitFor('only a token of the new robot', async () => {
    const uid = (await account('robot')).metadata?.uid;
    const t = await tokensOf('robot');
    return t.length === 1 && t[0]!.metadata?.annotations?.['kubernetes.io/service-account.uid'] === uid;
  });

  // Deleted: its token goes too.
  await sas.delete('robot');
  await waitFor('no token left', async () => (await tokensOf('robot')).length === 0);
  expect(h.errors).toEqual([]);
});

test('an account already holding a token gets no second one, however often it changes', async () => {
  const sas = h.client.resource(ServiceAccountKind, NS);
  await sas.create({ metadata: { name: 'busy' } });
  await waitFor('busy has a token', async () => (await tokensOf('busy')).length === 1);
  for (let i = 0; i < 5; i++) {
    await sas.patch('busy', 'merge', { metadata: { labels: { round: String(i) } } });
  }
  // The controller has seen the last change once its label is in the cache; give it a moment to (not) act.
  await new Promise((r) => setTimeout(r, 1000));
  expect(await tokensOf('busy')).toHaveLength(1);
  expect(h.errors).toEqual([]);
});
