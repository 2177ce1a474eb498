/**
 * The node lifecycle controller against a real API server: NoSchedule taints follow conditions, a silent node's
 * conditions become Unknown, and the taint manager evicts what does not tolerate NoExecute taints, in time.
 */
import { type Node, NodeKind, type Pod, PodKind } from '@platform/api';

import { type ControllerHarness, startControllerHarness, waitFor } from '../../testing/harness';
import { evictionDelay, nodeLifecycleController, NOT_READY, tolerates, UNREACHABLE } from './index';

const stamp = (ms = Date.now()): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function node(name: string, ready: 'True' | 'False' | undefined): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: {},
    status: ready
      ? {
          conditions: [
            { type: 'Ready', status: ready, reason: 'Test', lastHeartbeatTime: stamp(), lastTransitionTime: stamp() },
          ],
        }
      : {},
  };
}

function pod(name: string, nodeName: string, tolerations: NonNullable<Pod['spec']>['tolerations'] = []): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName, tolerations, containers: [{ name: 'c', image: 'busybox' }] },
  };
}

describe('eviction arithmetic', () => {
  const taint = { key: NOT_READY, effect: 'NoExecute' as const, timeAdded: stamp(1_000_000) };
  it('matches tolerations as Kubernetes does', () => {
    expect(tolerates({ key: NOT_READY, operator: 'Exists' }, taint)).toBe(true);
    expect(tolerates({ operator: 'Exists' }, taint)).toBe(true);
    expect(tolerates({ key: NOT_READY, operator: 'Exists', effect: 'NoSchedule' }, taint)).toBe(false);
    expect(tolerates({ key: UNREACHABLE, operator: 'Exists' }, taint)).toBe(false);
    expect(tolerates({ key: NOT_READY, operator: 'Equal', value: '' }, taint)).toBe(true);
  });
  it('delays by the smallest tolerationSeconds from the time the taint was added', () => {
    const p = pod('p', 'n', [
      { key: NOT_READY, operator: 'Exists', tolerationSeconds: 300 },
      { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ]);
    expect(evictionDelay(p, [taint], 1_000_000 + 10_000)).toBe(50_000);
    expect(evictionDelay(pod('q', 'n'), [taint], 1_000_000)).toBe(0);
    expect(evictionDelay(pod('r', 'n', [{ operator: 'Exists' }]), [taint], 1_000_000)).toBe(Infinity);
  });
});

describe('against the API server', () => {
  let h: ControllerHarness;
  let heartbeat: NodeJS.Timeout;
  beforeAll(async () => {
    h = await startControllerHarness();
    h.start(nodeLifecycleController, (o) => {
      o.nodeMonitorPeriodMs = 200;
      // Long enough that the nodes of the first tests keep their conditions while they are checked.
      o.nodeMonitorGracePeriodMs = 15_000;
      o.nodeStartupGracePeriodMs = 15_000;
      o.nodeEvictionRate = 100;
      // Most nodes here are down: a partially disrupted zone, whose rate this small cluster would otherwise zero.
      o.secondaryNodeEvictionRate = 100;
      o.largeClusterSizeThreshold = 0;
    });
    // One node keeps posting its status, so the zone is never entirely down (no eviction at all then, as 1.21).
    await h.client.resource(NodeKind).create(node('alive-node', 'True'));
    heartbeat = setInterval(() => {
      void (async () => {
        const n = await h.client.resource(NodeKind).get('alive-node');
        const now = stamp();
        n.status = {
          ...n.status,
          conditions: (n.status?.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: now })),
        };
        await h.client.resource(NodeKind).updateStatus(n);
      })().catch(() => {});
    }, 500);
  }, 90_000);
  afterAll(async () => {
    clearInterval(heartbeat);
    await h?.stop();
  });

  const nodes = () => h.client.resource(NodeKind);
  const taintsOf = async (name: string): Promise<string[]> =>
    ((await nodes().get(name)).spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();

  it('keeps a Ready node untainted and taints a node that is not', async () => {
    await nodes().create(node('sick-node', 'False'));
    await waitFor('alive-node untainted', async () => (await taintsOf('alive-node')).length === 0);
    await waitFor('sick-node tainted NoSchedule and NoExecute', async () => {
      const t = await taintsOf('sick-node');
      return t.includes(`${NOT_READY}:NoSchedule`) && t.includes(`${NOT_READY}:NoExecute`);
    });
  }, 90_000);

  it('evicts pods that do not tolerate the NoExecute taint, those with tolerationSeconds after it', async () => {
    await nodes().create(node('evict-node', 'False'));
    const pods = h.client.resource(PodKind, 'default');
    await pods.create(pod('intolerant', 'evict-node'));
    await pods.create(
      pod('patient', 'evict-node', [{ operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 }]),
    );
    await pods.create(pod('forever', 'evict-node', [{ operator: 'Exists', effect: 'NoExecute' }]));
    const gone = async (name: string): Promise<boolean> => {
      try {
        const p = await pods.get(name);
        return !!p.metadata?.deletionTimestamp;
      } catch {
        return true;
      }
    };
    await waitFor('the intolerant pod deleted', () => gone('intolerant'));
    await waitFor('the patient pod deleted after its tolerationSeconds', () => gone('patient'));
    expect(await gone('forever')).toBe(false);
  }, 90_000);

  it('marks the conditions of a node that stops posting status Unknown', async () => {
    await nodes().create(node('silent-node', 'True'));
    await waitFor('silent-node Ready Unknown', async () => {
      const n = await nodes().get('silent-node');
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.status === 'Unknown' && ready.reason === 'NodeStatusUnknown';
    });
    await waitFor('silent-node tainted unreachable', async () =>
      (await taintsOf('silent-node')).includes(`${UNREACHABLE}:NoExecute`),
    );
    expect(h.errors).toEqual([]);
  }, 90_000);
});
