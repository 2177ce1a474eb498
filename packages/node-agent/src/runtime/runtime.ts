/**
 * The container runtime as the rest of the node agent sees it. It is shaped after CRI's RuntimeService and
 * ImageService (`runtime.v1alpha2`) so that `cri/` maps each method to one gRPC call, while `builtin/` (host
 * processes) and `simulated/` (no-op containers) implement the same contract. Nothing outside `runtime/` looks behind
 * this interface: pod workers decide what to do from `listPodSandboxes`/`listContainers`/`containerStatus` (the runtime
 * is the truth, see pods/), then act through the other methods.
 *
 * Conventions:
 * - Every timestamp here is milliseconds since the epoch (`number`), 0 meaning "not set". CRI carries nanoseconds;
 *   `cri/` divides by 1e6.
 * - Ids are opaque strings chosen by the runtime.
 * - Every method may throw. A `RuntimeError` with `code: 'NotFound'` means the sandbox, container or image does not
 *   exist (callers treat it as already removed when removing or stopping); other errors are transient unless their
 *   code says otherwise, and the caller retries on its next sync.
 * - `stop*` and `remove*` are idempotent: stopping a stopped container or removing an absent one succeeds.
 * - Methods honour `signal` when given (the agent's `--runtime-request-timeout`); an aborted call throws.
 */

/** Key/value pairs as CRI carries them (labels, annotations). */
export type StringMap = Record<string, string>;

/** Version of the runtime (CRI `VersionResponse`). */
export interface RuntimeVersion {
  /** Version of the runtime API the agent speaks with it, e.g. `0.1.0`. */
  version: string;
  /** Name of the runtime, e.g. `containerd` or `builtin`; goes into the node's `containerRuntimeVersion`. */
  runtimeName: string;
  /** Version of the runtime, e.g. `1.6.20`. */
  runtimeVersion: string;
  /** API version of the runtime, e.g. `v1alpha2`. */
  runtimeApiVersion: string;
}

/** One condition of the runtime (CRI `RuntimeCondition`); `RuntimeReady` and `NetworkReady` are the required ones. */
export interface RuntimeCondition {
  type: 'RuntimeReady' | 'NetworkReady' | string;
  status: boolean;
  reason?: string;
  message?: string;
}

/** Status of the runtime (CRI `StatusResponse`). */
export interface RuntimeStatus {
  conditions: RuntimeCondition[];
}

/** Linux namespace mode of a sandbox or container (CRI `NamespaceMode`). */
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE';

/** Port a container exposes (CRI `PortMapping`). */
export interface PortMapping {
  protocol: 'TCP' | 'UDP' | 'SCTP';
  containerPort: number;
  hostPort?: number;
  hostIp?: string;
}

/** DNS configuration of a sandbox (CRI `DNSConfig`). */
export interface DnsConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/** Linux resources of a container or sandbox (CRI `LinuxContainerResources`); absent fields mean "no limit". */
export interface LinuxResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
  cpusetCpus?: string;
}

/** Configuration of a pod sandbox (CRI `PodSandboxConfig`). */
export interface PodSandboxConfig {
  metadata: { name: string; namespace: string; uid: string; attempt: number };
  /** Host name inside the sandbox; empty for host-network pods (containerd refuses it without a UTS namespace). */
  hostname?: string;
  /** Absolute directory where the runtime writes container logs (`<root>/pods/<ns>_<name>_<uid>/`). */
  logDirectory: string;
  dnsConfig?: DnsConfig;
  portMappings?: PortMapping[];
  labels: StringMap;
  annotations: StringMap;
  linux?: {
    cgroupParent?: string;
    sysctls?: StringMap;
    securityContext?: {
      namespaceOptions?: { network?: NamespaceMode; pid?: NamespaceMode; ipc?: NamespaceMode };
      runAsUser?: number;
      runAsGroup?: number;
      supplementalGroups?: number[];
      readonlyRootfs?: boolean;
      privileged?: boolean;
      seccompProfilePath?: string;
    };
    /** Overhead or total resources of the pod, when the runtime wants them. */
    resources?: LinuxResources;
  };
}

/** State of a sandbox (CRI `PodSandboxState`). */
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

/** A sandbox as listed (CRI `PodSandbox`). */
export interface PodSandbox {
  id: string;
  metadata: PodSandboxConfig['metadata'];
  state: PodSandboxState;
  /** Milliseconds since the epoch. */
  createdAt: number;
  labels: StringMap;
  annotations: StringMap;
}

