/**
 * The node agent's own options (Document 3, "Node agent options" and "Authentication"). One table describes each
 * option once: its flag, type, default, help text and, for the (D) options, its field in the `--config` file
 * (`AgentConfiguration` of `agent.config.platform/v1beta1`, the renamed KubeletConfiguration; nested fields use
 * dots, as `authentication.anonymous.enabled`). The file is read first; values given on the command line win.
 * Every invalid value, on the command line or in the file, is a startup error naming the option.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';

import { parseQuantity } from '@platform/api';
import {
  boolFlag,
  durationFlag,
  type FeatureGate,
  type FlagDef,
  floatFlag,
  formatDuration,
  intFlag,
  mapFlag,
  OptionGroupBase,
  parseBool,
  parseDuration,
  stringArrayFlag,
  stringFlag,
  stringsFlag,
} from '@platform/common';
import { load as loadYaml } from 'js-yaml';

/** A taint of `--register-with-taints`. */
export interface TaintSpec {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

const makeDefaults = () => ({
  address: '0.0.0.0',
  allowedUnsafeSysctls: [] as string[],
  bootstrapClientConfig: '',
  certDir: '/var/lib/agent/pki',
  cgroupDriver: 'cgroupfs',
  cgroupRoot: '',
  cgroupsPerQos: true,
  chaosChance: 0,
  cloudConfig: '',
  cloudProvider: '',
  cloudBRegistryConfig: '',
  clusterDns: [] as string[],
  clusterDomain: '',
  cniBinDir: '/opt/cni/bin',
  cniCacheDir: '/var/lib/cni/cache',
  cniConfDir: '/etc/cni/net.d',
  config: '',
  containerLogMaxFiles: 5,
  containerLogMaxSize: '10Mi',
  containerRuntime: 'builtin',
  containerRuntimeEndpoint: 'unix:///var/run/containerd/containerd.sock',
  builtinRuntimeEndpoint: 'unix:///var/run/builtin.sock',
  cpuCfsQuota: true,
  cpuCfsQuotaPeriod: 100,
  cpuManagerPolicy: 'none',
  cpuManagerReconcilePeriod: 10_000,
  dynamicConfigDir: '',
  enableControllerAttachDetach: true,
  enableDebuggingHandlers: true,
  enableServer: true,
  enforceNodeAllocatable: ['pods'] as string[],
  eventBurst: 10,
  eventQps: 5,
  evictionHard: new Map([
    ['imagefs.available', '15%'],
    ['memory.available', '100Mi'],
    ['nodefs.available', '10%'],
    ['nodefs.inodesFree', '5%'],
  ]) as Map<string, string>,
  evictionMaxPodGracePeriod: 0,
  evictionMinimumReclaim: new Map<string, string>(),
  evictionPressureTransitionPeriod: 300_000,
  evictionSoft: new Map<string, string>(),
  evictionSoftGracePeriod: new Map<string, string>(),
  exitOnLockContention: false,
  experimentalAllocatableIgnoreEviction: false,
  experimentalCheckNodeCapabilitiesBeforeMount: false,
  kernelMemcgNotification: false,
  experimentalLogSanitization: false,
  experimentalMounterPath: 'mount',
  failSwapOn: true,
  fileCheckFrequency: 20_000,
  hairpinMode: 'promiscuous-bridge',
  healthzBindAddress: '127.0.0.1',
  healthzPort: 10248,
  hostnameOverride: '',
  housekeepingInterval: 10_000,
  httpCheckFrequency: 20_000,
  imageCredentialProviderBinDir: '',
  imageCredentialProviderConfig: '',
  imageGcHighThreshold: 85,
  imageGcLowThreshold: 80,
  imagePullProgressDeadline: 60_000,
  imageServiceEndpoint: '',
  iptablesDropBit: 15,
  iptablesMasqueradeBit: 14,
  keepTerminatedPodVolumes: false,
  apiBurst: 10,
  apiContentType: 'application/vnd.platform.protobuf',
  apiQps: 5,
  platformReserved: new Map<string, string>(),
  platformReservedCgroup: '',
  clientConfig: '',
  agentCgroups: '',
  lockFile: '',
  makeIptablesUtilChains: true,
  manifestUrl: '',
  manifestUrlHeader: [] as string[],
  masterServiceNamespace: 'default',
  maxOpenFiles: 1_000_000,
  maxPods: 110,
  maximumDeadContainers: -1,
  maximumDeadContainersPerContainer: 1,
  minimumContainerTtlDuration: 0,
  minimumImageTtlDuration: 120_000,
  networkPlugin: '',
  networkPluginMtu: 0,
  nodeIp: '',
  nodeLabels: new Map<string, string>(),
  nodeStatusMaxImages: 50,
  nodeStatusUpdateFrequency: 10_000,
  nonMasqueradeCidr: '10.0.0.0/8',
  oomScoreAdj: -999,
  podCidr: '',
  podInfraContainerImage: 'registry.platform/pause:3.2',
  podManifestPath: '',
  podMaxPids: -1,
  podsPerCore: 0,
  port: 10250,
  protectKernelDefaults: false,
  providerId: '',
  qosReserved: new Map<string, string>(),
  readOnlyPort: 10255,
  reallyCrashForTesting: false,
  redirectContainerStreaming: false,
  registerNode: true,
  registerSchedulable: true,
  registerWithTaints: [] as TaintSpec[],
  registryBurst: 10,
  registryQps: 5,
  reservedCpus: '',
  resolvConf: '/etc/resolv.conf',
  rootDir: '/var/lib/agent',
  rotateCertificates: false,
  rotateServerCertificates: false,
  runonce: false,
  runtimeCgroups: '',
  runtimeRequestTimeout: 120_000,
  seccompProfileRoot: '/var/lib/agent/seccomp',
  serializeImagePulls: true,
  streamingConnectionIdleTimeout: 4 * 3600_000,
  syncFrequency: 60_000,
  systemCgroups: '',
  systemReserved: new Map<string, string>(),
  systemReservedCgroup: '',
  // Authentication and authorization of the agent's server.
  anonymousAuth: true,
  authenticationTokenWebhook: false,
  authenticationTokenWebhookCacheTtl: 120_000,
  authorizationMode: '',
  authorizationWebhookCacheAuthorizedTtl: 300_000,
  authorizationWebhookCacheUnauthorizedTtl: 30_000,
  clientCaFile: '',
  tlsCertFile: '',
  tlsPrivateKeyFile: '',
  // Platform additions.
  simulateNodes: 0,
  simulateNodePrefix: 'sim-node',
  builtinAllowRoot: false,
  builtinRunAsUser: 65534,
  nodeStatusReportFrequency: 300_000,
  nodeLeaseDurationSeconds: 40,
});

/** The values of the node agent's options. Durations are milliseconds. */
export type AgentValues = ReturnType<typeof makeDefaults>;

/** Every value of the node agent's own options, with Document 3's defaults. */
export function defaultAgentValues(): AgentValues {
  return makeDefaults();
}

type Kind =
  'bool' | 'string' | 'int32' | 'int' | 'float' | 'duration' | 'strings' | 'map' | 'ip' | 'taints' | 'headers';

interface Spec {
  flag: string;
  key: keyof AgentValues;
  kind: Kind;
  usage: string;
  /** Field of the configuration file: the option is (D). */
  file?: string;
  /** Deprecation message shown when the flag is used. */
  deprecated?: string;
  /** Extra check of one value; throw to reject. */
  check?: (v: never) => void;
}

const D_MSG = 'This parameter should be set via the config file specified by the --config flag.';

function oneOf(...allowed: string[]): (v: string) => void {
  return (v) => {
    if (!allowed.includes(v)) throw new Error(`must be one of ${allowed.join(', ')}`);
  };
}
function range(min: number, max: number): (v: number) => void {
  return (v) => {
    if (v < min || v > max) throw new Error(`must be between ${min} and ${max}`);
  };
}
function ipCheck(v: string): void {
  if (v !== '' && isIP(v) === 0) throw new Error('not an IP address');
}
function quantityMap(v: Map<string, string>): void {
  for (const [k, q] of v) {
    if (!['cpu', 'memory', 'ephemeral-storage', 'pid'].includes(k) && !k.startsWith('hugepages-'))
      throw new Error(`unknown resource ${JSON.stringify(k)}`);
    parseQuantity(q);
  }
}
const SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'allocatableMemory.available',
  'pid.available',
];
function thresholdMap(v: Map<string, string>): void {
  for (const [k, q] of v) {
    if (!SIGNALS.includes(k)) throw new Error(`unknown eviction signal ${JSON.stringify(k)}`);
    if (q.endsWith('%')) {
      const p = Number(q.slice(0, -1));
      if (!(p >= 0 && p <= 100)) throw new Error(`invalid percentage ${JSON.stringify(q)}`);
    } else parseQuantity(q);
  }
}
function graceMap(v: Map<string, string>): void {
  for (const [k, d] of v) {
    if (!SIGNALS.includes(k)) throw new Error(`unknown eviction signal ${JSON.stringify(k)}`);
    parseDuration(d);
  }
}
function labelsCheck(v: Map<string, string>): void {
  const bad = [...v.keys()].filter((k) => !nodeLabelAllowed(k));
  if (bad.length > 0)
    throw new Error(
      `unknown 'platform' or 'agent.platform' labels specified with --node-labels: ${JSON.stringify(bad)}; --node-labels in the 'platform' namespace must begin with an allowed prefix (agent.platform, node.platform) or be in the specifically allowed set (${[...ALLOWED_NODE_LABELS].sort().join(', ')})`,
    );
}

