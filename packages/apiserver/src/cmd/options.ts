/**
 * The command line of `platform-apiserver`: every option of Document 2 for the API server, in families.
 *
 * Options of features this server implements are parsed, validated and applied. Options of features it does not
 * implement yet exist with their defaults: a security-relevant one given any other value is rejected with an error
 * saying it is not supported yet (a server that silently ignored `--authorization-mode=RBAC` would be open to
 * everyone), and an inert one is accepted, validated, and named in a startup warning.
 */
import {
  boolFlag,
  durationFlag,
  type FlagDef,
  floatFlag,
  intFlag,
  ipFlag,
  OptionGroupBase,
  stringFlag,
  stringsFlag,
} from '@platform/common';
import { builtinScheme } from '@platform/api';

import { cidrRange } from '../registry/core/service/allocator';
import { type ApiServerConfig } from '../server/api-server';
import { ENDPOINT_RECONCILER_TYPES, type EndpointReconcilerType } from '../server/bootstrap/endpoint-reconciler';
import { resolveResourceConfig, servedResources } from '../server/resource-config';
import { type EncryptionConfig, loadEncryptionConfig } from '../storage/encryption/config';
import { parseServersOverrides } from '../storage/options';
import { SERVER_PROCESSES_FLAG } from './server-processes';

/** The part of the configuration the API server's own families fill in. */
export type ApiServerFlagsConfig = Partial<
  Pick<
    ApiServerConfig,
    | 'storage'
    | 'watchCache'
    | 'limits'
    | 'eventTtlSeconds'
    | 'shutdownDelayMs'
    | 'livezGracePeriodMs'
    | 'goawayChance'
    | 'services'
    | 'runtimeConfig'
    | 'priorityAndFairness'
    | 'kubernetesClientCompatibility'
    | 'bootstrap'
    | 'agentClient'
  >
> & {
  advertiseAddress?: string;
  /** `--server-processes`: how many processes serve the API (0: chosen by the store; see server-processes.ts). */
  serverProcesses?: number;
  /** Options accepted that have no effect yet (printed as a warning at start). */
  inert?: string[];
};

const NOT_SUPPORTED = 'not supported yet by this API server';

/** `--store-*`, `--storage-*`, `--watch-cache*`: the backing store and the watch cache. */
export class StoreOptions extends OptionGroupBase<ApiServerFlagsConfig> {
  servers: string[] = [];
  prefix = '/registry';
  mediaType = 'application/vnd.platform.protobuf';
  backend = 'etcd3';
  caFile = '';
  certFile = '';
  keyFile = '';
  compactionIntervalMs = 5 * 60_000;
  countMetricPollPeriodMs = 60_000;
  dbMetricPollIntervalMs = 30_000;
  healthcheckTimeoutMs = 2000;
  overrides: string[] = [];
  encryptionProviderConfig = '';
  /** The file of `--encryption-provider-config`, read and checked by `validate`. */
  private encryption?: EncryptionConfig;
  leaseReuseDurationSeconds = 60;
  watchCache = true;
  watchCacheSizes: string[] = [];
  defaultWatchCacheSize = 100;

  constructor() {
    super('Etcd');
  }