/** Status of a sandbox (CRI `PodSandboxStatus`). */
export interface PodSandboxStatus extends PodSandbox {
  /** The pod's primary IP; the node IP for host-network pods, empty when the runtime has no network. */
  ip?: string;
  additionalIps?: string[];
  network?: NamespaceMode;
}

/** Filter of `listPodSandboxes` (CRI `PodSandboxFilter`); every given field must match. */
export interface PodSandboxFilter {
  id?: string;
  state?: PodSandboxState;
  labelSelector?: StringMap;
}

/** A mount of a container (CRI `Mount`). `hostPath` is a path on the node that the runtime makes visible. */
export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
  selinuxRelabel?: boolean;
  propagation?: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
}

/** Configuration of a container (CRI `ContainerConfig`). */
export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  /** Image reference as the pod spec names it (after the image was pulled, its id or the same name). */
  image: string;
  /** Entrypoint; empty means the image's (the builtin runtime has no image: it refuses an empty command). */
  command: string[];
  args: string[];
  workingDir?: string;
  envs: Array<{ key: string; value: string }>;
  mounts: Mount[];
  labels: StringMap;
  annotations: StringMap;
  /** Path of the log file relative to the sandbox's `logDirectory`, e.g. `<container>/<attempt>.log`. */
  logPath: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: {
    resources?: LinuxResources;
    securityContext?: {
      runAsUser?: number;
      runAsUsername?: string;
      runAsGroup?: number;
      supplementalGroups?: number[];
      privileged?: boolean;
      readonlyRootfs?: boolean;
      noNewPrivs?: boolean;
      capabilities?: { addCapabilities: string[]; dropCapabilities: string[] };
      namespaceOptions?: { network?: NamespaceMode; pid?: NamespaceMode; ipc?: NamespaceMode };
    };
  };
}

/** State of a container (CRI `ContainerState`). */
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

/** A container as listed (CRI `Container`). */
export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerConfig['metadata'];
  image: string;
  /** Image id the container runs (`imageID` of the pod's container status). */
  imageRef: string;
  state: ContainerState;
  /** Milliseconds since the epoch. */
  createdAt: number;
  labels: StringMap;
  annotations: StringMap;
}

/** Status of a container (CRI `ContainerStatus`). Times are milliseconds since the epoch, 0 when not reached. */
export interface ContainerStatus extends Container {
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  /** Short CamelCase reason, e.g. `Completed`, `Error`, `OOMKilled`. */
  reason?: string;
  message?: string;
  /** Absolute path of the container's log file. */
  logPath: string;
}

/** Filter of `listContainers` (CRI `ContainerFilter`); every given field must match. */
export interface ContainerFilter {
  id?: string;
  podSandboxId?: string;
  state?: ContainerState;
  labelSelector?: StringMap;
}

/** Result of `execSync` (CRI `ExecSyncResponse`). */
export interface ExecSyncResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

/** Streams of an exec or attach session served by the agent itself (the builtin runtime). */
export interface StreamOptions {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  tty?: boolean;
  /** Terminal size changes, when `tty`. */
  resize?: AsyncIterable<{ width: number; height: number }>;
  signal?: AbortSignal;
}

/** Request of `exec`/`getExecUrl` (CRI `ExecRequest`). */
export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** Request of `attach`/`getAttachUrl` (CRI `AttachRequest`). */
export interface AttachRequest {
  containerId: string;
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** Request of `getPortForwardUrl` (CRI `PortForwardRequest`). */
export interface PortForwardRequest {
  podSandboxId: string;
  ports: number[];
}

/** An image reference with optional credentials (CRI `ImageSpec` + `AuthConfig`). */
export interface ImageSpec {
  image: string;
  annotations?: StringMap;
}

/** Registry credentials for a pull (CRI `AuthConfig`). */
export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

/** An image known to the runtime (CRI `Image`). */
export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  /** Size in bytes. */
  size: number;
  uid?: number;
  username?: string;
}

/** Usage of the image filesystem (CRI `FilesystemUsage`). */
export interface FilesystemUsage {
  /** Milliseconds since the epoch. */
  timestamp: number;
  mountpoint: string;
  usedBytes: number;
  inodesUsed?: number;
}

/** Filter of `listContainerStats` (CRI `ContainerStatsFilter`); every given field must match. */
export interface ContainerStatsFilter {
  id?: string;
  podSandboxId?: string;
  labelSelector?: StringMap;
}

/**
 * Usage of one running container (CRI `ContainerStats`), what the agent's `/metrics/resource` reports. A value the
 * runtime could not read is absent; each carries the time (ms since the epoch) it was read at.
 */
