import { ConfigMapKind } from '../kinds/core/v1/config-map';
import { compareVersions, formatApiVersion, parseApiVersion, Scheme } from './scheme';

describe('Scheme', () => {
  const scheme = new Scheme().add(ConfigMapKind);

  it('looks kinds up by kind and by resource', () => {
    expect(scheme.kindFor('v1', 'ConfigMap')).toBe(ConfigMapKind);
    expect(scheme.kindForResource({ group: '', version: 'v1' }, 'configmaps')).toBe(ConfigMapKind);
    expect(scheme.kindFor('v1', 'Secret')).toBeUndefined();
    expect(scheme.kindForResource({ group: 'apps', version: 'v1' }, 'configmaps')).toBeUndefined();
  });

  it('knows list kinds and meta kinds', () => {
    expect(scheme.schemaFor('v1', 'ConfigMapList')).toBe(ConfigMapKind.listSchema);
    expect(scheme.schemaFor('apps/v1', 'Status')?.$id).toBe('io.platform.meta.v1.Status');
    expect(scheme.schemaFor('v1', 'NopeList')).toBeUndefined();
  });

  it('derives the rest of the kind', () => {
    expect(ConfigMapKind).toMatchObject({
      apiVersion: 'v1',
      listKind: 'ConfigMapList',
      singular: 'configmap',
      shortNames: ['cm'],
      namespaced: true,
    });
    expect(Object.keys(ConfigMapKind.fields)).toEqual(['metadata.name', 'metadata.namespace']);
  });

  it('refuses to register a kind twice', () => {
    expect(() => new Scheme().add(ConfigMapKind, ConfigMapKind)).toThrow('kind v1/ConfigMap is registered twice');
  });

  it('lists groups with versions in priority order', () => {
    expect(scheme.groups()).toEqual([{ name: '', versions: ['v1'] }]);
  });
});

describe('versions', () => {
  it('sorts GA, then beta, then alpha, newest first', () => {
    expect(['v1alpha1', 'v1beta1', 'v2', 'v1', 'v1beta2', 'foo', 'v10'].sort(compareVersions)).toEqual([
      'v10',
      'v2',
      'v1',
      'v1beta2',
      'v1beta1',
      'v1alpha1',
      'foo',
    ]);
  });

  it('parses and formats apiVersion', () => {
    expect(parseApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(parseApiVersion('rbac.authorization.platform/v1')).toEqual({
      group: 'rbac.authorization.platform',
      version: 'v1',
    });
    expect(formatApiVersion({ group: 'apps', version: 'v1' })).toBe('apps/v1');
    expect(formatApiVersion({ group: '', version: 'v1' })).toBe('v1');
  });
});
