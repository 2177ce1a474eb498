import { type FieldError, type StatefulSet } from '@platform/api';

import { validateStatefulSet, validateStatefulSetUpdate } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

const sts = (change: Partial<NonNullable<StatefulSet['spec']>> = {}): StatefulSet => ({
  metadata: { name: 's' },
  spec: {
    serviceName: 'svc',
    replicas: 1,
    selector: { matchLabels: { app: 'a' } },
    template: {
      metadata: { labels: { app: 'a' } },
      spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
    },
    ...change,
  },
});

describe('validateStatefulSet', () => {
  it.each<[string, Partial<NonNullable<StatefulSet['spec']>>, string[]]>([
    ['a valid set', {}, []],
    [
      'an unknown pod management policy',
      { podManagementPolicy: 'Random' as never },
      ['FieldValueNotSupported spec.podManagementPolicy'],
    ],
    [
      'OnDelete with rollingUpdate',
      { updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } } },
      ['FieldValueInvalid spec.updateStrategy.rollingUpdate'],
    ],
    [
      'a negative partition',
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } } },
      ['FieldValueInvalid spec.updateStrategy.rollingUpdate.partition'],
    ],
  ])('%s', (_name, change, expected) => {
    expect(show(validateStatefulSet(sts(change)))).toEqual(expected);
  });

  it('changes only replicas, template and updateStrategy', () => {
    expect(show(validateStatefulSetUpdate(sts({ replicas: 5 }), sts()))).toEqual([]);
    expect(show(validateStatefulSetUpdate(sts({ serviceName: 'other' }), sts()))).toEqual(['FieldValueForbidden spec']);
  });
});
