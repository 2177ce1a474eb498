import { mkdirSync, readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { describeWithContainerd, startContainerd, TEST_IMAGE, type TestContainerd } from '../../testing/containerd';
import { isRuntimeError, LABEL_POD_UID, type ContainerConfig, type PodSandboxConfig } from '../runtime';
import { CriRuntime, nanosToMillis, toCriSandboxConfig } from './cri-runtime';
import { exitCodeOf } from './streaming';

test('nanosecond timestamps become milliseconds; unset is 0', () => {
  expect(nanosToMillis('1700000000123456789')).toBe(1700000000123);
  expect(nanosToMillis('0')).toBe(0);
  expect(nanosToMillis(undefined)).toBe(0);
});

test('the exit code comes from the error channel’s Status', () => {
  expect(exitCodeOf('')).toEqual({ exitCode: 0 });
  expect(exitCodeOf('{"status":"Success"}')).toEqual({ exitCode: 0 });
  const failure = {
    status: 'Failure',
    message: 'command terminated with non-zero exit code',
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: '7' }] },
  };
  expect(exitCodeOf(JSON.stringify(failure)).exitCode).toBe(7);
  expect(exitCodeOf('{"status":"Failure","message":"no such container"}')).toEqual({
    exitCode: -1,
    message: 'no such container',
  });
});

test('a host-network sandbox is sent without a hostname', () => {
  const c = toCriSandboxConfig({
    metadata: { name: 'p', namespace: 'ns', uid: 'u', attempt: 0 },
    hostname: 'p',
    logDirectory: '/x',
    labels: {},
    annotations: {},
    linux: { securityContext: { namespaceOptions: { network: 'NODE' } } },
  });
  expect(c.hostname).toBe('');
  expect(c.linux?.security_context?.namespace_options).toEqual({ network: 'NODE', pid: 'CONTAINER', ipc: 'POD' });
});

