import {
  ConfigMapKind,
  isStatusError,
  NamespaceKind,
  type Pod,
  PodKind,
  type ResourceQuota,
  ResourceQuotaKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { resourceQuotaController } from './index';

jest.setTimeout(90_000);

let h: ControllerHarness;
const NS = 'rq';

beforeAll(async () => {
  h = await startControllerHarness({
    configure: (c) => {
      c.admission = {
        plugins: ['ResourceQuota'],
        settings: {
          defaultNotReadyTolerationSeconds: 300,
          defaultUnreachableTolerationSeconds: 300,
          boundServiceAccountTokenVolume: true,
        },
      };
    },
  });
  await h.client.resource(NamespaceKind).create({ metadata: { name: NS } });
  h.start(resourceQuotaController);
});

afterAll(async () => {
  await h?.stop();
});

const quotas = () => h.client.resource(ResourceQuotaKind, NS);
const pods = () => h.client.resource(PodKind, NS);

function pod(name: string, cpu = '100m'): Pod {
  return {
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu }, limits: { cpu } } }] },
  } as Pod;
}

async function used(name: string): Promise<Record<string, string>> {
  const q: ResourceQuota = await quotas().get(name);
  return (q.status?.used ?? {}) as Record<string, string>;
}

async function forbidden(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (err) {
    return isStatusError(err) && err.status.code === 403;
  }
}

test('status is filled in for a new quota and follows spec changes', async () => {
  await h.client.resource(ConfigMapKind, NS).create({ metadata: { name: 'one' }, data: {} });
  await quotas().create({ metadata: { name: 'objects' }, spec: { hard: { configmaps: '5', 'count/secrets': '4' } } });
  await waitFor('the quota status', async () => {
    const q = await quotas().get('objects');
    return (
      q.status?.hard?.configmaps === '5' && q.status?.used?.configmaps === '1' && q.status.used['count/secrets'] === '0'
    );
  });
  const q = await quotas().get('objects');
  await quotas().update({ ...q, spec: { hard: { configmaps: '7' } } });
  await waitFor('the status to follow the spec', async () => {
    const n = await quotas().get('objects');
    return (
      n.status?.hard?.configmaps === '7' &&
      n.status.hard['count/secrets'] === undefined &&
      n.status.used?.['count/secrets'] === undefined
    );
  });
});

test('usage freed by deletes and finished pods is given back, so admission admits again', async () => {
  await quotas().create({ metadata: { name: 'compute' }, spec: { hard: { pods: '2', 'requests.cpu': '1' } } });
  await waitFor('the compute quota status', async () => (await used('compute')).pods === '0');
  await pods().create(pod('a', '300m'));
  await pods().create(pod('b', '300m'));
  expect(await used('compute')).toMatchObject({ pods: '2', 'requests.cpu': '600m' });
  expect(await forbidden(pods().create(pod('c')))).toBe(true);

  await pods().delete('a');
  await waitFor('the deleted pod to be given back', async () => (await used('compute')).pods === '1');
  expect((await used('compute'))['requests.cpu']).toBe('300m');
  await pods().create(pod('c', '300m'));

  // A finished pod uses nothing.
  const b = await pods().get('b');
  await pods().updateStatus({ ...b, status: { ...b.status, phase: 'Succeeded' } });
  await waitFor('the finished pod to be given back', async () => (await used('compute')).pods === '1');
  expect((await used('compute'))['requests.cpu']).toBe('300m');
  await pods().create(pod('d', '300m'));
  expect(await forbidden(pods().create(pod('e')))).toBe(true);
  expect(h.errors).toEqual([]);
});

test('a status written wrong by someone else is corrected at the next sync', async () => {
  const q = await quotas().get('compute');
  // The spec changes with a wrong status beside it: the controller recounts.
  await quotas().updateStatus({ ...q, status: { hard: q.status?.hard, used: { pods: '0', 'requests.cpu': '0' } } });
  await quotas().update({ ...(await quotas().get('compute')), spec: { hard: { pods: '3', 'requests.cpu': '1' } } });
  await waitFor('the recount', async () => {
    const n = await quotas().get('compute');
    return n.status?.hard?.pods === '3' && n.status.used?.pods === '2';
  });
});
