import { type ApiObject, type FieldError, type Job, JobKind } from '@platform/api';

import { type RequestContext } from '../../rest/rest';
import { jobStrategy, validateJob, validateJobUpdate } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);
const ctx: RequestContext = { namespace: 'default', now: () => 0 };

const job = (spec: Partial<NonNullable<Job['spec']>> = {}): Job => ({
  metadata: { name: 'j', uid: 'u-1' },
  spec: {
    template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never', dnsPolicy: 'ClusterFirst' } },
    ...spec,
  },
});

function prepared(j: Job): Job {
  jobStrategy(JobKind).prepareForCreate(ctx, j as ApiObject);
  return j;
}

describe('job strategy', () => {
  it('generates the selector and the template labels', () => {
    const j = prepared(job());
    expect(j.spec?.selector).toEqual({ matchLabels: { 'controller-uid': 'u-1' } });
    expect(j.spec?.template.metadata?.labels).toEqual({ 'job-name': 'j', 'controller-uid': 'u-1' });
    expect(show(validateJob(j))).toEqual([]);
  });

  it.each<[string, Partial<NonNullable<Job['spec']>>, string[]]>([
    [
      'negative counts',
      { parallelism: -1, completions: -1, backoffLimit: -1 },
      [
        'FieldValueInvalid spec.parallelism',
        'FieldValueInvalid spec.completions',
        'FieldValueInvalid spec.backoffLimit',
      ],
    ],
    [
      'a user selector without manualSelector',
      { selector: { matchLabels: { mine: 'x' } } },
      ['FieldValueInvalid spec.template.metadata.labels', 'FieldValueInvalid spec.selector'],
    ],
    ['a manual selector that matches nothing', { manualSelector: true }, ['FieldValueRequired spec.selector']],
    [
      'pods that restart Always',
      {
        template: {
          spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
        },
      },
      ['FieldValueNotSupported spec.template.spec.restartPolicy'],
    ],
  ])('%s', (_name, spec, expected) => {
    expect(show(validateJob(prepared(job(spec))))).toEqual(expected);
  });

  it('keeps selector, template and completions', () => {
    const old = prepared(job({ completions: 1 }));
    const next = structuredClone(old);
    next.spec!.parallelism = 3;
    expect(show(validateJobUpdate(next, old))).toEqual([]);
    next.spec!.completions = 2;
    next.spec!.template.spec!.containers[0]!.image = 'j';
    expect(show(validateJobUpdate(next, old))).toEqual([
      'FieldValueInvalid spec.template',
      'FieldValueInvalid spec.completions',
    ]);
  });
});