  protected flagDefs(): FlagDef[] {
    return [
      stringsFlag(
        'store-servers',
        'List of backing store servers to connect with (scheme://ip:port), comma separated; sqlite:///path/state.db for the embedded store.',
        this.servers,
        (v) => (this.servers = v),
      ),
      stringFlag(
        'store-prefix',
        'The prefix to prepend to all resource paths in the backing store.',
        this.prefix,
        (v) => (this.prefix = v),
      ),
      stringFlag(
        'storage-media-type',
        'The media type to use to store objects in storage. Some resources or storage backends may only support a specific media type and will ignore this setting.',
        this.mediaType,
        (v) => (this.mediaType = v),
        {
          validate: (v) => {
            if (v !== 'application/json' && v !== 'application/vnd.platform.protobuf')
              throw new Error('supported values: application/json, application/vnd.platform.protobuf');
          },
        },
      ),
      stringFlag(
        'storage-backend',
        'The storage backend for persistence. Options: etcd3 (the version 3 store; the embedded store speaks the same model).',
        this.backend,
        (v) => (this.backend = v),
        {
          validate: (v) => {
            if (v !== 'etcd3') throw new Error('supported values: etcd3');
          },
        },
      ),
      stringFlag(
        'store-cafile',
        'SSL Certificate Authority file used to secure backing store communication.',
        this.caFile,
        (v) => (this.caFile = v),
      ),
      stringFlag(
        'store-certfile',
        'SSL certification file used to secure backing store communication.',
        this.certFile,
        (v) => (this.certFile = v),
      ),
      stringFlag(
        'store-keyfile',
        'SSL key file used to secure backing store communication.',
        this.keyFile,
        (v) => (this.keyFile = v),
      ),
      durationFlag(
        'store-compaction-interval',
        'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.',
        this.compactionIntervalMs,
        (v) => (this.compactionIntervalMs = v),
      ),
      durationFlag(
        'store-count-metric-poll-period',
        'Frequency of polling the backing store for number of resources per type. 0 disables the metric collection.',
        this.countMetricPollPeriodMs,
        (v) => (this.countMetricPollPeriodMs = v),
      ),
      durationFlag(
        'store-db-metric-poll-interval',
        'The interval of requests to poll the backing store and update metric. 0 disables the metric collection.',
        this.dbMetricPollIntervalMs,
        (v) => (this.dbMetricPollIntervalMs = v),
      ),
      durationFlag(
        'store-healthcheck-timeout',
        'The timeout to use when checking the backing store health.',
        this.healthcheckTimeoutMs,
        (v) => (this.healthcheckTimeoutMs = v),
      ),
      stringsFlag(
        'store-servers-overrides',
        'Per-resource backing store servers overrides, comma separated. The individual override format: group/resource#servers, where servers are URLs, semicolon separated.',
        this.overrides,
        (v) => {
          parseServersOverrides(v);
          this.overrides = v;
        },
      ),
      stringFlag(
        'encryption-provider-config',
        'The file containing configuration for encryption providers to be used for storing secrets in the backing store.',
        this.encryptionProviderConfig,
        (v) => (this.encryptionProviderConfig = v),
      ),
      intFlag(
        'lease-reuse-duration-seconds',
        'The time in seconds that each lease is reused. A lower value could avoid large number of objects reusing the same lease.',
        this.leaseReuseDurationSeconds,
        (v) => (this.leaseReuseDurationSeconds = v),
        { range: { min: 1 } },
      ),
      boolFlag('watch-cache', 'Enable watch caching in the apiserver', this.watchCache, (v) => (this.watchCache = v)),
      stringsFlag(
        'watch-cache-sizes',
        'Watch cache size settings for some resources (pods, nodes, etc.), comma separated. The individual setting format: resource[.group]#size.',
        this.watchCacheSizes,
        (v) => (this.watchCacheSizes = v),
      ),
      intFlag(
        'default-watch-cache-size',
        'Default watch cache size. If zero, watch cache will be disabled for resources that do not have a default watch size set.',
        this.defaultWatchCacheSize,
        (v) => (this.defaultWatchCacheSize = v),
        { range: { min: 0 } },
      ),
    ];
  }

  /** `--watch-cache-sizes` parsed; throws naming the bad entry. */
  parsedCacheSizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const entry of this.watchCacheSizes) {
      const m = /^([a-z0-9.-]+)#(\d+)$/.exec(entry);
      if (!m) throw new Error(`invalid value of watch cache size: ${entry}: expected resource[.group]#size`);
      out[m[1] as string] = Number(m[2]);
    }
    return out;
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    this.encryption?.close();
    this.encryption = undefined;
    if (this.encryptionProviderConfig) {
      try {
        this.encryption = loadEncryptionConfig(this.encryptionProviderConfig);
      } catch (err) {
        errs.push(err as Error);
      }
    }
    if (this.servers.length === 0)
      errs.push(
        new Error('--store-servers must be specified (sqlite:///path/state.db for the embedded store, or etcd URLs)'),
      );
    for (const s of this.servers) {
      if (!/^(https?:\/\/[^/]+\/?$|sqlite:\/\/.+)/.test(s))
        errs.push(
          new Error(
            `--store-servers: invalid server ${JSON.stringify(s)}: expected http(s)://host:port or sqlite:///path/state.db`,
          ),
        );
    }
    if (!this.prefix.startsWith('/'))
      errs.push(new Error(`--store-prefix must start with '/' (got ${JSON.stringify(this.prefix)})`));
    try {
      this.parsedCacheSizes();
    } catch (err) {
      errs.push(err as Error);
    }
    return errs;
  }

  applyTo(config: ApiServerFlagsConfig): void {
    config.storage = {
      servers: this.servers,
      prefix: this.prefix.replace(/\/+$/, ''),
      mediaType: this.mediaType,
      healthcheckTimeoutMs: this.healthcheckTimeoutMs,
      compactionIntervalMs: this.compactionIntervalMs,
      overrides: this.overrides,
      countMetricPollPeriodMs: this.countMetricPollPeriodMs,
      dbMetricPollIntervalMs: this.dbMetricPollIntervalMs,
      leaseReuseDurationSeconds: this.leaseReuseDurationSeconds,
      ...(this.encryption ? { encryption: this.encryption } : {}),
      ...(this.caFile || this.certFile || this.keyFile
        ? {
            tls: {
              ...(this.caFile ? { caFile: this.caFile } : {}),
              ...(this.certFile ? { certFile: this.certFile } : {}),
              ...(this.keyFile ? { keyFile: this.keyFile } : {}),
            },
          }
        : {}),
    };
    config.watchCache = {
      enabled: this.watchCache,
      defaultSize: this.defaultWatchCacheSize,
      sizes: this.parsedCacheSizes(),
    };
  }
}

