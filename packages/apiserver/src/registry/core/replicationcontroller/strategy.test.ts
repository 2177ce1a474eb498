import { type FieldError, type ReplicationController } from '@platform/api';

import { validateReplicaCounts, validateReplicationController } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

const rc = (spec: ReplicationController['spec']): ReplicationController => ({ metadata: { name: 'rc' }, spec });
const template = (labels: Record<string, string>, restartPolicy: 'Always' | 'Never' = 'Always') => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy, dnsPolicy: 'ClusterFirst' as const },
});

describe('validateReplicationController', () => {
  it.each<[string, ReplicationController['spec'], string[]]>([
    ['a valid controller', { replicas: 1, selector: { a: 'b' }, template: template({ a: 'b' }) }, []],
    ['no selector', { replicas: 1, template: template({ a: 'b' }) }, ['FieldValueRequired spec.selector']],
    [
      'a selector that does not match',
      { selector: { a: 'b' }, template: template({ a: 'c' }) },
      ['FieldValueInvalid spec.template.metadata.labels'],
    ],
    [
      'negative replicas and restart Never',
      { replicas: -1, selector: { a: 'b' }, template: template({ a: 'b' }, 'Never') },
      ['FieldValueInvalid spec.replicas', 'FieldValueNotSupported spec.template.spec.restartPolicy'],
    ],
    ['no template', { selector: { a: 'b' } }, ['FieldValueRequired spec.template']],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateReplicationController(rc(spec)))).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['replica counts', { replicas: 1, readyReplicas: -1 }, ['FieldValueInvalid status.readyReplicas']],
    ['daemon set counts', { numberReady: -1, desiredNumberScheduled: 2 }, ['FieldValueInvalid status.numberReady']],
    ['job counts', { active: 0, failed: -2 }, ['FieldValueInvalid status.failed']],
  ])('keeps %s non-negative', (_name, status, expected) => {
    expect(show(validateReplicaCounts(status))).toEqual(expected);
  });
});
