/**
 * The cronjob controller (model: Kubernetes 1.21 `pkg/controller/cronjob/cronjob_controllerv2.go`, the
 * CronJobControllerV2 behaviour, on by default in 1.21): each CronJob is a key of a delaying queue, synced when it
 * or one of its Jobs changes and again just after its next scheduled time. A sync reconciles `status.active` with
 * the Jobs the CronJob controls, then, unless suspended, finds the most recent unmet schedule time (after
 * `lastScheduleTime`, or creation, and within `startingDeadlineSeconds`), applies the concurrency policy (Allow,
 * Forbid: skip while a job runs, Replace: delete the running jobs first) and creates the Job
 * `<cronjob>-<scheduled time in minutes since the epoch>` from the template, then deletes the finished jobs beyond
 * the history limits. More than 100 missed times is reported as the 1.21 `TooManyMissedTimes` Event.
 */
import {
  type ApiObject,
  type CronJob,
  CronJobKind,
  isAlreadyExists,
  isNotFound,
  type Job,
  JobKind,
  type Kind,
  type ObjectReference,
} from '@platform/api';
import { isDeletedFinalStateUnknown, metaNamespaceKey, NAMESPACE_INDEX, WorkQueue } from '@platform/client';
import { type FlagDef } from '@platform/common';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { isJobFinished } from '../job/job-controller';
import { controllerRefOf, errorText, newControllerRef, refersTo, runWorkerLoop } from '../workload-util/workload-util';
import { localZone, parseSchedule, type Schedule, ScheduleParseError } from './schedule';

/** What the cronjob controller runs with. */
export interface CronJobControllerConfig {
  /** Workers (1.21 runs 5 and has no flag for it). */
  concurrentCronJobSyncs: number;
  /** The clock: tests move it instead of waiting for minutes to pass. */
  now: () => number;
  /** The time zone of schedules without `CRON_TZ=` (the process's local zone). */
  zone: string;
}

/** The cronjob controller's option family: no flag in 1.21. */
export class CronJobControllerOptions extends ControllerOptions<CronJobControllerConfig> {
  constructor() {
    super('CronJob controller');
  }

  protected flagDefs(): FlagDef[] {
    return [];
  }

  values(): CronJobControllerConfig {
    return { concurrentCronJobSyncs: 5, now: Date.now, zone: localZone() };
  }
}

const CRONJOB_KIND = CronJobKind as unknown as Kind;
/** How long after a scheduled time the CronJob is synced (`nextScheduleDelta`). */
const NEXT_SCHEDULE_DELTA_MS = 100;
/** Missed start times beyond which the `TooManyMissedTimes` Event is recorded. */
const TOO_MANY_MISSED = 100;

