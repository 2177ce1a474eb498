/**
 * A throwaway containerd for tests and benchmarks, and the local images they run.
 *
 * `startContainerd` runs our own `containerd --config` (machines like ours have no systemd to start Debian's
 * service) with root, state, socket, runc root and the pods' log directories under one temporary directory, waits
 * until its CRI answers, and imports two images built locally from Debian's busybox-static (no registry is
 * reachable): `localhost/busybox:1` (the whole busybox userland, `sh` by default) and the sandbox image
 * `localhost/pause:1`. `stop()` removes every pod through CRI, stops containerd, kills what is left of its shims
 * and containers, unmounts what it mounted, removes the pods' cgroups and the directory.
 *
 * `containerdUnavailable()` says why containerd cannot run here (not root, a binary missing), for tests to skip.
 * The configuration follows ../shared/notes/containerd.md: cgroups v1 without systemd, `restrict_oom_score_adj`
 * (the machines lack CAP_SYS_RESOURCE), the streaming server on 127.0.0.1.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  copyFileSync,
  openSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CriClient } from '../runtime/cri/client';

/** The test image: busybox's userland, `sh` as its command, PATH=/bin. */
export const TEST_IMAGE = 'localhost/busybox:1';
/** The sandbox ("pause") image: the same rootfs, sleeping forever. */
export const PAUSE_IMAGE = 'localhost/pause:1';

const BINARIES = ['containerd', 'containerd-shim-runc-v2', 'runc', 'ctr', 'busybox', 'tar'];

