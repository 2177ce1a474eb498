import {
  type ClusterRole,
  conflict,
  internalError,
  isConflict,
  type LabelSelectorOperator,
  notFound,
  type PolicyRule,
} from '@platform/api';

import {
  aggregateRules,
  type ClusterRoleClient,
  type ClusterRoleLister,
  type ClusterRoleObject,
  FIELD_MANAGER,
  sameRules,
  syncAggregatedClusterRole,
} from './cluster-role-aggregation';

const GR = { group: 'rbac.authorization.platform', resource: 'clusterroles' };
const TO_VIEW = 'rbac.authorization.platform/aggregate-to-view';

const rule = (verbs: string[], resources: string[], apiGroups = ['']): PolicyRule => ({ verbs, apiGroups, resources });

function role(
  name: string,
  o: { labels?: Record<string, string>; rules?: PolicyRule[]; selectors?: ClusterRole['aggregationRule'] } = {},
): ClusterRoleObject {
  return {
    apiVersion: 'rbac.authorization.platform/v1',
    kind: 'ClusterRole',
    metadata: { name, resourceVersion: '1', ...(o.labels ? { labels: o.labels } : {}) },
    ...(o.rules ? { rules: o.rules } : {}),
    ...(o.selectors ? { aggregationRule: o.selectors } : {}),
  };
}

const toView = { clusterRoleSelectors: [{ matchLabels: { [TO_VIEW]: 'true' } }] };

describe('aggregateRules', () => {
  const pods = rule(['get'], ['pods']);
  const secrets = rule(['get'], ['secrets']);
  const widgets = rule(['list'], ['widgets'], ['example.platform']);

  it('takes the rules of the selected roles, by name, each once, never its own', () => {
    const view = role('view', { labels: { [TO_VIEW]: 'true' }, rules: [rule(['*'], ['*'])], selectors: toView });
    const all = [
      view,
      role('z-last', { labels: { [TO_VIEW]: 'true' }, rules: [widgets, pods] }),
      role('a-first', { labels: { [TO_VIEW]: 'true' }, rules: [pods, secrets] }),
      role('unlabelled', { rules: [rule(['delete'], ['pods'])] }),
      role('other-value', { labels: { [TO_VIEW]: 'false' }, rules: [rule(['create'], ['pods'])] }),
    ];
    expect(aggregateRules(view, all)).toEqual([pods, secrets, widgets]);
  });

  it('orders names by bytes, as Go does', () => {
    const all = [
      role('b', { labels: { [TO_VIEW]: 'true' }, rules: [secrets] }),
      role('B', { labels: { [TO_VIEW]: 'true' }, rules: [pods] }),
    ];
    expect(aggregateRules(role('view', { selectors: toView }), all)).toEqual([pods, secrets]);
  });

  it('unites the selectors, a role selected twice counting once, and knows matchExpressions', () => {
    const agg = role('agg', {
      selectors: {
        clusterRoleSelectors: [
          { matchLabels: { team: 'a' } },
          { matchExpressions: [{ key: 'tier', operator: 'In', values: ['x', 'y'] }] },
        ],
      },
    });
    const all = [
      agg,
      role('both', { labels: { team: 'a', tier: 'x' }, rules: [pods] }),
      role('tier-y', { labels: { tier: 'y' }, rules: [secrets, pods] }),
      role('tier-z', { labels: { tier: 'z' }, rules: [widgets] }),
    ];
    expect(aggregateRules(agg, all)).toEqual([pods, secrets]);
  });

  it('drops a rule that differs only in an absent list against an empty one', () => {
    const all = [
      role('a', { labels: { [TO_VIEW]: 'true' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] }),
      role('b', {
        labels: { [TO_VIEW]: 'true' },
        rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] }],
      }),
    ];
    expect(aggregateRules(role('view', { selectors: toView }), all)).toHaveLength(1);
  });

  it('copies the rules: the cached roles are not shared with the result', () => {
    const source = role('a', { labels: { [TO_VIEW]: 'true' }, rules: [rule(['get'], ['pods'])] });
    const out = aggregateRules(role('view', { selectors: toView }), [source]);
    out[0]!.verbs.push('list');
    expect(source.rules![0]!.verbs).toEqual(['get']);
  });

  it('selects nothing without selectors, and throws on a selector that does not parse', () => {
    const all = [role('a', { labels: { [TO_VIEW]: 'true' }, rules: [pods] })];
    expect(aggregateRules(role('agg', { selectors: {} }), all)).toEqual([]);
    const bad = role('agg', {
      selectors: {
        clusterRoleSelectors: [
          { matchExpressions: [{ key: 'a', operator: 'Gt' as LabelSelectorOperator, values: ['1'] }] },
        ],
      },
    });
    expect(() => aggregateRules(bad, all)).toThrow('"Gt" is not a valid pod selector operator');
  });
});