/** `Mon, 02 Jan 2006 15:04:05 -0700` (Go's RFC1123Z) in UTC. */
function rfc1123z(ms: number): string {
  const d = new Date(ms);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${p(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The name of the Job scheduled at `ms`: `<cronjob>-<minutes since the epoch>` (`getJobName`). */
export function jobNameFor(cj: CronJob, ms: number): string {
  return `${cj.metadata?.name}-${Math.floor(ms / 60_000)}`;
}

/** `Complete` or `Failed` for a finished job. */
function finishedStatus(job: Job): string {
  return job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
    ?.type as string;
}

/**
 * The most recent schedule time in (earliest, now] and how many were missed (`getMostRecentScheduleTime`);
 * counting stops after a few thousand (more is "too many" either way).
 */
export function mostRecentScheduleTime(
  sched: Schedule,
  earliest: number,
  now: number,
): { time: number | undefined; missed: number } {
  let t = sched.next(earliest);
  if (t === undefined || t > now) return { time: undefined, missed: 0 };
  let missed = 1;
  for (;;) {
    const n = sched.next(t);
    if (n === undefined || n > now) return { time: t, missed };
    t = n;
    missed++;
    if (missed > 10_000) {
      // Constant spacing from here on, as 1.21 assumes for all of them.
      const step = (sched.next(t) ?? t + 60_000) - t;
      const more = Math.floor((now - t) / step);
      return { time: t + more * step, missed: missed + more };
    }
  }
}

/** One running cronjob controller. */
class CronJobController {
  private readonly cronJobs;
  private readonly jobs;
  private readonly queue: WorkQueue<string>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cfg: CronJobControllerConfig,
  ) {
    this.cronJobs = ctx.informers.informerFor(CronJobKind);
    this.jobs = ctx.informers.informerFor(JobKind);
    this.queue = new WorkQueue<string>({ name: 'cronjob', metrics: ctx.metrics });
    this.cronJobs.addEventHandler({
      onAdd: (cj) => this.queue.add(metaNamespaceKey(cj)),
      onUpdate: (old, cur) => {
        if (old.spec?.schedule !== cur.spec?.schedule) {
          // A new schedule: the next time is the new schedule's.
          const next = this.untilNext(cur);
          if (next !== undefined) this.queue.addAfter(metaNamespaceKey(cur), next);
        }
        this.queue.add(metaNamespaceKey(cur));
      },
      onDelete: (cj) => this.queue.add(metaNamespaceKey(isDeletedFinalStateUnknown(cj) ? cj.obj : cj)),
    });
    const jobChanged = (j: Job): void => {
      const ref = controllerRefOf(j);
      if (!ref || ref.kind !== 'CronJob') return;
      const cj = this.cronJobs.indexer.get(`${j.metadata?.namespace}/${ref.name}`);
      if (cj && cj.metadata?.uid === ref.uid) this.queue.add(metaNamespaceKey(cj));
    };
    this.jobs.addEventHandler({
      onAdd: (j) => jobChanged(j),
      onUpdate: (old, cur) => {
        if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
        jobChanged(cur);
        if (controllerRefOf(old)?.uid !== controllerRefOf(cur)?.uid) jobChanged(old);
      },
      onDelete: (j) => jobChanged(isDeletedFinalStateUnknown(j) ? j.obj : j),
    });
  }

  async run(): Promise<void> {
    await runWorkerLoop(
      this.ctx,
      this.queue,
      this.cfg.concurrentCronJobSyncs,
      () => this.cronJobs.hasSynced() && this.jobs.hasSynced(),
      (key) => this.sync(key),
    );
  }

  private untilNext(cj: CronJob): number | undefined {
    try {
      const sched = parseSchedule(cj.spec?.schedule ?? '', this.cfg.zone);
      const now = this.cfg.now();
      const next = sched.next(now);
      return next === undefined ? undefined : next - now + NEXT_SCHEDULE_DELTA_MS;
    } catch {
      return undefined;
    }
  }

  private async sync(key: string): Promise<void> {
    const cached = this.cronJobs.indexer.get(key);
    if (!cached) return;
    const cj: CronJob = { ...structuredClone(cached), apiVersion: CronJobKind.apiVersion, kind: CronJobKind.kind };
    const ns = cj.metadata?.namespace ?? '';
    const jobs = this.jobs.indexer
      .byIndex(NAMESPACE_INDEX, ns)
      .filter((j) => refersTo(controllerRefOf(j), cj, CRONJOB_KIND));
    const requeueAfter = await this.syncCronJob(cj, jobs);
    await this.cleanupFinishedJobs(cj, jobs);
    if (requeueAfter !== undefined) this.queue.addAfter(key, requeueAfter);
  }

  /** Reconciles the active list and starts the job of an unmet schedule time; resolves with when to sync next. */
  private async syncCronJob(cj: CronJob, jobs: Job[]): Promise<number | undefined> {
    const now = this.cfg.now();
    const status = (cj.status ??= {});
    let before = JSON.stringify(status);
    const children = new Set(jobs.map((j) => j.metadata?.uid));
    const activeHas = (uid: string | undefined) => (status.active ?? []).some((r) => r.uid === uid);
    const removeActive = (uid: string | undefined) => {
      status.active = (status.active ?? []).filter((r) => r.uid !== uid);
      if (status.active.length === 0) delete status.active;
    };
    for (const j of jobs) {
      const found = activeHas(j.metadata?.uid);
      if (!found && !isJobFinished(j)) {
        const fresh = await this.cronJobClient(cj).get(cj.metadata?.name ?? '');
        if ((fresh.status?.active ?? []).some((r) => r.uid === j.metadata?.uid)) {
          // The cache is behind our own status write: go on from the stored CronJob, its whole status included.
          for (const k of Object.keys(status)) delete (status as Record<string, unknown>)[k];
          Object.assign(status, fresh.status);
          cj.metadata = fresh.metadata;
          before = JSON.stringify(status);
          continue;
        }
        this.ctx.recorder.event(
          cj,
          'Warning',
          'UnexpectedJob',
          `Saw a job that the controller did not create or forgot: ${j.metadata?.name}`,
        );
      } else if (found && isJobFinished(j)) {
        removeActive(j.metadata?.uid);
        this.ctx.recorder.event(
          cj,
          'Normal',
          'SawCompletedJob',
          `Saw completed job: ${j.metadata?.name}, status: ${finishedStatus(j)}`,
        );
      } else if (isJobFinished(j) && finishedStatus(j) === 'Complete') {
        const done = j.status?.completionTime;
        if (done && (!status.lastSuccessfulTime || Date.parse(done) > Date.parse(status.lastSuccessfulTime))) {
          status.lastSuccessfulTime = done;
        }
      }
    }
    // Active jobs that no longer exist: asked of the API server, since the cache may lag.
    for (const ref of [...(status.active ?? [])]) {
      if (children.has(ref.uid)) continue;
      try {
        await this.ctx.client.resource(JobKind, ref.namespace ?? cj.metadata?.namespace).get(ref.name ?? '');
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.ctx.recorder.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${ref.name}`);
        removeActive(ref.uid);
      }
    }
    if (JSON.stringify(status) !== before) await this.updateStatus(cj);

    if (cj.metadata?.deletionTimestamp) return undefined;
    if (cj.spec?.suspend === true) return undefined;

    let sched: Schedule;
    try {
      sched = parseSchedule(cj.spec?.schedule ?? '', this.cfg.zone);
    } catch (err) {
      if (!(err instanceof ScheduleParseError)) throw err;
      this.ctx.recorder.event(
        cj,
        'Warning',
        'UnparseableSchedule',
        `unparseable schedule: ${cj.spec?.schedule} : ${err.message}`,
      );
      return undefined;
    }
    const untilNext = (): number | undefined => {
      const next = sched.next(now);
      return next === undefined ? undefined : next - now + NEXT_SCHEDULE_DELTA_MS;
    };

    let earliest = Date.parse(status.lastScheduleTime ?? cj.metadata?.creationTimestamp ?? '');
    if (Number.isNaN(earliest)) earliest = now;
    const deadline = cj.spec?.startingDeadlineSeconds;
    if (deadline != null) earliest = Math.max(earliest, now - deadline * 1000);
    if (earliest > now) return untilNext();
    const { time: scheduled, missed } = mostRecentScheduleTime(sched, earliest, now);
    if (missed > TOO_MANY_MISSED) {
      this.ctx.recorder.event(
        cj,
        'Warning',
        'TooManyMissedTimes',
        `too many missed start times: ${missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`,
      );
    }
    if (scheduled === undefined) return untilNext();

    if (deadline != null && scheduled + deadline * 1000 < now) {
      this.ctx.recorder.event(
        cj,
        'Warning',
        'MissSchedule',
        `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`,
      );
      return untilNext();
    }
    const name = jobNameFor(cj, scheduled);
    if (
      (status.active ?? []).some((r) => r.name === name) ||
      (status.lastScheduleTime !== undefined &&
        Date.parse(status.lastScheduleTime) === Math.floor(scheduled / 1000) * 1000)
    ) {
      return untilNext();
    }
    const policy = cj.spec?.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && (status.active ?? []).length > 0) {
      this.ctx.recorder.event(
        cj,
        'Normal',
        'JobAlreadyActive',
        'Not starting job because prior execution is running and concurrency policy is Forbid',
      );
      return untilNext();
    }
    if (policy === 'Replace') {
      for (const ref of [...(status.active ?? [])]) {
        const jobs = this.ctx.client.resource(JobKind, ref.namespace ?? cj.metadata?.namespace);
        let job: Job;
        try {
          job = await jobs.get(ref.name ?? '');
        } catch (err) {
          this.ctx.recorder.event(cj, 'Warning', 'FailedGet', `Get job: ${errorText(err)}`);
          throw err;
        }
        await this.deleteJob(cj, job);
      }
    }

    const job = this.jobFromTemplate(cj, name);
    const jobClient = this.ctx.client.resource(JobKind, cj.metadata?.namespace);
    let created: Job;
    try {
      created = await jobClient.create(job);
      this.ctx.recorder.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${created.metadata?.name}`);
    } catch (err) {
      if (!isAlreadyExists(err)) {
        this.ctx.recorder.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${errorText(err)}`);
        throw err;
      }
      // The job name is the lock: ours from an earlier sync whose status write was lost, so it is listed now.
      created = await jobClient.get(name);
      if (!refersTo(controllerRefOf(created), cj, CRONJOB_KIND)) throw err;
    }
    const ref: ObjectReference = {
      kind: 'Job',
      namespace: created.metadata?.namespace,
      name: created.metadata?.name,
      uid: created.metadata?.uid,
      apiVersion: 'batch/v1',
      resourceVersion: created.metadata?.resourceVersion,
    };
    status.active = [...(status.active ?? []), ref];
    status.lastScheduleTime = iso(scheduled);
    await this.updateStatus(cj);
    return untilNext();
  }

  private jobFromTemplate(cj: CronJob, name: string): Job {
    const tmpl = structuredClone(cj.spec?.jobTemplate ?? {});
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace: cj.metadata?.namespace,
        ...(tmpl.metadata?.labels ? { labels: tmpl.metadata.labels } : {}),
        ...(tmpl.metadata?.annotations ? { annotations: tmpl.metadata.annotations } : {}),
        ownerReferences: [newControllerRef(cj, CRONJOB_KIND)],
      },
      spec: tmpl.spec ?? { template: {} },
    };
  }

  /** Deletes a job (its pods in the background) and drops it from the active list (`deleteJob`). */
  private async deleteJob(cj: CronJob, job: Job): Promise<void> {
    const name = job.metadata?.name ?? '';
    try {
      await this.ctx.client
        .resource(JobKind, job.metadata?.namespace)
        .delete(name, { propagationPolicy: 'Background' });
    } catch (err) {
      if (!isNotFound(err)) {
        this.ctx.recorder.event(cj, 'Warning', 'FailedDelete', `Deleted job: ${errorText(err)}`);
        throw new Error(`could not replace job ${job.metadata?.namespace}/${name}: ${errorText(err)}`);
      }
    }
    const status = (cj.status ??= {});
    status.active = (status.active ?? []).filter((r) => r.uid !== job.metadata?.uid);
    if (status.active.length === 0) delete status.active;
    this.ctx.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${name}`);
  }

  /** Deletes the oldest finished jobs beyond the history limits (`cleanupFinishedJobs`). */
  private async cleanupFinishedJobs(cj: CronJob, jobs: Job[]): Promise<void> {
    const spec = cj.spec;
    if (!spec || (spec.successfulJobsHistoryLimit == null && spec.failedJobsHistoryLimit == null)) return;
    const status = cj.status ?? {};
    const before = JSON.stringify(status);
    // Oldest first; equal start times by name (`byJobStartTime`).
    const byStart = (a: Job, b: Job) =>
      (Date.parse(a.status?.startTime ?? '') || 0) - (Date.parse(b.status?.startTime ?? '') || 0) ||
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
    const groups: [string, number | null | undefined][] = [
      ['Complete', spec.successfulJobsHistoryLimit],
      ['Failed', spec.failedJobsHistoryLimit],
    ];
    for (const [type, limit] of groups) {
      if (limit == null) continue;
      const finished = jobs.filter((j) => isJobFinished(j) && finishedStatus(j) === type).sort(byStart);
      for (const j of finished.slice(0, Math.max(0, finished.length - limit))) await this.deleteJob(cj, j);
    }
    if (JSON.stringify(cj.status ?? {}) !== before) await this.updateStatus(cj);
  }

  private cronJobClient(cj: CronJob) {
    return this.ctx.client.resource(CronJobKind, cj.metadata?.namespace);
  }

  /**
   * Writes `cj.status` on the resourceVersion it was read at (`UpdateStatus`). A conflict fails the sync, which is
   * retried on the newer CronJob: the status is computed from what was read, so it must not overwrite a newer one.
   */
  private async updateStatus(cj: CronJob): Promise<void> {
    const written = await this.cronJobClient(cj).updateStatus(cj as CronJob & ApiObject);
    cj.metadata = written.metadata;
  }
}

/** The `cronjob` controller of the controller manager. */
export const cronJobController: ControllerDefinition<CronJobControllerConfig> = {
  name: 'cronjob',
  enabledByDefault: true,
  options: () => new CronJobControllerOptions(),
  run: (ctx, cfg) => new CronJobController(ctx, cfg).run(),
};
