/**
 * The `remote` runtime: the agent's `Runtime` over CRI (containerd 1.6 serves runtime.v1 and v1alpha2; v1 is used
 * when served). Each method is one gRPC call: CRI's snake_case messages are translated to and from the Runtime's
 * camelCase types, nanosecond timestamps become milliseconds, and gRPC errors become `RuntimeError`s (NOT_FOUND →
 * `NotFound`, a failed pull → `ErrImagePull`, a failed create → `CreateContainerError`, a failed start →
 * `RunContainerError`). `stop*`/`remove*` treat NotFound as done. Exec, attach and port-forward are served by the
 * runtime's own streaming server: `getExec`/`getAttach`/`getPortForward` return its URL for the agent's server to
 * proxy to. The sandbox image (`--pod-infra-container-image`) is configured on the runtime's side (containerd's
 * `sandbox_image`); the agent keeps it here only so that image garbage collection never removes it.
 */
import * as grpc from '@grpc/grpc-js';
import { type Logger } from '@platform/common';

import {
  RuntimeError,
  type AttachRequest,
  type AuthConfig,
  type CallOptions,
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerStats,
  type ContainerStatsFilter,
  type ContainerStatus,
  type ExecRequest,
  type ExecSyncResult,
  type FilesystemUsage,
  type Image,
  type ImageSpec,
  type LinuxResources,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStatus,
  type PortForwardRequest,
  type Runtime,
  type RuntimeErrorCode,
  type RuntimeStatus,
  type RuntimeVersion,
  type StreamOptions,
} from '../runtime';
import { CriClient, CriError, type CriApiVersion } from './client';
import { forwardSession, streamSession } from './streaming';
import type * as T from './types';

/** Options of `CriRuntime`. */
export interface CriRuntimeOptions {
  /** `--container-runtime-endpoint`, e.g. `unix:///run/containerd/containerd.sock`. */
  endpoint: string;
  /** `--image-service-endpoint`; the runtime's endpoint when empty. */
  imageEndpoint?: string;
  /** `--runtime-request-timeout`, ms (2 minutes by default). */
  requestTimeoutMs?: number;
  /** Deadline of one image pull, ms; 0 (default) for none. */
  pullTimeoutMs?: number;
  /** `--pod-infra-container-image`: never garbage-collected. */
  sandboxImage?: string;
  /** The node's IP (`--node-ip`): the IP of host-network sandboxes, for which the runtime reports none. */
  nodeIp?: string;
  /** Force the CRI version (default: v1 when served, else v1alpha2). */
  apiVersion?: CriApiVersion;
  /** How long `start` waits for the socket, ms. Default: the request timeout. */
  connectTimeoutMs?: number;
  /**
   * Where each CRI call is logged at verbosity 10 with its wall time, as the kubelet's remote runtime logs its calls
   * (`--v=10`, or `--vmodule=cri-runtime=10` for these lines alone).
   */
  log?: Logger;
}

/** Nanoseconds (int64 as a decimal string) to milliseconds. */
export function nanosToMillis(ns: string | number | undefined | null): number {
  if (ns === undefined || ns === null || ns === '' || ns === '0' || ns === 0) return 0;
  try {
    return Number(BigInt(ns) / 1_000_000n);
  } catch {
    return 0;
  }
}

function int64(v: string | number | undefined | null): number {
  if (v === undefined || v === null || v === '') return 0;
  return Number(v);
}

/** Maps a CRI error to a RuntimeError; `fallback` is the code of a failure that is not NotFound/time-out/unavailable. */
export function toRuntimeError(err: unknown, fallback: RuntimeErrorCode = 'Unknown'): RuntimeError {
  if (err instanceof RuntimeError) return err;
  if (err instanceof CriError) {
    let code: RuntimeErrorCode = fallback;
    if (fallback === 'ErrImagePull') code = 'ErrImagePull';
    else if (err.code === grpc.status.NOT_FOUND) code = 'NotFound';
    else if (err.code === grpc.status.DEADLINE_EXCEEDED) code = 'DeadlineExceeded';
    else if (err.code === grpc.status.UNAVAILABLE) code = 'Unavailable';
    else if (fallback === 'Unknown' && /: not found$/.test(err.details)) code = 'NotFound';
    return new RuntimeError(code, err.message);
  }
  return new RuntimeError(fallback, err instanceof Error ? err.message : String(err));
}