test('a runtime whose socket does not answer fails with Unavailable', async () => {
  const rt = new CriRuntime({ endpoint: 'unix:///nonexistent/c.sock', requestTimeoutMs: 500, connectTimeoutMs: 200 });
  await expect(rt.version()).rejects.toMatchObject({ code: 'Unavailable' });
  await rt.close();
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

describeWithContainerd('CriRuntime against a real containerd', () => {
  let ctrd: TestContainerd;
  let rt: CriRuntime;

  beforeAll(async () => {
    ctrd = await startContainerd();
    rt = new CriRuntime({
      endpoint: ctrd.endpoint,
      requestTimeoutMs: 30000,
      sandboxImage: 'localhost/pause:1',
      nodeIp: '127.0.0.1',
    });
    await rt.start();
  }, 60000);

  afterAll(async () => {
    await rt?.close();
    await ctrd?.stop();
  }, 60000);

  function sandboxConfig(uid: string): PodSandboxConfig {
    const logDirectory = join(ctrd.logDir, `default_${uid}_${uid}`);
    mkdirSync(logDirectory, { recursive: true });
    return {
      metadata: { name: uid, namespace: 'default', uid, attempt: 0 },
      hostname: uid,
      logDirectory,
      labels: { [LABEL_POD_UID]: uid },
      annotations: {},
      linux: {
        cgroupParent: `${ctrd.cgroupParent}/pod${uid}`,
        securityContext: { namespaceOptions: { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
  }

  function containerConfig(name: string, script: string): ContainerConfig {
    return {
      metadata: { name, attempt: 0 },
      image: TEST_IMAGE,
      command: ['sh', '-c', script],
      args: [],
      envs: [],
      mounts: [],
      labels: {},
      annotations: {},
      logPath: `${name}/0.log`,
    };
  }

  test('version, status and images', async () => {
    const v = await rt.version();
    expect(v.runtimeName).toBe('containerd');
    expect(rt.apiVersion).toBe('v1');
    const st = await rt.status();
    expect(st.conditions.find((c) => c.type === 'RuntimeReady')?.status).toBe(true);
    const img = await rt.imageStatus({ image: TEST_IMAGE });
    expect(img?.repoTags).toContain(TEST_IMAGE);
    expect(img!.size).toBeGreaterThan(100000);
    expect(await rt.imageStatus({ image: 'localhost/absent:1' })).toBeUndefined();
    const all = await rt.listImages();
    expect(all.every((i) => i.size > 0)).toBe(true);
    const fs = await rt.imageFsInfo();
    // containerd measures the snapshotter's usage in the background: 0 right after start.
    expect(fs[0]?.mountpoint).toMatch(/overlayfs/);
    expect(fs[0]?.usedBytes).toBeGreaterThanOrEqual(0);
  });

  test('a failed pull is ErrImagePull with the registry message', async () => {
    const err: unknown = await rt.pullImage({ image: '127.0.0.1:1/absent:1' }).catch((e: unknown) => e);
    expect(isRuntimeError(err, 'ErrImagePull')).toBe(true);
    expect((err as Error).message).toMatch(/127\.0\.0\.1:1/);
  });

  test('a pod runs, its container exits with a code, is restarted as a new attempt; stop and remove are idempotent', async () => {
    const sc = sandboxConfig('u1');
    const sandboxId = await rt.runPodSandbox(sc);
    const sst = await rt.podSandboxStatus(sandboxId);
    expect(sst.state).toBe('SANDBOX_READY');
    expect(sst.network).toBe('NODE');
    expect(sst.ip).toBe('127.0.0.1');
    expect(sst.createdAt).toBeGreaterThan(Date.now() - 60000);

    const failing = await rt.createContainer(sandboxId, containerConfig('c', 'echo first; exit 7'), sc);
    await rt.startContainer(failing);
    const exited = await waitFor('the container to exit', async () => {
      const s = await rt.containerStatus(failing);
      return s.state === 'CONTAINER_EXITED' ? s : undefined;
    });
    expect(exited.exitCode).toBe(7);
    expect(exited.reason).toBe('Error');
    expect(exited.podSandboxId).toBe(sandboxId);
    // containerd stamps the start (after the shim starts it) and the exit (from the exit event) apart: a container
    // that exits at once can show its exit a millisecond before its start.
    expect(exited.finishedAt).toBeGreaterThanOrEqual(exited.startedAt - 1000);
    expect(exited.startedAt).toBeGreaterThan(0);
    expect(exited.logPath).toBe(join(sc.logDirectory, 'c/0.log'));
    expect(readFileSync(exited.logPath, 'utf8')).toMatch(/ stdout F first\n/);

    const second = await rt.createContainer(
      sandboxId,
      { ...containerConfig('c', 'echo second; sleep 1000'), metadata: { name: 'c', attempt: 1 }, logPath: 'c/1.log' },
      sc,
    );
    await rt.startContainer(second);
    const list = await rt.listContainers({ podSandboxId: sandboxId });
    expect(list.map((c) => [c.metadata.attempt, c.state]).sort()).toEqual([
      [0, 'CONTAINER_EXITED'],
      [1, 'CONTAINER_RUNNING'],
    ]);
    const r = await rt.execSync(second, ['sh', '-c', 'echo -n in; exit 2'], 5);
    expect([r.stdout.toString(), r.exitCode]).toEqual(['in', 2]);
    await expect(rt.execSync(second, ['sleep', '10'], 1)).rejects.toMatchObject({ code: 'DeadlineExceeded' });

    const exec = await rt.getExec({
      containerId: second,
      cmd: ['sh'],
      tty: false,
      stdin: true,
      stdout: true,
      stderr: true,
    });
    expect(exec.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/exec\//);
    const attach = await rt.getAttach({ containerId: second, tty: false, stdin: false, stdout: true, stderr: true });
    expect(attach.url).toMatch(/\/attach\//);
    const pf = await rt.getPortForward({ podSandboxId: sandboxId, ports: [80] });
    expect(pf.url).toMatch(/\/portforward\//);

    await rt.stopContainer(second, 1);
    await rt.stopContainer(second, 1);
    expect((await rt.containerStatus(second)).state).toBe('CONTAINER_EXITED');
    await rt.removeContainer(failing);
    await rt.removeContainer(failing);
    await expect(rt.containerStatus(failing)).rejects.toMatchObject({ code: 'NotFound' });
    await rt.stopPodSandbox(sandboxId);
    await rt.removePodSandbox(sandboxId);
    await rt.stopPodSandbox(sandboxId);
    await rt.removePodSandbox(sandboxId);
    await expect(rt.podSandboxStatus(sandboxId)).rejects.toMatchObject({ code: 'NotFound' });
    expect(await rt.listContainers()).toEqual([]);
    expect(await rt.listPodSandboxes({ labelSelector: { [LABEL_POD_UID]: 'u1' } })).toEqual([]);
  }, 60000);

  test('exec and attach on plain streams through the runtime’s streaming server', async () => {
    const sc = sandboxConfig('u3');
    const sandboxId = await rt.runPodSandbox(sc);
    const id = await rt.createContainer(
      sandboxId,
      containerConfig('t', 'while true; do echo tick; sleep 0.2; done'),
      sc,
    );
    await rt.startContainer(id);
    const collect = (): { stream: PassThrough; text: () => string } => {
      const stream = new PassThrough();
      let text = '';
      stream.on('data', (b: Buffer) => (text += b.toString()));
      return { stream, text: () => text };
    };
    const out = collect();
    const err = collect();
    const code = await rt.exec(
      {
        containerId: id,
        cmd: ['sh', '-c', 'echo out; echo err >&2; exit 5'],
        tty: false,
        stdin: false,
        stdout: true,
        stderr: true,
      },
      { stdout: out.stream, stderr: err.stream },
    );
    expect([code, out.text(), err.text()]).toEqual([5, 'out\n', 'err\n']);

    const input = new PassThrough();
    const echoed = collect();
    const reading = rt.exec(
      { containerId: id, cmd: ['head', '-n', '1'], tty: false, stdin: true, stdout: true, stderr: true },
      { stdin: input, stdout: echoed.stream },
    );
    setTimeout(() => input.write('through stdin\n'), 200);
    expect(await reading).toBe(0);
    expect(echoed.text()).toBe('through stdin\n');

    const attached = collect();
    const ac = new AbortController();
    const attaching = rt.attach(
      { containerId: id, tty: false, stdin: false, stdout: true, stderr: true },
      { stdout: attached.stream, signal: ac.signal },
    );
    await waitFor('output through attach', async () => (attached.text().includes('tick') ? true : undefined));
    ac.abort();
    await attaching;
    await rt.removePodSandbox(sandboxId);
  }, 60000);

  test('removing a running container or a running sandbox kills it first', async () => {
    const sc = sandboxConfig('u2');
    const sandboxId = await rt.runPodSandbox(sc);
    const a = await rt.createContainer(sandboxId, containerConfig('a', 'sleep 1000'), sc);
    const b = await rt.createContainer(sandboxId, containerConfig('b', 'sleep 1000'), sc);
    await rt.startContainer(a);
    await rt.startContainer(b);
    await rt.removeContainer(a);
    await expect(rt.containerStatus(a)).rejects.toMatchObject({ code: 'NotFound' });
    await rt.removePodSandbox(sandboxId);
    await expect(rt.containerStatus(b)).rejects.toMatchObject({ code: 'NotFound' });
    expect(await rt.listPodSandboxes({ id: sandboxId })).toEqual([]);
  }, 60000);
});
