/**
 * The token cleaner against a real API server: expired bootstrap token Secrets (and unparseable expirations) go at
 * once, one that expires shortly goes when it does, and Secrets without expiration, of another type or in another
 * namespace stay.
 */
import { type Secret, SecretKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { BOOTSTRAP_TOKEN_SECRET_TYPE, tokenExpiry } from '../util/bootstrap-tokens';
import { tokenCleanerController } from './index';

jest.setTimeout(120_000);

let h: ControllerHarness;
beforeAll(async () => {
  h = await startControllerHarness();
  h.start(tokenCleanerController);
}, 90_000);
afterAll(async () => {
  await h?.stop();
});

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const token = (name: string, expiration?: string, o: { namespace?: string; type?: string } = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: o.namespace ?? 'system' },
  type: o.type ?? BOOTSTRAP_TOKEN_SECRET_TYPE,
  data: {
    'token-id': b64(name.slice(-6)),
    'token-secret': b64('0123456789abcdef'),
    ...(expiration !== undefined ? { expiration: b64(expiration) } : {}),
  },
});
const exists = async (ns: string, name: string): Promise<boolean> =>
  (await h.client.resource(SecretKind, ns).list()).items.some((s) => s.metadata?.name === name);

test('tokenExpiry reads RFC 3339 and treats garbage as expired', () => {
  expect(tokenExpiry(token('bootstrap-token-aaaaaa'))).toBeUndefined();
  expect(tokenExpiry(token('bootstrap-token-aaaaaa', '2030-01-02T03:04:05Z'))).toBe(Date.UTC(2030, 0, 2, 3, 4, 5));
  expect(tokenExpiry(token('bootstrap-token-aaaaaa', 'soon'))).toBe(-Infinity);
});

test('expired bootstrap tokens are deleted, at their expiration', async () => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const far = new Date(Date.now() + 3600_000).toISOString();
  await h.client
    .resource(SecretKind, 'default')
    .create(token('bootstrap-token-dddddd', past, { namespace: 'default' }));
  const secrets = h.client.resource(SecretKind, 'system');
  await secrets.create(token('bootstrap-token-aaaaaa', past));
  await secrets.create(token('bootstrap-token-bbbbbb', 'not a time'));
  await secrets.create(token('bootstrap-token-cccccc'));
  await secrets.create(token('bootstrap-token-eeeeee', far));
  await secrets.create(token('other-ffffff', past, { type: 'Opaque' }));
  await waitFor('the expired tokens deleted', async () => {
    return !(await exists('system', 'bootstrap-token-aaaaaa')) && !(await exists('system', 'bootstrap-token-bbbbbb'));
  });
  // A few seconds from now: deleted once the time has come, not before.
  const soon = Date.now() + 3000;
  await secrets.create(token('bootstrap-token-gggggg', new Date(soon).toISOString()));
  await waitFor('the token expiring soon deleted', async () => !(await exists('system', 'bootstrap-token-gggggg')));
  expect(Date.now()).toBeGreaterThanOrEqual(soon);
  for (const [ns, name] of [
    ['system', 'bootstrap-token-cccccc'],
    ['system', 'bootstrap-token-eeeeee'],
    ['system', 'other-ffffff'],
    ['default', 'bootstrap-token-dddddd'],
  ] as const)
    expect(`${ns}/${name}: ${await exists(ns, name)}`).toBe(`${ns}/${name}: true`);
  expect(h.errors).toEqual([]);
});