function resources(r: LinuxResources | undefined): T.LinuxContainerResources | undefined {
  if (!r) return undefined;
  return {
    cpu_period: r.cpuPeriod,
    cpu_quota: r.cpuQuota,
    cpu_shares: r.cpuShares,
    memory_limit_in_bytes: r.memoryLimitInBytes,
    oom_score_adj: r.oomScoreAdj,
    cpuset_cpus: r.cpusetCpus,
  };
}

function int64Value(v: number | undefined): { value: number } | null {
  return v === undefined ? null : { value: v };
}

/** The Runtime's sandbox configuration as CRI's. */
export function toCriSandboxConfig(c: PodSandboxConfig): T.PodSandboxConfig {
  const sc = c.linux?.securityContext;
  const hostNetwork = sc?.namespaceOptions?.network === 'NODE';
  return {
    metadata: { ...c.metadata },
    // containerd refuses a hostname without a private UTS namespace.
    hostname: hostNetwork ? '' : (c.hostname ?? ''),
    log_directory: c.logDirectory,
    dns_config: c.dnsConfig,
    port_mappings: c.portMappings?.map((p) => ({
      protocol: p.protocol,
      container_port: p.containerPort,
      host_port: p.hostPort,
      host_ip: p.hostIp,
    })),
    labels: c.labels,
    annotations: c.annotations,
    linux: c.linux && {
      cgroup_parent: c.linux.cgroupParent,
      sysctls: c.linux.sysctls,
      security_context: sc && {
        namespace_options: sc.namespaceOptions && {
          network: sc.namespaceOptions.network ?? 'POD',
          pid: sc.namespaceOptions.pid ?? 'CONTAINER',
          ipc: sc.namespaceOptions.ipc ?? 'POD',
        },
        run_as_user: int64Value(sc.runAsUser),
        run_as_group: int64Value(sc.runAsGroup),
        supplemental_groups: sc.supplementalGroups,
        readonly_rootfs: sc.readonlyRootfs,
        privileged: sc.privileged,
      },
    },
  };
}

/** The Runtime's container configuration as CRI's. */
export function toCriContainerConfig(c: ContainerConfig): T.ContainerConfig {
  const sc = c.linux?.securityContext;
  return {
    metadata: { ...c.metadata },
    image: { image: c.image },
    command: c.command,
    args: c.args,
    working_dir: c.workingDir,
    envs: c.envs,
    mounts: c.mounts.map((m) => ({
      container_path: m.containerPath,
      host_path: m.hostPath,
      readonly: m.readonly,
      selinux_relabel: m.selinuxRelabel,
      propagation: m.propagation,
    })),
    labels: c.labels,
    annotations: c.annotations,
    log_path: c.logPath,
    stdin: c.stdin,
    stdin_once: c.stdinOnce,
    tty: c.tty,
    linux: c.linux && {
      resources: resources(c.linux.resources),
      security_context: sc && {
        run_as_user: int64Value(sc.runAsUser),
        run_as_username: sc.runAsUsername,
        run_as_group: int64Value(sc.runAsGroup),
        supplemental_groups: sc.supplementalGroups,
        privileged: sc.privileged,
        readonly_rootfs: sc.readonlyRootfs,
        no_new_privs: sc.noNewPrivs,
        capabilities: sc.capabilities && {
          add_capabilities: sc.capabilities.addCapabilities,
          drop_capabilities: sc.capabilities.dropCapabilities,
        },
        namespace_options: sc.namespaceOptions,
      },
    },
  };
}

function fromSandbox(s: T.PodSandbox): PodSandbox {
  return {
    id: s.id,
    metadata: { ...s.metadata, attempt: s.metadata?.attempt ?? 0 },
    state: s.state,
    createdAt: nanosToMillis(s.created_at),
    labels: s.labels ?? {},
    annotations: s.annotations ?? {},
  };
}

function fromContainer(c: T.Container): Container {
  return {
    id: c.id,
    podSandboxId: c.pod_sandbox_id,
    metadata: { name: c.metadata?.name ?? '', attempt: c.metadata?.attempt ?? 0 },
    image: c.image?.image ?? '',
    imageRef: c.image_ref,
    state: c.state,
    createdAt: nanosToMillis(c.created_at),
    labels: c.labels ?? {},
    annotations: c.annotations ?? {},
  };
}