/** The generic serving options: limits, time-outs, shutdown, addresses. */
export class ServerRunOptions extends OptionGroupBase<ApiServerFlagsConfig> {
  advertiseAddress = '';
  externalHostname = '';
  maxRequestsInFlight = 400;
  maxMutatingRequestsInFlight = 200;
  requestTimeoutMs = 60_000;
  minRequestTimeoutSeconds = 1800;
  livezGracePeriodMs = 0;
  apiServerCount = 1;
  endpointReconcilerType: EndpointReconcilerType = 'lease';
  platformServiceNodePort = 0;
  shutdownDelayMs = 0;
  enablePriorityAndFairness = true;
  kubernetesClientCompatibility = true;
  goawayChance = 0;
  serverProcesses = 1;
  eventTtlMs = 3600_000;
  deleteCollectionWorkers = 1;
  serviceClusterIPRange = '';
  serviceNodePortRange = '30000-32767';
  readonly runtimeConfig = new Map<string, string>();
  private readonly inert: string[] = [];

  constructor() {
    super('Generic');
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    const port = this.platformServiceNodePort;
    const range = /^(\d+)-(\d+)$/.exec(this.serviceNodePortRange);
    if (port !== 0 && range && (port < Number(range[1]) || port > Number(range[2]))) {
      errs.push(
        new Error(
          `--platform-service-node-port: ${port} is outside --service-node-port-range ${this.serviceNodePortRange}`,
        ),
      );
    }
    return errs;
  }

  private inertFlag(def: FlagDef): FlagDef {
    return {
      ...def,
      set: (raw) => {
        def.set(raw);
        this.inert.push(`--${def.name}`);
      },
    };
  }

