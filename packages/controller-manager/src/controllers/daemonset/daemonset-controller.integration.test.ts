import {
  ControllerRevisionKind,
  type DaemonSet,
  DaemonSetKind,
  EventKind,
  type Node,
  NodeKind,
  type Pod,
  PodKind,
} from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { DAEMONSET_HASH_LABEL, daemonSetController, targetNodeName } from './daemonset-controller';

jest.setTimeout(120_000);

let h: ControllerHarness;
const NS = 'default';

beforeAll(async () => {
  h = await startControllerHarness();
  h.start(daemonSetController);
  await nodes().create(node('n1', { role: 'web' }));
  await nodes().create(node('n2', { role: 'web' }, [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }]));
  await nodes().create(node('n3', { role: 'db' }));
});

afterAll(async () => {
  await h?.stop();
});

const sets = () => h.client.resource(DaemonSetKind, NS);
const pods = () => h.client.resource(PodKind, NS);
const nodes = () => h.client.resource(NodeKind);

function node(name: string, labels: Record<string, string>, taints?: NonNullable<Node['spec']>['taints']): Node {
  return { metadata: { name, labels }, spec: taints ? { taints } : {} };
}

function newSet(
  name: string,
  podSpec: Partial<NonNullable<NonNullable<DaemonSet['spec']>['template']['spec']>> = {},
  spec: Partial<NonNullable<DaemonSet['spec']>> = {},
): DaemonSet {
  return {
    metadata: { name },
    spec: {
      selector: { matchLabels: { ds: name } },
      template: {
        metadata: { labels: { ds: name } },
        spec: { containers: [{ name: 'c', image: 'agent:1' }], ...podSpec },
      },
      ...spec,
    },
  };
}

async function podsOf(name: string): Promise<Pod[]> {
  return (await pods().list({ labelSelector: `ds=${name}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
}

const nodesOf = async (name: string) => (await podsOf(name)).map((p) => targetNodeName(p)).sort();

async function makeReady(pod: Pod): Promise<void> {
  for (;;) {
    let cur: Pod;
    try {
      cur = await pods().get(pod.metadata?.name ?? '');
    } catch {
      return;
    }
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

async function events(name: string): Promise<string[]> {
  const list = await h.client.resource(EventKind, NS).list({ fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.type} ${e.reason} ${e.message}`);
}

test('one pod per eligible node, pinned by required node affinity, with the daemon tolerations and status', async () => {
  await sets().create(newSet('web', { nodeSelector: { role: 'web' } }));
  // n2 is tainted NoSchedule and n3 is not selected.
  await waitFor('pod on n1', async () => (await nodesOf('web')).join() === 'n1');
  const [p] = await podsOf('web');
  expect(p?.spec?.nodeName).toBeUndefined();
  expect(p?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
    { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
  ]);
  expect(p?.spec?.tolerations).toEqual(
    expect.arrayContaining([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
    ]),
  );
  expect(p?.metadata?.generateName).toBe('web-');
  expect(p?.metadata?.labels?.[DAEMONSET_HASH_LABEL]).toBeTruthy();
  await waitFor('status', async () => {
    const s = (await sets().get('web')).status;
    return s?.desiredNumberScheduled === 1 && s.currentNumberScheduled === 1 && s.numberReady === 0;
  });
  await makeReady(p as Pod);
  await waitFor('ready', async () => {
    const s = (await sets().get('web')).status;
    return (
      s?.numberReady === 1 &&
      s.numberAvailable === 1 &&
      s.updatedNumberScheduled === 1 &&
      (s.numberUnavailable ?? 0) === 0
    );
  });
  await waitFor('event', async () =>
    (await events('web')).includes(`Normal SuccessfulCreate Created pod: ${p?.metadata?.name}`),
  );

  // A toleration of n2's taint brings a pod there.
  await sets().patch('web', 'merge', {
    spec: {
      template: {
        spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }] },
      },
    },
  });
  await waitFor('pod on n2', async () => (await nodesOf('web')).includes('n2'));
  // A new matching node gets one; a node that stops matching loses its pod.
  await nodes().create(node('n4', { role: 'web' }));
  await waitFor('pod on n4', async () => (await nodesOf('web')).includes('n4'));
  const n4 = await nodes().get('n4');
  await nodes().update({ ...n4, metadata: { ...n4.metadata, labels: { role: 'db' } } });
  await waitFor('pod off n4', async () => !(await nodesOf('web')).includes('n4'));
  await waitFor('desired 2', async () => (await sets().get('web')).status?.desiredNumberScheduled === 2);
  await nodes().delete('n4');
});

