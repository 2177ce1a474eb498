import { isNotFound, type Job, JobKind, NamespaceKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { garbageCollectorController } from '../garbagecollector';
import { ttlAfterFinishedController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
let stopTTL: () => Promise<void>;
const NS = 'ttl';

beforeAll(async () => {
  h = await startControllerHarness();
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  stopTTL = h.start(ttlAfterFinishedController);
  // Foreground deletion needs the garbage collector to finish.
  h.start(garbageCollectorController);
});

afterAll(async () => {
  await h?.stop();
});

const jobs = () => h.client.resource(JobKind, NS);

function newJob(name: string, ttl?: number): Job {
  return {
    metadata: { name },
    spec: {
      ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}),
      template: {
        metadata: { labels: { app: name } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
      },
    },
  } as Job;
}

async function finish(name: string, type: 'Complete' | 'Failed'): Promise<void> {
  const job = await jobs().get(name);
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await jobs().updateStatus({
    ...job,
    status: {
      ...job.status,
      conditions: [{ type, status: 'True', lastTransitionTime: now, lastProbeTime: now }],
      ...(type === 'Complete' ? { completionTime: now } : {}),
    },
  } as Job);
}

async function gone(name: string): Promise<boolean> {
  try {
    await jobs().get(name);
    return false;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

test('a finished Job is deleted once its TTL has passed; running Jobs and Jobs without a TTL stay', async () => {
  await jobs().create(newJob('now', 0));
  await jobs().create(newJob('later', 5));
  await jobs().create(newJob('forever'));
  await jobs().create(newJob('running', 0));
  await finish('now', 'Complete');
  const finishedLater = Date.now();
  await finish('later', 'Failed');
  await finish('forever', 'Complete');
  await waitFor('the Job with TTL 0 to go', () => gone('now'));
  await waitFor('the Job with TTL 5 s to go', () => gone('later'));
  // Not before its TTL: the condition time has second resolution, so at least 4 s after it finished.
  expect(Date.now() - finishedLater).toBeGreaterThanOrEqual(4000);
  expect(await gone('forever')).toBe(false);
  expect(await gone('running')).toBe(false);
  expect(h.errors).toEqual([]);
});

test('a TTL raised before it expires is honoured (the Job is read again before deletion)', async () => {
  await jobs().create(newJob('raised', 5));
  const finished = Date.now();
  await finish('raised', 'Complete');
  const job = await jobs().get('raised');
  await jobs().update({ ...job, spec: { ...job.spec, ttlSecondsAfterFinished: 3600 } } as Job);
  // Past the first TTL (5 s after the condition, which is at most 1 s before `finished`).
  await new Promise((r) => setTimeout(r, Math.max(0, finished + 6500 - Date.now())));
  expect(await gone('raised')).toBe(false);
});

test('with the TTLAfterFinished gate off the controller does nothing', async () => {
  await stopTTL();
  stopTTL = h.start(ttlAfterFinishedController, (o) => {
    o.gateEnabled = false;
  });
  await jobs().create(newJob('gated', 0));
  await finish('gated', 'Complete');
  await new Promise((r) => setTimeout(r, 2000));
  expect(await gone('gated')).toBe(false);
  expect(h.errors).toEqual([]);
});