/** Labels in the restricted domains that a node may set on itself (Kubernetes' `kubeletapis` allowed set). */
export const ALLOWED_NODE_LABELS: ReadonlySet<string> = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);
const ALLOWED_PREFIXES = ['agent.platform', 'node.platform', 'kubelet.kubernetes.io', 'node.kubernetes.io'];
const RESTRICTED = ['platform', 'kubernetes.io', 'k8s.io'];

/** The `--node-labels` rule: labels of the `platform` (and Kubernetes) domains need an allowed prefix or name. */
export function nodeLabelAllowed(key: string): boolean {
  const i = key.indexOf('/');
  if (i < 0) return true;
  const domain = key.slice(0, i);
  const inDomain = (base: string): boolean => domain === base || domain.endsWith(`.${base}`);
  if (ALLOWED_NODE_LABELS.has(key)) return true;
  if (ALLOWED_PREFIXES.some(inDomain)) return true;
  return !RESTRICTED.some(inDomain);
}

/** Parses `signal<quantity,signal<quantity` (the form of `--eviction-hard` and `--eviction-soft`). */
export function parseThresholds(raw: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of raw.split(',').map((p) => p.trim())) {
    if (!part) continue;
    const m = /^([^<]+)<(.+)$/.exec(part);
    if (!m) throw new Error(`invalid eviction threshold ${JSON.stringify(part)} (want signal<quantity)`);
    out.set(m[1]!.trim(), m[2]!.trim());
  }
  return out;
}

/** Parses one `key=value:Effect` or `key:Effect` taint. */
export function parseTaint(s: string): TaintSpec {
  const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(s.trim());
  if (!m) throw new Error(`invalid taint spec: ${JSON.stringify(s)} (want key=value:Effect)`);
  return { key: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3] as TaintSpec['effect'] };
}