test('a NoExecute taint not tolerated removes the pod; a pod deleted under the controller comes back', async () => {
  await sets().create(newSet('agent'));
  await waitFor('pod on n1 and n3', async () => (await nodesOf('agent')).join() === 'n1,n3');
  const n3 = await nodes().get('n3');
  await nodes().update({ ...n3, spec: { ...n3.spec, taints: [{ key: 'evict', effect: 'NoExecute' }] } });
  await waitFor('pod off n3', async () => (await nodesOf('agent')).join() === 'n1');
  await nodes().update({ ...(await nodes().get('n3')), spec: {} });
  await waitFor('pod back on n3', async () => (await nodesOf('agent')).join() === 'n1,n3');
  const [first] = await podsOf('agent');
  await pods().delete(first?.metadata?.name ?? '');
  await waitFor('replaced', async () => {
    const ps = await podsOf('agent');
    return ps.length === 2 && !ps.some((p) => p.metadata?.uid === first?.metadata?.uid);
  });
  // A failed daemon pod is deleted and replaced.
  const [victim] = await podsOf('agent');
  const cur = await pods().get(victim?.metadata?.name ?? '');
  await pods().updateStatus({ ...cur, status: { ...cur.status, phase: 'Failed' } });
  await waitFor('failed pod replaced', async () => {
    const ps = await podsOf('agent');
    return ps.length === 2 && !ps.some((p) => p.metadata?.uid === victim?.metadata?.uid);
  });
  await waitFor('FailedDaemonPod', async () =>
    (await events('agent')).some((e) =>
      e.startsWith(`Warning FailedDaemonPod Found failed daemon pod default/${victim?.metadata?.name} on node`),
    ),
  );
});

test('RollingUpdate replaces pods at most maxUnavailable at a time; a revision per template', async () => {
  await sets().create(
    newSet('roll', {}, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } }),
  );
  await waitFor('2 pods', async () => (await podsOf('roll')).length === 2);
  for (const p of await podsOf('roll')) await makeReady(p);
  await waitFor('available', async () => (await sets().get('roll')).status?.numberAvailable === 2);
  const oldHash = (await podsOf('roll'))[0]?.metadata?.labels?.[DAEMONSET_HASH_LABEL];
  await sets().patch('roll', 'merge', {
    spec: { template: { spec: { containers: [{ name: 'c', image: 'agent:2' }] } } },
  });
  let maxMissing = 0;
  await waitFor('all updated', async () => {
    const ps = await podsOf('roll');
    const ready = ps.filter((p) => p.status?.phase === 'Running');
    maxMissing = Math.max(maxMissing, 2 - ready.length);
    for (const p of ps) if (p.status?.phase !== 'Running') await makeReady(p);
    const s = (await sets().get('roll')).status;
    return (
      ps.length === 2 &&
      ps.every((p) => p.spec?.containers[0]?.image === 'agent:2') &&
      s?.updatedNumberScheduled === 2 &&
      s.numberAvailable === 2
    );
  });
  expect(maxMissing).toBeLessThanOrEqual(1);
  const newHash = (await podsOf('roll'))[0]?.metadata?.labels?.[DAEMONSET_HASH_LABEL];
  expect(newHash).not.toBe(oldHash);
  const set = await sets().get('roll');
  const revs = (await h.client.resource(ControllerRevisionKind, NS).list()).items.filter((r) =>
    r.metadata?.ownerReferences?.some((o) => o.uid === set.metadata?.uid),
  );
  expect(revs.map((r) => r.revision).sort()).toEqual([1, 2]);
});

test('OnDelete leaves old pods until they are deleted', async () => {
  await sets().create(newSet('ondel', {}, { updateStrategy: { type: 'OnDelete' } }));
  await waitFor('2 pods', async () => (await podsOf('ondel')).length === 2);
  await sets().patch('ondel', 'merge', {
    spec: { template: { spec: { containers: [{ name: 'c', image: 'agent:2' }] } } },
  });
  await waitFor('observed', async () => {
    const s = await sets().get('ondel');
    return s.status?.observedGeneration === s.metadata?.generation && (s.status?.updatedNumberScheduled ?? 0) === 0;
  });
  expect((await podsOf('ondel')).every((p) => p.spec?.containers[0]?.image === 'agent:1')).toBe(true);
  const [p] = await podsOf('ondel');
  await pods().delete(p?.metadata?.name ?? '');
  await waitFor('replaced at the new template', async () => {
    const ps = await podsOf('ondel');
    return ps.length === 2 && ps.filter((x) => x.spec?.containers[0]?.image === 'agent:2').length === 1;
  });
});

test('status stays right while another client keeps writing the daemon set (conflicts)', async () => {
  await sets().create(newSet('busy'));
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      await sets().patch('busy', 'merge', { metadata: { annotations: { touched: String(i) } } });
    }
  })();
  try {
    await waitFor('2 pods', async () => (await podsOf('busy')).length === 2);
    for (const p of await podsOf('busy')) await makeReady(p);
    await waitFor('2 ready', async () => (await sets().get('busy')).status?.numberReady === 2);
  } finally {
    writing = false;
    await writer;
  }
  expect((await sets().get('busy')).status).toMatchObject({
    desiredNumberScheduled: 2,
    currentNumberScheduled: 2,
    numberAvailable: 2,
    updatedNumberScheduled: 2,
  });
  expect(await nodesOf('busy')).toEqual(['n1', 'n3']);
});