export interface ContainerStats {
  id: string;
  metadata: ContainerConfig['metadata'];
  /** The container's labels (the agent's pod and container labels among them). */
  labels: StringMap;
  /** Cumulative CPU time of the container's processes, in nanoseconds of one core. */
  cpu?: { timestamp: number; usageCoreNanoSeconds: number };
  /** Working set: memory in use minus inactive file pages, in bytes. */
  memory?: { timestamp: number; workingSetBytes: number };
}

/** Options of calls that may be cancelled. */
export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * The runtime contract. `cri/` implements it over gRPC, `builtin/` with host processes, `simulated/` in memory.
 * One instance serves one node; it is safe to call concurrently for different sandboxes and containers.
 */
export interface Runtime {
  /** Short name shown in logs and in the node's `containerRuntimeVersion` (`builtin`, `remote`, `simulated`). */
  readonly name: string;

  /** Connects (for a remote runtime) and checks it answers; called once before anything else. */
  start?(signal?: AbortSignal): Promise<void>;
  /** Releases connections and supervisors; containers keep running unless the runtime cannot outlive the agent. */
  close?(): Promise<void>;

  // --- RuntimeService: runtime ---

  /** Versions of the runtime (CRI `Version`). */
  version(o?: CallOptions): Promise<RuntimeVersion>;
  /** Conditions of the runtime (CRI `Status`); the node is not Ready while `RuntimeReady` is false. */
  status(o?: CallOptions): Promise<RuntimeStatus>;

  // --- RuntimeService: sandboxes ---

  /**
   * Creates and starts a sandbox for a pod (CRI `RunPodSandbox`) and returns its id. `runtimeHandler` selects a
   * RuntimeClass handler (empty = default). Throws when the configuration cannot be honoured (e.g. host namespaces
   * refused by the builtin runtime); the error's message is shown in the pod's events.
   */
  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string, o?: CallOptions): Promise<string>;
  /** Stops every container of the sandbox and the sandbox itself (CRI `StopPodSandbox`); idempotent. */
  stopPodSandbox(sandboxId: string, o?: CallOptions): Promise<void>;
  /** Removes a sandbox and its containers, stopping them first if needed (CRI `RemovePodSandbox`); idempotent. */
  removePodSandbox(sandboxId: string, o?: CallOptions): Promise<void>;
  /** Status of a sandbox (CRI `PodSandboxStatus`); throws NotFound when absent. */
  podSandboxStatus(sandboxId: string, o?: CallOptions): Promise<PodSandboxStatus>;
  /** Sandboxes matching the filter (CRI `ListPodSandbox`). */
  listPodSandboxes(filter?: PodSandboxFilter, o?: CallOptions): Promise<PodSandbox[]>;

  // --- RuntimeService: containers ---

  /**
   * Creates a container in a sandbox without starting it (CRI `CreateContainer`) and returns its id. The
   * `sandboxConfig` is the one given to `runPodSandbox`. A `RuntimeError` with code `CreateContainerConfigError` means
   * the configuration can never work (e.g. the builtin runtime given no command); the pod worker reports it as the
   * container's waiting reason and does not retry until the pod changes.
   */
  createContainer(
    sandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
    o?: CallOptions,
  ): Promise<string>;
  /** Starts a created container (CRI `StartContainer`). */
  startContainer(containerId: string, o?: CallOptions): Promise<void>;
  /**
   * Stops a running container (CRI `StopContainer`): the stop signal (SIGTERM), then after `timeoutSeconds` SIGKILL.
   * `timeoutSeconds` 0 kills at once. Resolves when the container has exited; idempotent.
   */
  stopContainer(containerId: string, timeoutSeconds: number, o?: CallOptions): Promise<void>;
  /** Removes a container, killing it if it still runs (CRI `RemoveContainer`); idempotent. */
  removeContainer(containerId: string, o?: CallOptions): Promise<void>;
  /** Containers matching the filter (CRI `ListContainers`), exited ones included until removed. */
  listContainers(filter?: ContainerFilter, o?: CallOptions): Promise<Container[]>;
  /** Status of a container (CRI `ContainerStatus`); throws NotFound when absent. */
  containerStatus(containerId: string, o?: CallOptions): Promise<ContainerStatus>;
  /**
   * Usage of the running containers matching the filter (CRI `ListContainerStats`); exited containers are left out.
   * Optional: a runtime without it reports no container metrics.
   */
  listContainerStats?(filter?: ContainerStatsFilter, o?: CallOptions): Promise<ContainerStats[]>;
  /** Updates the resources of a running container (CRI `UpdateContainerResources`); optional. */
  updateContainerResources?(containerId: string, resources: LinuxResources, o?: CallOptions): Promise<void>;
  /** Asks the runtime to reopen the container's log file after rotation (CRI `ReopenContainerLog`); optional. */
  reopenContainerLog?(containerId: string, o?: CallOptions): Promise<void>;

  // --- RuntimeService: exec, attach, port-forward ---

  /**
   * Runs a command in a running container and waits for it (CRI `ExecSync`), for exec probes and hooks.
   * `timeoutSeconds` 0 means no time-out; on time-out it throws a `RuntimeError` with code `DeadlineExceeded`.
   */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number, o?: CallOptions): Promise<ExecSyncResult>;
  /**
   * Streaming exec. A runtime with its own streaming server (CRI) returns a URL the agent's server proxies to
   * (`getExec`); a runtime without one (builtin) implements `exec` directly on the given streams and resolves with
   * the exit code. A runtime implements at least one of the two; likewise `getAttach`/`attach` and
   * `getPortForward`/`portForward`.
   */
  getExec?(req: ExecRequest, o?: CallOptions): Promise<{ url: string }>;
  exec?(req: ExecRequest, streams: StreamOptions): Promise<number>;
  getAttach?(req: AttachRequest, o?: CallOptions): Promise<{ url: string }>;
  attach?(req: AttachRequest, streams: StreamOptions): Promise<void>;
  getPortForward?(req: PortForwardRequest, o?: CallOptions): Promise<{ url: string }>;
  /** Connects `stream` to `port` inside the sandbox's network (on 127.0.0.1 for the builtin runtime). */
  portForward?(podSandboxId: string, port: number, stream: NodeJS.ReadWriteStream): Promise<void>;

  // --- ImageService ---

  /** The image if present (CRI `ImageStatus`), `undefined` when absent. Callers ask this before pulling. */
  imageStatus(image: ImageSpec, o?: CallOptions): Promise<Image | undefined>;
  /** Pulls an image (CRI `PullImage`) and returns its reference (image id). Errors become `ErrImagePull`. */
  pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, o?: CallOptions): Promise<string>;
  /** Images known to the runtime (CRI `ListImages`). */
  listImages(filter?: { image?: ImageSpec }, o?: CallOptions): Promise<Image[]>;
  /** Removes an image (CRI `RemoveImage`); idempotent. */
  removeImage(image: ImageSpec, o?: CallOptions): Promise<void>;
  /** Usage of the filesystems that hold images (CRI `ImageFsInfo`). */
  imageFsInfo(o?: CallOptions): Promise<FilesystemUsage[]>;
}