/** The table of every option of the node agent (help order). */
export const AGENT_OPTION_SPECS: readonly Spec[] = [
  {
    flag: 'address',
    key: 'address',
    kind: 'ip',
    file: 'address',
    usage:
      'The IP address for the node agent to serve on (set to 0.0.0.0 or :: for listening in all interfaces and IP families).',
  },
  {
    flag: 'allowed-unsafe-sysctls',
    key: 'allowedUnsafeSysctls',
    kind: 'strings',
    file: 'allowedUnsafeSysctls',
    usage:
      "Comma-separated whitelist of unsafe sysctls or unsafe sysctl patterns (ending in '*'). Use these at your own risk.",
  },
  {
    flag: 'bootstrap-clientconfig',
    key: 'bootstrapClientConfig',
    kind: 'string',
    usage:
      'Path to a client configuration file that will be used to get a client certificate for the node agent. If the file specified by --clientconfig does not exist, the bootstrap configuration is used to request a client certificate from the API server. On success, a client configuration file referencing the generated client certificate and key is written to the path specified by --clientconfig. The client certificate and key file will be stored in the directory pointed by --cert-dir.',
  },
  {
    flag: 'experimental-bootstrap-clientconfig',
    key: 'bootstrapClientConfig',
    kind: 'string',
    deprecated: 'Use --bootstrap-clientconfig',
    usage: 'Use --bootstrap-clientconfig.',
  },
  {
    flag: 'cert-dir',
    key: 'certDir',
    kind: 'string',
    usage:
      'The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored.',
  },
  {
    flag: 'cgroup-driver',
    key: 'cgroupDriver',
    kind: 'string',
    file: 'cgroupDriver',
    check: oneOf('cgroupfs', 'systemd'),
    usage: "Driver that the node agent uses to manipulate cgroups on the host. Possible values: 'cgroupfs', 'systemd'.",
  },
  {
    flag: 'cgroup-root',
    key: 'cgroupRoot',
    kind: 'string',
    file: 'cgroupRoot',
    usage:
      'Optional root cgroup to use for pods. This is handled by the container runtime on a best effort basis. Default: empty, which means use the container runtime default.',
  },
  {
    flag: 'cgroups-per-qos',
    key: 'cgroupsPerQos',
    kind: 'bool',
    file: 'cgroupsPerQOS',
    usage: 'Enable creation of QoS cgroup hierarchy, if true top level QoS and pod cgroups are created.',
  },
  {
    flag: 'chaos-chance',
    key: 'chaosChance',
    kind: 'float',
    file: 'chaosChance',
    usage: 'If > 0.0, introduce random client errors and latency. Intended for testing.',
  },
  {
    flag: 'cloud-config',
    key: 'cloudConfig',
    kind: 'string',
    file: 'cloudConfig',
    deprecated: 'will be removed in 1.23, in favor of removing cloud provider code from the node agent.',
    usage: 'The path to the cloud provider configuration file. Empty string for no configuration file.',
  },
  {
    flag: 'cloud-provider',
    key: 'cloudProvider',
    kind: 'string',
    file: 'cloudProvider',
    deprecated: 'will be removed in 1.23, in favor of removing cloud provider code from the node agent.',
    usage:
      'The provider for cloud services. Set to empty string for running with no cloud provider. If set, the cloud provider determines the name of the node.',
  },
  {
    flag: 'cloud-b-container-registry-config',
    key: 'cloudBRegistryConfig',
    kind: 'string',
    usage: 'Path to the file containing cloud provider B container registry configuration information.',
  },
  {
    flag: 'cluster-dns',
    key: 'clusterDns',
    kind: 'strings',
    file: 'clusterDNS',
    usage:
      'Comma-separated list of DNS server IP address. This value is used for containers DNS server in case of Pods with "dnsPolicy=ClusterFirst". Note: all DNS servers appearing in the list MUST serve the same set of records.',
  },
  {
    flag: 'cluster-domain',
    key: 'clusterDomain',
    kind: 'string',
    file: 'clusterDomain',
    usage:
      "Domain for this cluster. If set, the node agent will configure all containers to search this domain in addition to the host's search domains.",
  },
  {
    flag: 'cni-bin-dir',
    key: 'cniBinDir',
    kind: 'string',
    usage:
      'A comma-separated list of full paths of directories in which to search for CNI plugin binaries. This docker-specific flag only works when container-runtime is set to builtin.',
  },
  {
    flag: 'cni-cache-dir',
    key: 'cniCacheDir',
    kind: 'string',
    usage:
      'The full path of the directory in which CNI should store cache files. This docker-specific flag only works when container-runtime is set to builtin.',
  },
  {
    flag: 'cni-conf-dir',
    key: 'cniConfDir',
    kind: 'string',
    usage:
      'The full path of the directory in which to search for CNI config files. This docker-specific flag only works when container-runtime is set to builtin.',
  },
  {
    flag: 'config',
    key: 'config',
    kind: 'string',
    usage:
      "The node agent will load its initial configuration from this file. The path may be absolute or relative; relative paths start at the node agent's current working directory. Omit this flag to use the built-in default configuration values. Command-line flags override configuration from this file.",
  },
  {
    flag: 'container-log-max-files',
    key: 'containerLogMaxFiles',
    kind: 'int32',
    file: 'containerLogMaxFiles',
    check: range(2, 2147483647),
    usage:
      'Set the maximum number of container log files that can be present for a container. The number must be >= 2. This flag can only be used with --container-runtime=remote.',
  },
  {
    flag: 'container-log-max-size',
    key: 'containerLogMaxSize',
    kind: 'string',
    file: 'containerLogMaxSize',
    check: (v: string) => void parseQuantity(v),
    usage:
      'Set the maximum size (e.g. 10Mi) of container log file before it is rotated. This flag can only be used with --container-runtime=remote.',
  },
  {
    flag: 'container-runtime',
    key: 'containerRuntime',
    kind: 'string',
    check: oneOf('builtin', 'remote'),
    usage: "The container runtime to use. Possible values: 'builtin', 'remote'.",
  },
  {
    flag: 'container-runtime-endpoint',
    key: 'containerRuntimeEndpoint',
    kind: 'string',
    usage:
      '[Experimental] The endpoint of remote runtime service. Currently unix socket endpoint is supported on Linux, while npipe and tcp endpoints are supported on windows. Examples: unix:///var/run/containerd/containerd.sock',
  },
  {
    flag: 'builtin-runtime-endpoint',
    key: 'builtinRuntimeEndpoint',
    kind: 'string',
    usage:
      'Use this for the builtin endpoint to communicate with. This flag only works when container-runtime is set to builtin.',
  },
  {
    flag: 'cpu-cfs-quota',
    key: 'cpuCfsQuota',
    kind: 'bool',
    file: 'cpuCFSQuota',
    usage: 'Enable CPU CFS quota enforcement for containers that specify CPU limits.',
  },
  {
    flag: 'cpu-cfs-quota-period',
    key: 'cpuCfsQuotaPeriod',
    kind: 'duration',
    file: 'cpuCFSQuotaPeriod',
    usage: 'Sets CPU CFS quota period value, cpu.cfs_period_us, defaults to Linux Kernel default.',
  },
  {
    flag: 'cpu-manager-policy',
    key: 'cpuManagerPolicy',
    kind: 'string',
    file: 'cpuManagerPolicy',
    check: oneOf('none', 'static'),
    usage: "CPU Manager policy to use. Possible values: 'none', 'static'.",
  },
  {
    flag: 'cpu-manager-reconcile-period',
    key: 'cpuManagerReconcilePeriod',
    kind: 'duration',
    file: 'cpuManagerReconcilePeriod',
    usage:
      "<Warning: Alpha feature> CPU Manager reconciliation period. Examples: '10s', or '1m'. If not supplied, defaults to `NodeStatusUpdateFrequency`.",
  },
  {
    flag: 'dynamic-config-dir',
    key: 'dynamicConfigDir',
    kind: 'string',
    usage:
      'The node agent will use this directory for checkpointing downloaded configurations and tracking configuration health. Providing this flag enables dynamic node agent configuration. The DynamicAgentConfig feature gate must be enabled to pass this flag.',
  },
  {
    flag: 'enable-controller-attach-detach',
    key: 'enableControllerAttachDetach',
    kind: 'bool',
    usage:
      'Enables the Attach/Detach controller to manage attachment/detachment of volumes scheduled to this node, and disables the node agent from executing any attach/detach operations.',
  },
  {
    flag: 'enable-debugging-handlers',
    key: 'enableDebuggingHandlers',
    kind: 'bool',
    file: 'enableDebuggingHandlers',
    usage: 'Enables server endpoints for log collection and local running of containers and commands.',
  },
  {
    flag: 'enable-server',
    key: 'enableServer',
    kind: 'bool',
    file: 'enableServer',
    usage: "Enable the node agent's server.",
  },
  {
    flag: 'enforce-node-allocatable',
    key: 'enforceNodeAllocatable',
    kind: 'strings',
    file: 'enforceNodeAllocatable',
    usage:
      "A comma separated list of levels of node allocatable enforcement to be enforced by the node agent. Acceptable options are 'none', 'pods', 'system-reserved', and 'platform-reserved'. If the latter two options are specified, '--system-reserved-cgroup' and '--platform-reserved-cgroup' must also be set, respectively. If 'none' is specified, no additional options should be set.",
  },
  {
    flag: 'event-burst',
    key: 'eventBurst',
    kind: 'int32',
    file: 'eventBurst',
    check: range(0, 2147483647),
    usage:
      'Maximum size of a bursty event records, temporarily allows event records to burst to this number, while still not exceeding event-qps. Only used if --event-qps > 0.',
  },
  {
    flag: 'event-qps',
    key: 'eventQps',
    kind: 'int32',
    file: 'eventRecordQPS',
    check: range(0, 2147483647),
    usage: 'If > 0, limit event creations per second to this value. If 0, unlimited.',
  },
  {
    flag: 'eviction-hard',
    key: 'evictionHard',
    kind: 'map',
    file: 'evictionHard',
    check: thresholdMap,
    usage: 'A set of eviction thresholds (e.g. memory.available<1Gi) that if met would trigger a pod eviction.',
  },
  {
    flag: 'eviction-max-pod-grace-period',
    key: 'evictionMaxPodGracePeriod',
    kind: 'int32',
    file: 'evictionMaxPodGracePeriod',
    usage:
      'Maximum allowed grace period (in seconds) to use when terminating pods in response to a soft eviction threshold being met. If negative, defer to pod specified value.',
  },
  {
    flag: 'eviction-minimum-reclaim',
    key: 'evictionMinimumReclaim',
    kind: 'map',
    file: 'evictionMinimumReclaim',
    check: thresholdMap,
    usage:
      'A set of minimum reclaims (e.g. imagefs.available=2Gi) that describes the minimum amount of resource the node agent will reclaim when performing a pod eviction if that resource is under pressure.',
  },
  {
    flag: 'eviction-pressure-transition-period',
    key: 'evictionPressureTransitionPeriod',
    kind: 'duration',
    file: 'evictionPressureTransitionPeriod',
    usage: 'Duration for which the node agent has to wait before transitioning out of an eviction pressure condition.',
  },
  {
    flag: 'eviction-soft',
    key: 'evictionSoft',
    kind: 'map',
    file: 'evictionSoft',
    check: thresholdMap,
    usage:
      'A set of eviction thresholds (e.g. memory.available<1.5Gi) that if met over a corresponding grace period would trigger a pod eviction.',
  },
  {
    flag: 'eviction-soft-grace-period',
    key: 'evictionSoftGracePeriod',
    kind: 'map',
    file: 'evictionSoftGracePeriod',
    check: graceMap,
    usage:
      'A set of eviction grace periods (e.g. memory.available=1m30s) that correspond to how long a soft eviction threshold must hold before triggering a pod eviction.',
  },
  {
    flag: 'exit-on-lock-contention',
    key: 'exitOnLockContention',
    kind: 'bool',
    usage: 'Whether the node agent should exit upon lock-file contention.',
  },
  {
    flag: 'experimental-allocatable-ignore-eviction',
    key: 'experimentalAllocatableIgnoreEviction',
    kind: 'bool',
    file: 'experimentalAllocatableIgnoreEviction',
    usage: 'When set to true, Hard Eviction Thresholds will be ignored while calculating Node Allocatable.',
  },
  {
    flag: 'experimental-check-node-capabilities-before-mount',
    key: 'experimentalCheckNodeCapabilitiesBeforeMount',
    kind: 'bool',
    file: 'experimentalCheckNodeCapabilitiesBeforeMount',
    usage:
      '[Experimental] if set true, the node agent will check the underlying node for required components (binaries, etc.) before performing the mount.',
  },
  {
    flag: 'experimental-kernel-memcg-notification',
    key: 'kernelMemcgNotification',
    kind: 'bool',
    file: 'kernelMemcgNotification',
    deprecated: 'Use --kernel-memcg-notification',
    usage: 'Use kernelMemcgNotification configuration, this flag will be removed in 1.23.',
  },
  {
    flag: 'kernel-memcg-notification',
    key: 'kernelMemcgNotification',
    kind: 'bool',
    file: 'kernelMemcgNotification',
    usage:
      'If enabled, the node agent will integrate with the kernel memcg notification to determine if memory eviction thresholds are crossed rather than polling.',
  },
  {
    flag: 'experimental-log-sanitization',
    key: 'experimentalLogSanitization',
    kind: 'bool',
    file: 'experimentalLogSanitization',
    usage: '[Experimental] When enabled prevents logging of fields tagged as sensitive (passwords, keys, tokens).',
  },
  {
    flag: 'experimental-mounter-path',
    key: 'experimentalMounterPath',
    kind: 'string',
    file: 'experimentalMounterPath',
    usage: '[Experimental] Path of mounter binary. Leave empty to use the default mount.',
  },
  {
    flag: 'fail-swap-on',
    key: 'failSwapOn',
    kind: 'bool',
    file: 'failSwapOn',
    usage: 'Makes the node agent fail to start if swap is enabled on the node.',
  },
  {
    flag: 'file-check-frequency',
    key: 'fileCheckFrequency',
    kind: 'duration',
    file: 'fileCheckFrequency',
    usage: 'Duration between checking config files for new data.',
  },
  {
    flag: 'hairpin-mode',
    key: 'hairpinMode',
    kind: 'string',
    file: 'hairpinMode',
    check: oneOf('promiscuous-bridge', 'hairpin-veth', 'none'),
    usage:
      'How should the node agent setup hairpin NAT. This allows endpoints of a Service to loadbalance back to themselves if they should try to access their own Service. Valid values are "promiscuous-bridge", "hairpin-veth" and "none".',
  },
  {
    flag: 'healthz-bind-address',
    key: 'healthzBindAddress',
    kind: 'ip',
    file: 'healthzBindAddress',
    usage:
      'The IP address for the healthz server to serve on (set to 0.0.0.0 or :: for listening in all interfaces and IP families).',
  },
  {
    flag: 'healthz-port',
    key: 'healthzPort',
    kind: 'int32',
    file: 'healthzPort',
    check: range(0, 65535),
    usage: 'The port of the localhost healthz endpoint (set to 0 to disable).',
  },
  {
    flag: 'hostname-override',
    key: 'hostnameOverride',
    kind: 'string',
    usage:
      'If non-empty, will use this string as identification instead of the actual hostname. If --cloud-provider is set, the cloud provider determines the name of the node.',
  },
  {
    flag: 'housekeeping-interval',
    key: 'housekeepingInterval',
    kind: 'duration',
    usage: 'Interval between container housekeepings.',
  },
  {
    flag: 'http-check-frequency',
    key: 'httpCheckFrequency',
    kind: 'duration',
    file: 'httpCheckFrequency',
    usage: 'Duration between checking http for new data.',
  },
  {
    flag: 'image-credential-provider-bin-dir',
    key: 'imageCredentialProviderBinDir',
    kind: 'string',
    usage: 'The path to the directory where credential provider plugin binaries are located.',
  },
  {
    flag: 'image-credential-provider-config',
    key: 'imageCredentialProviderConfig',
    kind: 'string',
    usage: 'The path to the credential provider plugin config file.',
  },
  {
    flag: 'image-gc-high-threshold',
    key: 'imageGcHighThreshold',
    kind: 'int32',
    file: 'imageGCHighThresholdPercent',
    check: range(0, 100),
    usage:
      'The percent of disk usage after which image garbage collection is always run. Values must be within the range [0, 100], To disable image garbage collection, set to 100.',
  },
  {
    flag: 'image-gc-low-threshold',
    key: 'imageGcLowThreshold',
    kind: 'int32',
    file: 'imageGCLowThresholdPercent',
    check: range(0, 100),
    usage:
      'The percent of disk usage before which image garbage collection is never run. Lowest disk usage to garbage collect to. Values must be within the range [0, 100] and should not be larger than that of --image-gc-high-threshold.',
  },
  {
    flag: 'image-pull-progress-deadline',
    key: 'imagePullProgressDeadline',
    kind: 'duration',
    usage:
      'If no pulling progress is made before this deadline, the image pulling will be cancelled. This flag only works when container-runtime is set to builtin.',
  },
  {
    flag: 'image-service-endpoint',
    key: 'imageServiceEndpoint',
    kind: 'string',
    usage:
      '[Experimental] The endpoint of remote image service. If not specified, it will be the same with --container-runtime-endpoint by default.',
  },
  {
    flag: 'iptables-drop-bit',
    key: 'iptablesDropBit',
    kind: 'int32',
    file: 'iptablesDropBit',
    check: range(0, 31),
    usage: 'The bit of the fwmark space to mark packets for dropping. Must be within the range [0, 31].',
  },
  {
    flag: 'iptables-masquerade-bit',
    key: 'iptablesMasqueradeBit',
    kind: 'int32',
    file: 'iptablesMasqueradeBit',
    check: range(0, 31),
    usage:
      'The bit of the fwmark space to mark packets for SNAT. Must be within the range [0, 31]. Please match this parameter with corresponding parameter in the proxy component.',
  },
  {
    flag: 'keep-terminated-pod-volumes',
    key: 'keepTerminatedPodVolumes',
    kind: 'bool',
    deprecated: 'will be removed in a future version',
    usage:
      'Keep terminated pod volumes mounted to the node after the pod terminates. Can be useful for debugging volume related issues.',
  },
  {
    flag: 'api-burst',
    key: 'apiBurst',
    kind: 'int32',
    file: 'apiBurst',
    check: range(0, 2147483647),
    usage: 'Burst to use while talking with the API server.',
  },
  {
    flag: 'api-content-type',
    key: 'apiContentType',
    kind: 'string',
    file: 'contentType',
    check: oneOf('application/vnd.platform.protobuf', 'application/json'),
    usage: 'Content type of requests sent to the API server.',
  },
  {
    flag: 'api-qps',
    key: 'apiQps',
    kind: 'int32',
    file: 'apiQPS',
    check: range(0, 2147483647),
    usage: 'QPS to use while talking with the API server.',
  },
  {
    flag: 'platform-reserved',
    key: 'platformReserved',
    kind: 'map',
    file: 'platformReserved',
    check: quantityMap,
    usage:
      'A set of ResourceName=ResourceQuantity (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000) pairs that describe resources reserved for platform system components.',
  },
  {
    flag: 'platform-reserved-cgroup',
    key: 'platformReservedCgroup',
    kind: 'string',
    file: 'platformReservedCgroup',
    usage:
      "Absolute name of the top level cgroup that is used to manage platform components for which compute resources were reserved via '--platform-reserved' flag.",
  },
  {
    flag: 'clientconfig',
    key: 'clientConfig',
    kind: 'string',
    usage:
      'Path to a client configuration file, specifying how to connect to the API server. Providing --clientconfig enables API server mode, omitting --clientconfig enables standalone mode.',
  },
  {
    flag: 'agent-cgroups',
    key: 'agentCgroups',
    kind: 'string',
    file: 'agentCgroups',
    usage: 'Optional absolute name of cgroups to create and run the node agent in.',
  },
  {
    flag: 'lock-file',
    key: 'lockFile',
    kind: 'string',
    usage: '<Warning: Alpha feature> The path to file for the node agent to use as a lock file.',
  },
  {
    flag: 'make-iptables-util-chains',
    key: 'makeIptablesUtilChains',
    kind: 'bool',
    file: 'makeIPTablesUtilChains',
    usage: 'If true, the node agent will ensure iptables utility rules are present on host.',
  },
  {
    flag: 'manifest-url',
    key: 'manifestUrl',
    kind: 'string',
    file: 'staticPodURL',
    usage: 'URL for accessing additional Pod specifications to run.',
  },
  {
    flag: 'manifest-url-header',
    key: 'manifestUrlHeader',
    kind: 'headers',
    file: 'staticPodURLHeader',
    usage:
      "Comma-separated list of HTTP headers to use when accessing the url provided to --manifest-url. Multiple headers with the same name will be added in the same order provided. This flag can be repeatedly invoked. For example: --manifest-url-header 'a:hello,b:again,c:world' --manifest-url-header 'b:beautiful'",
  },
  {
    flag: 'master-service-namespace',
    key: 'masterServiceNamespace',
    kind: 'string',
    deprecated: 'This flag will be removed in a future version.',
    usage: 'The namespace from which the platform master services should be injected into pods.',
  },
  {
    flag: 'max-open-files',
    key: 'maxOpenFiles',
    kind: 'int',
    file: 'maxOpenFiles',
    usage: 'Number of files that can be opened by the node agent process.',
  },
  {
    flag: 'max-pods',
    key: 'maxPods',
    kind: 'int32',
    file: 'maxPods',
    check: range(0, 2147483647),
    usage: 'Number of Pods that can run on this node agent.',
  },
  {
    flag: 'maximum-dead-containers',
    key: 'maximumDeadContainers',
    kind: 'int32',
    deprecated: 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.',
    usage:
      'Maximum number of old instances of containers to retain globally. Each container takes up some disk space. To disable, set to a negative number.',
  },
  {
    flag: 'maximum-dead-containers-per-container',
    key: 'maximumDeadContainersPerContainer',
    kind: 'int32',
    deprecated: 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.',
    usage: 'Maximum number of old instances to retain per container. Each container takes up some disk space.',
  },
  {
    flag: 'minimum-container-ttl-duration',
    key: 'minimumContainerTtlDuration',
    kind: 'duration',
    deprecated: 'Use --eviction-hard or --eviction-soft instead. Will be removed in a future version.',
    usage: "Minimum age for a finished container before it is garbage collected. Examples: '300ms', '10s' or '2h45m'",
  },
  {
    flag: 'minimum-image-ttl-duration',
    key: 'minimumImageTtlDuration',
    kind: 'duration',
    file: 'imageMinimumGCAge',
    usage: "Minimum age for an unused image before it is garbage collected. Examples: '300ms', '10s' or '2h45m'.",
  },
  {
    flag: 'network-plugin',
    key: 'networkPlugin',
    kind: 'string',
    usage:
      '<Warning: Alpha feature> The name of the network plugin to be invoked for various events in node agent/pod lifecycle. This docker-specific flag only works when container-runtime is set to builtin.',
  },
  {
    flag: 'network-plugin-mtu',
    key: 'networkPluginMtu',
    kind: 'int32',
    usage:
      '<Warning: Alpha feature> The MTU to be passed to the network plugin, to override the default. Set to 0 to use the default 1460 MTU. This docker-specific flag only works when container-runtime is set to builtin.',
  },
  {
    flag: 'node-ip',
    key: 'nodeIp',
    kind: 'ip',
    usage:
      'IP address of the node. If set, the node agent will use this IP address for the node. Loopback addresses (127.0.0.1) are accepted, for local clusters and tests.',
  },
  {
    flag: 'node-labels',
    key: 'nodeLabels',
    kind: 'map',
    check: labelsCheck,
    usage: `<Warning: Alpha feature> Labels to add when registering the node in the cluster. Labels must be key=value pairs separated by ','. Labels in the 'platform' namespace must begin with an allowed prefix (agent.platform, node.platform) or be in the specifically allowed set (${[...ALLOWED_NODE_LABELS].sort().join(', ')})`,
  },
  {
    flag: 'node-status-max-images',
    key: 'nodeStatusMaxImages',
    kind: 'int32',
    file: 'nodeStatusMaxImages',
    check: range(-1, 2147483647),
    usage: 'The maximum number of images to report in Node.Status.Images. If -1 is specified, no cap will be applied.',
  },
  {
    flag: 'node-status-update-frequency',
    key: 'nodeStatusUpdateFrequency',
    kind: 'duration',
    file: 'nodeStatusUpdateFrequency',
    usage:
      'Specifies how often the node agent posts node status to master. Note: be cautious when changing the constant, it must work with nodeMonitorGracePeriod in nodecontroller.',
  },
  {
    flag: 'non-masquerade-cidr',
    key: 'nonMasqueradeCidr',
    kind: 'string',
    deprecated: 'will be removed in a future version',
    usage: "Traffic to IPs outside this range will use IP masquerade. Set to '0.0.0.0/0' to never masquerade.",
  },
  {
    flag: 'oom-score-adj',
    key: 'oomScoreAdj',
    kind: 'int32',
    file: 'oomScoreAdj',
    check: range(-1000, 1000),
    usage: 'The oom-score-adj value for the node agent process. Values must be within the range [-1000, 1000].',
  },
  {
    flag: 'pod-cidr',
    key: 'podCidr',
    kind: 'string',
    file: 'podCIDR',
    usage:
      "The CIDR to use for pod IP addresses, only used in standalone mode. In cluster mode, this is obtained from the master. For IPv6, the maximum number of IP's allocated is 65536",
  },
  {
    flag: 'pod-infra-container-image',
    key: 'podInfraContainerImage',
    kind: 'string',
    usage:
      'Specified image will not be pruned by the image garbage collector. When container-runtime is set to builtin, all containers in each pod will use the network/ipc namespaces from this image. Other CRI implementations have their own configuration to set this image.',
  },
  {
    flag: 'pod-manifest-path',
    key: 'podManifestPath',
    kind: 'string',
    file: 'staticPodPath',
    usage:
      'Path to the directory containing static pod files to run, or the path to a single static pod file. Files starting with dots will be ignored.',
  },
  {
    flag: 'pod-max-pids',
    key: 'podMaxPids',
    kind: 'int',
    file: 'podPidsLimit',
    usage:
      'Set the maximum number of processes per pod. If -1, the node agent defaults to the node allocatable pid capacity.',
  },
  {
    flag: 'pods-per-core',
    key: 'podsPerCore',
    kind: 'int32',
    file: 'podsPerCore',
    check: range(0, 2147483647),
    usage:
      'Number of Pods per core that can run on this node agent. The total number of Pods on this node agent cannot exceed max-pods, so max-pods will be used if this calculation results in a larger number of Pods allowed on the node agent. A value of 0 disables this limit.',
  },
  {
    flag: 'port',
    key: 'port',
    kind: 'int32',
    file: 'port',
    check: range(1, 65535),
    usage: 'The port for the node agent to serve on.',
  },
  {
    flag: 'protect-kernel-defaults',
    key: 'protectKernelDefaults',
    kind: 'bool',
    file: 'protectKernelDefaults',
    usage:
      'Default node agent behaviour for kernel tuning. If set, the node agent errors if any of kernel tunables is different than node agent defaults.',
  },
  {
    flag: 'provider-id',
    key: 'providerId',
    kind: 'string',
    file: 'providerID',
    usage: 'Unique identifier for identifying the node in a machine database, i.e cloudprovider',
  },
  {
    flag: 'qos-reserved',
    key: 'qosReserved',
    kind: 'map',
    file: 'qosReserved',
    usage:
      '<Warning: Alpha feature> A set of ResourceName=Percentage (e.g. memory=50%) pairs that describe how pod resource requests are reserved at the QoS level. Currently only memory is supported. Requires the QOSReserved feature gate to be enabled.',
  },
  {
    flag: 'read-only-port',
    key: 'readOnlyPort',
    kind: 'int32',
    file: 'readOnlyPort',
    check: range(0, 65535),
    usage:
      'The read-only port for the node agent to serve on with no authentication/authorization (set to 0 to disable).',
  },
  {
    flag: 'really-crash-for-testing',
    key: 'reallyCrashForTesting',
    kind: 'bool',
    usage: 'If true, when panics occur crash. Intended for testing.',
  },
  {
    flag: 'redirect-container-streaming',
    key: 'redirectContainerStreaming',
    kind: 'bool',
    deprecated:
      'Container streaming redirection will be removed from the node agent in v1.20, and this flag will be removed in v1.22.',
    usage:
      'Enables container streaming redirect. If false, the node agent will proxy container streaming data between the API server and container runtime; if true, the node agent will return an http redirect to the API server, and the API server will access container runtime directly.',
  },
  {
    flag: 'register-node',
    key: 'registerNode',
    kind: 'bool',
    usage:
      "Register the node with the API server. If --clientconfig is not provided, this flag is irrelevant, as the node agent won't have an API server to register with.",
  },
  {
    flag: 'register-schedulable',
    key: 'registerSchedulable',
    kind: 'bool',
    deprecated: 'will be removed in a future version',
    usage: "Register the node as schedulable. Won't have any effect if register-node is false.",
  },
  {
    flag: 'register-with-taints',
    key: 'registerWithTaints',
    kind: 'taints',
    usage:
      'Register the node with the given list of taints (comma separated "<key>=<value>:<effect>"). No-op if register-node is false.',
  },
  {
    flag: 'registry-burst',
    key: 'registryBurst',
    kind: 'int32',
    file: 'registryBurst',
    check: range(0, 2147483647),
    usage:
      'Maximum size of a bursty pulls, temporarily allows pulls to burst to this number, while still not exceeding registry-qps. Only used if --registry-qps > 0',
  },
  {
    flag: 'registry-qps',
    key: 'registryQps',
    kind: 'int32',
    file: 'registryPullQPS',
    check: range(0, 2147483647),
    usage: 'If > 0, limit registry pull QPS to this value. If 0, unlimited.',
  },
  {
    flag: 'reserved-cpus',
    key: 'reservedCpus',
    kind: 'string',
    file: 'reservedSystemCPUs',
    usage:
      'A comma-separated list of CPUs or CPU ranges that are reserved for system and platform usage. This specific list will supersede cpu counts in --system-reserved and --platform-reserved.',
  },
  {
    flag: 'resolv-conf',
    key: 'resolvConf',
    kind: 'string',
    file: 'resolvConf',
    usage: 'Resolver configuration file used as the basis for the container DNS resolution configuration.',
  },
  {
    flag: 'root-dir',
    key: 'rootDir',
    kind: 'string',
    usage: 'Directory path for managing node agent files (volume mounts,etc).',
  },
  {
    flag: 'rotate-certificates',
    key: 'rotateCertificates',
    kind: 'bool',
    file: 'rotateCertificates',
    usage:
      '<Warning: Beta feature> Auto rotate the node agent client certificates by requesting new certificates from the API server when the certificate expiration approaches.',
  },
  {
    flag: 'rotate-server-certificates',
    key: 'rotateServerCertificates',
    kind: 'bool',
    file: 'serverTLSBootstrap',
    usage:
      'Auto-request and rotate the node agent serving certificates by requesting new certificates from the API server when the certificate expiration approaches. Requires the RotateAgentServerCertificate feature gate to be enabled, and approval of the submitted CertificateSigningRequest objects.',
  },
  {
    flag: 'runonce',
    key: 'runonce',
    kind: 'bool',
    file: 'runOnce',
    usage: 'If true, exit after spawning pods from static pod files or remote urls. Exclusive with --enable-server',
  },
  {
    flag: 'runtime-cgroups',
    key: 'runtimeCgroups',
    kind: 'string',
    usage: 'Optional absolute name of cgroups to create and run the runtime in.',
  },
  {
    flag: 'runtime-request-timeout',
    key: 'runtimeRequestTimeout',
    kind: 'duration',
    file: 'runtimeRequestTimeout',
    usage:
      'Timeout of all runtime requests except long running request - pull, logs, exec and attach. When timeout exceeded, the node agent will cancel the request, throw out an error and retry later.',
  },
  {
    flag: 'seccomp-profile-root',
    key: 'seccompProfileRoot',
    kind: 'string',
    usage: '<Warning: Alpha feature> Directory path for seccomp profiles.',
  },
  {
    flag: 'serialize-image-pulls',
    key: 'serializeImagePulls',
    kind: 'bool',
    file: 'serializeImagePulls',
    usage: 'Pull images one at a time.',
  },
  {
    flag: 'streaming-connection-idle-timeout',
    key: 'streamingConnectionIdleTimeout',
    kind: 'duration',
    file: 'streamingConnectionIdleTimeout',
    usage:
      "Maximum time a streaming connection can be idle before the connection is automatically closed. 0 indicates no timeout. Example: '5m'.",
  },
  {
    flag: 'sync-frequency',
    key: 'syncFrequency',
    kind: 'duration',
    file: 'syncFrequency',
    usage: 'Max period between synchronizing running containers and config.',
  },
  {
    flag: 'system-cgroups',
    key: 'systemCgroups',
    kind: 'string',
    file: 'systemCgroups',
    usage:
      "Optional absolute name of cgroups in which to place all non-kernel processes that are not already inside a cgroup under '/'. Empty for no container. Rolling back the flag requires a reboot.",
  },
  {
    flag: 'system-reserved',
    key: 'systemReserved',
    kind: 'map',
    file: 'systemReserved',
    check: quantityMap,
    usage:
      'A set of ResourceName=ResourceQuantity (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi) pairs that describe resources reserved for non-platform components.',
  },
  {
    flag: 'system-reserved-cgroup',
    key: 'systemReservedCgroup',
    kind: 'string',
    file: 'systemReservedCgroup',
    usage:
      "Absolute name of the top level cgroup that is used to manage non-platform components for which compute resources were reserved via '--system-reserved' flag. Ex. '/system-reserved'.",
  },
  {
    flag: 'anonymous-auth',
    key: 'anonymousAuth',
    kind: 'bool',
    file: 'authentication.anonymous.enabled',
    usage:
      'Enables anonymous requests to the node agent server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.',
  },
  {
    flag: 'authentication-token-webhook',
    key: 'authenticationTokenWebhook',
    kind: 'bool',
    file: 'authentication.webhook.enabled',
    usage: 'Use the TokenReview API to determine authentication for bearer tokens.',
  },
  {
    flag: 'authentication-token-webhook-cache-ttl',
    key: 'authenticationTokenWebhookCacheTtl',
    kind: 'duration',
    file: 'authentication.webhook.cacheTTL',
    usage: 'The duration to cache responses from the webhook token authenticator.',
  },
  {
    flag: 'authorization-mode',
    key: 'authorizationMode',
    kind: 'string',
    file: 'authorization.mode',
    check: oneOf('AlwaysAllow', 'Webhook'),
    usage:
      'Authorization mode for the node agent server. Valid options are AlwaysAllow or Webhook. Webhook mode uses the SubjectAccessReview API to determine authorization. (default "AlwaysAllow" when --config flag is not provided; "Webhook" when --config flag presents.)',
  },
  {
    flag: 'authorization-webhook-cache-authorized-ttl',
    key: 'authorizationWebhookCacheAuthorizedTtl',
    kind: 'duration',
    file: 'authorization.webhook.cacheAuthorizedTTL',
    usage: "The duration to cache 'authorized' responses from the webhook authorizer.",
  },
  {
    flag: 'authorization-webhook-cache-unauthorized-ttl',
    key: 'authorizationWebhookCacheUnauthorizedTtl',
    kind: 'duration',
    file: 'authorization.webhook.cacheUnauthorizedTTL',
    usage: "The duration to cache 'unauthorized' responses from the webhook authorizer.",
  },
  {
    flag: 'client-ca-file',
    key: 'clientCaFile',
    kind: 'string',
    file: 'authentication.x509.clientCAFile',
    usage:
      'If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.',
  },
  {
    flag: 'tls-cert-file',
    key: 'tlsCertFile',
    kind: 'string',
    file: 'tlsCertFile',
    usage:
      'File containing x509 Certificate used for serving HTTPS (with intermediate certs, if any, concatenated after server cert). If --tls-cert-file and --tls-private-key-file are not provided, a self-signed certificate and key are generated for the public address and saved to the directory passed to --cert-dir.',
  },
  {
    flag: 'tls-private-key-file',
    key: 'tlsPrivateKeyFile',
    kind: 'string',
    file: 'tlsPrivateKeyFile',
    usage: 'File containing x509 private key matching --tls-cert-file.',
  },
  {
    flag: 'simulate-nodes',
    key: 'simulateNodes',
    kind: 'int32',
    check: range(0, 100000),
    usage:
      'Platform addition: when above 0, host this many simulated nodes in this process instead of one real node. Each registers, renews its Lease, posts its status and runs its pods as no-op containers that are Ready at once (scale tests). Node names are <--simulate-node-prefix>-<i>.',
  },
  {
    flag: 'simulate-node-prefix',
    key: 'simulateNodePrefix',
    kind: 'string',
    usage: 'Platform addition: prefix of the names of simulated nodes.',
  },
  {
    flag: 'builtin-allow-root',
    key: 'builtinAllowRoot',
    kind: 'bool',
    usage:
      'Platform addition: let the builtin runtime run a container as user 0 when its securityContext asks for runAsUser 0. Without it such containers fail with CreateContainerConfigError: the builtin runtime isolates nothing.',
  },
  {
    flag: 'builtin-run-as-user',
    key: 'builtinRunAsUser',
    kind: 'int',
    check: range(1, 4294967294),
    usage:
      'Platform addition: the unprivileged user id the builtin runtime runs containers as when their securityContext names none.',
  },
  {
    flag: 'node-status-report-frequency',
    key: 'nodeStatusReportFrequency',
    kind: 'duration',
    file: 'nodeStatusReportFrequency',
    usage:
      'How often the node status is posted when nothing changed (with a node Lease, status is only posted when it changed or after this long).',
  },
  {
    flag: 'node-lease-duration-seconds',
    key: 'nodeLeaseDurationSeconds',
    kind: 'int32',
    file: 'nodeLeaseDurationSeconds',
    check: range(1, 2147483647),
    usage: 'Duration of the node Lease; it is renewed every quarter of it (10s by default).',
  },
];

