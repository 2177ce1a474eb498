/**
 * The clusterrole-aggregation controller against the real API server (in-process): it agrees with the API server's
 * bootstrap on `admin`, `edit` and `view`, and follows labelled ClusterRoles as they come, change and go.
 */
import { type ClusterRole, ClusterRoleKind, type PolicyRule } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { aggregateRules, clusterRoleAggregationController, sameRules } from './cluster-role-aggregation';

let h: ControllerHarness;
beforeAll(async () => {
  h = await startControllerHarness();
}, 90_000);
afterAll(async () => {
  await h?.stop();
});

const hasRule = (role: ClusterRole, want: PolicyRule): boolean =>
  (role.rules ?? []).some((r) => sameRules([r], [want]));

it('computes what the bootstrap already gave admin, edit and view (so the two never undo each other)', async () => {
  const all = (await h.client.resource(ClusterRoleKind).list()).items;
  const aggregated = all.filter((r) => r.aggregationRule).map((r) => r.metadata?.name);
  expect(aggregated).toEqual(expect.arrayContaining(['admin', 'edit', 'view']));
  for (const role of all.filter((r) => r.aggregationRule)) {
    expect({ name: role.metadata?.name, rules: role.rules }).toEqual({
      name: role.metadata?.name,
      rules: aggregateRules(role, all),
    });
  }
  const byName = (n: string): ClusterRole => all.find((r) => r.metadata?.name === n)!;
  // edit has view's rules, admin edit's: the chain of labels works.
  for (const r of byName('view').rules ?? []) expect(hasRule(byName('edit'), r)).toBe(true);
  for (const r of byName('edit').rules ?? []) expect(hasRule(byName('admin'), r)).toBe(true);
});

it('adds the rules of a labelled ClusterRole to view, edit and admin, follows changes and takes them away again', async () => {
  const roles = h.client.resource(ClusterRoleKind);
  const before = await roles.get('view');
  const stop = h.start(clusterRoleAggregationController);
  try {
    const widgets: PolicyRule = { verbs: ['get', 'list'], apiGroups: ['example.platform'], resources: ['widgets'] };
    const gadgets: PolicyRule = { verbs: ['get'], apiGroups: ['example.platform'], resources: ['gadgets'] };
    await roles.create({
      apiVersion: 'rbac.authorization.platform/v1',
      kind: 'ClusterRole',
      metadata: { name: 'widgets-view', labels: { 'rbac.authorization.platform/aggregate-to-view': 'true' } },
      rules: [widgets],
    });
    for (const name of ['view', 'edit', 'admin']) {
      await waitFor(`${name} to get the widgets rule`, async () => hasRule(await roles.get(name), widgets));
    }

    const labelled = await roles.get('widgets-view');
    await roles.update({ ...labelled, rules: [gadgets] });
    await waitFor('view to trade widgets for gadgets', async () => {
      const view = await roles.get('view');
      return hasRule(view, gadgets) && !hasRule(view, widgets);
    });

    await roles.delete('widgets-view');
    for (const name of ['view', 'edit', 'admin']) {
      await waitFor(`${name} to lose the gadgets rule`, async () => !hasRule(await roles.get(name), gadgets));
    }
    expect(sameRules((await roles.get('view')).rules, before.rules)).toBe(true);
  } finally {
    await stop();
  }
  expect(h.errors).toEqual([]);
}, 120_000);