function fromContainerStats(st: T.ContainerStats): ContainerStats {
  const a = st.attributes!;
  const cpu = st.cpu?.usage_core_nano_seconds;
  const memory = st.memory?.working_set_bytes;
  // A runtime that leaves the time out: the time of this reading.
  const at = (ns: T.Int64 | undefined): number => nanosToMillis(ns) || Date.now();
  return {
    id: a.id,
    metadata: { name: a.metadata?.name ?? '', attempt: a.metadata?.attempt ?? 0 },
    labels: a.labels ?? {},
    ...(st.cpu && cpu ? { cpu: { timestamp: at(st.cpu.timestamp), usageCoreNanoSeconds: int64(cpu.value) } } : {}),
    ...(st.memory && memory
      ? { memory: { timestamp: at(st.memory.timestamp), workingSetBytes: int64(memory.value) } }
      : {}),
  };
}

function fromImage(i: T.Image): Image {
  const uid = i.uid ? int64(i.uid.value) : undefined;
  return {
    id: i.id,
    repoTags: i.repo_tags ?? [],
    repoDigests: i.repo_digests ?? [],
    size: int64(i.size),
    ...(uid !== undefined ? { uid } : {}),
    ...(i.username ? { username: i.username } : {}),
  };
}

/** The `remote` runtime over CRI. */
export class CriRuntime implements Runtime {
  readonly name = 'remote';
  private clientPromise: Promise<CriClient> | undefined;
  private client: CriClient | undefined;
  /** Sandbox of each container this agent created or listed (CRI's ContainerStatus does not carry it). */
  private readonly sandboxOf = new Map<string, string>();

  /** Logs a call (undefined when verbosity 10 is off here: no per-call cost then). */
  private readonly callLog?: (rpc: string, ms: number, code: grpc.status) => void;

  constructor(private readonly options: CriRuntimeOptions) {
    const v = options.log?.v(10);
    if (v?.enabled)
      this.callLog = (rpc, ms, code) =>
        v.info('CRI call', { rpc, ms: Math.round(ms * 10) / 10, code: grpc.status[code] });
  }

  /** The sandbox image that image garbage collection must keep. */
  get sandboxImage(): string | undefined {
    return this.options.sandboxImage;
  }

  /** The CRI version in use (after `start`). */
  get apiVersion(): CriApiVersion | undefined {
    return this.client?.apiVersion;
  }

  async start(): Promise<void> {
    await this.cri();
  }

  async close(): Promise<void> {
    const p = this.clientPromise;
    this.clientPromise = undefined;
    this.client = undefined;
    if (p) (await p.catch(() => undefined))?.close();
  }

  /** The connected client (connecting on first use; a failed connection is retried on the next call). */
  private cri(): Promise<CriClient> {
    if (!this.clientPromise) {
      const p = CriClient.connect({
        endpoint: this.options.endpoint,
        imageEndpoint: this.options.imageEndpoint || undefined,
        timeoutMs: this.options.requestTimeoutMs ?? 120_000,
        pullTimeoutMs: this.options.pullTimeoutMs ?? 0,
        apiVersion: this.options.apiVersion,
        connectTimeoutMs: this.options.connectTimeoutMs,
        ...(this.callLog ? { onCall: this.callLog } : {}),
      });
      this.clientPromise = p;
      p.then(
        (c) => {
          this.client = c;
        },
        () => {
          if (this.clientPromise === p) this.clientPromise = undefined;
        },
      );
    }
    return this.clientPromise.catch((err: unknown) => {
      throw toRuntimeError(err, 'Unavailable');
    });
  }

  private async run<R>(
    fallback: RuntimeErrorCode,
    f: (c: CriClient) => Promise<R>,
    okIfNotFound?: () => R,
  ): Promise<R> {
    const c = await this.cri();
    try {
      return await f(c);
    } catch (err) {
      const e = toRuntimeError(err, fallback);
      if (okIfNotFound && e.code === 'NotFound') return okIfNotFound();
      throw e;
    }
  }

  // ---- runtime ----

