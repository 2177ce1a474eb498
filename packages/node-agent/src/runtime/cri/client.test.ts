import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeWithContainerd,
  startContainerd,
  TEST_IMAGE,
  PAUSE_IMAGE,
  type TestContainerd,
} from '../../testing/containerd';
import { CriClient, CriError, grpcTarget } from './client';
import type { PodSandboxConfig } from './types';

test('grpcTarget takes the kubelet spellings of a unix endpoint', () => {
  expect(grpcTarget('unix:///run/containerd/containerd.sock')).toBe('unix:///run/containerd/containerd.sock');
  expect(grpcTarget('unix:/run/x.sock')).toBe('unix:///run/x.sock');
  expect(grpcTarget('/run/x.sock')).toBe('unix:///run/x.sock');
  expect(() => grpcTarget('tcp://127.0.0.1:1')).toThrow(/only unix sockets/);
});

test('connecting to a socket nobody serves fails within the connect timeout', async () => {
  // The request timeout is 10 minutes: a failure well before it comes from the connect timeout (the bound is loose
  // because a busy machine took 9.5 s to fail a 300 ms connect).
  const started = Date.now();
  await expect(
    CriClient.connect({ endpoint: '/nonexistent/containerd.sock', timeoutMs: 600_000, connectTimeoutMs: 300 }),
  ).rejects.toThrow(CriError);
  expect(Date.now() - started).toBeLessThan(120_000);
});

