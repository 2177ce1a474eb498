import { type FieldError, type ReplicaSet } from '@platform/api';

import { validateReplicaSet } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('validateReplicaSet', () => {
  const template = {
    metadata: { labels: { app: 'a' } },
    spec: {
      containers: [{ name: 'c', image: 'i' }],
      restartPolicy: 'Always' as const,
      dnsPolicy: 'ClusterFirst' as const,
    },
  };
  it.each<[string, ReplicaSet['spec'], string[]]>([
    ['a valid replica set', { replicas: 2, selector: { matchLabels: { app: 'a' } }, template }, []],
    ['no template', { selector: { matchLabels: { app: 'a' } } }, ['FieldValueRequired spec.template']],
    [
      'a bad selector expression',
      { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] }, template },
      ['FieldValueRequired spec.selector.matchExpressions[0].values'],
    ],
    [
      'negative minReadySeconds',
      { minReadySeconds: -5, selector: { matchLabels: { app: 'a' } }, template },
      ['FieldValueInvalid spec.minReadySeconds'],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateReplicaSet({ metadata: { name: 'rs' }, spec }))).toEqual(expected);
  });
});
