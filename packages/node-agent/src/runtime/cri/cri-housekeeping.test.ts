/**
 * The remote runtime's port forwarding and housekeeping against a real containerd: a connection forwarded to a
 * host-network container's port through containerd's streaming server, and the agent's periodic log rotation
 * (`--container-log-max-size`, `--container-log-max-files`) of a chatty container. Skipped where containerd cannot
 * run.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Duplex } from 'node:stream';

import { freePort, testLogger } from '@platform/apiserver';

import { startCriHousekeeping } from '../../cmd/main';
import { defaultAgentValues } from '../../cmd/options';
import { describeWithContainerd, startContainerd, TEST_IMAGE, type TestContainerd } from '../../testing/containerd';
import { LABEL_POD_UID } from '../runtime';
import { CriRuntime } from './cri-runtime';
import { rotatedLogs } from './logs';

jest.setTimeout(120_000);

async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describeWithContainerd('the remote runtime forwards ports and rotates logs', () => {
  let ctrd: TestContainerd;
  let rt: CriRuntime;
  const stop = new AbortController();

  beforeAll(async () => {
    ctrd = await startContainerd();
    rt = new CriRuntime({
      endpoint: ctrd.endpoint,
      requestTimeoutMs: 30000,
      sandboxImage: 'localhost/pause:1',
      nodeIp: '127.0.0.1',
    });
    await rt.start();
  }, 60_000);

  afterAll(async () => {
    stop.abort();
    delete process.env.PLATFORM_AGENT_HOUSEKEEPING_MS;
    for (const s of await rt.listPodSandboxes().catch(() => [])) {
      await rt.stopPodSandbox(s.id).catch(() => undefined);
      await rt.removePodSandbox(s.id).catch(() => undefined);
    }
    await rt?.close();
    await ctrd?.stop();
  }, 60_000);

  /** A host-network sandbox with one container running `script`; returns their ids. */
  async function run(uid: string, script: string): Promise<{ sandboxId: string; containerId: string }> {
    const logDirectory = join(ctrd.logDir, `default_${uid}_${uid}`);
    mkdirSync(logDirectory, { recursive: true });
    const config = {
      metadata: { name: uid, namespace: 'default', uid, attempt: 0 },
      hostname: uid,
      logDirectory,
      labels: { [LABEL_POD_UID]: uid },
      annotations: {},
      linux: {
        cgroupParent: `${ctrd.cgroupParent}/pod${uid}`,
        securityContext: {
          namespaceOptions: { network: 'NODE' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const },
        },
      },
    };
    const sandboxId = await rt.runPodSandbox(config);
    const containerId = await rt.createContainer(
      sandboxId,
      {
        metadata: { name: 'main', attempt: 0 },
        image: TEST_IMAGE,
        command: ['sh', '-c', script],
        args: [],
        envs: [],
        mounts: [],
        labels: {},
        annotations: {},
        logPath: 'main/0.log',
      },
      config,
    );
    await rt.startContainer(containerId);
    return { sandboxId, containerId };
  }

  test('a connection is forwarded to a port the container listens on', async () => {
    const port = await freePort();
    const { sandboxId } = await run('pf1', `while true; do echo pong | nc -l -p ${port} 127.0.0.1; done`);
    const once = (): Promise<string> =>
      new Promise((resolve, reject) => {
        let got = '';
        const stream = new Duplex({
          read() {},
          write(chunk: Buffer, _enc, cb) {
            got += chunk.toString();
            cb();
          },
          final(cb) {
            cb();
          },
        });
        rt.portForward(sandboxId, port, stream).then(() => resolve(got), reject);
        // The listener answers at once and closes; nothing to send.
        stream.push(null);
      });
    await waitFor('pong through the forwarded port', async () => ((await once()).includes('pong') ? true : undefined));
  });

  test('the housekeeping rotates a container log over --container-log-max-size', async () => {
    const { containerId } = await run(
      'rot1',
      'while true; do echo 0123456789012345678901234567890123456789012345678901234567890123456789; sleep 0.005; done',
    );
    const values = { ...defaultAgentValues(), containerLogMaxSize: '4Ki', containerLogMaxFiles: 3 };
    process.env.PLATFORM_AGENT_HOUSEKEEPING_MS = '300';
    startCriHousekeeping(rt, values, testLogger(), stop.signal);
    const { logPath } = await rt.containerStatus(containerId);
    await waitFor('two rotations', async () => (rotatedLogs(logPath).length >= 2 ? true : undefined));
    // The current file and at most max-files − 1 rotated ones stay.
    await new Promise((r) => setTimeout(r, 1500));
    expect(rotatedLogs(logPath).length).toBeLessThanOrEqual(2);
    expect((await rt.containerStatus(containerId)).state).toBe('CONTAINER_RUNNING');
  });
});