  protected flagDefs(): FlagDef[] {
    return [
      ipFlag(
        'advertise-address',
        'The IP address on which to advertise the apiserver to members of the cluster. If blank, the --bind-address will be used.',
        this.advertiseAddress,
        (v) => (this.advertiseAddress = v),
      ),
      stringFlag(
        'external-hostname',
        'The hostname to use when generating externalized URLs for this master.',
        this.externalHostname,
        (v) => (this.externalHostname = v),
      ),
      intFlag(
        'max-requests-inflight',
        'The maximum number of non-mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.',
        this.maxRequestsInFlight,
        (v) => (this.maxRequestsInFlight = v),
        { range: { min: 0 } },
      ),
      intFlag(
        'max-mutating-requests-inflight',
        'The maximum number of mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.',
        this.maxMutatingRequestsInFlight,
        (v) => (this.maxMutatingRequestsInFlight = v),
        { range: { min: 0 } },
      ),
      durationFlag(
        'request-timeout',
        'An optional field indicating the duration a handler must keep a request open before timing it out.',
        this.requestTimeoutMs,
        (v) => (this.requestTimeoutMs = v),
      ),
      intFlag(
        'min-request-timeout',
        'An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout.',
        this.minRequestTimeoutSeconds,
        (v) => (this.minRequestTimeoutSeconds = v),
        { range: { min: 1 } },
      ),
      durationFlag(
        'livez-grace-period',
        'This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live.',
        this.livezGracePeriodMs,
        (v) => {
          if (v < 0) throw new Error('must not be negative');
          this.livezGracePeriodMs = v;
        },
      ),
      durationFlag(
        'shutdown-delay-duration',
        'Time to delay the termination. During that time the server keeps serving requests normally. The endpoints /healthz and /livez will return success, but /readyz immediately returns failure.',
        this.shutdownDelayMs,
        (v) => (this.shutdownDelayMs = v),
      ),
      boolFlag(
        'kubernetes-client-compatibility',
        "If true, the server also answers Kubernetes' spellings: .k8s.io groups in paths and bodies (as their .platform groups), application/vnd.kubernetes.protobuf and the meta.k8s.io views, so that kubectl, client-go programs and the official clients work unchanged; if false, only the platform's spellings are served",
        this.kubernetesClientCompatibility,
        (v) => (this.kubernetesClientCompatibility = v),
      ),
      boolFlag(
        'enable-priority-and-fairness',
        'If true and the APIPriorityAndFairness feature gate is enabled, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness',
        this.enablePriorityAndFairness,
        (v) => (this.enablePriorityAndFairness = v),
      ),
      floatFlag(
        'goaway-chance',
        'To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY). Min is 0 (off), Max is .02 (1/50 requests).',
        this.goawayChance,
        (v) => {
          if (v < 0 || v > 0.02) throw new Error('must be between 0 and 0.02');
          this.goawayChance = v;
        },
      ),
      intFlag(
        SERVER_PROCESSES_FLAG,
        'The number of processes serving the API on the secure port, each a whole API server over the same backing store (one primary process supervises them, restarts one that dies, and stops them on SIGTERM). 0: the number of CPUs with etcd, 1 with the embedded store, which only one process may own. The default is 1 until several are shown to pay for their memory (each adds about 130 MiB).',
        this.serverProcesses,
        (v) => (this.serverProcesses = v),
        { range: { min: 0 } },
      ),
      durationFlag('event-ttl', 'Amount of time to retain events.', this.eventTtlMs, (v) => (this.eventTtlMs = v)),
      intFlag(
        'delete-collection-workers',
        'Number of workers spawned for DeleteCollection call. These are used to speed up namespace cleanup.',
        this.deleteCollectionWorkers,
        (v) => (this.deleteCollectionWorkers = v),
        { range: { min: 1 } },
      ),
      {
        name: 'runtime-config',
        type: 'mapStringString',
        usage:
          'A set of key=value pairs that enable or disable built-in APIs. Supported options are:\nv1=true|false for the core API group\n<group>/<version>=true|false for a specific API group and version (e.g. apps/v1=true)\napi/all=true|false controls all API versions\napi/ga=true|false controls all API versions of the form v[0-9]+\napi/beta=true|false controls all API versions of the form v[0-9]+beta[0-9]+\napi/alpha=true|false controls all API versions of the form v[0-9]+alpha[0-9]+\napi/legacy is deprecated, and will be removed in a future version',
        defaultText: '',
        set: (raw) => {
          // `key` alone means `key=` (true), as in Kubernetes' ConfigurationMap.
          for (const pair of raw.split(',')) {
            const p = pair.trim();
            if (p === '') continue;
            const eq = p.indexOf('=');
            const key = (eq < 0 ? p : p.slice(0, eq)).trim();
            if (key === '') throw new Error('malformed pair, expect key=value');
            this.runtimeConfig.set(key, eq < 0 ? '' : p.slice(eq + 1).trim());
          }
          checkRuntimeConfig(this.runtimeConfig);
        },
      },
      intFlag(
        'apiserver-count',
        'The number of apiservers running in the cluster, must be a positive number. (In use when --endpoint-reconciler-type=master-count is enabled.)',
        this.apiServerCount,
        (v) => (this.apiServerCount = v),
        { range: { min: 1 } },
      ),
      stringFlag(
        'endpoint-reconciler-type',
        'Use an endpoint reconciler (master-count, lease, none)',
        this.endpointReconcilerType,
        (v) => (this.endpointReconcilerType = v as EndpointReconcilerType),
        {
          validate: (v) => {
            if (!(ENDPOINT_RECONCILER_TYPES as readonly string[]).includes(v))
              throw new Error(`supported values: ${ENDPOINT_RECONCILER_TYPES.join(', ')}`);
          },
        },
      ),
      stringFlag(
        'service-cluster-ip-range',
        'A CIDR notation IP range from which to assign service cluster IPs. This must not overlap with any IP ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed.',
        this.serviceClusterIPRange,
        (v) => (this.serviceClusterIPRange = v),
        { validate: validateServiceClusterIPRange },
      ),
      stringFlag(
        'service-node-port-range',
        "A port range to reserve for services with NodePort visibility. Example: '30000-32767'. Inclusive at both ends of the range.",
        this.serviceNodePortRange,
        (v) => (this.serviceNodePortRange = v),
        {
          type: 'portRange',
          validate: (v) => {
            const m = /^(\d+)-(\d+)$/.exec(v);
            if (!m || Number(m[1]) > Number(m[2]) || Number(m[2]) > 65535)
              throw new Error('must be N1-N2 with 0 <= N1 <= N2 <= 65535');
          },
        },
      ),
      intFlag(
        'platform-service-node-port',
        'If non-zero, the master service will be of type NodePort, using this as the value of the port. If zero, the master service will be of type ClusterIP.',
        this.platformServiceNodePort,
        (v) => (this.platformServiceNodePort = v),
        { range: { min: 0, max: 65535 } },
      ),
      this.inertFlag(
        stringFlag(
          'master-service-namespace',
          'The namespace from which the master services should be injected into pods.',
          'default',
          () => {},
          { deprecated: 'This flag will be removed in a future version.' },
        ),
      ),
      this.inertFlag(boolFlag('allow-privileged', 'If true, allow privileged containers.', false, () => {})),
      this.inertFlag(
        boolFlag(
          'enable-garbage-collector',
          'Enables the generic garbage collector. MUST be synced with the corresponding flag of the controller manager.',
          true,
          () => {},
        ),
      ),
      this.inertFlag(
        intFlag(
          'identity-lease-duration-seconds',
          'The duration of apiserver identity leases in seconds, must be a positive number.',
          3600,
          () => {},
          { range: { min: 1 } },
        ),
      ),
      this.inertFlag(
        intFlag(
          'identity-lease-renew-interval-seconds',
          'The interval of apiserver identity lease renewal in seconds, must be a positive number.',
          10,
          () => {},
          { range: { min: 1 } },
        ),
      ),
      this.inertFlag(
        stringsFlag(
          'cloud-provider-c-l7lb-src-cidrs',
          'CIDRs opened in the cloud provider C firewall for layer-7 load balancer traffic proxy & health checks',
          ['130.211.0.0/22', '35.191.0.0/16'],
          () => {},
        ),
      ),
    ];
  }

