import { type CronJob, type FieldError } from '@platform/api';

import { parseSchedule } from './schedule';
import { validateCronJob } from './strategy';

const show = (errs: FieldError[]): string[] => errs.map((e) => `${e.type} ${e.field}`);

describe('parseSchedule', () => {
  it.each(['* * * * *', '*/5 0-23 1,15 JAN-jun ?', '0 0 * * SUN', '@hourly', '@every 1h30m', '5-10/2 * * * 1-5'])(
    'accepts %j',
    (s) => {
      expect(() => parseSchedule(s)).not.toThrow();
    },
  );

  it.each<[string, string]>([
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: * * * *'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['@sometimes', 'unrecognized descriptor: @sometimes'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
  ])('rejects %j', (s, message) => {
    expect(() => parseSchedule(s)).toThrow(message);
  });
});

describe('validateCronJob', () => {
  const cj = (spec: Partial<NonNullable<CronJob['spec']>>, name = 'c'): CronJob => ({
    metadata: { name },
    spec: {
      schedule: '* * * * *',
      concurrencyPolicy: 'Allow',
      jobTemplate: {
        spec: {
          template: {
            spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'OnFailure', dnsPolicy: 'ClusterFirst' },
          },
        },
      },
      ...spec,
    },
  });
  it.each<[string, CronJob, string[]]>([
    ['a valid cron job', cj({}), []],
    ['a bad schedule', cj({ schedule: 'often' }), ['FieldValueInvalid spec.schedule']],
    ['a long name', cj({}, 'c'.repeat(53)), ['FieldValueInvalid metadata.name']],
    [
      'negative limits',
      cj({ successfulJobsHistoryLimit: -1, startingDeadlineSeconds: -1 }),
      ['FieldValueInvalid spec.startingDeadlineSeconds', 'FieldValueInvalid spec.successfulJobsHistoryLimit'],
    ],
    [
      'a job template that restarts Always',
      cj({
        jobTemplate: {
          spec: {
            template: {
              spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
            },
          },
        },
      }),
      ['FieldValueNotSupported spec.jobTemplate.spec.template.spec.restartPolicy'],
    ],
  ])('%s', (_name, c, expected) => {
    expect(show(validateCronJob(c))).toEqual(expected);
  });
});
