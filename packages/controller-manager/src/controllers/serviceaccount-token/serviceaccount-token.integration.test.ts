/**
 * The token controller's Secrets authenticate: an API server process verifying service account tokens with the
 * public half of the controller manager's `--service-account-private-key-file` accepts the token of the `default`
 * ServiceAccount as `system:serviceaccount:default:default`; `ca.crt` is `--root-ca-file`'s, and a controller
 * manager with an unreadable key refuses to start, naming the flag.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Secret, SecretKind } from '@platform/api';

import {
  type ApiServer,
  type DaemonProcess,
  runControllerManager,
  startApiServer,
  startControllerManager,
} from '../../integration/support';
import { waitFor } from '../../testing/harness';

// A loaded CI machine may take a minute to start the controller manager process alone.
jest.setTimeout(300_000);

let api: ApiServer;
let cm: DaemonProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), 'sa-token-it-'));
const key = join(dir, 'sa.key');
beforeAll(async () => {
  writeFileSync(
    key,
    generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
  );
  api = await startApiServer(undefined, [`--service-account-key-file=${key}`]);
}, 90_000);
afterAll(async () => {
  await cm?.kill('SIGKILL');
  await api?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the token of a Secret authenticates as its ServiceAccount', async () => {
  const caFile = join(api.dir, 'pki', 'apiserver.crt');
  cm = startControllerManager(api, [
    '--leader-elect=false',
    '--controllers=serviceaccount,serviceaccount-token',
    `--service-account-private-key-file=${key}`,
    `--root-ca-file=${caFile}`,
  ]);
  let secret: Secret | undefined;
  await waitFor(
    'the default account token',
    async () => {
      secret = (await api.client.resource(SecretKind, 'default').list()).items.find(
        (s) => s.type === 'kubernetes.io/service-account-token',
      );
      return secret !== undefined;
    },
    180_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${cm?.output().slice(-3000) ?? ''}`);
  });
  expect(Buffer.from(secret!.data?.['ca.crt'] ?? '', 'base64').toString()).toBe(readFileSync(caFile, 'utf8'));
  const token = Buffer.from(secret!.data?.token ?? '', 'base64').toString();
  const review = (await api.client.rest.request({
    method: 'POST',
    path: '/apis/authentication.platform/v1/tokenreviews',
    body: { apiVersion: 'authentication.platform/v1', kind: 'TokenReview', spec: { token } } as never,
    contentType: 'application/json',
  })) as { status?: { authenticated?: boolean; user?: { username?: string } } };
  expect(review.status).toMatchObject({
    authenticated: true,
    user: { username: 'system:serviceaccount:default:default' },
  });
});

test('an unreadable private key is refused at start', async () => {
  const r = await runControllerManager([
    `--clientconfig=${api.clientConfigPath}`,
    '--secure-port=0',
    '--service-account-private-key-file=/nonexistent/sa.key',
  ]);
  expect(r.code).toBe(1);
  expect(r.output).toMatch(/--service-account-private-key-file: cannot use \/nonexistent\/sa.key/);
});