  applyTo(config: ApiServerFlagsConfig): void {
    if (this.advertiseAddress) config.advertiseAddress = this.advertiseAddress;
    config.limits = {
      maxRequestsInFlight: this.maxRequestsInFlight,
      maxMutatingRequestsInFlight: this.maxMutatingRequestsInFlight,
      requestTimeoutMs: this.requestTimeoutMs,
      minRequestTimeoutSeconds: this.minRequestTimeoutSeconds,
      maxRequestBodyBytes: 3 * 1024 * 1024,
      deleteCollectionWorkers: this.deleteCollectionWorkers,
    };
    config.eventTtlSeconds = Math.ceil(this.eventTtlMs / 1000);
    config.services = {
      ...(this.serviceClusterIPRange ? { clusterIPRange: this.serviceClusterIPRange } : {}),
      nodePortRange: this.serviceNodePortRange,
    };
    config.shutdownDelayMs = this.shutdownDelayMs;
    config.livezGracePeriodMs = this.livezGracePeriodMs;
    config.goawayChance = this.goawayChance;
    config.serverProcesses = this.serverProcesses;
    config.bootstrap = {
      endpointReconcilerType: this.endpointReconcilerType,
      apiServerCount: this.apiServerCount,
      platformServiceNodePort: this.platformServiceNodePort,
    };
    if (this.runtimeConfig.size > 0) config.runtimeConfig = new Map(this.runtimeConfig);
    (config.inert ??= []).push(...this.inert);
    config.priorityAndFairness = this.enablePriorityAndFairness;
    config.kubernetesClientCompatibility = this.kubernetesClientCompatibility;
  }
}

const NODE_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

/**
 * `--agent-*`: how the server reaches node agents for `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`
 * (the renamed `--kubelet-*` options; the port is the node's `daemonEndpoints`, as since Kubernetes 1.21).
 */
