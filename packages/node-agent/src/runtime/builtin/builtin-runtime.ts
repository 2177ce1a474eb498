/**
 * The `builtin` runtime (Document 3's default, `--container-runtime=builtin`): each container's command runs as a
 * supervised host process, for machines without a container runtime. It isolates nothing — no filesystem, network,
 * PID or IPC namespace — so it is safe by default instead:
 * - a container runs as the user its securityContext names, else as an unprivileged user (`--builtin-run-as-user`,
 *   65534); user 0 only when the pod asks for it and the agent runs with `--builtin-allow-root`;
 * - privileged containers and the host PID and IPC namespaces are refused (`CreateContainerConfigError`); every pod
 *   shares the node's network, so the pod IP is the node IP;
 * - a container needs a `command` (there is no image to take an entrypoint from); `args` alone are taken as the
 *   command, so `kubectl run --image=busybox -- sleep 3600` works;
 * - volumes are not mounted at their paths (that would change the host): each mount is a symbolic link under the
 *   sandbox's root directory `$PLATFORM_ROOT/<mountPath>`, the container's default working directory;
 * - resource limits go to cgroup v1 controllers (memory, cpu, pids) under `/sys/fs/cgroup/<ctrl>/platform-builtin/`
 *   where the machine allows it; usage (`listContainerStats`) is read from the container's `cpuacct` and `memory`
 *   cgroups there, else from the /proc entries of its process tree.
 * Processes die with the agent (`close` kills them); after a restart, leftovers recorded in the state directory are
 * killed and the pod workers start the containers again.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statfsSync,
  symlinkSync,
  type WriteStream,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';

import { type Logger, NOP_LOGGER } from '@platform/common';

import {
  type AttachRequest,
  type CallOptions,
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerState,
  type ContainerStats,
  type ContainerStatsFilter,
  type ContainerStatus,
  type ExecRequest,
  type ExecSyncResult,
  type FilesystemUsage,
  type Image,
  type ImageSpec,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStatus,
  type Runtime,
  RuntimeError,
  type RuntimeStatus,
  type RuntimeVersion,
  type StreamOptions,
} from '../runtime';
import { cgroupV1Usage, processTreeUsage, type ProcessTable, readProcessTable, type Usage } from '../../stats/usage';

/** Settings of the builtin runtime. */
export interface BuiltinRuntimeOptions {
  /** Directory of sandboxes and state (`<--root-dir>/builtin`). */
  dir: string;
  /** The node IP, reported as every pod's IP. */
  nodeIp: string;
  /** `--builtin-allow-root`. */
  allowRoot?: boolean;
  /** `--builtin-run-as-user`. */
  defaultUid?: number;
  /** Whether to use cgroups v1 (default: when `/sys/fs/cgroup/memory` is writable). */
  cgroups?: boolean;
  logger?: Logger;
}

interface SandboxRecord {
  id: string;
  config: PodSandboxConfig;
  state: PodSandbox['state'];
  createdAt: number;
  dir: string;
}

interface ContainerRecord {
  id: string;
  sandboxId: string;
  config: ContainerConfig;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason?: string;
  message?: string;
  logPath: string;
  uid: number;
  gid: number;
  cwd: string;
  env: NodeJS.ProcessEnv;
  proc?: ChildProcess;
  exited?: Promise<void>;
  log?: WriteStream;
  attached: Set<NodeJS.WritableStream>;
}

/** `cpuacct` holds no limit: the container's CPU time is read there. */
const CGROUP_CONTROLLERS = ['memory', 'cpu', 'cpuacct', 'pids'];
const CGROUP_PARENT = 'platform-builtin';

function newId(): string {
  return randomBytes(16).toString('hex');
}

function matchLabels(labels: Record<string, string>, sel?: Record<string, string>): boolean {
  if (!sel) return true;
  return Object.entries(sel).every(([k, v]) => labels[k] === v);
}

/** One CRI log line per chunk line: `<RFC3339Nano> <stream> F <text>`. */
function criLogWriter(
  out: WriteStream,
  stream: 'stdout' | 'stderr',
  attached: Set<NodeJS.WritableStream>,
): (b: Buffer) => void {
  let partial = '';
  return (b: Buffer) => {
    for (const a of attached) a.write(b);
    const text = partial + b.toString('utf8');
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    if (partial.length > 16384) {
      out.write(`${new Date().toISOString()} ${stream} P ${partial}\n`);
      partial = '';
    }
    for (const l of lines) out.write(`${new Date().toISOString()} ${stream} F ${l}\n`);
  };
}