async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms = 30000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describeWithContainerd('CRI client against a real containerd', () => {
  let ctrd: TestContainerd;
  let cri: CriClient;

  beforeAll(async () => {
    ctrd = await startContainerd();
    cri = await CriClient.connect({ endpoint: ctrd.endpoint, timeoutMs: 30000 });
  }, 60000);

  // A pod left running in a cgroup outside the test's own, as the agent makes them: stop() removes it too.
  const foreignCgroup = `/platform/pod-test-${process.pid}-${Date.now()}`;

  afterAll(async () => {
    cri?.close();
    await ctrd?.stop();
    expect(existsSync(join('/sys/fs/cgroup/memory', foreignCgroup))).toBe(false);
    expect(existsSync(join('/sys/fs/cgroup/pids', ctrd.cgroupParent))).toBe(false);
  }, 60000);

  test('stop() leaves nothing of a pod that is still running in a cgroup of its own', async () => {
    const dir = join(ctrd.logDir, 'left');
    mkdirSync(dir, { recursive: true });
    const config: PodSandboxConfig = {
      metadata: { name: 'left', namespace: 'default', uid: 'left', attempt: 0 },
      log_directory: dir,
      linux: { cgroup_parent: foreignCgroup, security_context: { namespace_options: { network: 'NODE' } } },
    };
    const podId = await cri.runPodSandbox(config);
    const cid = await cri.createContainer(
      podId,
      { metadata: { name: 'c' }, image: { image: TEST_IMAGE }, command: ['sleep', '1000'], log_path: 'c.log' },
      config,
    );
    await cri.startContainer(cid);
    expect(existsSync(join('/sys/fs/cgroup/memory', foreignCgroup))).toBe(true);
  });

  test('speaks v1 when served, and reports the runtime', async () => {
    expect(cri.apiVersion).toBe('v1');
    const v = await cri.version();
    expect(v.runtime_name).toBe('containerd');
    expect(v.runtime_version).toMatch(/^1\.6\./);
    const old = await CriClient.connect({ endpoint: ctrd.endpoint, timeoutMs: 30000, apiVersion: 'v1alpha2' });
    try {
      expect((await old.version()).runtime_api_version).toBe('v1alpha2');
      expect((await old.imageStatus(TEST_IMAGE))?.repo_tags).toContain(TEST_IMAGE);
    } finally {
      old.close();
    }
    const status = await cri.status();
    const ready = status.status?.conditions.find((c) => c.type === 'RuntimeReady');
    expect(ready?.status).toBe(true);
  });

  test('the local images are present, with sizes; an absent one is null, and pulling it is an error', async () => {
    const images = await cri.listImages();
    const tags = images.flatMap((i) => i.repo_tags);
    expect(tags).toEqual(expect.arrayContaining([TEST_IMAGE, PAUSE_IMAGE]));
    const img = await cri.imageStatus(TEST_IMAGE);
    expect(img?.id).toMatch(/^sha256:/);
    expect(Number(img?.size)).toBeGreaterThan(100000);
    expect(await cri.imageStatus('localhost/absent:1')).toBeNull();
    await expect(cri.pullImage('127.0.0.1:1/absent:1')).rejects.toThrow(CriError);
  });

  test('runs a host-network pod: logs in the CRI format, ExecSync, stop and remove', async () => {
    const uid = 'uid-1';
    const logDirectory = join(ctrd.logDir, `default_p1_${uid}`);
    mkdirSync(logDirectory, { recursive: true });
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: 'p1', namespace: 'default', uid, attempt: 0 },
      log_directory: logDirectory,
      labels: { 'platform.io/pod-uid': uid },
      linux: {
        cgroup_parent: `${ctrd.cgroupParent}/pod${uid}`,
        security_context: { namespace_options: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
    const podId = await cri.runPodSandbox(sandboxConfig);
    const sandbox = await cri.podSandboxStatus(podId);
    expect(sandbox.status?.state).toBe('SANDBOX_READY');
    expect(sandbox.status?.linux?.namespaces?.options?.network).toBe('NODE');

    const cid = await cri.createContainer(
      podId,
      {
        metadata: { name: 'c', attempt: 0 },
        image: { image: TEST_IMAGE },
        command: ['sh', '-c', 'echo hi; echo oops >&2; sleep 1000'],
        envs: [{ key: 'GREETING', value: 'hello' }],
        log_path: 'c/0.log',
      },
      sandboxConfig,
    );
    await cri.startContainer(cid);
    const running = await cri.containerStatus(cid);
    expect(running.status?.state).toBe('CONTAINER_RUNNING');
    expect(running.status?.log_path).toBe(join(logDirectory, 'c/0.log'));

    const lines = await waitFor('both log lines', async () => {
      const text = readFileSync(join(logDirectory, 'c/0.log'), 'utf8');
      const ls = text.split('\n').filter(Boolean);
      return ls.length >= 2 ? ls : undefined;
    });
    const parsed = lines.map((l) => /^(\S+) (stdout|stderr) ([FP]) (.*)$/.exec(l));
    expect(parsed.every((m) => m && !Number.isNaN(Date.parse(m[1]!)))).toBe(true);
    expect(parsed.map((m) => [m![2], m![3], m![4]])).toEqual(
      expect.arrayContaining([
        ['stdout', 'F', 'hi'],
        ['stderr', 'F', 'oops'],
      ]),
    );

    const out = await cri.execSync(cid, ['sh', '-c', 'echo $GREETING; hostname; exit 3'], 10);
    expect(out.stdout.toString()).toMatch(/^hello\n/);
    expect(out.exit_code).toBe(3);

    const url = await cri.exec({ container_id: cid, cmd: ['sh'], stdout: true });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/exec\//);

    expect((await cri.listContainers({ pod_sandbox_id: podId })).map((c) => c.id)).toEqual([cid]);
    expect((await cri.listPodSandbox({ label_selector: { 'platform.io/pod-uid': uid } })).map((s) => s.id)).toEqual([
      podId,
    ]);

    const t0 = Date.now();
    await cri.stopContainer(cid, 2);
    expect(Date.now() - t0).toBeLessThan(10000);
    const exited = await cri.containerStatus(cid);
    expect(exited.status?.state).toBe('CONTAINER_EXITED');
    expect(Number(exited.status?.finished_at)).toBeGreaterThan(0);
    await cri.removeContainer(cid);
    await expect(cri.containerStatus(cid)).rejects.toMatchObject({ notFound: true });
    await cri.stopPodSandbox(podId);
    await cri.removePodSandbox(podId);
    expect((await cri.listPodSandbox()).map((s) => s.id)).not.toContain(podId);
  }, 60000);
});
