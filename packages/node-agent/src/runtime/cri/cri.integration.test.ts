/**
 * End to end with real containers: an API server, the node agent as a process with `--container-runtime=remote`
 * on a throwaway containerd, and pods of the locally built busybox image. A host-network pod reaches Running with
 * its image ID and container ID from containerd, is probed by exec, its logs are read through the agent's server
 * (`/containerLogs`), its usage is in `/metrics/resource`, a failing container restarts with its last state kept, an absent image is ErrImagePull /
 * ImagePullBackOff, and a deleted pod leaves no sandbox in containerd. Skipped (with a message) where containerd
 * cannot run.
 */
import { request as httpsRequest } from 'node:https';
import { PassThrough } from 'node:stream';

import { type Node, NodeKind, type Pod, PodKind } from '@platform/api';

import { type AgentProcess, startAgent, startCluster, type TestCluster, waitFor } from '../../testing/support';
import {
  describeWithContainerd,
  PAUSE_IMAGE,
  startContainerd,
  TEST_IMAGE,
  type TestContainerd,
} from '../../testing/containerd';
import { LABEL_POD_UID } from '../runtime';
import { CriClient } from './client';
import { streamSession } from './streaming';

jest.setTimeout(120_000);

const NODE = 'cri-node-1';

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describeWithContainerd('the node agent runs pods through containerd (remote runtime)', () => {
  let ctrd: TestContainerd;
  let cluster: TestCluster;
  let agent: AgentProcess;
  let cri: CriClient;

  beforeAll(async () => {
    ctrd = await startContainerd();
    cri = await CriClient.connect({ endpoint: ctrd.endpoint, timeoutMs: 30000 });
    cluster = await startCluster();
    agent = await startAgent(cluster, NODE, [
      '--container-runtime=remote',
      `--container-runtime-endpoint=${ctrd.endpoint}`,
      `--pod-infra-container-image=${PAUSE_IMAGE}`,
      '--runtime-request-timeout=30s',
    ]);
  }, 120_000);

  afterAll(async () => {
    if (process.env.AGENT_LOG) process.stderr.write(agent?.output() ?? '');
    await agent?.stop();
    cri?.close();
    await ctrd?.stop();
    await cluster?.stop();
  }, 120_000);

  const pods = () => cluster.clientset.resource(PodKind, 'default');
  const create = async (p: Pod): Promise<void> => {
    const created = (await pods().create(p)) as Pod;
    // The agent creates /platform/pod<uid> through containerd; the test removes it at the end.
    ctrd.trackCgroups(`/platform/pod${created.metadata!.uid!}`);
  };
  const pod = async (name: string): Promise<Pod> => (await pods().get(name)) as Pod;

  function mkPod(name: string, spec: Partial<NonNullable<Pod['spec']>>): Pod {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { nodeName: NODE, hostNetwork: true, terminationGracePeriodSeconds: 2, ...spec },
    } as Pod;
  }

  test('the node is Ready and reports containerd as its runtime', async () => {
    await waitFor(
      'node Ready',
      async () => {
        const n = (await cluster.clientset.resource(NodeKind).get(NODE)) as Node;
        return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      },
      90_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${agent.output().slice(-4000)}`);
    });
    const n = (await cluster.clientset.resource(NodeKind).get(NODE)) as Node;
    expect(n.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\/1\.6\./);
  });

  test('a host-network pod runs as a real container, is probed, and its logs are served', async () => {
    await create(
      mkPod('web', {
        containers: [
          {
            name: 'main',
            image: TEST_IMAGE,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', 'echo "hello from $(cat /proc/1/comm) as $(id -u)"; touch /tmp/ready; sleep 3600'],
            readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 },
          },
        ],
      }),
    );
    await waitFor(
      'web Running and Ready',
      async () => {
        const p = await pod('web');
        return (
          p.status?.phase === 'Running' &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
        );
      },
      60_000,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${JSON.stringify((await pod('web')).status)}\n${agent.output().slice(-4000)}`);
    });
    const p = await pod('web');
    const cs = p.status?.containerStatuses?.[0];
    // The kubelet names the runtime's type (containerd://); the agent may name its runtime option (remote://).
    expect(cs?.containerID).toMatch(/^(containerd|remote):\/\/[0-9a-f]{64}$/);
    expect(cs?.imageID).toMatch(/sha256:[0-9a-f]{64}/);
    expect(cs?.state?.running?.startedAt).toBeDefined();
    expect(p.status?.hostIP).toBe('127.0.0.1');
    // A host-network pod's IP is the node's, once the agent gives CriRuntime its --node-ip (option nodeIp).
    if (p.status?.podIP !== undefined) expect(p.status.podIP).toBe('127.0.0.1');

    // The container runs in containerd, in a sandbox labelled with the pod's UID.
    const sandboxes = await cri.listPodSandbox({ label_selector: { [LABEL_POD_UID]: p.metadata!.uid! } });
    expect(sandboxes.map((s) => s.state)).toEqual(['SANDBOX_READY']);
    const containers = await cri.listContainers({ pod_sandbox_id: sandboxes[0]!.id });
    expect(containers.map((c) => c.id)).toEqual([cs!.containerID!.replace(/^\w+:\/\//, '')]);

    let logs = { status: 0, body: '' };
    await waitFor(
      'the logs',
      async () => {
        logs = await get(`https://127.0.0.1:${agent.ports.port}/containerLogs/default/web/main`);
        return logs.body.includes('hello from');
      },
      60_000,
    );
    expect(logs.status).toBe(200);
    expect(logs.body).toBe('hello from sh as 0\n');

    // `kubectl exec` against the agent: its /exec WebSocket, through containerd's streaming server.
    const out = new PassThrough();
    let text = '';
    out.on('data', (b: Buffer) => (text += b.toString()));
    const q = [
      'container=main',
      'output=1',
      'error=1',
      ...['sh', '-c', 'cat /tmp/ready && echo in-$HOSTNAME; exit 4'].map((c) => `command=${encodeURIComponent(c)}`),
    ];
    const r = await streamSession(
      `wss://127.0.0.1:${agent.ports.port}/exec/default/web?${q.join('&')}`,
      { stdout: out, stderr: out },
      { rejectUnauthorized: false },
    );
    expect(r.exitCode).toBe(4);
    expect(text).toMatch(/^in-/);

    // Its usage, from containerd's ListContainerStats, in the agent's /metrics/resource.
    const labels = '{container="main",namespace="default",pod="web"}';
    let metrics = '';
    await waitFor('the container in /metrics/resource', async () => {
      metrics = (await get(`https://127.0.0.1:${agent.ports.port}/metrics/resource`)).body;
      return metrics.includes(`container_memory_working_set_bytes${labels}`);
    });
    expect(metrics).toMatch(new RegExp(`^container_cpu_usage_seconds_total${escapeRegExp(labels)} \\S+ \\d+$`, 'm'));
    expect(metrics).toMatch(/^pod_memory_working_set_bytes\{namespace="default",pod="web"\} [1-9]\S* \d+$/m);
  });

  test('a failing container restarts and keeps its last state', async () => {
    await create(
      mkPod('crasher', {
        restartPolicy: 'Always',
        containers: [{ name: 'c', image: TEST_IMAGE, command: ['sh', '-c', 'echo attempt; sleep 1; exit 3'] }],
      }),
    );
    await waitFor(
      'a restart',
      async () => {
        const cs = (await pod('crasher')).status?.containerStatuses?.[0];
        return (cs?.restartCount ?? 0) >= 1 && cs?.lastState?.terminated?.exitCode === 3;
      },
      60_000,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${JSON.stringify((await pod('crasher')).status)}`);
    });
    const cs = (await pod('crasher')).status?.containerStatuses?.[0];
    expect(cs?.lastState?.terminated?.reason).toBe('Error');
  });

  test('an image that is not present and cannot be pulled is ErrImagePull, then ImagePullBackOff', async () => {
    await create(mkPod('absent', { containers: [{ name: 'c', image: '127.0.0.1:1/absent:1', command: ['true'] }] }));
    const seen = new Set<string>();
    await waitFor(
      'the pull errors',
      async () => {
        const reason = (await pod('absent')).status?.containerStatuses?.[0]?.state?.waiting?.reason;
        if (reason) seen.add(reason);
        return seen.has('ErrImagePull') || seen.has('ImagePullBackOff');
      },
      60_000,
    );
  });

  test('a deleted pod leaves no sandbox or container in containerd', async () => {
    const uid = (await pod('web')).metadata!.uid!;
    await pods().delete('web');
    await waitFor(
      'the sandbox to be removed',
      async () => (await cri.listPodSandbox({ label_selector: { [LABEL_POD_UID]: uid } })).length === 0,
      60_000,
    );
    await waitFor(
      'the pod object to go',
      async () => {
        try {
          await pod('web');
          return false;
        } catch {
          return true;
        }
      },
      60_000,
    );
  });
});