/** The builtin runtime. */
export class BuiltinRuntime implements Runtime {
  readonly name = 'builtin';
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly containers = new Map<string, ContainerRecord>();
  private readonly images = new Map<string, Image>();
  private readonly log: Logger;
  private readonly useCgroups: boolean;

  constructor(private readonly o: BuiltinRuntimeOptions) {
    this.log = o.logger ?? NOP_LOGGER;
    this.useCgroups =
      o.cgroups ?? (process.getuid?.() === 0 && existsSync('/sys/fs/cgroup/memory/cgroup.procs') === true);
  }

  /** Kills processes a previous agent left behind (their pids are in the state directory). */
  async start(): Promise<void> {
    mkdirSync(join(this.o.dir, 'pids'), { recursive: true });
    for (const f of readdirSync(join(this.o.dir, 'pids'))) {
      const pid = Number(readFileSync(join(this.o.dir, 'pids', f), 'utf8'));
      try {
        if (pid > 1) process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      rmSync(join(this.o.dir, 'pids', f), { force: true });
    }
    await Promise.resolve();
  }

  /** Kills every container (host processes cannot outlive the agent that supervises them) and removes their cgroups. */
  async close(): Promise<void> {
    await Promise.all([...this.containers.values()].map((c) => this.kill(c, 0)));
    for (const id of this.sandboxes.keys()) this.removeCgroup(id);
  }

  version(): Promise<RuntimeVersion> {
    return Promise.resolve({
      version: '0.1.0',
      runtimeName: 'builtin',
      runtimeVersion: '0.1.0',
      runtimeApiVersion: 'v1alpha2',
    });
  }

  status(): Promise<RuntimeStatus> {
    return Promise.resolve({
      conditions: [
        { type: 'RuntimeReady', status: true },
        { type: 'NetworkReady', status: true, reason: 'HostNetwork', message: 'every pod shares the node network' },
      ],
    });
  }

  // --- sandboxes ---

  runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const ns = config.linux?.securityContext?.namespaceOptions;
    if (ns?.pid === 'NODE' || ns?.ipc === 'NODE')
      return Promise.reject(
        new RuntimeError(
          'CreateContainerConfigError',
          'the builtin runtime refuses hostPID and hostIPC: it cannot isolate a pod from the node',
        ),
      );
    if (config.linux?.securityContext?.privileged)
      return Promise.reject(
        new RuntimeError('CreateContainerConfigError', 'the builtin runtime refuses privileged pods'),
      );
    const id = newId();
    const dir = join(this.o.dir, 'sandboxes', id);
    mkdirSync(join(dir, 'rootfs'), { recursive: true });
    mkdirSync(config.logDirectory, { recursive: true });
    this.sandboxes.set(id, { id, config, state: 'SANDBOX_READY', createdAt: Date.now(), dir });
    return Promise.resolve(id);
  }

  async stopPodSandbox(sandboxId: string): Promise<void> {
    const s = this.sandboxes.get(sandboxId);
    if (!s) return;
    await Promise.all(
      [...this.containers.values()].filter((c) => c.sandboxId === sandboxId).map((c) => this.kill(c, 0)),
    );
    s.state = 'SANDBOX_NOTREADY';
  }

  async removePodSandbox(sandboxId: string): Promise<void> {
    const s = this.sandboxes.get(sandboxId);
    if (!s) return;
    await this.stopPodSandbox(sandboxId);
    for (const c of [...this.containers.values()]) if (c.sandboxId === sandboxId) await this.removeContainer(c.id);
    this.sandboxes.delete(sandboxId);
    rmSync(s.dir, { recursive: true, force: true });
    this.removeCgroup(sandboxId);
  }

  podSandboxStatus(sandboxId: string): Promise<PodSandboxStatus> {
    const s = this.sandboxes.get(sandboxId);
    if (!s) return Promise.reject(new RuntimeError('NotFound', `sandbox ${sandboxId} not found`));
    return Promise.resolve({ ...this.sandboxOf(s), ip: this.o.nodeIp, network: 'NODE' });
  }

  private sandboxOf(s: SandboxRecord): PodSandbox {
    return {
      id: s.id,
      metadata: s.config.metadata,
      state: s.state,
      createdAt: s.createdAt,
      labels: s.config.labels,
      annotations: s.config.annotations,
    };
  }

