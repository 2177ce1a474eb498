import { type CronJob, CronJobKind, EventKind, type Job, JobKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { cronJobController, jobNameFor } from './cronjob-controller';

jest.setTimeout(120_000);

let h: ControllerHarness;
const NS = 'default';
/** The controller's clock: it stands still until a test moves it (minutes pass in an instant). */
let fakeNow = 0;

beforeAll(async () => {
  h = await startControllerHarness();
  h.start(cronJobController, (c) => {
    c.now = () => fakeNow;
    c.zone = 'UTC';
    // One worker: keys are synced in the order their changes arrive, which the negative checks rely on.
    c.concurrentCronJobSyncs = 1;
  });
});

afterAll(async () => {
  await h?.stop();
});

const cronJobs = () => h.client.resource(CronJobKind, NS);
const jobs = () => h.client.resource(JobKind, NS);

function newCronJob(name: string, spec: Partial<NonNullable<CronJob['spec']>> = {}): CronJob {
  return {
    metadata: { name },
    spec: {
      schedule: '* * * * *',
      jobTemplate: {
        metadata: { labels: { cron: name } },
        spec: {
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
      ...spec,
    },
  };
}

/**
 * Creates the CronJob and sets the controller's clock half a minute after the `minutes`-th minute boundary that
 * followed its creation: exactly `minutes` schedule times of `* * * * *` have passed, none in the last 30 s.
 */
async function createAt(cj: CronJob, minutes: number): Promise<CronJob> {
  fakeNow = 0; // before every creation: nothing is due while the CronJob is created
  const created = await cronJobs().create(cj);
  const boundary = Math.ceil((Date.parse(created.metadata?.creationTimestamp ?? '') + 1) / 60_000) * 60_000;
  fakeNow = boundary + (minutes - 1) * 60_000 + 30_000;
  await poke(cj.metadata?.name ?? '');
  return created;
}

/** Moves the controller's clock `minutes` on and makes it sync the CronJob. */
async function advance(name: string, minutes: number): Promise<void> {
  fakeNow += minutes * 60_000;
  await poke(name);
}

let pokes = 0;
async function poke(name: string): Promise<void> {
  await cronJobs().patch(name, 'merge', { metadata: { annotations: { poke: String(++pokes) } } });
}

async function jobsOf(name: string): Promise<Job[]> {
  return (await jobs().list({ labelSelector: `cron=${name}` })).items.filter((j) => !j.metadata?.deletionTimestamp);
}

async function events(name: string): Promise<string[]> {
  const list = await h.client.resource(EventKind, NS).list({ fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.type} ${e.reason} ${e.message}`);
}

async function finishJob(name: string, type: 'Complete' | 'Failed', startedAt?: string): Promise<void> {
  for (;;) {
    const j = await jobs().get(name);
    const now = startedAt ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    try {
      await jobs().updateStatus({
        ...j,
        status: {
          startTime: now,
          ...(type === 'Complete' ? { completionTime: now } : {}),
          conditions: [{ type, status: 'True', lastTransitionTime: now, lastProbeTime: now }],
        },
      });
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
}

const activeNames = async (name: string) =>
  ((await cronJobs().get(name)).status?.active ?? []).map((r) => r.name).sort();

test('Allow: a job per schedule time, named by its minute, listed as active, lastScheduleTime set', async () => {
  const cj = await createAt(newCronJob('every'), 1);
  await waitFor('first job', async () => (await jobsOf('every')).length === 1);
  const [first] = await jobsOf('every');
  await waitFor('lastScheduleTime', async () => !!(await cronJobs().get('every')).status?.lastScheduleTime);
  const status = (await cronJobs().get('every')).status;
  const scheduled = Date.parse(status?.lastScheduleTime ?? '');
  expect(first?.metadata?.name).toBe(jobNameFor(cj, scheduled));
  expect(scheduled % 60_000).toBe(0);
  expect(first?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', name: 'every', controller: true });
  await waitFor('active', async () => (await activeNames('every')).length === 1);

  await advance('every', 1);
  await waitFor('second job', async () => (await jobsOf('every')).length === 2);
  await waitFor('both active', async () => (await activeNames('every')).length === 2);
  await waitFor('events', async () => {
    const ev = await events('every');
    return ev.filter((e) => e.startsWith('Normal SuccessfulCreate Created job every-')).length === 2;
  });
  // Finished jobs leave the active list.
  await finishJob(first?.metadata?.name ?? '', 'Complete');
  await waitFor('SawCompletedJob', async () =>
    (await events('every')).includes(
      `Normal SawCompletedJob Saw completed job: ${first?.metadata?.name}, status: Complete`,
    ),
  );
  await waitFor('1 active', async () => (await activeNames('every')).length === 1);
});

test('Forbid: no new job while one runs; the missed time runs once it finished', async () => {
  await createAt(newCronJob('forbid', { concurrencyPolicy: 'Forbid' }), 1);
  await waitFor('first job', async () => (await jobsOf('forbid')).length === 1);
  await waitFor('active', async () => (await activeNames('forbid')).length === 1);
  await advance('forbid', 1);
  await waitFor('JobAlreadyActive', async () =>
    (await events('forbid')).includes(
      'Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid',
    ),
  );
  expect(await jobsOf('forbid')).toHaveLength(1);
  const [first] = await jobsOf('forbid');
  await finishJob(first?.metadata?.name ?? '', 'Complete');
  await waitFor('second job', async () => (await jobsOf('forbid')).length === 2);
});

test('Replace: the running job is deleted and a new one takes its place', async () => {
  await createAt(newCronJob('replace', { concurrencyPolicy: 'Replace' }), 1);
  await waitFor('first job', async () => (await jobsOf('replace')).length === 1);
  await waitFor('active', async () => (await activeNames('replace')).length === 1);
  const [first] = await jobsOf('replace');
  await advance('replace', 1);
  await waitFor('replaced', async () => {
    const js = await jobsOf('replace');
    return js.length === 1 && js[0]?.metadata?.uid !== first?.metadata?.uid;
  });
  await waitFor('active is the new one', async () => {
    const names = await activeNames('replace');
    return names.length === 1 && names[0] !== first?.metadata?.name;
  });
  await waitFor('SuccessfulDelete', async () =>
    (await events('replace')).includes(`Normal SuccessfulDelete Deleted job ${first?.metadata?.name}`),
  );
});

test('suspend and a passed startingDeadlineSeconds start nothing', async () => {
  await createAt(newCronJob('paused', { suspend: true }), 2);
  await createAt(newCronJob('late', { startingDeadlineSeconds: 2 }), 2);
  // A CronJob synced after both: once it has its job, the two were synced too (one queue, in order).
  await createAt(newCronJob('marker'), 1);
  await waitFor('marker job', async () => (await jobsOf('marker')).length === 1);
  await poke('paused');
  await poke('late');
  await advance('marker', 1);
  await waitFor('marker synced again', async () => (await jobsOf('marker')).length === 2);
  expect(await jobsOf('paused')).toHaveLength(0);
  expect(await jobsOf('late')).toHaveLength(0);
  // Resumed: the most recent missed time runs.
  await cronJobs().patch('paused', 'merge', { spec: { suspend: false } });
  await waitFor('resumed job', async () => (await jobsOf('paused')).length === 1);
});

test('over 100 missed times: TooManyMissedTimes, and the most recent time runs', async () => {
  await createAt(newCronJob('behind'), 150);
  await waitFor('job', async () => (await jobsOf('behind')).length === 1);
  await waitFor('event', async () =>
    (await events('behind')).some((e) =>
      /^Warning TooManyMissedTimes too many missed start times: 150\. Set or decrease \.spec\.startingDeadlineSeconds or check clock skew$/.test(
        e,
      ),
    ),
  );
});

test('history limits delete the oldest finished jobs; a job deleted under the controller leaves the active list', async () => {
  await createAt(newCronJob('history', { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }), 1);
  for (let n = 2; n <= 3; n++) {
    await waitFor(`job ${n - 1}`, async () => (await jobsOf('history')).length === n - 1);
    await advance('history', 1);
  }
  await waitFor('3 jobs', async () => (await jobsOf('history')).length === 3);
  const names = (await jobsOf('history')).map((j) => j.metadata?.name ?? '').sort();
  await finishJob(names[0] ?? '', 'Complete', '2021-04-08T10:00:00Z');
  await finishJob(names[1] ?? '', 'Complete', '2021-04-08T10:01:00Z');
  await waitFor('oldest successful job deleted', async () => {
    const left = (await jobsOf('history')).map((j) => j.metadata?.name).sort();
    return left.length === 2 && left[0] === names[1] && left[1] === names[2];
  });
  await jobs().delete(names[2] ?? '');
  await poke('history');
  await waitFor('MissingJob', async () =>
    (await events('history')).includes(`Normal MissingJob Active job went missing: ${names[2]}`),
  ).catch(async (err: Error) => {
    throw new Error(
      `${err.message}; events: ${JSON.stringify(await events('history'))}; active: ${JSON.stringify(await activeNames('history'))}; names: ${JSON.stringify(names)}; errors: ${JSON.stringify(h.errors.map(String))}`,
    );
  });
  await waitFor('no active job', async () => (await activeNames('history')).length === 0);
});
