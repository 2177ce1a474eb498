import { EventKind, type Job, JobKind, type Pod, PodKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { isJobFinished, jobController } from './job-controller';

jest.setTimeout(120_000);

let h: ControllerHarness;
let stopController: () => Promise<void>;
const NS = 'default';

beforeAll(async () => {
  h = await startControllerHarness();
  stopController = h.start(jobController, (c) => {
    c.backoffBaseMs = 100;
    c.backoffMaxMs = 400;
    c.indexedJob = true;
  });
});

afterAll(async () => {
  await h?.stop();
});

const jobs = () => h.client.resource(JobKind, NS);
const pods = () => h.client.resource(PodKind, NS);

function newJob(name: string, spec: Partial<NonNullable<Job['spec']>>): Job {
  return {
    metadata: { name },
    spec: {
      template: {
        metadata: { labels: { app: name } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
      },
      ...spec,
    },
  };
}

async function podsOf(job: string): Promise<Pod[]> {
  const list = await pods().list({ labelSelector: `job-name=${job}` });
  return list.items;
}

async function activePodsOf(job: string): Promise<Pod[]> {
  return (await podsOf(job)).filter(
    (p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
  );
}

async function finish(pod: Pod, phase: 'Succeeded' | 'Failed'): Promise<void> {
  for (;;) {
    const cur = await pods().get(pod.metadata?.name ?? '');
    try {
      await pods().updateStatus({ ...cur, status: { ...cur.status, phase } });
      return;
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
}

async function events(name: string): Promise<string[]> {
  const list = await h.client.resource(EventKind, NS).list({ fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.type} ${e.reason} ${e.message}`);
}

test('runs completions pods, at most parallelism at once, and completes', async () => {
  await jobs().create(newJob('pi', { completions: 3, parallelism: 2 }));
  await waitFor('2 active pods', async () => (await activePodsOf('pi')).length === 2);
  let done = 0;
  while (done < 3) {
    const active = await activePodsOf('pi');
    expect(active.length).toBeLessThanOrEqual(2);
    if (active.length === 0 || !active[0]) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    await finish(active[0], 'Succeeded');
    done++;
    await waitFor(`${done} succeeded in status`, async () => ((await jobs().get('pi')).status?.succeeded ?? 0) >= done);
  }
  await waitFor('Complete', async () => isJobFinished(await jobs().get('pi')));
  const job = await jobs().get('pi');
  expect(job.status?.conditions?.map((c) => [c.type, c.status])).toEqual([['Complete', 'True']]);
  expect(job.status?.succeeded).toBe(3);
  expect(job.status?.active ?? 0).toBe(0);
  expect(job.status?.startTime).toBeDefined();
  expect(job.status?.completionTime).toBeDefined();
  expect((await podsOf('pi')).length).toBe(3);
  await waitFor('Completed event', async () => (await events('pi')).includes('Normal Completed Job completed'));
  await waitFor(
    '3 SuccessfulCreate events',
    async () =>
      (await events('pi')).filter((e) => e.startsWith('Normal SuccessfulCreate Created pod: pi-')).length === 3,
  );
});

test('a job without completions completes when one pod succeeded and none is active', async () => {
  await jobs().create(newJob('work', { parallelism: 2 }));
  await waitFor('2 active pods', async () => (await activePodsOf('work')).length === 2);
  const [a, b] = await activePodsOf('work');
  await finish(a as Pod, 'Succeeded');
  await waitFor('1 succeeded', async () => (await jobs().get('work')).status?.succeeded === 1);
  expect(isJobFinished(await jobs().get('work'))).toBe(false);
  expect((await activePodsOf('work')).length).toBe(1); // no replacement once one succeeded
  await finish(b as Pod, 'Succeeded');
  await waitFor('Complete', async () => isJobFinished(await jobs().get('work')));
});

test('fails with BackoffLimitExceeded after backoffLimit retries', async () => {
  await jobs().create(newJob('flaky', { backoffLimit: 2 }));
  for (let i = 1; i <= 3; i++) {
    await waitFor(`attempt ${i}`, async () => (await activePodsOf('flaky')).length === 1);
    const [p] = await activePodsOf('flaky');
    await finish(p as Pod, 'Failed');
    await waitFor(`${i} failed`, async () => (await jobs().get('flaky')).status?.failed === i);
  }
  await waitFor('Failed', async () => isJobFinished(await jobs().get('flaky')));
  const job = await jobs().get('flaky');
  const failed = job.status?.conditions?.find((c) => c.type === 'Failed');
  expect(failed).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
  expect(failed?.message).toBe('Job has reached the specified backoff limit');
  expect((await podsOf('flaky')).length).toBe(3);
  await waitFor('event', async () =>
    (await events('flaky')).includes('Warning BackoffLimitExceeded Job has reached the specified backoff limit'),
  );
});

test('fails with DeadlineExceeded past activeDeadlineSeconds and deletes its active pods', async () => {
  await jobs().create(newJob('slow', { parallelism: 2, completions: 4, activeDeadlineSeconds: 2 }));
  await waitFor('2 active pods', async () => (await activePodsOf('slow')).length === 2);
  await waitFor('Failed', async () => isJobFinished(await jobs().get('slow')));
  const job = await jobs().get('slow');
  expect(job.status?.conditions?.[0]).toMatchObject({ type: 'Failed', reason: 'DeadlineExceeded' });
  expect(job.status?.failed).toBe(2);
  expect(job.status?.active ?? 0).toBe(0);
  await waitFor('pods gone', async () => (await activePodsOf('slow')).length === 0);
  await waitFor('event', async () =>
    (await events('slow')).includes('Warning DeadlineExceeded Job was active longer than specified deadline'),
  );
});

test('Indexed: one pod per index, a deleted pod is replaced with its index, completedIndexes', async () => {
  await jobs().create(newJob('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }));
  const indexOf = (p: Pod) => p.metadata?.annotations?.['batch.kubernetes.io/job-completion-index'];
  await waitFor('3 pods', async () => (await activePodsOf('idx')).length === 3);
  let active = await activePodsOf('idx');
  expect(active.map(indexOf).sort()).toEqual(['0', '1', '2']);
  const env = active[0]?.spec?.containers[0]?.env?.find((e) => e.name === 'JOB_COMPLETION_INDEX');
  expect(env?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.annotations['batch.kubernetes.io/job-completion-index']");
  expect(active.find((p) => indexOf(p) === '1')?.metadata?.name).toMatch(/^idx-1-/);

  await finish(active.find((p) => indexOf(p) === '1') as Pod, 'Succeeded');
  await waitFor('completedIndexes 1', async () => (await jobs().get('idx')).status?.completedIndexes === '1');

  // A pod deleted under the controller is replaced by one with the same index.
  const zero = active.find((p) => indexOf(p) === '0') as Pod;
  await pods().delete(zero.metadata?.name ?? '');
  await waitFor('index 0 replaced', async () =>
    (await activePodsOf('idx')).some((p) => indexOf(p) === '0' && p.metadata?.uid !== zero.metadata?.uid),
  );
  active = await activePodsOf('idx');
  expect(active.map(indexOf).sort()).toEqual(['0', '2']);
  for (const p of active) await finish(p, 'Succeeded');
  await waitFor('Complete', async () => isJobFinished(await jobs().get('idx')));
  const job = await jobs().get('idx');
  expect(job.status?.completedIndexes).toBe('0-2');
  expect(job.status?.succeeded).toBe(3);
});

test('adopts an orphan pod matching the selector and releases a pod that stops matching', async () => {
  const created = await jobs().create(newJob('adopt', { parallelism: 1, completions: 1 }));
  await waitFor('1 pod', async () => (await activePodsOf('adopt')).length === 1);
  const [p] = await activePodsOf('adopt');
  // Relabel the pod: it no longer matches, so it is released and replaced.
  const cur = await pods().get(p?.metadata?.name ?? '');
  await pods().update({ ...cur, metadata: { ...cur.metadata, labels: { other: 'x' } } });
  await waitFor('released', async () => {
    const released = await pods().get(p?.metadata?.name ?? '');
    return !(released.metadata?.ownerReferences ?? []).some((r) => r.uid === created.metadata?.uid);
  });
  await waitFor('replacement', async () => (await activePodsOf('adopt')).length === 1);
  // An orphan with the job's labels is adopted: the job then has one too many and deletes one.
  const labels = created.spec?.template?.metadata?.labels ?? {};
  const orphan = await pods().create({
    metadata: { name: 'adopt-orphan', labels },
    spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
  });
  await waitFor('adopted or deleted', async () => {
    try {
      const o = await pods().get('adopt-orphan');
      return (
        !!o.metadata?.deletionTimestamp ||
        (o.metadata?.ownerReferences ?? []).some((r) => r.uid === created.metadata?.uid && r.controller)
      );
    } catch {
      return true;
    }
  });
  await waitFor('one active', async () => (await activePodsOf('adopt')).length === 1);
  expect(orphan.metadata?.uid).toBeDefined();
});

test('status stays right while another client keeps writing the job (conflicts)', async () => {
  await jobs().create(newJob('busy', { completions: 4, parallelism: 4 }));
  await waitFor('4 active pods', async () => (await activePodsOf('busy')).length === 4);
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      await jobs().patch('busy', 'merge', { metadata: { annotations: { touched: String(i) } } });
    }
  })();
  try {
    for (const p of await activePodsOf('busy')) await finish(p, 'Succeeded');
    await waitFor('Complete', async () => isJobFinished(await jobs().get('busy')));
  } finally {
    writing = false;
    await writer;
  }
  const job = await jobs().get('busy');
  expect(job.status?.succeeded).toBe(4);
  expect(job.status?.conditions?.filter((c) => c.type === 'Complete')).toHaveLength(1);
  expect((await podsOf('busy')).length).toBe(4);
});

test('an Indexed job is left alone while the IndexedJob gate is off', async () => {
  await stopController();
  h.start(jobController); // the gate's default: off
  await jobs().create(newJob('gated', { completions: 2, completionMode: 'Indexed' }));
  await waitFor('IndexedJobDisabled', async () =>
    (await events('gated')).includes(
      'Warning IndexedJobDisabled Skipped Indexed Job sync because feature is disabled.',
    ),
  );
  expect(await podsOf('gated')).toHaveLength(0);
});