function which(bin: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').concat(['/usr/sbin'])) {
    const p = join(dir, bin);
    try {
      if (statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Whether an ELF file has no program interpreter (a static binary, which runs alone in an image). */
function isStaticElf(file: string): boolean {
  try {
    const b = readFileSync(file);
    if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return false; // 64-bit little-endian ELF
    const phoff = Number(b.readBigUInt64LE(0x20));
    const phentsize = b.readUInt16LE(0x36);
    const phnum = b.readUInt16LE(0x38);
    for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) return false; // PT_INTERP
    return true;
  } catch {
    return false;
  }
}

/** Why containerd cannot run here, or undefined when it can. */
export function containerdUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `containerd tests need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'containerd tests need root (runc creates namespaces and cgroups)';
  const missing = BINARIES.filter((b) => !which(b));
  if (missing.length > 0) {
    return `not installed: ${missing.join(', ')} (apt-get install containerd runc busybox-static)`;
  }
  if (!isStaticElf(which('busybox')!)) return 'busybox is not statically linked (apt-get install busybox-static)';
  if (!existsSync('/sys/fs/cgroup')) return 'no /sys/fs/cgroup';
  if (process.env['PLATFORM_SKIP_CONTAINERD']) return 'PLATFORM_SKIP_CONTAINERD is set';
  return undefined;
}

/**
 * `describe(name, fn)`, or `describe.skip` with a console message saying why, chosen at load time: tests that need a
 * real containerd run where it can run (root with the packages installed, as in CI) and say why they are skipped
 * elsewhere.
 */
export function describeWithContainerd(name: string, fn: () => void): void {
  const reason = containerdUnavailable();
  if (reason) {
    console.warn(`SKIPPED "${name}": containerd cannot run here: ${reason}`);
    describe.skip(name, fn);
    return;
  }
  describe(name, fn);
}

// ---- images ----

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

function goArch(): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[
    process.arch
  ]!;
}

/**
 * Writes an OCI image archive holding TEST_IMAGE and PAUSE_IMAGE (one shared layer: /bin/busybox, its applet links
 * and the usual empty directories) and returns its path. Built once per busybox binary and kept under the system's
 * temporary directory, so later runs reuse it.
 */
export function buildTestImages(cacheDir = join(tmpdir(), 'platform-test-images')): string {
  const busybox = which('busybox');
  if (!busybox) throw new Error('busybox is not installed (apt-get install busybox-static)');
  const st = statSync(busybox);
  const key = sha256(`v1 ${busybox} ${st.size} ${st.mtimeMs}`).slice(0, 16);
  const archive = join(cacheDir, `images-${key}.tar`);
  if (existsSync(archive)) return archive;
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, 'build-'));
  try {
    const rootfs = join(work, 'rootfs');
    for (const d of ['bin', 'dev', 'etc', 'proc', 'sys', 'tmp', 'var', 'root']) {
      mkdirSync(join(rootfs, d), { recursive: true });
    }
    copyFileSync(busybox, join(rootfs, 'bin', 'busybox'));
    const applets = execFileSync(busybox, ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const a of applets) if (a !== 'busybox') symlinkSync('busybox', join(rootfs, 'bin', a));
    writeFileSync(join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n');
    writeFileSync(join(rootfs, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
    const layerTar = join(work, 'layer.tar');
    execFileSync('tar', [
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mtime=@0',
      '-C',
      rootfs,
      '-cf',
      layerTar,
      '.',
    ]);
    const layer = readFileSync(layerTar);
    const layerGz = gzipSync(layer);
    const layout = join(work, 'layout');
    const blobs = join(layout, 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true });
    const blob = (data: Buffer | string): { digest: string; size: number } => {
      const buf = typeof data === 'string' ? Buffer.from(data) : data;
      const hex = sha256(buf);
      writeFileSync(join(blobs, hex), buf);
      return { digest: `sha256:${hex}`, size: buf.length };
    };
    const layerDesc = blob(layerGz);
    const diffId = `sha256:${sha256(layer)}`;
    const arch = goArch();
    const manifests = [
      { name: TEST_IMAGE, cmd: ['sh'] },
      { name: PAUSE_IMAGE, cmd: ['sleep', '2147483647'] },
    ].map(({ name, cmd }) => {
      const config = blob(
        JSON.stringify({
          architecture: arch,
          os: 'linux',
          created: '1970-01-01T00:00:00Z',
          config: { Env: ['PATH=/bin'], Cmd: cmd, WorkingDir: '/' },
          rootfs: { type: 'layers', diff_ids: [diffId] },
          history: [{ created: '1970-01-01T00:00:00Z', created_by: 'platform buildTestImages (busybox-static)' }],
        }),
      );
      const manifest = blob(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
          layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...layerDesc }],
        }),
      );
      return {
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        ...manifest,
        platform: { architecture: arch, os: 'linux' },
        annotations: {
          'io.containerd.image.name': name,
          'org.opencontainers.image.ref.name': name.slice(name.lastIndexOf(':') + 1),
        },
      };
    });
    writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    writeFileSync(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests }));
    const tmp = join(work, 'images.tar');
    execFileSync('tar', ['-C', layout, '-cf', tmp, 'oci-layout', 'index.json', 'blobs']);
    renameSync(tmp, archive);
    return archive;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// ---- containerd ----

/** Options of `startContainerd`. */
export interface StartContainerdOptions {
  /** Import TEST_IMAGE and PAUSE_IMAGE. Default true. */
  images?: boolean;
  /** Time to wait for the socket to answer, ms. Default 30000. */
  startTimeoutMs?: number;
}

/** A running throwaway containerd. */
export interface TestContainerd {
  /** The directory holding everything of this containerd. */
  readonly dir: string;
  /** Its socket path. */
  readonly socket: string;
  /** `unix://<socket>`, as `--container-runtime-endpoint` takes it. */
  readonly endpoint: string;
  /** The cgroup (v1 path, under every hierarchy) that pods of this test must be created in, e.g. `/platform-test-ab12`. */
  readonly cgroupParent: string;
  /** A directory for the pods' logs, removed with the rest. */
  readonly logDir: string;
  /** containerd's own log file. */
  readonly logFile: string;
  /** containerd's process id. */
  readonly pid: number;
  /** The process ids of its shims (one per pod with the runc v2 shim; what they run are their children). */
  shimPids(): number[];
  /**
   * Adds cgroups (v1 paths, e.g. the agent's `/platform/pod<uid>`) for `stop()` to remove: a runtime leaves the
   * pod-level parents it created when their sandbox is removed (the kubelet deletes them itself).
   */
  trackCgroups(...paths: string[]): void;
  /** Imports an image archive (`ctr images import`) into the CRI namespace. */
  importImages(archive: string): void;
  /** Removes every pod through CRI, stops containerd and cleans up everything it left. Idempotent. */
  stop(): Promise<void>;
}

const runningDaemons = new Set<{ proc: ChildProcess; dir: string; cgroups: Set<string>; socket: string }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test that dies before stop() still leaves no containerd, shim or container behind.
  process.on('exit', () => {
    for (const d of runningDaemons) {
      d.proc.kill('SIGKILL');
      cleanupLeftovers(d.dir, d.socket, d.cgroups);
    }
  });
}

function configToml(dir: string): string {
  return `version = 2
root = "${dir}/root"
state = "${dir}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "${dir}/containerd.sock"
[ttrpc]
  address = "${dir}/containerd.sock.ttrpc"
[debug]
  level = "info"
[metrics]
  address = ""
[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "${dir}/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "${PAUSE_IMAGE}"
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "${dir}/cni/net.d"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "${dir}/runc"
`;
}

/** The PIDs of processes whose command line contains `needle`. */
function pidsWithCmdline(needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      if (cmd.includes(needle)) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out.filter((p) => p !== process.pid);
}