  version(o: CallOptions = {}): Promise<RuntimeVersion> {
    return this.run('Unknown', async (c) => {
      const v = await c.version(o);
      return {
        version: v.version,
        runtimeName: v.runtime_name,
        runtimeVersion: v.runtime_version,
        runtimeApiVersion: v.runtime_api_version,
      };
    });
  }

  status(o: CallOptions = {}): Promise<RuntimeStatus> {
    return this.run('Unknown', async (c) => {
      const s = await c.status(false, o);
      return {
        conditions: (s.status?.conditions ?? []).map((x) => ({
          type: x.type,
          status: x.status,
          ...(x.reason ? { reason: x.reason } : {}),
          ...(x.message ? { message: x.message } : {}),
        })),
      };
    });
  }

  // ---- sandboxes ----

  runPodSandbox(config: PodSandboxConfig, runtimeHandler = '', o: CallOptions = {}): Promise<string> {
    return this.run('Unknown', (c) => c.runPodSandbox(toCriSandboxConfig(config), runtimeHandler, o));
  }

  stopPodSandbox(sandboxId: string, o: CallOptions = {}): Promise<void> {
    return this.run(
      'Unknown',
      (c) => c.stopPodSandbox(sandboxId, o),
      () => undefined,
    );
  }

  removePodSandbox(sandboxId: string, o: CallOptions = {}): Promise<void> {
    const forget = (): void => {
      for (const [c, s] of this.sandboxOf) if (s === sandboxId) this.sandboxOf.delete(c);
    };
    return this.run(
      'Unknown',
      async (c) => {
        // containerd refuses to remove a sandbox that still runs; the contract stops it first.
        await c.stopPodSandbox(sandboxId, o);
        await c.removePodSandbox(sandboxId, o);
        forget();
      },
      forget,
    );
  }

  podSandboxStatus(sandboxId: string, o: CallOptions = {}): Promise<PodSandboxStatus> {
    return this.run('Unknown', async (c) => {
      const res = await c.podSandboxStatus(sandboxId, false, o);
      const s = res.status;
      if (!s) throw new RuntimeError('NotFound', `pod sandbox ${sandboxId} not found`);
      const network = s.linux?.namespaces?.options?.network;
      return {
        ...fromSandbox({ ...s, runtime_handler: s.runtime_handler }),
        ...(s.network?.ip
          ? { ip: s.network.ip }
          : network === 'NODE' && this.options.nodeIp
            ? { ip: this.options.nodeIp }
            : {}),
        ...(s.network?.additional_ips?.length ? { additionalIps: s.network.additional_ips.map((x) => x.ip) } : {}),
        ...(network && network !== 'TARGET' ? { network } : {}),
      };
    });
  }

  listPodSandboxes(filter?: PodSandboxFilter, o: CallOptions = {}): Promise<PodSandbox[]> {
    return this.run('Unknown', async (c) => {
      const items = await c.listPodSandbox(
        filter && {
          id: filter.id,
          state: filter.state ? { state: filter.state } : null,
          label_selector: filter.labelSelector,
        },
        o,
      );
      return items.map(fromSandbox);
    });
  }

  // ---- containers ----

  createContainer(
    sandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
    o: CallOptions = {},
  ): Promise<string> {
    return this.run('CreateContainerError', async (c) => {
      const id = await c.createContainer(sandboxId, toCriContainerConfig(config), toCriSandboxConfig(sandboxConfig), o);
      this.sandboxOf.set(id, sandboxId);
      return id;
    });
  }

  startContainer(containerId: string, o: CallOptions = {}): Promise<void> {
    return this.run('RunContainerError', (c) => c.startContainer(containerId, o));
  }

  stopContainer(containerId: string, timeoutSeconds: number, o: CallOptions = {}): Promise<void> {
    return this.run(
      'Unknown',
      (c) => c.stopContainer(containerId, Math.max(0, Math.ceil(timeoutSeconds)), o),
      () => undefined,
    );
  }

  removeContainer(containerId: string, o: CallOptions = {}): Promise<void> {
    return this.run(
      'Unknown',
      async (c) => {
        try {
          await c.removeContainer(containerId, o);
        } catch (err) {
          // containerd refuses to remove a running container; the contract kills it first.
          if (!(err instanceof CriError) || err.notFound) throw err;
          await c.stopContainer(containerId, 0, o);
          await c.removeContainer(containerId, o);
        }
        this.sandboxOf.delete(containerId);
      },
      () => {
        this.sandboxOf.delete(containerId);
      },
    );
  }

