import { type FieldError, type Service } from '@platform/api';

import { validateService, validateServiceUpdate } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

const svc = (spec: Service['spec']): Service => ({ metadata: { name: 's' }, spec });
const port = { port: 80, protocol: 'TCP' as const, targetPort: 8080 };

describe('validateService', () => {
  it.each<[string, Service['spec'], string[]]>([
    ['a ClusterIP service', { type: 'ClusterIP', ports: [port], selector: { app: 'a' } }, []],
    ['no ports', { type: 'ClusterIP' }, ['FieldValueRequired spec.ports']],
    ['a headless service without ports', { type: 'ClusterIP', clusterIP: 'None' }, []],
    ['an ExternalName service', { type: 'ExternalName', externalName: 'db.example.com.' }, []],
    ['an ExternalName service without a name', { type: 'ExternalName' }, ['FieldValueRequired spec.externalName']],
    [
      'an ExternalName service with a cluster IP',
      { type: 'ExternalName', externalName: 'x', clusterIP: '10.0.0.1' },
      ['FieldValueForbidden spec.clusterIP'],
    ],
    ['an unknown type', { type: 'Magic' as never, ports: [port] }, ['FieldValueNotSupported spec.type']],
    [
      'unnamed and duplicate ports',
      { type: 'ClusterIP', ports: [port, { ...port }, { ...port, port: 70000, name: 'b' }] },
      [
        'FieldValueRequired spec.ports[0].name',
        'FieldValueRequired spec.ports[1].name',
        'FieldValueDuplicate spec.ports[1]',
        'FieldValueInvalid spec.ports[2].port',
      ],
    ],
    [
      'a node port on a ClusterIP service',
      { type: 'ClusterIP', ports: [{ ...port, nodePort: 30001 }] },
      ['FieldValueForbidden spec.ports[0].nodePort'],
    ],
    ['a node port on a NodePort service', { type: 'NodePort', ports: [{ ...port, nodePort: 30001 }] }, []],
    [
      'a bad target port name',
      { type: 'ClusterIP', ports: [{ ...port, targetPort: 'Not_Valid' }] },
      ['FieldValueInvalid spec.ports[0].targetPort'],
    ],
    [
      'a bad selector',
      { type: 'ClusterIP', ports: [port], selector: { 'a b': 'c' } },
      ['FieldValueInvalid spec.selector'],
    ],
    [
      'a bad cluster IP',
      { type: 'ClusterIP', ports: [port], clusterIP: '10.0.0' },
      ['FieldValueInvalid spec.clusterIP'],
    ],
    [
      'externalTrafficPolicy on a ClusterIP service',
      { type: 'ClusterIP', ports: [port], externalTrafficPolicy: 'Local' },
      ['FieldValueInvalid spec.externalTrafficPolicy'],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateService(svc(spec)))).toEqual(expected);
  });
});

describe('validateServiceUpdate', () => {
  it('keeps an allocated cluster IP', () => {
    const old = svc({ type: 'ClusterIP', ports: [port], clusterIP: '10.0.0.1' });
    expect(show(validateServiceUpdate(svc({ type: 'ClusterIP', ports: [port], clusterIP: '10.0.0.2' }), old))).toEqual([
      'FieldValueInvalid spec.clusterIP',
    ]);
    expect(show(validateServiceUpdate(svc({ type: 'ExternalName', externalName: 'x' }), old))).toEqual([]);
  });
});
