import { crdV1beta1ToV1, crdV1ToV1beta1, type CustomResourceDefinitionV1beta1 } from '@platform/api';

import { evaluate, parseFieldPath, parseJsonPath, setPath } from './jsonpath';

describe('printer column JSON paths', () => {
  const obj = {
    spec: { replicas: 2, items: [{ name: 'a' }, { name: 'b' }] },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Synced', status: 'False' },
      ],
    },
  };

  it.each([
    ['.spec.replicas', [2]],
    ['{.spec.replicas}', [2]],
    ['.spec.items[1].name', ['b']],
    ['.spec.items[*].name', ['a', 'b']],
    [".spec['replicas']", [2]],
    ['.status.conditions[?(@.type=="Synced")].status', ['False']],
    ['.spec.missing', []],
  ])('%s', (path, want) => {
    expect(evaluate(obj, parseJsonPath(path) ?? [])).toEqual(want);
  });

  it('knows simple field paths (the scale subresource) from the others', () => {
    expect(parseFieldPath('.spec.replicas')).toEqual(['spec', 'replicas']);
    expect(parseFieldPath('.spec.items[0]')).toBeUndefined();
    expect(parseFieldPath('spec')).toBeUndefined();
    const o: Record<string, unknown> = {};
    setPath(o, ['spec', 'replicas'], 3);
    expect(o).toEqual({ spec: { replicas: 3 } });
  });
});

describe('CRD conversion between v1beta1 and v1', () => {
  const beta: CustomResourceDefinitionV1beta1 = {
    apiVersion: 'apiextensions.platform/v1beta1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'ws.example.com' },
    spec: {
      group: 'example.com',
      version: 'v1',
      names: { plural: 'ws', kind: 'W' },
      scope: 'Namespaced',
      validation: { openAPIV3Schema: { type: 'object' } },
      subresources: { status: {} },
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', JSONPath: '.spec.size' }],
      versions: [
        { name: 'v1', served: true, storage: true },
        { name: 'v2', served: true, storage: false },
      ],
      conversion: { strategy: 'None' },
      preserveUnknownFields: false,
    },
  };

  it('copies the CRD-wide schema, subresources and columns into every v1 version, and back', () => {
    const v1 = crdV1beta1ToV1(beta);
    expect(v1.apiVersion).toBe('apiextensions.platform/v1');
    for (const v of v1.spec.versions) {
      expect(v.schema).toEqual({ openAPIV3Schema: { type: 'object' } });
      expect(v.subresources).toEqual({ status: {} });
      expect(v.additionalPrinterColumns).toEqual([{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }]);
    }
    expect(v1.spec.preserveUnknownFields).toBeUndefined();
    const back = crdV1ToV1beta1(v1);
    expect(back.spec).toEqual(beta.spec);
  });
});