  listContainers(filter?: ContainerFilter, o: CallOptions = {}): Promise<Container[]> {
    return this.run('Unknown', async (c) => {
      const items = await c.listContainers(
        filter && {
          id: filter.id,
          pod_sandbox_id: filter.podSandboxId,
          state: filter.state ? { state: filter.state } : null,
          label_selector: filter.labelSelector,
        },
        o,
      );
      for (const i of items) this.sandboxOf.set(i.id, i.pod_sandbox_id);
      return items.map(fromContainer);
    });
  }

  /**
   * CRI `ListContainerStats`, narrowed to the running containers (`ListContainers` with the running state: the
   * runtime also reports exited ones until they are removed, as the kubelet's CRI stats provider leaves out).
   */
  listContainerStats(filter?: ContainerStatsFilter, o: CallOptions = {}): Promise<ContainerStats[]> {
    return this.run('Unknown', async (c) => {
      const [stats, running] = await Promise.all([
        c.listContainerStats(
          filter && { id: filter.id, pod_sandbox_id: filter.podSandboxId, label_selector: filter.labelSelector },
          o,
        ),
        c.listContainers({ state: { state: 'CONTAINER_RUNNING' } }, o),
      ]);
      const isRunning = new Set(running.map((r) => r.id));
      return stats.filter((st) => st.attributes && isRunning.has(st.attributes.id)).map(fromContainerStats);
    });
  }

  containerStatus(containerId: string, o: CallOptions = {}): Promise<ContainerStatus> {
    return this.run('Unknown', async (c) => {
      const res = await c.containerStatus(containerId, false, o);
      const s = res.status;
      if (!s) throw new RuntimeError('NotFound', `container ${containerId} not found`);
      let sandboxId = this.sandboxOf.get(containerId);
      if (sandboxId === undefined) {
        sandboxId = (await c.listContainers({ id: containerId }, o))[0]?.pod_sandbox_id ?? '';
        if (sandboxId) this.sandboxOf.set(containerId, sandboxId);
      }
      const base = fromContainer({
        id: s.id,
        pod_sandbox_id: sandboxId,
        metadata: s.metadata,
        image: s.image,
        image_ref: s.image_ref,
        state: s.state,
        created_at: s.created_at,
        labels: s.labels,
        annotations: s.annotations,
      });
      return {
        ...base,
        startedAt: nanosToMillis(s.started_at),
        finishedAt: nanosToMillis(s.finished_at),
        exitCode: s.exit_code,
        ...(s.reason ? { reason: s.reason } : {}),
        ...(s.message ? { message: s.message } : {}),
        logPath: s.log_path,
      };
    });
  }

  updateContainerResources(containerId: string, r: LinuxResources, o: CallOptions = {}): Promise<void> {
    return this.run('Unknown', async (c) => {
      await c.updateContainerResources(containerId, resources(r) ?? {}, o);
    });
  }

  reopenContainerLog(containerId: string, o: CallOptions = {}): Promise<void> {
    return this.run('Unknown', (c) => c.reopenContainerLog(containerId, o));
  }

  // ---- exec, attach, port-forward ----

  execSync(containerId: string, cmd: string[], timeoutSeconds: number, o: CallOptions = {}): Promise<ExecSyncResult> {
    return this.run('Unknown', async (c) => {
      try {
        const r = await c.execSync(containerId, cmd, Math.max(0, Math.ceil(timeoutSeconds)), o);
        return { stdout: Buffer.from(r.stdout ?? []), stderr: Buffer.from(r.stderr ?? []), exitCode: r.exit_code };
      } catch (err) {
        // containerd reports its own exec time-out as an unknown error "timeout <d> exceeded".
        if (err instanceof CriError && /timeout .* exceeded/i.test(err.details)) {
          throw new RuntimeError('DeadlineExceeded', err.message);
        }
        throw err;
      }
    });
  }

  getExec(req: ExecRequest, o: CallOptions = {}): Promise<{ url: string }> {
    return this.run('Unknown', async (c) => ({
      url: await c.exec(
        {
          container_id: req.containerId,
          cmd: req.cmd,
          tty: req.tty,
          stdin: req.stdin,
          stdout: req.stdout,
          stderr: req.stderr,
        },
        o,
      ),
    }));
  }

