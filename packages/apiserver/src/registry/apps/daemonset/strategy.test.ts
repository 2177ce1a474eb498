import { type DaemonSet, type FieldError } from '@platform/api';

import { validateDaemonSet } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('validateDaemonSet', () => {
  const template = {
    metadata: { labels: { app: 'a' } },
    spec: {
      containers: [{ name: 'c', image: 'i' }],
      restartPolicy: 'Always' as const,
      dnsPolicy: 'ClusterFirst' as const,
    },
  };
  const selector = { matchLabels: { app: 'a' } };
  it.each<[string, DaemonSet['spec'], string[]]>([
    [
      'a valid daemon set',
      { selector, template, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } },
      [],
    ],
    ['no selector', { template } as never, ['FieldValueRequired spec.selector']],
    [
      'zero unavailable without surge',
      { selector, template, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } } },
      ['FieldValueInvalid spec.updateStrategy.rollingUpdate.maxUnavailable'],
    ],
    ['OnDelete', { selector, template, updateStrategy: { type: 'OnDelete' } }, []],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateDaemonSet({ metadata: { name: 'ds' }, spec }))).toEqual(expected);
  });
});