function setPath(obj: Record<string, unknown>, path: string): { has: boolean; value: unknown } {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null || !(part in cur)) return { has: false, value: undefined };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { has: true, value: cur };
}

/** The node agent's option family. `featureGate` receives `featureGates` of the configuration file. */
export class AgentOptions extends OptionGroupBase<{ agent?: AgentValues }> {
  readonly values: AgentValues = defaultAgentValues();
  private readonly fileErrors: Error[] = [];

  constructor(private readonly featureGate?: FeatureGate) {
    super('Node agent');
  }

  protected flagDefs(): FlagDef[] {
    return AGENT_OPTION_SPECS.map((s) => this.defOf(s));
  }

  private store(s: Spec, v: unknown): void {
    (s.check as ((x: unknown) => void) | undefined)?.(v as never);
    (this.values as Record<string, unknown>)[s.key] = v;
  }

  private defOf(s: Spec): FlagDef {
    const cur = (this.values as Record<string, unknown>)[s.key];
    const x = s.deprecated !== undefined ? { deprecated: s.deprecated } : s.file ? { deprecated: D_MSG } : {};
    const set = (v: unknown): void => this.store(s, v);
    switch (s.kind) {
      case 'bool':
        return boolFlag(s.flag, s.usage, cur as boolean, set, x);
      case 'string':
        return stringFlag(s.flag, s.usage, cur as string, set, x);
      case 'ip':
        return stringFlag(s.flag, s.usage, cur as string, (v) => (ipCheck(v), set(v)), { ...x, type: 'ip' });
      case 'int32':
        return intFlag(s.flag, s.usage, cur as number, set, { ...x, type: 'int32' });
      case 'int':
        return intFlag(s.flag, s.usage, cur as number, set, x);
      case 'float':
        return floatFlag(s.flag, s.usage, cur as number, set, x);
      case 'duration':
        return durationFlag(s.flag, s.usage, cur as number, set, x);
      case 'strings':
        return stringsFlag(s.flag, s.usage, cur as string[], set, x);
      case 'map': {
        const m = cur as Map<string, string>;
        if (s.key === 'evictionHard' || s.key === 'evictionSoft') {
          let acc: Map<string, string> | undefined;
          return {
            name: s.flag,
            type: 'mapStringString',
            usage: s.usage,
            defaultText: [...m].map(([k, v]) => `${k}<${v}`).join(','),
            ...x,
            set: (raw) => {
              acc = new Map([...(acc ?? []), ...parseThresholds(raw)]);
              set(new Map(acc));
            },
          };
        }
        return mapFlag(s.flag, s.usage, m, set, x);
      }
      case 'taints':
        return stringsFlag(s.flag, s.usage, [], (v) => set(v.map(parseTaint)), x);
      case 'headers':
        return stringArrayFlag(s.flag, s.usage, [], (v) => set(v.flatMap((h) => h.split(','))), x);
    }
  }