  listPodSandboxes(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const out: PodSandbox[] = [];
    for (const s of this.sandboxes.values()) {
      if (filter.id && s.id !== filter.id) continue;
      if (filter.state && s.state !== filter.state) continue;
      if (!matchLabels(s.config.labels, filter.labelSelector)) continue;
      out.push(this.sandboxOf(s));
    }
    return Promise.resolve(out);
  }

  // --- containers ---

  createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    const s = this.sandboxes.get(sandboxId);
    if (!s) return Promise.reject(new RuntimeError('NotFound', `sandbox ${sandboxId} not found`));
    const sc = config.linux?.securityContext;
    const fail = (m: string): Promise<never> => Promise.reject(new RuntimeError('CreateContainerConfigError', m));
    if (config.command.length === 0 && config.args.length === 0)
      return fail(
        'the builtin runtime needs a command: it has no image to take an entrypoint from (set spec.containers[].command)',
      );
    if (sc?.privileged) return fail('the builtin runtime refuses privileged containers');
    if (sc?.namespaceOptions?.pid === 'NODE' || sc?.namespaceOptions?.ipc === 'NODE')
      return fail('the builtin runtime refuses hostPID and hostIPC');
    const uid = sc?.runAsUser ?? this.o.defaultUid ?? 65534;
    if (uid === 0 && !this.o.allowRoot)
      return fail(
        'the builtin runtime runs no container as root unless the node agent is started with --builtin-allow-root',
      );
    const gid = sc?.runAsGroup ?? (sc?.runAsUser === undefined ? (this.o.defaultUid ?? 65534) : uid);
    const id = newId();
    const root = join(s.dir, 'rootfs');
    for (const m of config.mounts) {
      const link = join(root, m.containerPath);
      try {
        mkdirSync(dirname(link), { recursive: true });
        rmSync(link, { force: true, recursive: false });
        symlinkSync(m.hostPath, link);
      } catch (err) {
        return Promise.reject(
          new RuntimeError('CreateContainerError', `cannot link volume at ${m.containerPath}: ${String(err)}`),
        );
      }
    }
    const env: NodeJS.ProcessEnv = {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: root,
      HOSTNAME: s.config.hostname || s.config.metadata.name,
      PLATFORM_ROOT: root,
    };
    for (const e of config.envs) env[e.key] = e.value;
    const logPath = join(s.config.logDirectory, config.logPath);
    this.containers.set(id, {
      id,
      sandboxId,
      config,
      state: 'CONTAINER_CREATED',
      createdAt: Date.now(),
      startedAt: 0,
      finishedAt: 0,
      exitCode: 0,
      logPath,
      uid,
      gid,
      cwd: config.workingDir || root,
      env,
      attached: new Set(),
    });
    return Promise.resolve(id);
  }

  startContainer(containerId: string): Promise<void> {
    const c = this.containers.get(containerId);
    if (!c) return Promise.reject(new RuntimeError('NotFound', `container ${containerId} not found`));
    if (c.state !== 'CONTAINER_CREATED')
      return Promise.reject(new RuntimeError('RunContainerError', `container ${containerId} is not in created state`));
    const sandbox = this.sandboxes.get(c.sandboxId);
    if (sandbox) {
      try {
        chownSync(join(sandbox.dir, 'rootfs'), c.uid, c.gid);
      } catch {
        // best effort (not root)
      }
    }
    mkdirSync(dirname(c.logPath), { recursive: true });
    const log = createWriteStream(c.logPath, { flags: 'a' });
    c.log = log;
    if (c.config.workingDir && !existsSync(c.config.workingDir)) {
      try {
        mkdirSync(c.config.workingDir, { recursive: true });
      } catch {
        // reported by spawn
      }
    }
    // Without an image there is no entrypoint: `args` alone (as `kubectl run --image=x -- cmd` gives) is the command.
    const [file, ...args] = [...c.config.command, ...c.config.args];
    const asRoot = process.getuid?.() === 0;
    let proc: ChildProcess;
    try {
      proc = spawn(file!, args, {
        cwd: c.cwd,
        env: c.env,
        detached: true,
        stdio: [c.config.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        ...(asRoot ? { uid: c.uid, gid: c.gid } : {}),
      });
    } catch (err) {
      log.end();
      return Promise.reject(new RuntimeError('RunContainerError', `cannot start ${file}: ${String(err)}`));
    }
    c.proc = proc;
    proc.stdout?.on('data', criLogWriter(log, 'stdout', c.attached));
    proc.stderr?.on('data', criLogWriter(log, 'stderr', c.attached));
    return new Promise((resolve, reject) => {
      let settled = false;
      c.exited = new Promise((done) => {
        proc.once('close', (code, signal) => {
          this.onExit(c, code, signal);
          done();
        });
      });
      proc.once('error', (err) => {
        if (settled) return;
        settled = true;
        c.state = 'CONTAINER_EXITED';
        c.exitCode = 128;
        c.reason = 'StartError';
        c.message = err.message;
        c.finishedAt = Date.now();
        log.end();
        reject(new RuntimeError('RunContainerError', `cannot start ${file}: ${err.message}`));
      });
      proc.once('spawn', () => {
        if (settled) return;
        settled = true;
        c.state = 'CONTAINER_RUNNING';
        c.startedAt = Date.now();
        if (proc.pid) {
          writeFileSync(join(this.o.dir, 'pids', c.id), String(proc.pid));
          this.placeInCgroup(c, proc.pid);
        }
        resolve();
      });
    });
  }

  private onExit(c: ContainerRecord, code: number | null, signal: NodeJS.Signals | null): void {
    if (c.state === 'CONTAINER_EXITED') return;
    c.state = 'CONTAINER_EXITED';
    c.finishedAt = Date.now();
    c.exitCode = code ?? 128 + (signal ? signalNumber(signal) : 0);
    c.reason = c.exitCode === 0 ? 'Completed' : this.oomKilled(c) ? 'OOMKilled' : 'Error';
    c.log?.end();
    for (const a of c.attached) a.end?.();
    c.attached.clear();
    rmSync(join(this.o.dir, 'pids', c.id), { force: true });
  }

  private async kill(c: ContainerRecord, timeoutSeconds: number): Promise<void> {
    const proc = c.proc;
    if (!proc || c.state !== 'CONTAINER_RUNNING' || !proc.pid) {
      if (c.state === 'CONTAINER_CREATED') {
        c.state = 'CONTAINER_EXITED';
        c.finishedAt = Date.now();
      }
      return;
    }
    const signalGroup = (sig: NodeJS.Signals): void => {
      try {
        process.kill(-proc.pid!, sig);
      } catch {
        try {
          proc.kill(sig);
        } catch {
          // gone
        }
      }
    };
    if (timeoutSeconds > 0) {
      signalGroup('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        c.exited!.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutSeconds * 1000))),
      ]);
      clearTimeout(timer);
      if (!timedOut) return;
    }
    signalGroup('SIGKILL');
    await c.exited;
  }

  async stopContainer(containerId: string, timeoutSeconds: number): Promise<void> {
    const c = this.containers.get(containerId);
    if (!c) return;
    await this.kill(c, timeoutSeconds);
  }

  async removeContainer(containerId: string): Promise<void> {
    const c = this.containers.get(containerId);
    if (!c) return;
    await this.kill(c, 0);
    this.containers.delete(containerId);
    rmSync(c.logPath, { force: true });
    if (this.useCgroups)
      for (const ctrl of CGROUP_CONTROLLERS) rmdirQuiet(join('/sys/fs/cgroup', ctrl, CGROUP_PARENT, c.sandboxId, c.id));
  }

  private containerOf(c: ContainerRecord): Container {
    return {
      id: c.id,
      podSandboxId: c.sandboxId,
      metadata: c.config.metadata,
      image: c.config.image,
      imageRef: `builtin://${c.config.image}`,
      state: c.state,
      createdAt: c.createdAt,
      labels: c.config.labels,
      annotations: c.config.annotations,
    };
  }

  listContainers(filter: ContainerFilter = {}): Promise<Container[]> {
    const out: Container[] = [];
    for (const c of this.containers.values()) {
      if (filter.id && c.id !== filter.id) continue;
      if (filter.podSandboxId && c.sandboxId !== filter.podSandboxId) continue;
      if (filter.state && c.state !== filter.state) continue;
      if (!matchLabels(c.config.labels, filter.labelSelector)) continue;
      out.push(this.containerOf(c));
    }
    return Promise.resolve(out);
  }

  containerStatus(containerId: string): Promise<ContainerStatus> {
    const c = this.containers.get(containerId);
    if (!c) return Promise.reject(new RuntimeError('NotFound', `container ${containerId} not found`));
    return Promise.resolve({
      ...this.containerOf(c),
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      exitCode: c.exitCode,
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
      ...(c.message !== undefined ? { message: c.message } : {}),
      logPath: c.logPath,
    });
  }

  listContainerStats(filter: ContainerStatsFilter = {}): Promise<ContainerStats[]> {
    let table: ProcessTable | undefined;
    const out: ContainerStats[] = [];
    for (const c of this.containers.values()) {
      const pid = c.proc?.pid;
      if (c.state !== 'CONTAINER_RUNNING' || !pid) continue;
      if (filter.id && c.id !== filter.id) continue;
      if (filter.podSandboxId && c.sandboxId !== filter.podSandboxId) continue;
      if (!matchLabels(c.config.labels, filter.labelSelector)) continue;
      // One reading of the process table serves every container without a cgroup.
      const usage: Usage | undefined = this.cgroupUsage(c) ?? processTreeUsage((table ??= readProcessTable()), pid);
      out.push({ id: c.id, metadata: c.config.metadata, labels: c.config.labels, ...usage });
    }
    return Promise.resolve(out);
  }

  // --- exec, attach, port-forward ---

  private running(containerId: string): ContainerRecord {
    const c = this.containers.get(containerId);
    if (!c) throw new RuntimeError('NotFound', `container ${containerId} not found`);
    if (c.state !== 'CONTAINER_RUNNING') throw new RuntimeError('Unknown', `container ${containerId} is not running`);
    return c;
  }

  private spawnIn(c: ContainerRecord, cmd: string[], stdin: boolean): ChildProcess {
    const [file, ...args] = cmd;
    if (!file) throw new RuntimeError('Unknown', 'empty command');
    return spawn(file, args, {
      cwd: c.cwd,
      env: c.env,
      stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
      ...(process.getuid?.() === 0 ? { uid: c.uid, gid: c.gid } : {}),
    });
  }

  execSync(containerId: string, cmd: string[], timeoutSeconds: number, o: CallOptions = {}): Promise<ExecSyncResult> {
    let c: ContainerRecord;
    let proc: ChildProcess;
    try {
      c = this.running(containerId);
      proc = this.spawnIn(c, cmd, false);
    } catch (err) {
      return Promise.reject(err instanceof RuntimeError ? err : new RuntimeError('Unknown', String(err)));
    }
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      proc.stdout?.on('data', (b: Buffer) => out.push(b));
      proc.stderr?.on('data', (b: Buffer) => errOut.push(b));
      let timer: NodeJS.Timeout | undefined;
      const killGroup = (): void => {
        try {
          process.kill(-proc.pid!, 'SIGKILL');
        } catch {
          // gone
        }
      };
      if (timeoutSeconds > 0)
        timer = setTimeout(() => {
          killGroup();
          reject(new RuntimeError('DeadlineExceeded', `command timed out after ${timeoutSeconds}s`));
        }, timeoutSeconds * 1000);
      const onAbort = (): void => {
        killGroup();
        reject(new RuntimeError('DeadlineExceeded', 'aborted'));
      };
      o.signal?.addEventListener('abort', onAbort, { once: true });
      proc.once('error', (err) => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
        resolve({ stdout: Buffer.alloc(0), stderr: Buffer.from(err.message), exitCode: 126 });
      });
      proc.once('close', (code, signal) => {
        clearTimeout(timer);
        o.signal?.removeEventListener('abort', onAbort);
        resolve({
          stdout: Buffer.concat(out),
          stderr: Buffer.concat(errOut),
          exitCode: code ?? 128 + (signal ? signalNumber(signal) : 0),
        });
      });
    });
  }

  exec(req: ExecRequest, streams: StreamOptions): Promise<number> {
    const c = this.running(req.containerId);
    const proc = this.spawnIn(c, req.cmd, req.stdin);
    if (req.stdin && streams.stdin && proc.stdin) streams.stdin.pipe(proc.stdin);
    if (streams.stdout) proc.stdout?.on('data', (b: Buffer) => streams.stdout!.write(b));
    if (streams.stderr) proc.stderr?.on('data', (b: Buffer) => streams.stderr!.write(b));
    streams.signal?.addEventListener('abort', () => proc.kill('SIGKILL'), { once: true });
    return new Promise((resolve) => {
      proc.once('error', () => resolve(126));
      proc.once('close', (code, signal) => resolve(code ?? 128 + (signal ? signalNumber(signal) : 0)));
    });
  }

  attach(req: AttachRequest, streams: StreamOptions): Promise<void> {
    const c = this.running(req.containerId);
    if (req.stdin && streams.stdin && c.proc?.stdin) streams.stdin.pipe(c.proc.stdin, { end: false });
    const out = streams.stdout;
    if (out) c.attached.add(out);
    return new Promise((resolve) => {
      const done = (): void => {
        if (out) c.attached.delete(out);
        resolve();
      };
      void c.exited?.then(done);
      streams.signal?.addEventListener('abort', done, { once: true });
    });
  }

  portForward(_podSandboxId: string, port: number, stream: NodeJS.ReadWriteStream): Promise<void> {
    return new Promise((resolve, reject) => {
      const sock = connect(port, '127.0.0.1');
      sock.once('error', reject);
      sock.once('connect', () => {
        stream.pipe(sock);
        sock.pipe(stream as NodeJS.WritableStream);
      });
      sock.once('close', () => resolve());
    });
  }

  // --- images: the builtin runtime has none; an image name is only a label ---

  imageStatus(image: ImageSpec): Promise<Image | undefined> {
    return Promise.resolve(this.images.get(image.image));
  }

  pullImage(image: ImageSpec): Promise<string> {
    const ref = `builtin://${image.image}`;
    if (!this.images.has(image.image))
      this.images.set(image.image, { id: ref, repoTags: [image.image], repoDigests: [], size: 0 });
    return Promise.resolve(ref);
  }

  listImages(): Promise<Image[]> {
    return Promise.resolve([...this.images.values()]);
  }

  removeImage(image: ImageSpec): Promise<void> {
    this.images.delete(image.image);
    return Promise.resolve();
  }

  imageFsInfo(): Promise<FilesystemUsage[]> {
    let used = 0;
    try {
      mkdirSync(this.o.dir, { recursive: true });
      const s = statfsSync(this.o.dir);
      used = (s.blocks - s.bfree) * s.bsize;
    } catch {
      // unknown
    }
    return Promise.resolve([{ timestamp: Date.now(), mountpoint: this.o.dir, usedBytes: used }]);
  }

  // --- cgroups (v1), best effort ---

  private placeInCgroup(c: ContainerRecord, pid: number): void {
    if (!this.useCgroups) return;
    const r = c.config.linux?.resources;
    for (const ctrl of CGROUP_CONTROLLERS) {
      const dir = join('/sys/fs/cgroup', ctrl, CGROUP_PARENT, c.sandboxId, c.id);
      try {
        mkdirSync(dir, { recursive: true });
        if (ctrl === 'memory' && r?.memoryLimitInBytes)
          writeFileSync(join(dir, 'memory.limit_in_bytes'), String(r.memoryLimitInBytes));
        if (ctrl === 'cpu' && r?.cpuQuota && r.cpuQuota > 0) {
          if (r.cpuPeriod) writeFileSync(join(dir, 'cpu.cfs_period_us'), String(r.cpuPeriod));
          writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(r.cpuQuota));
        }
        if (ctrl === 'cpu' && r?.cpuShares) writeFileSync(join(dir, 'cpu.shares'), String(r.cpuShares));
        const fd = openSync(join(dir, 'cgroup.procs'), 'w');
        try {
          writeFileSync(fd, String(pid));
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        this.log.debug('Could not place container in cgroup', { ctrl, err: String(err) });
      }
    }
  }

  private cgroupUsage(c: ContainerRecord): Usage | undefined {
    if (!this.useCgroups) return undefined;
    const dir = (ctrl: string): string => join('/sys/fs/cgroup', ctrl, CGROUP_PARENT, c.sandboxId, c.id);
    return cgroupV1Usage(dir('cpuacct'), dir('memory'));
  }

  private oomKilled(c: ContainerRecord): boolean {
    if (!this.useCgroups) return false;
    try {
      const t = readFileSync(
        join('/sys/fs/cgroup/memory', CGROUP_PARENT, c.sandboxId, c.id, 'memory.oom_control'),
        'utf8',
      );
      return /oom_kill [1-9]/.test(t);
    } catch {
      return false;
    }
  }

  private removeCgroup(sandboxId: string): void {
    if (!this.useCgroups) return;
    for (const ctrl of CGROUP_CONTROLLERS)
      try {
        const dir = join('/sys/fs/cgroup', ctrl, CGROUP_PARENT, sandboxId);
        if (existsSync(dir)) {
          for (const sub of readdirSync(dir, { withFileTypes: true }))
            if (sub.isDirectory()) rmdirQuiet(join(dir, sub.name));
          rmdirQuiet(dir);
        }
      } catch {
        // busy or absent
      }
  }
}

function rmdirQuiet(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // busy or absent
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11 };

function signalNumber(s: NodeJS.Signals): number {
  return SIGNALS[s] ?? 0;
}
