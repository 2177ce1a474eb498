import {
  ControllerRevisionKind,
  EventKind,
  PersistentVolumeClaimKind,
  type Pod,
  PodKind,
  type StatefulSet,
  StatefulSetKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { POD_REVISION_LABEL, statefulSetController } from './statefulset-controller';

jest.setTimeout(120_000);

let h: ControllerHarness;
const NS = 'default';

beforeAll(async () => {
  h = await startControllerHarness();
  h.start(statefulSetController);
});

afterAll(async () => {
  await h?.stop();
});

const sets = () => h.client.resource(StatefulSetKind, NS);
const pods = () => h.client.resource(PodKind, NS);

function newSet(name: string, spec: Partial<NonNullable<StatefulSet['spec']>> = {}): StatefulSet {
  return {
    metadata: { name },
    spec: {
      replicas: 3,
      serviceName: `${name}-svc`,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
      },
      ...spec,
    },
  };
}

async function podsOf(name: string): Promise<Pod[]> {
  const list = await pods().list({ labelSelector: `app=${name}` });
  return list.items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

const names = async (name: string) => (await podsOf(name)).map((p) => p.metadata?.name);

/** Marks a pod Running and Ready through pods/status, as a node agent would. */
async function makeReady(pod: Pod): Promise<void> {
  for (;;) {
    const cur = await pods().get(pod.metadata?.name ?? '');
    if (cur.status?.phase === 'Running') return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    try {
      await pods().updateStatus({
        ...cur,
        status: {
          ...cur.status,
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
        },
      });
      return;
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === 404) return;
      if (code !== 409) throw err;
    }
  }
}

/** Makes every pod of the set ready as it appears, until `check` holds. */
async function readyUntil(name: string, what: string, check: () => Promise<boolean>): Promise<void> {
  await waitFor(what, async () => {
    for (const p of await podsOf(name)) if (p.status?.phase !== 'Running') await makeReady(p);
    return check();
  });
}