function cgroupHierarchies(): string[] {
  try {
    return readdirSync('/sys/fs/cgroup')
      .map((h) => join('/sys/fs/cgroup', h))
      .filter((p) => {
        try {
          return statSync(p).isDirectory();
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

/** Cgroup directories under `root`, deepest first. */
function cgroupTree(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(d, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return;
    }
    for (const e of entries) walk(join(d, e));
    out.push(d);
  };
  if (existsSync(root)) walk(root);
  return out;
}

function killPids(pids: Iterable<number>): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Best-effort cleanup of everything a containerd under `dir` may have left (synchronous: runs in exit hooks too). */
function cleanupLeftovers(dir: string, socket: string, cgroups: Set<string>): void {
  // Shims of this containerd carry its socket in their command line; the containers are in our cgroups.
  killPids(pidsWithCmdline(socket));
  const groups = cgroupHierarchies().flatMap((h) =>
    [...cgroups].flatMap((g) => cgroupTree(join(h, g.replace(/^\//, '')))),
  );
  for (let round = 0; round < 3; round++) {
    const pids = new Set<number>();
    for (const g of groups) {
      try {
        for (const l of readFileSync(join(g, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.add(Number(l));
      } catch {
        // gone
      }
    }
    if (pids.size === 0) break;
    killPids(pids);
    spawnSync('sleep', ['0.2']);
  }
  // Mounts under our directory (rootfs overlays, shm), deepest first.
  try {
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
      .filter((m) => m === dir || m.startsWith(`${dir}/`))
      .sort((a, b) => b.length - a.length);
    for (const m of mounts) spawnSync('umount', ['-l', m]);
  } catch {
    // no mountinfo
  }
  for (const g of groups) {
    try {
      rmdirSync(g);
    } catch {
      // busy or gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

/** The cgroup parent a sandbox was created with (from containerd's verbose status). */
async function sandboxCgroupParent(client: CriClient, id: string): Promise<string | undefined> {
  try {
    const st = await client.podSandboxStatus(id, true);
    const info = JSON.parse(st.info['info'] ?? '{}') as { config?: { linux?: { cgroup_parent?: string } } };
    return info.config?.linux?.cgroup_parent || undefined;
  } catch {
    return undefined;
  }
}

/** Starts containerd under a new temporary directory and waits until its CRI answers; imports the test images. */
export async function startContainerd(options: StartContainerdOptions = {}): Promise<TestContainerd> {
  const reason = containerdUnavailable();
  if (reason) throw new Error(`containerd cannot run here: ${reason}`);
  installExitHook();
  // Short paths: unix socket paths are limited to 108 bytes.
  const dir = mkdtempSync(join(tmpdir(), 'ctrd-'));
  const socket = join(dir, 'containerd.sock');
  const logDir = join(dir, 'pods');
  const logFile = join(dir, 'containerd.log');
  const cgroupParent = `/platform-test-${randomBytes(4).toString('hex')}`;
  mkdirSync(join(dir, 'cni', 'net.d'), { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const config = join(dir, 'config.toml');
  writeFileSync(config, configToml(dir));
  const fd = openSync(logFile, 'a');
  const proc = spawn(which('containerd')!, ['--config', config], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  // Cgroups to remove at the end: ours, and the parents of pods created by others (the agent's `/platform/pod<uid>`).
  const cgroups = new Set([cgroupParent]);
  const entry = { proc, dir, cgroups, socket };
  runningDaemons.add(entry);
  let exited = false;
  const exitPromise = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      exited = true;
      resolve();
    }),
  );

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (!exited) {
      // Pods first: shims and containers outlive containerd.
      let client: CriClient | undefined;
      try {
        client = await CriClient.connect({ endpoint: `unix://${socket}`, timeoutMs: 15000, connectTimeoutMs: 2000 });
        for (const c of await client.listContainers()) {
          await client.stopContainer(c.id, 0).catch(() => undefined);
          await client.removeContainer(c.id).catch(() => undefined);
        }
        for (const s of await client.listPodSandbox()) {
          const parent = await sandboxCgroupParent(client, s.id);
          if (parent && parent !== '/' && !parent.includes('..')) cgroups.add(parent);
          await client.stopPodSandbox(s.id).catch(() => undefined);
          await client.removePodSandbox(s.id).catch(() => undefined);
        }
      } catch {
        // containerd is not answering: the leftovers are killed below
      } finally {
        client?.close();
      }
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exitPromise;
      clearTimeout(timer);
    }
    runningDaemons.delete(entry);
    cleanupLeftovers(dir, socket, cgroups);
  };

  const importImages = (archive: string): void => {
    execFileSync(which('ctr')!, ['-a', socket, '-n', 'k8s.io', 'images', 'import', archive], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 60000,
    });
  };

  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 30000);
    for (;;) {
      if (exited) throw new Error(`containerd exited at start: ${tail(logFile)}`);
      if (existsSync(socket)) {
        try {
          const c = await CriClient.connect({ endpoint: `unix://${socket}`, timeoutMs: 2000 });
          c.close();
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
        }
      }
      if (Date.now() > deadline) throw new Error(`containerd did not answer in time: ${tail(logFile)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    if (options.images !== false) importImages(buildTestImages());
  } catch (err) {
    await stop();
    throw err;
  }
  const trackCgroups = (...paths: string[]): void => {
    for (const p of paths) if (p.startsWith('/') && p !== '/' && !p.includes('..')) cgroups.add(p);
  };
  return {
    dir,
    socket,
    endpoint: `unix://${socket}`,
    cgroupParent,
    logDir,
    logFile,
    pid: proc.pid ?? 0,
    // Shims are started with `-address <socket>`; containerd's own command line names its config file only.
    shimPids: () => pidsWithCmdline(socket),
    trackCgroups,
    importImages,
    stop,
  };
}

function tail(file: string, bytes = 2000): string {
  try {
    const t = readFileSync(file, 'utf8');
    return t.slice(-bytes);
  } catch {
    return '(no log)';
  }
}
