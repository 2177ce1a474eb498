import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  DeploymentKind,
  EventKind,
  HorizontalPodAutoscalerKind,
  PodKind,
  SecretKind,
  ServiceAccountKind,
} from '@platform/api';

import { waitFor } from '../testing/harness';
import { type ApiServer, type DaemonProcess, startApiServer, startControllerManager } from './support';

// RBAC on: each controller acts as its own ServiceAccount, allowed only what its system:controller:<name> role says.
let api: ApiServer;
let cm: DaemonProcess | undefined;
const keyDir = mkdtempSync(join(tmpdir(), 'cm-sa-key-'));
const key = join(keyDir, 'sa.key');
beforeAll(async () => {
  // The TokenRequest API needs an issuer and a signing key.
  writeFileSync(
    key,
    generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
  );
  api = await startApiServer(undefined, [
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://platform.local',
    `--service-account-key-file=${key}`,
    `--service-account-signing-key-file=${key}`,
  ]);
}, 90_000);
afterAll(async () => {
  await cm?.kill('SIGKILL');
  await api?.stop();
  rmSync(keyDir, { recursive: true, force: true });
});

test('--use-service-account-credentials: the controllers act as their ServiceAccounts, within their roles', async () => {
  cm = startControllerManager(api, [
    '--leader-elect=false',
    '--use-service-account-credentials',
    '--controllers=replicaset,deployment,serviceaccount,serviceaccount-token,horizontalpodautoscaling',
    `--service-account-private-key-file=${key}`,
  ]);
  await api.client.resource(DeploymentKind, 'default').create({
    metadata: { name: 'sa' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'sa' } },
      template: { metadata: { labels: { app: 'sa' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });
  await waitFor('2 pods', async () => (await api.client.resource(PodKind, 'default').list()).items.length === 2).catch(
    (err: Error) => {
      throw new Error(`${err.message}\n${cm?.output().slice(-3000) ?? ''}`);
    },
  );
  const sas = api.client.resource(ServiceAccountKind, 'system');
  for (const name of ['replicaset-controller', 'deployment-controller', 'service-account-controller'])
    expect((await sas.get(name)).metadata?.name).toBe(name);
  // The tokens controller acts as the controller manager itself, as in 1.21: no account's role lets it write the
  // token Secrets of every namespace.
  await waitFor('a token Secret for default/default', async () =>
    (await api.client.resource(SecretKind, 'default').list()).items.some(
      (s) =>
        s.type === 'kubernetes.io/service-account-token' &&
        s.metadata?.annotations?.['kubernetes.io/service-account.name'] === 'default',
    ),
  );
  await expect(sas.get('tokens-controller')).rejects.toThrow();
  // The autoscaler, as horizontal-pod-autoscaler, scales its target up to minReplicas and keeps its conditions.
  await api.client.resource(HorizontalPodAutoscalerKind, 'default').create({
    metadata: { name: 'sa' },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sa' }, minReplicas: 3, maxReplicas: 5 },
  });
  await waitFor(
    'the deployment scaled to 3 by the autoscaler',
    async () => (await api.client.resource(DeploymentKind, 'default').get('sa')).spec?.replicas === 3,
  );
  await waitFor('the autoscaler kept its conditions', async () =>
    Boolean(
      (await api.client.resource(HorizontalPodAutoscalerKind, 'default').get('sa')).metadata?.annotations?.[
        'autoscaling.alpha.kubernetes.io/conditions'
      ],
    ),
  );
  await waitFor('an Event from the replicaset controller', async () =>
    (await api.client.resource(EventKind, 'default').list()).items.some(
      (e) => e.reason === 'SuccessfulCreate' && e.source?.component === 'replicaset-controller',
    ),
  );
}, 120_000);
