/**
 * The node agent as a process (builtin runtime) against an in-process API server: the node registers and is Ready
 * with its Lease, a pod bound to it runs, restarts with back-off after failures, its probes gate readiness, it is
 * killed gracefully, its environment comes from a ConfigMap, and a static pod gets a mirror pod.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';

import { ConfigMapKind, LeaseKind, type Node, NodeKind, type Pod, PodKind } from '@platform/api';

import { type AgentProcess, startAgent, startCluster, type TestCluster, waitFor } from './testing/support';

jest.setTimeout(240_000);

let cluster: TestCluster;
let agent: AgentProcess;
const NODE = 'it-node-1';

beforeAll(async () => {
  cluster = await startCluster();
  const manifests = join(cluster.dir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(
    join(manifests, 'web.yaml'),
    'apiVersion: v1\nkind: Pod\nmetadata: {name: static-web}\nspec:\n  containers:\n  - {name: c, image: busybox, command: [sleep, "3600"]}\n',
  );
  writeFileSync(join(manifests, '.hidden.yaml'), 'not: a pod\n');
  agent = await startAgent(cluster, NODE, [`--pod-manifest-path=${manifests}`, '--file-check-frequency=1s']);
});

afterAll(async () => {
  if (process.env.AGENT_LOG) process.stderr.write(agent?.output() ?? '');
  await agent?.stop();
  await cluster?.stop();
});

const pods = () => cluster.clientset.resource(PodKind, 'default');

async function pod(name: string): Promise<Pod> {
  return (await pods().get(name)) as Pod;
}

function mkPod(name: string, spec: Partial<NonNullable<Pod['spec']>>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 5, ...spec } as NonNullable<Pod['spec']>,
  } as Pod;
}

test('the node registers, is Ready and renews its Lease', async () => {
  await waitFor(
    'node Ready',
    async () => {
      const n = (await cluster.clientset.resource(NodeKind).get(NODE)) as Node;
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    },
    150_000,
  );
  const n = (await cluster.clientset.resource(NodeKind).get(NODE)) as Node;
  expect(n.status?.addresses).toContainEqual({ type: 'InternalIP', address: '127.0.0.1' });
  expect(n.metadata?.labels?.['kubernetes.io/hostname']).toBe(NODE);
  expect(n.status?.capacity?.pods).toBe('110');
  await waitFor('lease', async () => {
    const l = await cluster.clientset.resource(LeaseKind, 'node-lease').get(NODE);
    return (l as { spec?: { holderIdentity?: string } }).spec?.holderIdentity === NODE;
  });
});

test('a pod bound to the node runs, with env from a ConfigMap, and is Ready after its readiness probe', async () => {
  await cluster.clientset
    .resource(ConfigMapKind, 'default')
    .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { GREETING: 'hello' } } as never);
  await pods().create(
    mkPod('runner', {
      containers: [
        {
          name: 'main',
          image: 'busybox',
          command: ['sh', '-c', 'echo "$GREETING $POD_NAME"; touch /tmp/ready-$POD_NAME; sleep 3600'],
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          envFrom: [{ configMapRef: { name: 'cfg' } }],
          readinessProbe: { exec: { command: ['sh', '-c', 'test -f /tmp/ready-runner'] }, periodSeconds: 1 },
        },
      ],
    }) as never,
  );
  await waitFor('runner Running and Ready', async () => {
    const p = await pod('runner');
    return (
      p.status?.phase === 'Running' &&
      p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
    );
  });
  const p = await pod('runner');
  expect(p.status?.podIP).toBe('127.0.0.1');
  expect(p.status?.hostIP).toBe('127.0.0.1');
  expect(p.status?.containerStatuses?.[0]?.started).toBe(true);
  // The log has the environment.
  const res = await fetch(`http://127.0.0.1:${agent.ports.readOnly}/pods`);
  expect(((await res.json()) as { items: Pod[] }).items.map((x) => x.metadata?.name)).toContain('runner');
});

test('a failing container restarts with back-off', async () => {
  await pods().create(
    mkPod('crasher', { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'exit 3'] }] }) as never,
  );
  await waitFor(
    'CrashLoopBackOff',
    async () => {
      const s = (await pod('crasher')).status?.containerStatuses?.[0];
      return (s?.restartCount ?? 0) >= 1 && s?.state?.waiting?.reason === 'CrashLoopBackOff';
    },
    60_000,
  );
  const s = (await pod('crasher')).status?.containerStatuses?.[0];
  expect(s?.lastState?.terminated?.exitCode).toBe(3);
});

test('a container without a command is a CreateContainerConfigError', async () => {
  await pods().create(mkPod('nocmd', { containers: [{ name: 'c', image: 'busybox' }] }) as never);
  await waitFor('CreateContainerConfigError', async () => {
    const s = (await pod('nocmd')).status?.containerStatuses?.[0];
    return s?.state?.waiting?.reason === 'CreateContainerConfigError' && /command/.test(s.state.waiting.message ?? '');
  });
});

test('a deleted pod is killed gracefully and removed', async () => {
  await waitFor('runner Running', async () => (await pod('runner')).status?.phase === 'Running');
  await pods().delete('runner');
  await waitFor('runner gone', async () => {
    try {
      await pod('runner');
      return false;
    } catch {
      return true;
    }
  });
});

test('a static pod runs and has a mirror pod', async () => {
  await waitFor('mirror pod Running', async () => {
    const p = await pod(`static-web-${NODE}`);
    return p.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined && p.status?.phase === 'Running';
  });
});

test('init containers run in order before the containers; logs are served', async () => {
  await pods().create(
    mkPod('inits', {
      initContainers: [
        { name: 'one', image: 'busybox', command: ['sh', '-c', 'echo one'] },
        { name: 'two', image: 'busybox', command: ['sh', '-c', 'echo two'] },
      ],
      containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'echo main-started; sleep 3600'] }],
    }) as never,
  );
  await waitFor('inits Running', async () => {
    const p = await pod('inits');
    return (
      p.status?.phase === 'Running' &&
      p.status.conditions?.some((c) => c.type === 'Initialized' && c.status === 'True') === true
    );
  });
  const p = await pod('inits');
  const [one, two] = p.status?.initContainerStatuses ?? [];
  expect(one?.state?.terminated?.exitCode).toBe(0);
  expect(two?.state?.terminated?.exitCode).toBe(0);
  expect(Date.parse(one!.state!.terminated!.finishedAt!)).toBeLessThanOrEqual(
    Date.parse(two!.state!.terminated!.startedAt!),
  );
  await waitFor('the log', async () => {
    const text = await getInsecure(`https://127.0.0.1:${agent.ports.port}/containerLogs/default/inits/main`);
    return text.includes('main-started');
  });
});

test('a failed liveness probe restarts the container', async () => {
  await pods().create(
    mkPod('live', {
      containers: [
        {
          name: 'c',
          image: 'busybox',
          command: ['sleep', '3600'],
          livenessProbe: { tcpSocket: { port: 1 }, periodSeconds: 1, failureThreshold: 2 },
        },
      ],
    }) as never,
  );
  await waitFor(
    'a restart',
    async () => ((await pod('live')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
    60_000,
  );
});

function getInsecure(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}
