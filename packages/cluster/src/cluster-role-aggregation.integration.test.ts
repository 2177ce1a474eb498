/**
 * The clusterrole-aggregation controller against the real API server (in-process): it agrees with the API server's
 * bootstrap on `admin`, `edit` and `view`, and follows labelled ClusterRoles as they come, change and go.
 */
import { type ClusterRole, ClusterRoleKind, type PolicyRule } from '@platform/api';
import { startTestServer, type TestServer } from '@platform/apiserver';
import { Clientset, RestClient } from '@platform/client';

import { aggregateRules, runClusterRoleAggregationController, sameRules } from './cluster-role-aggregation';

let ts: TestServer;
let clientset: Clientset;
beforeAll(async () => {
  ts = await startTestServer();
  clientset = new Clientset(new RestClient({ server: ts.url, ca: Buffer.from(ts.ca), token: 't' }));
});
afterAll(async () => {
  await ts.stop();
});

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const hasRule = (role: ClusterRole, want: PolicyRule): boolean =>
  (role.rules ?? []).some((r) => sameRules([r], [want]));

it('computes what the bootstrap already gave admin, edit and view (so the two never undo each other)', async () => {
  const all = (await clientset.resource(ClusterRoleKind).list()).items;
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
  const roles = clientset.resource(ClusterRoleKind);
  const before = await roles.get('view');
  const errors: unknown[] = [];
  const stop = new AbortController();
  const running = runClusterRoleAggregationController(clientset, stop.signal, (name, err) =>
    errors.push(`${name}: ${String(err)}`),
  );
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
    stop.abort();
    await running;
  }
  expect(errors).toEqual([]);
});
