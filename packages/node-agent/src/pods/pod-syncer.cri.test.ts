/**
 * The CRI calls of a pod's start through a real containerd, as the remote runtime logs them at verbosity 10: a
 * host-network pod costs one sync of six calls (no sandbox status: its IP is the node's; no new list of the pod's
 * sandboxes and containers after starting them: the status of the container it created is read), and the status it
 * publishes is Running with the container's runtime id and the node's IP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Pod } from '@platform/api';
import { captureLogging } from '@platform/common';

import { ProbeManager } from '../probes/prober';
import { CriRuntime } from '../runtime/cri/cri-runtime';
import { LABEL_POD_UID } from '../runtime/runtime';
import { describeWithContainerd, startContainerd, TEST_IMAGE, type TestContainerd } from '../testing/containerd';
import { StatusManager } from '../status/status-manager';
import { ObjectCache } from './objects';
import { PodSyncer } from './pod-syncer';

describeWithContainerd('pod start through containerd', () => {
  let ctrd: TestContainerd;
  let rt: CriRuntime;
  let rootDir: string;
  const captured = captureLogging({ verbosity: 10 });

  beforeAll(async () => {
    ctrd = await startContainerd();
    rootDir = mkdtempSync(join(tmpdir(), 'pod-syncer-cri-'));
    rt = new CriRuntime({
      endpoint: ctrd.endpoint,
      requestTimeoutMs: 60_000,
      nodeIp: '127.0.0.1',
      log: captured.logger.child('cri'),
    });
    await rt.start();
  }, 90_000);

  afterAll(async () => {
    await rt?.close();
    await ctrd?.stop();
    if (rootDir) rmSync(rootDir, { recursive: true, force: true });
  }, 90_000);

  /** The methods of the `CRI call` lines logged after line `from`. */
  const callsSince = (from: number): string[] =>
    captured
      .lines()
      .slice(from)
      .flatMap((l) => /"CRI call".* rpc="(\w+)" ms=[\d.]+ code="OK"/.exec(l)?.[1] ?? []);

  test('a host-network pod starts in one sync of six CRI calls and is Running', async () => {
    const statuses = new StatusManager(undefined);
    const probes = new ProbeManager(rt, () => undefined);
    const syncer = new PodSyncer({
      runtime: rt,
      facts: { nodeName: 'n', nodeIp: '127.0.0.1', rootDir, clusterDns: [], clusterDomain: '' },
      objects: new ObjectCache(undefined),
      statuses,
      probes,
      log: captured.logger,
      isStatic: () => false,
    });
    syncer.idScheme = 'containerd';
    const uid = `uid-${process.pid}-${Date.now()}`;
    ctrd.trackCgroups(`/platform/pod${uid}`);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', uid },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'c', image: TEST_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }],
      },
    } as Pod;
    try {
      const from = captured.lines().length;
      await syncer.sync(uid, pod);
      expect(callsSince(from)).toEqual([
        'ListPodSandbox',
        'RunPodSandbox',
        'ImageStatus',
        'CreateContainer',
        'StartContainer',
        'ContainerStatus',
      ]);
      const status = statuses.get(uid);
      expect(status?.phase).toBe('Running');
      expect(status?.podIP).toBe('127.0.0.1');
      expect(status?.containerStatuses?.[0]?.state?.running).toBeDefined();
      expect(status?.containerStatuses?.[0]?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);

      // A second sync of the running pod reads it once and starts nothing.
      const again = captured.lines().length;
      await syncer.sync(uid, pod);
      expect(callsSince(again)).toEqual(['ListPodSandbox', 'ListContainers', 'ContainerStatus']);
      expect(statuses.get(uid)?.phase).toBe('Running');
    } finally {
      await syncer.sync(uid, undefined);
      probes.close();
    }
    expect(await rt.listPodSandboxes({ labelSelector: { [LABEL_POD_UID]: uid } })).toEqual([]);
  }, 120_000);
});