async function events(name: string): Promise<string[]> {
  const list = await h.client.resource(EventKind, NS).list({ fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.type} ${e.reason} ${e.message}`);
}

test('OrderedReady: pods one at a time in ordinal order, with identity, claims, revision and status', async () => {
  await sets().create(
    newSet('web', {
      volumeClaimTemplates: [
        {
          metadata: { name: 'www', labels: { tier: 'data' } },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    }),
  );
  await waitFor('web-0', async () => (await names('web')).length === 1);
  expect(await names('web')).toEqual(['web-0']);
  // web-1 waits for web-0 to be Running and Ready.
  const [web0] = await podsOf('web');
  expect(web0?.spec?.hostname).toBe('web-0');
  expect(web0?.spec?.subdomain).toBe('web-svc');
  expect(web0?.metadata?.labels?.['statefulset.kubernetes.io/pod-name']).toBe('web-0');
  expect(web0?.spec?.volumes?.find((v) => v.name === 'www')?.persistentVolumeClaim?.claimName).toBe('www-web-0');
  await makeReady(web0 as Pod);
  await waitFor('web-1', async () => (await names('web')).length === 2);
  expect(await names('web')).toEqual(['web-0', 'web-1']);
  await readyUntil('web', '3 ready', async () => (await sets().get('web')).status?.readyReplicas === 3);

  const set = await sets().get('web');
  expect(set.status).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3 });
  expect(set.status?.currentRevision).toBe(set.status?.updateRevision);
  expect(set.status?.observedGeneration).toBe(set.metadata?.generation);
  const revs = (await h.client.resource(ControllerRevisionKind, NS).list()).items.filter((r) =>
    r.metadata?.ownerReferences?.some((o) => o.uid === set.metadata?.uid),
  );
  expect(revs.map((r) => [r.metadata?.name, r.revision])).toEqual([[set.status?.updateRevision, 1]]);
  for (const p of await podsOf('web'))
    expect(p.metadata?.labels?.[POD_REVISION_LABEL]).toBe(set.status?.updateRevision);

  const claims = (await h.client.resource(PersistentVolumeClaimKind, NS).list()).items;
  expect(claims.map((c) => c.metadata?.name).sort()).toEqual(['www-web-0', 'www-web-1', 'www-web-2']);
  expect(claims[0]?.metadata?.labels).toEqual({ tier: 'data', app: 'web' });
  await waitFor('events', async () => {
    const ev = await events('web');
    return (
      ev.includes('Normal SuccessfulCreate create Pod web-2 in StatefulSet web successful') &&
      ev.includes('Normal SuccessfulCreate create Claim www-web-2 Pod web-2 in StatefulSet web success')
    );
  });

  // Scale down: the highest ordinal goes first; claims stay.
  await sets().patch('web', 'merge', { spec: { replicas: 1 } });
  await readyUntil('web', 'scaled to 1', async () => (await names('web')).join() === 'web-0');
  await waitFor('status 1', async () => (await sets().get('web')).status?.replicas === 1);
  expect((await h.client.resource(PersistentVolumeClaimKind, NS).list()).items).toHaveLength(3);
  const ev = await events('web');
  expect(ev).toContain('Normal SuccessfulDelete delete Pod web-2 in StatefulSet web successful');
});

test('RollingUpdate with a partition updates from the highest ordinal down to the partition', async () => {
  await sets().create(newSet('roll'));
  await readyUntil('roll', '3 ready', async () => (await sets().get('roll')).status?.readyReplicas === 3);
  const before = (await sets().get('roll')).status?.currentRevision;
  await sets().patch('roll', 'merge', {
    spec: {
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
      template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } },
    },
  });
  await readyUntil('roll', 'ordinals 1 and 2 updated', async () => {
    const set = await sets().get('roll');
    return set.status?.updatedReplicas === 2 && set.status.readyReplicas === 3 && set.status.replicas === 3;
  });
  const set = await sets().get('roll');
  expect(set.status?.currentRevision).toBe(before);
  expect(set.status?.updateRevision).not.toBe(before);
  const byName = Object.fromEntries((await podsOf('roll')).map((p) => [p.metadata?.name, p]));
  expect(byName['roll-0']?.spec?.containers[0]?.image).toBe('nginx:1');
  expect(byName['roll-1']?.spec?.containers[0]?.image).toBe('nginx:2');
  expect(byName['roll-2']?.spec?.containers[0]?.image).toBe('nginx:2');

  // Partition 0: the last pod is updated, and the update revision becomes the current one.
  await sets().patch('roll', 'merge', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
  await readyUntil('roll', 'all updated', async () => {
    const s = await sets().get('roll');
    return s.status?.currentRevision === s.status?.updateRevision && s.status?.updatedReplicas === 3;
  });
  const revs = (await h.client.resource(ControllerRevisionKind, NS).list()).items.filter((r) =>
    r.metadata?.ownerReferences?.some((o) => o.uid === set.metadata?.uid),
  );
  expect(revs.map((r) => r.revision).sort()).toEqual([1, 2]);
});

test('Parallel creates every pod at once; OnDelete replaces only deleted pods', async () => {
  await sets().create(newSet('par', { podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } }));
  await waitFor('3 pods without readiness', async () => (await names('par')).length === 3);
  await sets().patch('par', 'merge', {
    spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } },
  });
  await waitFor('new update revision', async () => {
    const s = await sets().get('par');
    return !!s.status?.updateRevision && s.status.updateRevision !== s.status.currentRevision;
  });
  expect((await podsOf('par')).every((p) => p.spec?.containers[0]?.image === 'nginx:1')).toBe(true);
  // A pod deleted under the controller comes back, at the update revision.
  const old = (await podsOf('par')).find((p) => p.metadata?.name === 'par-1') as Pod;
  await pods().delete('par-1');
  await waitFor('par-1 recreated', async () => {
    const p = (await podsOf('par')).find((x) => x.metadata?.name === 'par-1');
    return !!p && p.metadata?.uid !== old.metadata?.uid;
  });
  const p1 = (await podsOf('par')).find((x) => x.metadata?.name === 'par-1');
  expect(p1?.spec?.containers[0]?.image).toBe('nginx:2');
  expect((await podsOf('par')).find((x) => x.metadata?.name === 'par-0')?.spec?.containers[0]?.image).toBe('nginx:1');
  await waitFor('updatedReplicas 1', async () => (await sets().get('par')).status?.updatedReplicas === 1);
});

test('a failed pod is deleted and created again', async () => {
  await sets().create(newSet('fail', { replicas: 1 }));
  await waitFor('fail-0', async () => (await names('fail')).length === 1);
  const [p] = await podsOf('fail');
  const cur = await pods().get('fail-0');
  await pods().updateStatus({ ...cur, status: { ...cur.status, phase: 'Failed' } });
  await waitFor('recreated', async () => {
    const [q] = await podsOf('fail');
    return !!q && q.metadata?.uid !== p?.metadata?.uid;
  });
});

test('scales and reports status right while another client keeps writing the set (conflicts)', async () => {
  await sets().create(newSet('busy', { replicas: 2, podManagementPolicy: 'Parallel' }));
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      await sets().patch('busy', 'merge', { metadata: { annotations: { touched: String(i) } } });
    }
  })();
  try {
    await readyUntil('busy', '2 ready', async () => (await sets().get('busy')).status?.readyReplicas === 2);
    await sets().patch('busy', 'merge', { spec: { replicas: 4 } });
    await readyUntil('busy', '4 ready', async () => (await sets().get('busy')).status?.readyReplicas === 4);
  } finally {
    writing = false;
    await writer;
  }
  expect(await names('busy')).toEqual(['busy-0', 'busy-1', 'busy-2', 'busy-3']);
  expect((await sets().get('busy')).status).toMatchObject({ replicas: 4, readyReplicas: 4, updatedReplicas: 4 });
});