describe('sameRules', () => {
  it.each<[string, PolicyRule[] | undefined, PolicyRule[] | undefined, boolean]>([
    ['absent and empty', undefined, [], true],
    ['equal', [rule(['get'], ['pods'])], [rule(['get'], ['pods'])], true],
    [
      'absent and empty fields',
      [{ verbs: ['get'], nonResourceURLs: ['/x'] }],
      [{ verbs: ['get'], nonResourceURLs: ['/x'], resources: [] }],
      true,
    ],
    [
      'order matters',
      [rule(['get'], ['a']), rule(['get'], ['b'])],
      [rule(['get'], ['b']), rule(['get'], ['a'])],
      false,
    ],
    ['verb order matters', [rule(['get', 'list'], ['a'])], [rule(['list', 'get'], ['a'])], false],
    ['lengths', [rule(['get'], ['a'])], [], false],
  ])('%s', (_n, a, b, want) => expect(sameRules(a, b)).toBe(want));
});

describe('syncAggregatedClusterRole', () => {
  const widgets = rule(['get'], ['widgets'], ['example.platform']);

  function fixture(roles: ClusterRoleObject[]): {
    lister: ClusterRoleLister;
    client: ClusterRoleClient & { updates: ClusterRoleObject[]; gets: string[] };
    server: Map<string, ClusterRoleObject>;
    failNext: unknown[];
  } {
    const cache = new Map(roles.map((r) => [r.metadata!.name!, r]));
    // The server's copy, which may have moved on from the cache's.
    const server = new Map(roles.map((r) => [r.metadata!.name!, structuredClone(r)]));
    const failNext: unknown[] = [];
    const updates: ClusterRoleObject[] = [];
    const gets: string[] = [];
    const client = {
      updates,
      gets,
      get: async (name: string): Promise<ClusterRoleObject> => {
        gets.push(name);
        const r = server.get(name);
        if (!r) throw notFound(GR, name);
        return structuredClone(r);
      },
      update: async (r: ClusterRoleObject, o?: { fieldManager?: string }): Promise<ClusterRoleObject> => {
        expect(o?.fieldManager).toBe(FIELD_MANAGER);
        updates.push(structuredClone(r));
        if (failNext.length) throw failNext.shift();
        const name = r.metadata!.name!;
        const current = server.get(name);
        if (!current) throw notFound(GR, name);
        if (current.metadata!.resourceVersion !== r.metadata!.resourceVersion)
          throw conflict(GR, name, 'the object has been modified; please apply your changes to the latest version');
        const stored = structuredClone(r);
        stored.metadata!.resourceVersion = String(Number(current.metadata!.resourceVersion) + 1);
        server.set(name, stored);
        return structuredClone(stored);
      },
    };
    return { lister: { get: (n) => cache.get(n), list: () => [...cache.values()] }, client, server, failNext };
  }

  it('writes the aggregated rules, on the resourceVersion it read, leaving the cached object alone', async () => {
    const view = role('view', { selectors: toView });
    const f = fixture([view, role('w', { labels: { [TO_VIEW]: 'true' }, rules: [widgets] })]);
    expect(await syncAggregatedClusterRole('view', f.lister, f.client)).toBe(true);
    expect(f.client.updates).toHaveLength(1);
    expect(f.client.updates[0]!.metadata!.resourceVersion).toBe('1');
    expect(f.server.get('view')!.rules).toEqual([widgets]);
    expect(view.rules).toBeUndefined();
  });

  it('does not write when the rules are already there, nor for roles without aggregation or gone', async () => {
    const f = fixture([
      role('view', { selectors: toView, rules: [{ ...widgets, resourceNames: [] }] }),
      role('w', { labels: { [TO_VIEW]: 'true' }, rules: [widgets] }),
    ]);
    expect(await syncAggregatedClusterRole('view', f.lister, f.client)).toBe(false);
    expect(await syncAggregatedClusterRole('w', f.lister, f.client)).toBe(false);
    expect(await syncAggregatedClusterRole('gone', f.lister, f.client)).toBe(false);
    expect(f.client.updates).toEqual([]);
  });

  it('removes rules no selected role grants any more', async () => {
    const f = fixture([role('view', { selectors: toView, rules: [widgets] })]);
    expect(await syncAggregatedClusterRole('view', f.lister, f.client)).toBe(true);
    expect(f.server.get('view')!.rules).toEqual([]);
  });

  it('on a conflict reads the role again and retries on the fresh resourceVersion', async () => {
    const f = fixture([
      role('view', { selectors: toView }),
      role('w', { labels: { [TO_VIEW]: 'true' }, rules: [widgets] }),
    ]);
    // Someone else wrote `view` since the cache saw it.
    f.server.get('view')!.metadata!.resourceVersion = '7';
    expect(await syncAggregatedClusterRole('view', f.lister, f.client)).toBe(true);
    expect(f.client.gets).toEqual(['view']);
    expect(f.client.updates.map((u) => u.metadata!.resourceVersion)).toEqual(['1', '7']);
    expect(f.server.get('view')!.rules).toEqual([widgets]);
  });

  it('stops when the fresh read already has the rules, or finds the role gone', async () => {
    const f = fixture([
      role('view', { selectors: toView }),
      role('w', { labels: { [TO_VIEW]: 'true' }, rules: [widgets] }),
    ]);
    f.server.set('view', {
      ...role('view', { selectors: toView, rules: [widgets] }),
      metadata: { name: 'view', resourceVersion: '9' },
    });
    expect(await syncAggregatedClusterRole('view', f.lister, f.client)).toBe(false);
    expect(f.client.updates).toHaveLength(1);

    const g = fixture([
      role('view', { selectors: toView }),
      role('w', { labels: { [TO_VIEW]: 'true' }, rules: [widgets] }),
    ]);
    g.failNext.push(conflict(GR, 'view', 'modified'));
    g.server.delete('view');
    expect(await syncAggregatedClusterRole('view', g.lister, g.client)).toBe(false);
  });

  it('gives up after a few conflicts, and passes other errors on', async () => {
    const f = fixture([
      role('view', { selectors: toView }),
      role('w', { labels: { [TO_VIEW]: 'true' }, rules: [widgets] }),
    ]);
    for (let i = 0; i < 10; i++) f.failNext.push(conflict(GR, 'view', 'modified'));
    const err: unknown = await syncAggregatedClusterRole('view', f.lister, f.client).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect(f.client.updates).toHaveLength(5);

    const g = fixture([
      role('view', { selectors: toView }),
      role('w', { labels: { [TO_VIEW]: 'true' }, rules: [widgets] }),
    ]);
    g.failNext.push(internalError(new Error('boom')));
    await expect(syncAggregatedClusterRole('view', g.lister, g.client)).rejects.toThrow('boom');
    expect(g.client.gets).toEqual([]);
  });
});
