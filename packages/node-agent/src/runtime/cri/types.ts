/**
 * The CRI messages the agent uses, as the client (client.ts) hands them over: plain objects with the field names of
 * the .proto (snake_case), enums and int64s as strings and defaults filled in (what @grpc/proto-loader's `keepCase`,
 * `enums: String`, `longs: String`, `defaults: true` give). runtime.v1 and runtime.v1alpha2 share every field used
 * here (same names and numbers), so one set of types serves both. int64 fields are decimal strings on the way out
 * (nanosecond timestamps do not fit a double) and may be numbers or strings on the way in.
 */

/** An int64 as the client returns it (a decimal string). */
export type Int64 = string;
/** An int64 as a request may carry it. */
export type Int64In = number | string;

export interface KeyValue {
  key: string;
  value: string;
}

export interface VersionResponse {
  version: string;
  runtime_name: string;
  runtime_version: string;
  runtime_api_version: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
  info: Record<string, string>;
}

export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
  target_id?: string;
}

export interface PortMapping {
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  container_port?: number;
  host_port?: number;
  host_ip?: string;
}

export interface DNSConfig {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt?: number;
}

export interface LinuxSandboxSecurityContext {
  namespace_options?: NamespaceOption;
  run_as_user?: { value: Int64In } | null;
  run_as_group?: { value: Int64In } | null;
  readonly_rootfs?: boolean;
  supplemental_groups?: Int64In[];
  privileged?: boolean;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  /** Leave empty for host-network pods: containerd refuses a hostname without a private UTS namespace. */
  hostname?: string;
  /** Absolute directory of the pod's container logs. */
  log_directory?: string;
  dns_config?: DNSConfig;
  port_mappings?: PortMapping[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  linux?: {
    cgroup_parent?: string;
    security_context?: LinuxSandboxSecurityContext;
    sysctls?: Record<string, string>;
  };
}

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState } | null;
  label_selector?: Record<string, string>;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  created_at: Int64;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtime_handler: string;
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  created_at: Int64;
  network: { ip: string; additional_ips: { ip: string }[] } | null;
  linux: { namespaces: { options: NamespaceOption | null } | null } | null;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtime_handler: string;
}

export interface PodSandboxStatusResponse {
  status: PodSandboxStatus | null;
  info: Record<string, string>;
}

export interface ImageSpec {
  image: string;
  annotations?: Record<string, string>;
}

export interface Mount {
  container_path: string;
  host_path: string;
  readonly?: boolean;
  selinux_relabel?: boolean;
  propagation?: 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';
}

export interface LinuxContainerResources {
  cpu_period?: Int64In;
  cpu_quota?: Int64In;
  cpu_shares?: Int64In;
  memory_limit_in_bytes?: Int64In;
  oom_score_adj?: Int64In;
  cpuset_cpus?: string;
  cpuset_mems?: string;
}

export interface LinuxContainerSecurityContext {
  capabilities?: { add_capabilities?: string[]; drop_capabilities?: string[] };
  privileged?: boolean;
  namespace_options?: NamespaceOption;
  run_as_user?: { value: Int64In } | null;
  run_as_group?: { value: Int64In } | null;
  run_as_username?: string;
  readonly_rootfs?: boolean;
  supplemental_groups?: Int64In[];
  no_new_privs?: boolean;
}

export interface ContainerMetadata {
  name: string;
  attempt?: number;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command?: string[];
  args?: string[];
  working_dir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Relative to the sandbox's log_directory. */
  log_path?: string;
  stdin?: boolean;
  stdin_once?: boolean;
  tty?: boolean;
  linux?: { resources?: LinuxContainerResources; security_context?: LinuxContainerSecurityContext };
}

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState } | null;
  pod_sandbox_id?: string;
  label_selector?: Record<string, string>;
}

export interface Container {
  id: string;
  pod_sandbox_id: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  image_ref: string;
  state: ContainerState;
  created_at: Int64;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata;
  state: ContainerState;
  created_at: Int64;
  started_at: Int64;
  finished_at: Int64;
  exit_code: number;
  image: ImageSpec;
  image_ref: string;
  reason: string;
  message: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  mounts: Mount[];
  log_path: string;
}

export interface ContainerStatusResponse {
  status: ContainerStatus | null;
  info: Record<string, string>;
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exit_code: number;
}

export interface ExecRequest {
  container_id: string;
  cmd: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

export interface AttachRequest {
  container_id: string;
  stdin?: boolean;
  tty?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

export interface PortForwardRequest {
  pod_sandbox_id: string;
  port?: number[];
}

export interface ContainerStats {
  attributes: { id: string; metadata: ContainerMetadata; labels: Record<string, string> } | null;
  cpu: { timestamp: Int64; usage_core_nano_seconds: { value: Int64 } | null } | null;
  memory: { timestamp: Int64; working_set_bytes: { value: Int64 } | null } | null;
  writable_layer: { used_bytes: { value: Int64 } | null } | null;
}

export interface Image {
  id: string;
  repo_tags: string[];
  repo_digests: string[];
  size: Int64;
  uid: { value: Int64 } | null;
  username: string;
  spec: ImageSpec | null;
  pinned?: boolean;
}

export interface ImageStatusResponse {
  /** null when the image is not present. */
  image: Image | null;
  info: Record<string, string>;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  server_address?: string;
  identity_token?: string;
  registry_token?: string;
}

export interface FilesystemUsage {
  timestamp: Int64;
  fs_id: { mountpoint: string } | null;
  used_bytes: { value: Int64 } | null;
  inodes_used: { value: Int64 } | null;
}

export interface ImageFsInfoResponse {
  image_filesystems: FilesystemUsage[];
}