  /** Reads `--config`; values of flags given on the command line are kept. Errors name the option. */
  loadConfigFile(): void {
    const path = this.values.config;
    if (!path) return;
    let doc: unknown;
    try {
      doc = loadYaml(readFileSync(resolve(path), 'utf8'));
    } catch (err) {
      this.fileErrors.push(new Error(`--config: cannot load ${path}: ${(err as Error).message}`));
      return;
    }
    if (typeof doc !== 'object' || doc === null) {
      this.fileErrors.push(new Error(`--config: ${path}: not an object`));
      return;
    }
    const d = doc as Record<string, unknown>;
    if (d.kind !== 'AgentConfiguration' || d.apiVersion !== 'agent.config.platform/v1beta1')
      this.fileErrors.push(
        new Error(`--config: ${path}: want kind AgentConfiguration of apiVersion agent.config.platform/v1beta1`),
      );
    for (const s of AGENT_OPTION_SPECS) {
      if (!s.file || this.isSet(s.flag) || s.deprecated?.startsWith('Use --')) continue;
      const { has, value } = setPath(d, s.file);
      if (!has || value === null) continue;
      try {
        this.store(s, fromFile(s, value));
      } catch (err) {
        this.fileErrors.push(new Error(`--config: ${path}: ${s.file} (--${s.flag}): ${(err as Error).message}`));
      }
    }
    if (this.featureGate && d.featureGates && typeof d.featureGates === 'object' && !this.isSet('feature-gates')) {
      try {
        this.featureGate.set(
          Object.entries(d.featureGates as Record<string, unknown>)
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(','),
        );
      } catch (err) {
        this.fileErrors.push(new Error(`--config: ${path}: featureGates: ${(err as Error).message}`));
      }
    }
    if (!this.isSet('authorization-mode') && !setPath(d, 'authorization.mode').has)
      this.values.authorizationMode = 'Webhook';
  }