  /** Exec on plain streams, through the runtime's streaming server (WebSocket, v4.channel.k8s.io). */
  async exec(req: ExecRequest, streams: StreamOptions): Promise<number> {
    const { url } = await this.getExec(
      { ...req, stdin: req.stdin && !!streams.stdin },
      streams.signal ? { signal: streams.signal } : {},
    );
    const r = await streamSession(url, streams);
    if (r.exitCode < 0) throw new RuntimeError('Unknown', r.message ?? 'exec failed');
    return r.exitCode;
  }

  /** Attach on plain streams, through the runtime's streaming server; resolves when the session ends. */
  async attach(req: AttachRequest, streams: StreamOptions): Promise<void> {
    const { url } = await this.getAttach(
      { ...req, stdin: req.stdin && !!streams.stdin },
      streams.signal ? { signal: streams.signal } : {},
    );
    const r = await streamSession(url, streams);
    if (r.exitCode < 0 && !streams.signal?.aborted) throw new RuntimeError('Unknown', r.message ?? 'attach failed');
  }

  getAttach(req: AttachRequest, o: CallOptions = {}): Promise<{ url: string }> {
    return this.run('Unknown', async (c) => ({
      url: await c.attach(
        { container_id: req.containerId, tty: req.tty, stdin: req.stdin, stdout: req.stdout, stderr: req.stderr },
        o,
      ),
    }));
  }

  getPortForward(req: PortForwardRequest, o: CallOptions = {}): Promise<{ url: string }> {
    return this.run('Unknown', async (c) => ({
      url: await c.portForward({ pod_sandbox_id: req.podSandboxId, port: req.ports }, o),
    }));
  }

  /**
   * Forwards one connection to `port` of the sandbox through the runtime's streaming server (WebSocket,
   * `v4.channel.k8s.io`: channel 0 carries the data, 1 the errors; each opens with the port as two bytes).
   */
  async portForward(podSandboxId: string, port: number, stream: NodeJS.ReadWriteStream): Promise<void> {
    const { url } = await this.getPortForward({ podSandboxId, ports: [port] });
    await forwardSession(`${url}${url.includes('?') ? '&' : '?'}port=${port}`, stream);
  }

  // ---- images ----

  imageStatus(image: ImageSpec, o: CallOptions = {}): Promise<Image | undefined> {
    return this.run('Unknown', async (c) => {
      const i = await c.imageStatus(image.image, o);
      return i ? fromImage(i) : undefined;
    });
  }

  /** Pulls from the registry. Ask `imageStatus` first: CRI pulls even an image that is present. */
  pullImage(
    image: ImageSpec,
    auth?: AuthConfig,
    sandboxConfig?: PodSandboxConfig,
    o: CallOptions = {},
  ): Promise<string> {
    return this.run('ErrImagePull', (c) =>
      c.pullImage(
        image.image,
        auth && {
          username: auth.username,
          password: auth.password,
          auth: auth.auth,
          server_address: auth.serverAddress,
          identity_token: auth.identityToken,
          registry_token: auth.registryToken,
        },
        sandboxConfig && toCriSandboxConfig(sandboxConfig),
        o,
      ),
    );
  }

  listImages(filter?: { image?: ImageSpec }, o: CallOptions = {}): Promise<Image[]> {
    return this.run('Unknown', async (c) => (await c.listImages(filter, o)).map(fromImage));
  }

  removeImage(image: ImageSpec, o: CallOptions = {}): Promise<void> {
    return this.run(
      'Unknown',
      (c) => c.removeImage(image.image, o),
      () => undefined,
    );
  }

  imageFsInfo(o: CallOptions = {}): Promise<FilesystemUsage[]> {
    return this.run('Unknown', async (c) =>
      (await c.imageFsInfo(o)).map((f) => ({
        timestamp: nanosToMillis(f.timestamp),
        mountpoint: f.fs_id?.mountpoint ?? '',
        usedBytes: int64(f.used_bytes?.value),
        ...(f.inodes_used ? { inodesUsed: int64(f.inodes_used.value) } : {}),
      })),
    );
  }
}
