/**
 * The Job strategy (model: Kubernetes 1.21 `pkg/registry/batch/job/strategy.go`, `ValidateJob`,
 * `ValidateJobSpecUpdate`): unless `manualSelector` is true, the selector is generated from the job's uid
 * (`controller-uid`) and the template is labelled with it and `job-name`; pods restart OnFailure or Never; counts
 * are non-negative; selector, template and completions are immutable.
 */
import {
  type FieldError,
  FieldPath,
  field,
  type Job,
  type JobSpec,
  type Kind,
  labelSelectorAsSelector,
  semanticEqual,
  validateLabelSelector,
} from '@platform/api';

import { defaultStrategy } from '../../generic/default-strategy';
import { type CreateStrategy, type UpdateStrategy } from '../../rest/rest';
import { validatePodTemplateSpec } from '../../core/pod/validation';
import { nonNegative } from '../../apps/replicaset/validation';

/** The label every pod of a job carries with the job's uid. */
export const CONTROLLER_UID_LABEL = 'controller-uid';
/** The label every pod of a job carries with the job's name. */
export const JOB_NAME_LABEL = 'job-name';
/** The restart policies a job's pods may have. */
export const JOB_RESTART_POLICIES = ['OnFailure', 'Never'];

/** Generates the selector of a job that does not choose its own (model: `generateSelector`). */
export function generateSelector(job: Job): void {
  if (!job.spec || job.spec.manualSelector === true) return;
  const uid = job.metadata?.uid ?? '';
  const template = (job.spec.template ??= {});
  const meta = (template.metadata ??= {});
  const labels = (meta.labels ??= {});
  if (!(JOB_NAME_LABEL in labels)) labels[JOB_NAME_LABEL] = job.metadata?.name ?? '';
  if (!(CONTROLLER_UID_LABEL in labels)) labels[CONTROLLER_UID_LABEL] = uid;
  const selector = (job.spec.selector ??= {});
  const matchLabels = (selector.matchLabels ??= {});
  if (!(CONTROLLER_UID_LABEL in matchLabels)) matchLabels[CONTROLLER_UID_LABEL] = uid;
}

/** The job spec rules shared with CronJob's job template (`requireSelector`: false for templates). */
export function validateJobSpec(
  spec: JobSpec | null | undefined,
  path: FieldPath,
  requireSelector: boolean,
): FieldError[] {
  if (!spec) return [field.required(path, '')];
  const errs: FieldError[] = [
    ...nonNegative(spec.parallelism, path.child('parallelism')),
    ...nonNegative(spec.completions, path.child('completions')),
    ...nonNegative(spec.activeDeadlineSeconds, path.child('activeDeadlineSeconds')),
    ...nonNegative(spec.backoffLimit, path.child('backoffLimit')),
    ...nonNegative(spec.ttlSecondsAfterFinished, path.child('ttlSecondsAfterFinished')),
  ];
  if (spec.completionMode === 'Indexed' && (spec.completions === undefined || spec.completions === null)) {
    errs.push(field.required(path.child('completions'), 'when completion mode is Indexed'));
  }
  if (!spec.selector) {
    if (requireSelector) errs.push(field.required(path.child('selector'), ''));
  } else {
    const selErrs = validateLabelSelector(spec.selector, path.child('selector'));
    errs.push(...selErrs);
    const labels = spec.template?.metadata?.labels ?? {};
    if (selErrs.length === 0) {
      try {
        if (!labelSelectorAsSelector(spec.selector).matches(labels)) {
          errs.push(
            field.invalid(
              path.child('template', 'metadata', 'labels'),
              labels,
              '`selector` does not match template `labels`',
            ),
          );
        }
      } catch {
        // Reported by validateLabelSelector.
      }
    }
  }
  errs.push(...validatePodTemplateSpec(spec.template, path.child('template'), JOB_RESTART_POLICIES));
  return errs;
}

/** Validation of a Job (after its selector is generated). */
export function validateJob(job: Job): FieldError[] {
  const errs = validateJobSpec(job.spec, new FieldPath('spec'), true);
  if (job.spec && job.spec.manualSelector !== true && job.spec.selector) {
    const uid = job.metadata?.uid ?? '';
    if (!uid) errs.push(field.required(new FieldPath('metadata', 'uid'), ''));
    const expected = { matchLabels: { [CONTROLLER_UID_LABEL]: uid } };
    if (!semanticEqual(job.spec.selector, expected)) {
      errs.push(field.invalid(new FieldPath('spec', 'selector'), job.spec.selector, '`selector` not auto-generated'));
    }
  }
  return errs;
}

/** Validation of a Job update: the new job is valid; selector, template and completions did not change. */
export function validateJobUpdate(job: Job, old: Job): FieldError[] {
  const errs = validateJobSpec(job.spec, new FieldPath('spec'), true);
  const path = new FieldPath('spec');
  for (const f of ['selector', 'template', 'completions'] as const) {
    if (!semanticEqual(job.spec?.[f], old.spec?.[f])) {
      errs.push(field.invalid(path.child(f), job.spec?.[f] ?? null, 'field is immutable'));
    }
  }
  return errs;
}

/** The strategy of `jobs`. */
export function jobStrategy(kind: Kind): CreateStrategy & UpdateStrategy {
  return defaultStrategy(kind, {
    prepareForCreate: (_ctx, obj) => generateSelector(obj as Job),
    validate: (_ctx, obj) => validateJob(obj as Job),
    validateUpdate: (_ctx, obj, old) => validateJobUpdate(obj as Job, old as Job),
  });
}
