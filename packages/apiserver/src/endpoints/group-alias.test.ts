import {
  discoveryAliasTarget,
  normalizeGroupReferences,
  platformApiVersion,
  platformGroupOf,
  respellDiscovery,
  respellObject,
  withDiscoveryAliases,
} from './group-alias';

describe('group aliases', () => {
  it('reads .k8s.io groups as .platform ones', () => {
    expect(platformGroupOf('rbac.authorization.k8s.io')).toBe('rbac.authorization.platform');
    expect(platformGroupOf('flowcontrol.apiserver.k8s.io')).toBe('flowcontrol.apiserver.platform');
    expect(platformGroupOf('apps')).toBeUndefined();
    expect(platformGroupOf('k8s.io')).toBeUndefined();
    expect(platformGroupOf('rbac.authorization.platform')).toBeUndefined();
    expect(platformApiVersion('coordination.k8s.io/v1')).toBe('coordination.platform/v1');
    expect(platformApiVersion('v1')).toBe('v1');
    expect(platformApiVersion('apps/v1')).toBe('apps/v1');
  });

  it('respells an object, a list and a Status without changing the original', () => {
    const a = { platform: 'rbac.authorization.platform', requested: 'rbac.authorization.k8s.io' };
    const obj = { apiVersion: 'rbac.authorization.platform/v1', kind: 'ClusterRole', metadata: { name: 'x' } };
    expect(respellObject(obj, a)).toEqual({ ...obj, apiVersion: 'rbac.authorization.k8s.io/v1' });
    expect(obj.apiVersion).toBe('rbac.authorization.platform/v1');
    const list = { apiVersion: 'rbac.authorization.platform/v1', kind: 'ClusterRoleList', items: [obj] };
    const respelled = respellObject(list, a);
    expect([respelled.apiVersion, respelled.items[0]?.apiVersion]).toEqual([
      'rbac.authorization.k8s.io/v1',
      'rbac.authorization.k8s.io/v1',
    ]);
    const status = { kind: 'Status', apiVersion: 'v1', details: { group: 'rbac.authorization.platform', name: 'x' } };
    expect(respellObject(status, a)).toEqual({ ...status, details: { group: 'rbac.authorization.k8s.io', name: 'x' } });
    expect(respellObject({ apiVersion: 'meta.platform/v1', kind: 'Table' }, a).apiVersion).toBe('meta.platform/v1');
  });

  it("stores a binding's group references in the platform's spelling", () => {
    const rb = {
      kind: 'RoleBinding',
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'x' },
      subjects: [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' },
        { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
      ],
    };
    normalizeGroupReferences(rb);
    expect(rb.roleRef.apiGroup).toBe('rbac.authorization.platform');
    expect(rb.subjects).toEqual([
      { apiGroup: 'rbac.authorization.platform', kind: 'User', name: 'alice' },
      { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
    ]);
  });

  it('lists the Kubernetes names of certificates and metrics only, each before its served .platform group', () => {
    const group = (name: string) => ({
      name,
      versions: [{ groupVersion: `${name}/v1`, version: 'v1' }],
      preferredVersion: { groupVersion: `${name}/v1`, version: 'v1' },
    });
    const list = {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: ['apps', 'certificates.platform', 'rbac.authorization.platform', 'metrics.platform', 'batch'].map(group),
    };
    expect(withDiscoveryAliases(list).groups.map((g) => g.name)).toEqual([
      'apps',
      'certificates.k8s.io',
      'certificates.platform',
      'rbac.authorization.platform',
      'metrics.k8s.io',
      'metrics.platform',
      'batch',
    ]);
    expect(withDiscoveryAliases(list).groups[4]).toEqual(group('metrics.k8s.io'));
    // metrics.k8s.io only while metrics.platform is served.
    const without = { ...list, groups: list.groups.filter((g) => g.name !== 'metrics.platform') };
    expect(withDiscoveryAliases(without).groups.filter((g) => g.name.endsWith('.k8s.io'))).toHaveLength(1);
    expect(list.groups).toHaveLength(5);
    expect(discoveryAliasTarget('metrics.k8s.io')).toBe('metrics.platform');
    expect(discoveryAliasTarget('rbac.authorization.k8s.io')).toBeUndefined();
    const resources = { kind: 'APIResourceList', groupVersion: 'metrics.platform/v1beta1', resources: [] };
    expect(respellDiscovery(resources, { platform: 'metrics.platform', requested: 'metrics.k8s.io' })).toEqual({
      ...resources,
      groupVersion: 'metrics.k8s.io/v1beta1',
    });
  });
});
