/**
 * The bootstrap signer: the detached JWS is HS256 over `<header>.<payload>` keyed by the token secret; against a
 * real API server, cluster-info gets a signature per signing token, loses it when the token goes, expires or
 * stops allowing signing, and gets new ones when its kubeconfig changes.
 */
import { createHmac } from 'node:crypto';

import { type ConfigMap, ConfigMapKind, type Secret, SecretKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { BOOTSTRAP_TOKEN_SECRET_TYPE } from '../util/bootstrap-tokens';
import {
  bootstrapSignerController,
  computeDetachedSignature,
  verifyDetachedSignature,
  wantedSignatures,
} from './index';

jest.setTimeout(120_000);

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const token = (id: string, secret: string, extra: Record<string, string> = {}): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: `bootstrap-token-${id}`, namespace: 'system' },
  type: BOOTSTRAP_TOKEN_SECRET_TYPE,
  data: Object.fromEntries(
    Object.entries({ 'token-id': id, 'token-secret': secret, 'usage-bootstrap-signing': 'true', ...extra }).map(
      ([k, v]) => [k, b64(v)],
    ),
  ),
});

describe('signatures', () => {
  test('a detached HS256 JWS keyed by the token secret', () => {
    const sig = computeDetachedSignature('hello', 'abcdef', '0123456789abcdef');
    const [header, empty, mac] = sig.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', kid: 'abcdef' });
    expect(empty).toBe('');
    const want = createHmac('sha256', '0123456789abcdef')
      .update(`${header}.${Buffer.from('hello').toString('base64url')}`)
      .digest('base64url');
    expect(mac).toBe(want);
    expect(verifyDetachedSignature('hello', sig, 'abcdef', '0123456789abcdef')).toBe(true);
    expect(verifyDetachedSignature('hello!', sig, 'abcdef', '0123456789abcdef')).toBe(false);
    expect(verifyDetachedSignature('hello', sig, 'abcdef', '0123456789abcdeX')).toBe(false);
  });

  test('only tokens that allow signing and have not expired sign', () => {
    const now = Date.UTC(2030, 0, 1);
    const { signatures, nextExpiry } = wantedSignatures(
      'c',
      [
        token('aaaaaa', 'aaaaaaaaaaaaaaaa'),
        token('bbbbbb', 'bbbbbbbbbbbbbbbb', { 'usage-bootstrap-signing': 'false' }),
        token('cccccc', 'cccccccccccccccc', { expiration: '2029-12-31T00:00:00Z' }),
        token('dddddd', 'dddddddddddddddd', { expiration: '2030-01-02T00:00:00Z' }),
        token('eeeeee', 'eeeeeeeeeeeeeeee', { expiration: 'garbage' }),
      ],
      now,
    );
    expect(Object.keys(signatures).sort()).toEqual(['jws-kubeconfig-aaaaaa', 'jws-kubeconfig-dddddd']);
    expect(nextExpiry).toBe(Date.UTC(2030, 0, 2));
  });
});

describe('against an API server', () => {
  let h: ControllerHarness;
  let clock = Date.now();
  beforeAll(async () => {
    h = await startControllerHarness();
    // The signer's clock: moved by the test, so a token's expiry never races a loaded machine.
    h.start(bootstrapSignerController, (o) => (o.now = () => clock));
  }, 90_000);
  afterAll(async () => {
    await h?.stop();
  });

  const clusterInfo = async (): Promise<Record<string, string>> =>
    ((await h.client.resource(ConfigMapKind, 'public').get('cluster-info')) as ConfigMap).data ?? {};
  const sigKeys = async (): Promise<string> =>
    Object.keys(await clusterInfo())
      .filter((k) => k.startsWith('jws-'))
      .sort()
      .join(',');

  test('cluster-info carries a signature per signing token', async () => {
    const secrets = h.client.resource(SecretKind, 'system');
    await secrets.create(token('aaaaaa', 'aaaaaaaaaaaaaaaa'));
    await h.client.resource(ConfigMapKind, 'public').create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cluster-info', namespace: 'public' },
      data: { kubeconfig: 'v1', other: 'kept', 'jws-kubeconfig-zzzzzz': 'stale' },
    });
    await waitFor('signed by aaaaaa only', async () => (await sigKeys()) === 'jws-kubeconfig-aaaaaa');
    let data = await clusterInfo();
    expect(verifyDetachedSignature('v1', data['jws-kubeconfig-aaaaaa']!, 'aaaaaa', 'aaaaaaaaaaaaaaaa')).toBe(true);
    expect(data.other).toBe('kept');

    await secrets.create(token('bbbbbb', 'bbbbbbbbbbbbbbbb', { expiration: new Date(clock + 3600_000).toISOString() }));
    await secrets.create(token('cccccc', 'cccccccccccccccc', { 'usage-bootstrap-signing': 'false' }));
    await waitFor(
      'signed by bbbbbb too',
      async () => (await sigKeys()) === 'jws-kubeconfig-aaaaaa,jws-kubeconfig-bbbbbb',
    );
    // Two hours later bbbbbb has expired (its Secret stays: that is the token cleaner's work); any change of
    // cluster-info or a token makes the signer look again.
    clock += 2 * 3600_000;
    await secrets.create(token('dddddd', 'dddddddddddddddd', { 'usage-bootstrap-signing': 'false' }));
    await waitFor('bbbbbb expired', async () => (await sigKeys()) === 'jws-kubeconfig-aaaaaa');

    // A new kubeconfig is signed again.
    const cm = await h.client.resource(ConfigMapKind, 'public').get('cluster-info');
    await h.client.resource(ConfigMapKind, 'public').update({ ...cm, data: { ...cm.data, kubeconfig: 'v2' } });
    await waitFor('v2 signed', async () => {
      data = await clusterInfo();
      return verifyDetachedSignature('v2', data['jws-kubeconfig-aaaaaa'] ?? '', 'aaaaaa', 'aaaaaaaaaaaaaaaa');
    });

    await secrets.delete('bootstrap-token-aaaaaa');
    await waitFor('no signature left', async () => (await sigKeys()) === '');
    expect((await clusterInfo()).kubeconfig).toBe('v2');
    expect(h.errors).toEqual([]);
  });
});
