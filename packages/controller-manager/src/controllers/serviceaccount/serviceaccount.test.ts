import { NamespaceKind, ServiceAccountKind } from '@platform/api';

import { ClusterRoleKind } from '@platform/api';
import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { clusterRoleAggregationController } from '../clusterrole-aggregation';
import { serviceAccountController } from '.';

let h: ControllerHarness;
beforeAll(async () => {
  h = await startControllerHarness();
  h.start(serviceAccountController);
  h.start(clusterRoleAggregationController);
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

test('every namespace gets its default ServiceAccount back', async () => {
  await h.client.resource(NamespaceKind).create({ metadata: { name: 'team' } });
  const sas = h.client.resource(ServiceAccountKind, 'team');
  await waitFor('default ServiceAccount', async () => (await sas.get('default').catch(() => undefined)) !== undefined);
  await sas.delete('default');
  await waitFor('recreated', async () => (await sas.get('default').catch(() => undefined)) !== undefined);
});

test('aggregated ClusterRoles collect the rules of the roles they select', async () => {
  const roles = h.client.resource(ClusterRoleKind);
  await roles.create({
    metadata: { name: 'agg' },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.platform/agg': 'true' } }] },
    rules: [],
  });
  await roles.create({
    metadata: { name: 'part', labels: { 'example.platform/agg': 'true' } },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });
  await waitFor('rules aggregated', async () => (await roles.get('agg')).rules?.length === 1);
  expect(h.errors).toEqual([]);
});