/** Codes a `RuntimeError` may carry. */
export type RuntimeErrorCode =
  | 'NotFound'
  | 'DeadlineExceeded'
  | 'Unavailable'
  | 'CreateContainerConfigError'
  | 'CreateContainerError'
  | 'RunContainerError'
  | 'ErrImagePull'
  | 'Unknown';

const RUNTIME_ERROR = Symbol.for('platform.node-agent.RuntimeError');

/** An error of a runtime call with a code callers branch on (`isRuntimeError(err, 'NotFound')`). */
export class RuntimeError extends Error {
  readonly [RUNTIME_ERROR] = true;
  constructor(
    readonly code: RuntimeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeError';
  }
}

/** Brand check (works across module copies); with `code`, also checks the code. */
export function isRuntimeError(err: unknown, code?: RuntimeErrorCode): err is RuntimeError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as Record<symbol, unknown>)[RUNTIME_ERROR] === true &&
    (code === undefined || (err as RuntimeError).code === code)
  );
}

/** Labels the agent puts on sandboxes and containers so that relisting the runtime finds the pod they belong to. */
export const LABEL_POD_NAME = 'io.platform.pod.name';
export const LABEL_POD_NAMESPACE = 'io.platform.pod.namespace';
export const LABEL_POD_UID = 'io.platform.pod.uid';
export const LABEL_CONTAINER_NAME = 'io.platform.container.name';
/** Annotations the agent keeps on containers (restart count, termination message path, pod's grace period...). */
export const ANNOTATION_CONTAINER_HASH = 'io.platform.container.hash';
export const ANNOTATION_RESTART_COUNT = 'io.platform.container.restartCount';
export const ANNOTATION_TERMINATION_GRACE = 'io.platform.pod.terminationGracePeriod';