export class AgentClientOptions extends OptionGroupBase<ApiServerFlagsConfig> {
  certificateAuthority = '';
  clientCertificate = '';
  clientKey = '';
  preferredAddressTypes = [...NODE_ADDRESS_TYPES];
  timeoutMs = 5000;

  constructor() {
    super('Node agent connections');
  }

  protected override validateValues(): Error[] {
    if (Boolean(this.clientCertificate) !== Boolean(this.clientKey))
      return [new Error('--agent-client-certificate and --agent-client-key must be given together')];
    return [];
  }

  protected flagDefs(): FlagDef[] {
    return [
      stringFlag(
        'agent-certificate-authority',
        'Path to a cert file for the certificate authority.',
        this.certificateAuthority,
        (v) => (this.certificateAuthority = v),
      ),
      stringFlag(
        'agent-client-certificate',
        'Path to a client cert file for TLS.',
        this.clientCertificate,
        (v) => (this.clientCertificate = v),
      ),
      stringFlag('agent-client-key', 'Path to a client key file for TLS.', this.clientKey, (v) => (this.clientKey = v)),
      stringsFlag(
        'agent-preferred-address-types',
        'List of the preferred NodeAddressTypes to use for node agent connections.',
        this.preferredAddressTypes,
        (v) => {
          const bad = v.filter((t) => !NODE_ADDRESS_TYPES.includes(t));
          if (bad.length)
            throw new Error(`unknown address type(s) ${bad.join(', ')}: known: ${NODE_ADDRESS_TYPES.join(', ')}`);
          this.preferredAddressTypes = v;
        },
      ),
      durationFlag('agent-timeout', 'Timeout for node agent operations.', this.timeoutMs, (v) => (this.timeoutMs = v)),
    ];
  }

  applyTo(config: ApiServerFlagsConfig): void {
    config.agentClient = {
      ...(this.certificateAuthority ? { caFile: this.certificateAuthority } : {}),
      ...(this.clientCertificate ? { certFile: this.clientCertificate, keyFile: this.clientKey } : {}),
      preferredAddressTypes: this.preferredAddressTypes,
      timeoutMs: this.timeoutMs,
    };
  }
}

/** One CIDR, or two of different families (dual stack); each no larger than Kubernetes allows. */
function validateServiceClusterIPRange(v: string): void {
  if (v === '') return;
  const cidrs = v.split(',').map((c) => c.trim());
  if (cidrs.length > 2) throw new Error('may specify no more than two CIDRs (one per IP family)');
  const families = cidrs.map((c) => cidrRange(c).family);
  if (families.length === 2 && families[0] === families[1]) {
    throw new Error('the two CIDRs of a dual-stack range must be of different IP families (one IPv4, one IPv6)');
  }
}

/** Fails on `--runtime-config` entries the server cannot honour (the flag's error names the bad entry). */
function checkRuntimeConfig(entries: ReadonlyMap<string, string>): void {
  resolveResourceConfig(entries, servedResources(builtinScheme()));
}

/** A flag that exists with its default and rejects any other value as not supported yet. */
function unsupported(
  name: string,
  type: string,
  usage: string,
  defaultText: string,
  isDefault: (raw: string) => boolean,
  extra: Partial<FlagDef> = {},
): FlagDef {
  return {
    name,
    type,
    usage,
    defaultText,
    ...extra,
    set: (raw) => {
      if (!isDefault(raw)) throw new Error(NOT_SUPPORTED);
    },
  };
}

const empty = (raw: string): boolean => raw === '';

/**
 * Options of Document 2 for features this server does not have yet (egress selection, cloud
 * providers): defined with their defaults; any other value is rejected as not
 * supported yet, since each of them changes whom the server trusts or talks to.
 */
export class SecurityOptions extends OptionGroupBase<ApiServerFlagsConfig> {
  constructor() {
    super('Not supported yet');
  }

  protected flagDefs(): FlagDef[] {
    const str = (name: string, usage: string): FlagDef => unsupported(name, 'string', usage, '', empty);
    return [
      str('egress-selector-config-file', 'File with apiserver egress selector configuration.'),
      str('cloud-config', 'The path to the cloud provider configuration file. Empty string for no configuration file.'),
      str('cloud-provider', 'The provider for cloud services. Empty string for no provider.'),
      str(
        'cloud-b-container-registry-config',
        'Path to the file containing the container registry configuration of cloud provider B.',
      ),
    ];
  }

  applyTo(): void {}
}