  private fileLoaded = false;

  /** Reads the `--config` file (once), then checks every value. */
  override validate(): Error[] {
    if (!this.fileLoaded) {
      this.fileLoaded = true;
      this.loadConfigFile();
    }
    return super.validate();
  }

  protected override validateValues(): Error[] {
    const v = this.values;
    const errs = [...this.fileErrors];
    if (v.imageGcLowThreshold > v.imageGcHighThreshold)
      errs.push(new Error('--image-gc-low-threshold must not be above --image-gc-high-threshold'));
    if (v.runonce && v.enableServer && this.isSet('enable-server'))
      errs.push(new Error('--runonce is exclusive with --enable-server'));
    if (v.enforceNodeAllocatable.includes('none') && v.enforceNodeAllocatable.length > 1)
      errs.push(new Error('--enforce-node-allocatable: none must not be combined with other values'));
    for (const e of v.enforceNodeAllocatable)
      if (!['none', 'pods', 'system-reserved', 'platform-reserved'].includes(e))
        errs.push(new Error(`--enforce-node-allocatable: unknown value ${JSON.stringify(e)}`));
    if (v.enforceNodeAllocatable.includes('system-reserved') && !v.systemReservedCgroup)
      errs.push(new Error('--enforce-node-allocatable=system-reserved needs --system-reserved-cgroup'));
    if (v.enforceNodeAllocatable.includes('platform-reserved') && !v.platformReservedCgroup)
      errs.push(new Error('--enforce-node-allocatable=platform-reserved needs --platform-reserved-cgroup'));
    if (v.dynamicConfigDir && this.featureGate && !this.featureGate.enabled('DynamicAgentConfig'))
      errs.push(new Error('--dynamic-config-dir needs the DynamicAgentConfig feature gate'));
    if (v.qosReserved.size > 0 && this.featureGate && !this.featureGate.enabled('QOSReserved'))
      errs.push(new Error('--qos-reserved needs the QOSReserved feature gate'));
    if (v.containerRuntime === 'remote' && !v.containerRuntimeEndpoint)
      errs.push(new Error('--container-runtime-endpoint is required with --container-runtime=remote'));
    if (v.nodeStatusUpdateFrequency <= 0) errs.push(new Error('--node-status-update-frequency must be above 0'));
    if (v.syncFrequency <= 0) errs.push(new Error('--sync-frequency must be above 0'));
    for (const h of v.manifestUrlHeader)
      if (!/^[^:]+:/.test(h)) errs.push(new Error(`--manifest-url-header: ${JSON.stringify(h)} is not name:value`));
    if (!v.authorizationMode) v.authorizationMode = 'AlwaysAllow';
    return errs;
  }

