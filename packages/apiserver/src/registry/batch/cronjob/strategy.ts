/**
 * The CronJob strategy (model: Kubernetes 1.21 `pkg/registry/batch/cronjob/strategy.go`, `ValidateCronJob`):
 * the name leaves room for the jobs' suffix (at most 52 characters), the schedule parses, the policies and limits
 * are valid, and the job template is a valid job spec (its selector generated per job, so not required here).
 */
import { type CronJob, type FieldError, FieldPath, field, type Kind, validateLabels } from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { nonNegative } from '../../apps/replicaset/validation';
import { validateJobSpec } from '../job/strategy';
import { parseSchedule } from './schedule';

/** The longest CronJob name: a DNS-1035 label less the 11 characters of the jobs' time suffix. */
export const MAX_CRONJOB_NAME_LENGTH = 52;
const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace'];

/** Validation of a CronJob. */
export function validateCronJob(cj: CronJob): FieldError[] {
  const errs: FieldError[] = [];
  const name = cj.metadata?.name ?? '';
  if (name.length > MAX_CRONJOB_NAME_LENGTH) {
    errs.push(
      field.invalid(
        new FieldPath('metadata', 'name'),
        name,
        `must be no more than ${MAX_CRONJOB_NAME_LENGTH} characters`,
      ),
    );
  }
  const spec = cj.spec;
  const path = new FieldPath('spec');
  if (!spec) return [...errs, field.required(path, '')];
  if (!spec.schedule) errs.push(field.required(path.child('schedule'), ''));
  else {
    try {
      parseSchedule(spec.schedule);
    } catch (err) {
      errs.push(field.invalid(path.child('schedule'), spec.schedule, (err as Error).message));
    }
  }
  errs.push(...nonNegative(spec.startingDeadlineSeconds, path.child('startingDeadlineSeconds')));
  errs.push(...nonNegative(spec.successfulJobsHistoryLimit, path.child('successfulJobsHistoryLimit')));
  errs.push(...nonNegative(spec.failedJobsHistoryLimit, path.child('failedJobsHistoryLimit')));
  const policy = spec.concurrencyPolicy;
  if (!policy) errs.push(field.required(path.child('concurrencyPolicy'), ''));
  else if (!CONCURRENCY_POLICIES.includes(policy)) {
    errs.push(field.notSupported(path.child('concurrencyPolicy'), policy, CONCURRENCY_POLICIES));
  }
  const jt = path.child('jobTemplate');
  errs.push(...validateLabels(spec.jobTemplate?.metadata?.labels, jt.child('metadata', 'labels')));
  errs.push(...validateJobSpec(spec.jobTemplate?.spec, jt.child('spec'), false));
  return errs;
}

/** The strategy of `cronjobs` (batch/v1 and batch/v1beta1). */
export function cronJobStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    validate: (_ctx, obj) => validateCronJob(obj as CronJob),
    validateUpdate: (_ctx, obj) => validateCronJob(obj as CronJob),
  });
}
