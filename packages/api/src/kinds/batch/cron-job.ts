/**
 * CronJob in batch/v1 and batch/v1beta1 (Kubernetes 1.21 serves both; the schemas are the same, each under its
 * own version, and both job templates hold a batch/v1 JobSpec).
 */
import { type Static, type TObject } from '@sinclair/typebox';

import { ObjectMetaSchema } from '../../meta/v1/types';
import { object, opt, ptr, ref, req, t } from '../../schema/schema';
import { defineKind, type Kind, OBJECT_HEAD, schemaPrefix } from '../../scheme/kind';
import { AGE_COLUMN, age } from '../../table/table';
import { defaultPodTemplate } from '../core/v1/pod-defaults';
import { ObjectReferenceSchema } from '../core/v1/types';
import { boolPtr, formatLabelSelector, workloadWideColumns } from '../printing';
import { JobSpecSchema } from './v1/job';

function cronJobSchemas(version: string) {
  const P = schemaPrefix('batch', version);
  const JobTemplateSpec = object(`${P}JobTemplateSpec`, {
    metadata: opt(1, ref(ObjectMetaSchema), 'Metadata of the jobs created from this template.'),
    spec: opt(2, ref(JobSpecSchema), 'Specification of the jobs.'),
  });
  const CronJobSpec = object(`${P}CronJobSpec`, {
    schedule: req(1, t.string(), 'The schedule in Cron format.'),
    startingDeadlineSeconds: opt(2, ptr(t.int64()), 'Deadline for starting a job that missed its time.'),
    concurrencyPolicy: opt(3, t.enumOf(['Allow', 'Forbid', 'Replace']), 'Allow (default), Forbid or Replace.'),
    suspend: opt(4, ptr(t.bool()), 'Suspend subsequent executions. Defaults to false.'),
    jobTemplate: req(5, ref(JobTemplateSpec), 'The job created when executing the CronJob.'),
    successfulJobsHistoryLimit: opt(6, ptr(t.int32()), 'Successful finished jobs to keep. Defaults to 3.'),
    failedJobsHistoryLimit: opt(7, ptr(t.int32()), 'Failed finished jobs to keep. Defaults to 1.'),
  });
  const CronJobStatus = object(`${P}CronJobStatus`, {
    active: opt(1, t.array(ref(ObjectReferenceSchema)), 'Currently running jobs.'),
    lastScheduleTime: opt(4, t.time(), 'When the job was last successfully scheduled.'),
    lastSuccessfulTime: opt(5, t.time(), 'When the job last successfully completed.'),
  });
  const CronJob = object(
    `${P}CronJob`,
    {
      ...OBJECT_HEAD,
      spec: opt(2, ref(CronJobSpec), 'Desired behavior of the cron job, including the schedule.'),
      status: opt(3, ref(CronJobStatus), 'Current status of the cron job.'),
    },
    { description: 'CronJob represents the configuration of a single cron job.' },
  );
  return { JobTemplateSpec, CronJobSpec, CronJobStatus, CronJob };
}

const V1 = cronJobSchemas('v1');
const V1BETA1 = cronJobSchemas('v1beta1');

/** CronJob, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CronJobSchema = V1.CronJob;
/** CronJobV1beta1, as in Kubernetes 1.21 (its Protobuf field numbers included). */
export const CronJobV1beta1Schema = V1BETA1.CronJob;
/** A CronJob object in its JSON form. */
export type CronJob = Static<typeof CronJobSchema>;

function cronJobKind<S extends TObject>(version: string, schema: S): Kind<S> {
  return defineKind({
    group: 'batch',
    version,
    kind: 'CronJob',
    plural: 'cronjobs',
    shortNames: ['cj'],
    categories: ['all'],
    scope: 'Namespaced',
    subresources: { status: { verbs: ['get', 'patch', 'update'] } },
    schema,
    defaults(obj) {
      const cj = obj as unknown as CronJob;
      if (!cj.spec) return;
      cj.spec.concurrencyPolicy ||= 'Allow';
      cj.spec.suspend ??= false;
      cj.spec.successfulJobsHistoryLimit ??= 3;
      cj.spec.failedJobsHistoryLimit ??= 1;
      // Only the pod template is defaulted: Job defaults apply to Job objects, not to job templates (as in 1.21).
      defaultPodTemplate(cj.spec.jobTemplate?.spec?.template);
    },
    columns: [
      {
        name: 'Schedule',
        type: 'string',
        description: 'The schedule in Cron format.',
        cell: (o) => (o as unknown as CronJob).spec?.schedule ?? '',
      },
      {
        name: 'Suspend',
        type: 'boolean',
        description: 'Whether executions are suspended.',
        cell: (o) => boolPtr((o as unknown as CronJob).spec?.suspend),
      },
      {
        name: 'Active',
        type: 'integer',
        description: 'Number of running jobs.',
        cell: (o) => (o as unknown as CronJob).status?.active?.length ?? 0,
      },
      {
        name: 'Last Schedule',
        type: 'string',
        description: 'Time since the job was last scheduled.',
        cell: (o, now) => {
          const last = (o as unknown as CronJob).status?.lastScheduleTime;
          return last ? age(last, now) : '<none>';
        },
      },
      AGE_COLUMN,
      ...workloadWideColumns<Static<S>>(
        (o) => (o as unknown as CronJob).spec?.jobTemplate?.spec?.template,
        (o) => (o as unknown as CronJob).spec?.jobTemplate?.spec?.selector,
        formatLabelSelector,
      ),
    ],
  });
}

/** The CronJob kind: discovery facts, defaults, printer columns and field selectors. */
export const CronJobKind = cronJobKind('v1', CronJobSchema);
/** The CronJobV1beta1 kind: discovery facts, defaults, printer columns and field selectors. */
export const CronJobV1beta1Kind = cronJobKind('v1beta1', CronJobV1beta1Schema);