  applyTo(config: { agent?: AgentValues }): void {
    config.agent = this.values;
  }
}

function fromFile(s: Spec, value: unknown): unknown {
  const str = (): string => {
    if (typeof value !== 'string') throw new Error(`want a string, got ${JSON.stringify(value)}`);
    return value;
  };
  switch (s.kind) {
    case 'bool':
      if (typeof value === 'boolean') return value;
      return parseBool(str());
    case 'string':
      return str();
    case 'ip':
      ipCheck(str());
      return value;
    case 'int':
    case 'int32':
    case 'float':
      if (typeof value !== 'number' || (s.kind !== 'float' && !Number.isInteger(value)))
        throw new Error(`want a number, got ${JSON.stringify(value)}`);
      return value;
    case 'duration':
      return parseDuration(typeof value === 'number' ? formatDuration(value) : str());
    case 'strings':
      if (!Array.isArray(value) || !value.every((x) => typeof x === 'string'))
        throw new Error('want a list of strings');
      return value;
    case 'map':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('want a map');
      return new Map(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
    case 'taints':
      if (!Array.isArray(value)) throw new Error('want a list of taints');
      return value.map((t: { key?: string; value?: string; effect?: string }) =>
        parseTaint(`${t.key ?? ''}${t.value !== undefined ? `=${t.value}` : ''}:${t.effect ?? ''}`),
      );
    case 'headers':
      if (typeof value !== 'object' || value === null) throw new Error('want a map of header lists');
      return Object.entries(value as Record<string, unknown>).flatMap(([k, vs]) =>
        (Array.isArray(vs) ? vs : [vs]).map((x) => `${k}:${String(x)}`),
      );
  }
}
