import { FieldSet, FieldsV1Error, keyElement, pathString, valueElement } from './field-set';

describe('FieldSet', () => {
  const fieldsV1 = {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': {
      'f:replicas': {},
      'f:template': {
        'f:spec': {
          'f:containers': {
            'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} },
          },
        },
      },
    },
  };

  it('reads and writes FieldsV1 without change', () => {
    const s = FieldSet.fromFieldsV1(fieldsV1);
    expect(s.has(['f:metadata', 'f:labels'])).toBe(true);
    expect(s.has(['f:metadata'])).toBe(false);
    expect(s.has(['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"nginx"}'])).toBe(true);
    expect(s.size).toBe(6);
    expect(s.toFieldsV1()).toEqual(fieldsV1);
  });

  it.each([
    ['a non-object node', { 'f:a': 1 }],
    ['an unknown element kind', { 'x:a': {} }],
    ['a "." with content', { 'f:a': { '.': { 'f:b': {} } } }],
    ['a key element that is not an object', { 'k:[1]': {} }],
    ['an index that is not a number', { 'i:x': {} }],
    ['a list', []],
  ])('rejects %s', (_name, value) => {
    expect(() => FieldSet.fromFieldsV1(value)).toThrow(FieldsV1Error);
  });

  it('prints paths as Kubernetes does', () => {
    expect(pathString(['f:spec', 'f:replicas'])).toBe('.spec.replicas');
    expect(pathString(['f:spec', 'f:containers', keyElement({ name: 'nginx' }), 'f:image'])).toBe(
      '.spec.containers[name="nginx"].image',
    );
    expect(pathString(['f:ports', keyElement({ protocol: 'TCP', containerPort: 80 })])).toBe(
      '.ports[containerPort=80,protocol="TCP"]',
    );
    expect(pathString(['f:metadata', 'f:finalizers', valueElement('a')])).toBe('.metadata.finalizers[="a"]');
    expect(pathString(['f:items', 'i:3'])).toBe('.items[3]');
  });

  it('does set algebra on exact paths and finds descendants', () => {
    const a = FieldSet.of([['f:a'], ['f:a', 'f:b'], ['f:c']]);
    const b = FieldSet.of([['f:a', 'f:b'], ['f:d']]);
    expect(a.union(b).size).toBe(4);
    expect(a.difference(b).sorted()).toEqual([['f:a'], ['f:c']]);
    expect(a.intersection(b).sorted()).toEqual([['f:a', 'f:b']]);
    expect(a.hasDescendant(['f:a'])).toBe(true);
    expect(a.hasDescendant(['f:c'])).toBe(false);
    expect(a.hasDescendant([])).toBe(true);
    expect(FieldSet.of([['f:ab']]).hasDescendant(['f:a'])).toBe(false);
    expect(a.withoutSubtree(['f:a']).sorted()).toEqual([['f:c']]);
    expect(a.equals(FieldSet.of([['f:c'], ['f:a', 'f:b'], ['f:a']]))).toBe(true);
  });
});
