/**
 * The API server, assembled from a validated configuration (model: apiserver `pkg/server/config.go` and
 * kube-apiserver's `CreateServerChain`): the backing store, one registry store per resource (with its watch cache),
 * the routing table, the handler chain on the common secure server, health checks and post-start hooks.
 *
 * Handler chain, outermost first: request info → deadline (non-long-running) → in-flight limits → API dispatch
 * (discovery and resources); anything else falls through to the secure server's own routes (health, metrics,
 * version, profiling) and then to a 404 Status. Authentication, audit and authorization slot in before the limits.
 */
import { type IncomingMessage, ServerResponse } from 'node:http';

import {
  type ApiObject,
  builtinScheme,
  crdV1beta1ToV1,
  crdV1ToV1beta1,
  type CustomResourceDefinition,
  type CustomResourceDefinitionV1beta1,
  errorToStatus,
  type Event,
  eventsV1ToEvent,
  type EventsV1Event,
  eventToEventsV1,
  jsonCodec,
  type Kind,
  PROTOBUF_MEDIA_TYPE,
  ProtobufCodec,
  type Scheme,
} from '@platform/api';
import { type Logger, namedCheck, SecureServer, type SecureServingInfo } from '@platform/common';
import { type WebSocket, WebSocketServer } from 'ws';

import { ApiExtensions, type CustomObjectStorage } from '../apiextensions/server';
import { Aggregator, type AggregatorConfig } from '../aggregator/aggregator';
import { type Authentication } from '../auth/authentication/authentication';
import { discoveryHandler } from '../auth/authentication/discovery';
import { objectReader } from '../auth/authentication/objects';
import { type Authenticator, requestAuthenticator } from '../auth/authenticator';
import { registryAuthorizationHost } from '../auth/authorization/host';
import { RbacIndex } from '../auth/authorization/rbac/index';
import { ALWAYS_ALLOW, type Authorizer } from '../auth/authorizer';
import { ApiInstaller, notFoundPath } from '../endpoints/installer';
import { isLongRunning } from '../endpoints/request-info';
import { buildOpenApi, OPENAPI_PROTOBUF_MEDIA_TYPE, type OpenApiDocument } from '../endpoints/openapi';
import { type AdmissionConfig, serverAdmission } from '../admission/server-admission';
import { type Admission, ALWAYS_ADMIT, type RequestScope } from '../endpoints/handlers/scope';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { authenticateRequest, authentication } from '../filters/authentication';
import { authorization, authorizeRequest } from '../filters/authorization';
import { type Auditor, defaultBodyDecoder } from '../audit/auditor';
import { type AuditConfig, buildAuditor } from '../audit/config';
import { audit, auditPanics, auditReceived, auditRejected, auditUpgrade } from '../filters/audit';
import { connectionThrottle } from '../filters/connection-throttle';
import { cors } from '../filters/cors';
import { kubernetesSpellingsRefused } from '../filters/kubernetes-spellings';
import { hsts } from '../filters/hsts';
import { getRequestInfo, getUser, type Middleware } from '../filters/request-info';
import { maxInFlight } from '../filters/max-in-flight';
import { deadlineContext, requestDeadline } from '../filters/timeout';
import { PriorityAndFairness } from '../flowcontrol/controller';
import {
  builtinResource,
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  DEFAULT_SERVICE_NODE_PORT_RANGE,
  type InstallContext,
  isVirtualResource,
} from '../registry/builtin';
import { statusStrategy } from '../registry/generic/default-strategy';
import { selectionPredicate } from '../registry/generic/predicate';
import { GenericStore, type StoreDefinition } from '../registry/generic/store';
import {
  type Getter,
  type RequestContext,
  type RestStorage,
  type UpdatedObjectInfo,
  type Updater,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../registry/rest/rest';
import { storedVersionConversion } from '../registry/stored-versions';
import { type Codec } from '../storage/api-object';
import { Cacher } from '../storage/cacher/cacher';
import { ConvertingStorage, type StorageConversion } from '../storage/converting';
import { type EncryptionConfig } from '../storage/encryption/config';
import { type Store } from '../storage/interface';
import { StoreFactory } from '../storage/factory';
import { Compactor, startStorageMetricsPolling } from '../storage/maintenance';
import { DEFAULT_STORAGE_CONFIG, storeWriteTimeoutFor, type StorageConfig } from '../storage/options';
import { type Storage, StoreStorage } from '../storage/storage';
import {
  type AgentClientConfig,
  AgentTransport,
  DEFAULT_AGENT_CLIENT,
  PodConnectREST,
} from '../registry/core/pod/agent-proxy';
import { authenticationInfoData } from './bootstrap/authentication-info';
import { type Bootstrap, type BootstrapConfig, installBootstrap } from './bootstrap/bootstrap';
import { ReadinessGate } from './readiness-gate';
import { resolveResourceConfig, servedResources } from './resource-config';

/** Everything the API server is built from (what the command line options produce). */
export interface ApiServerConfig {
  serving: SecureServingInfo;
  logger: Logger;
  storage: {
    /** `--store-servers`: `sqlite:///path/state.db`, or etcd client URLs. */
    servers: string[];
    /** `--store-prefix`. */
    prefix: string;
    /** `--storage-media-type`. */
    mediaType: string;
    /** `--store-cafile`, `--store-certfile`, `--store-keyfile`. */
    tls?: { caFile?: string; certFile?: string; keyFile?: string };
    /** `--store-healthcheck-timeout`, ms. */
    healthcheckTimeoutMs: number;
    /** `--store-compaction-interval`, ms; 0 disables compaction. */
    compactionIntervalMs?: number;
    /** `--store-servers-overrides`: `group/resource#server;server` (core group: `/pods#...`). */
    overrides?: string[];
    /** `--store-count-metric-poll-period`, ms; 0 disables `apiserver_storage_objects`. */
    countMetricPollPeriodMs?: number;
    /** `--store-db-metric-poll-interval`, ms; 0 disables `apiserver_storage_db_total_size_in_bytes`. */
    dbMetricPollIntervalMs?: number;
    /** `--lease-reuse-duration-seconds`. */
    leaseReuseDurationSeconds?: number;
    /** `--encryption-provider-config`: the resources stored encrypted; closed with the server. */
    encryption?: EncryptionConfig;
  };
  watchCache: {
    /** `--watch-cache`. */
    enabled: boolean;
    /** `--default-watch-cache-size`; 0 disables the cache of resources without their own size. */
    defaultSize: number;
    /** `--watch-cache-sizes`: `resource[.group]` → size. */
    sizes: Record<string, number>;
  };
  limits: {
    maxRequestsInFlight: number;
    maxMutatingRequestsInFlight: number;
    /** `--request-timeout`, ms. */
    requestTimeoutMs: number;
    /** `--min-request-timeout`, seconds. */
    minRequestTimeoutSeconds: number;
    maxRequestBodyBytes: number;
    deleteCollectionWorkers: number;
  };
  /** `--event-ttl`, seconds. */
  eventTtlSeconds: number;
  /** `--service-cluster-ip-range` and `--service-node-port-range` (Kubernetes' defaults when unset). */
  services?: { clusterIPRange?: string; nodePortRange?: string };
  /** `--advertise-address` (or the bind address), for `/api`'s serverAddressByClientCIDRs. */
  advertiseAddress: string;
  enableProfiling: boolean;
  /** `--shutdown-delay-duration`, ms. */
  shutdownDelayMs: number;
  /** `--livez-grace-period`, ms: for this long after start, `/livez` counts unfinished post-start hooks as passing. */
  livezGracePeriodMs?: number;
  /** `--goaway-chance`: the fraction of HTTP/2 requests after which the connection gets a GOAWAY. Default 0. */
  goawayChance?: number;
  /** The logging backend, flushed by the `log` check. Unset: the check only proves the event loop answers. */
  logging?: { flush(): void };
  /**
   * The bootstrap controller: `--endpoint-reconciler-type`, `--apiserver-count`, `--platform-service-node-port`,
   * and the interval of its passes (tests shorten it).
   */
  bootstrap?: BootstrapConfig;
  /** `--runtime-config` entries (validated): which group versions and resources are served. */
  runtimeConfig?: ReadonlyMap<string, string>;
  /**
   * Who may do what: the authenticator chain (401 when it finds no user) and the authorizer chain (403 unless it
   * allows). Unset: anonymous requests, everything allowed.
   */
  security?: { authenticator?: Authenticator; authorizer?: Authorizer };
  /** `--audit-*`: what is recorded, and where. Unset: nothing is. */
  audit?: AuditConfig;
  /** `--cors-allowed-origins`, `--strict-transport-security-directives`, `--max-connection-bytes-per-sec`. */
  transport?: { corsAllowedOrigins?: string[]; hstsDirectives?: string[]; maxConnectionBytesPerSec?: number };
  /**
   * The authentication options (`--anonymous-auth`, tokens, certificates, OIDC, webhook, service accounts): replaces
   * `security.authenticator`, and brings the TokenRequest subresource and the service account issuer discovery.
   */
  authentication?: Authentication;
  /** The admission chain (`--enable-admission-plugins` ...). Unset: everything is admitted. */
  admission?: AdmissionConfig;
  /** `--agent-*`: how `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward` reach node agents. */
  agentClient?: AgentClientConfig;
  /**
   * The aggregation layer: `--enable-aggregator-routing`, and the proxy client certificate when it is not the
   * admission one (`--proxy-client-cert-file`); the user headers are `--requestheader-*`'s.
   */
  aggregator?: AggregatorConfig;
  /** `--enable-priority-and-fairness` with the APIPriorityAndFairness gate: queuing replaces max-in-flight. Unset: off. */
  priorityAndFairness?: boolean;
  /** `--kubernetes-client-compatibility` (default true): the `.k8s.io` and Kubernetes media type aliases. */
  kubernetesClientCompatibility?: boolean;
  /** Injectable clock (tests). */
  now?: () => number;
  /** The ServerSideApply feature gate (beta, on unless false): apply patches and `metadata.managedFields`. */
  serverSideApply?: boolean;
  /**
   * Hold each request (not health checks or metrics) until this server is ready, at most 30 s: set in each of
   * several `--server-processes`, which share one port (see readiness-gate.ts). Unset: requests are served at once.
   */
  holdRequestsUntilReady?: boolean;
}

/**
 * Resources stored in another group's shape (`group/resource` → the conversion to it): events.platform/v1 Events
 * are core/v1 Events in the store, so both versions see every event.
 */
const STORED_AS: Record<string, StorageConversion> = {
  'events.platform/events': {
    toStored: (o) => eventsV1ToEvent(o as EventsV1Event) as ApiObject,
    fromStored: (o) => eventToEventsV1(o as Event) as ApiObject,
  },
  // v1beta1 CRDs are stored as v1 (keyed by group/version/resource: the other version is stored as served).
  'apiextensions.platform/v1beta1/customresourcedefinitions': {
    toStored: (o) => crdV1beta1ToV1(o as CustomResourceDefinitionV1beta1) as ApiObject,
    fromStored: (o) => crdV1ToV1beta1(o as CustomResourceDefinition) as ApiObject,
  },
};

export { SYSTEM_NAMESPACES } from './bootstrap/controller';

/** The storage configuration of the store factory, from the server's. */
function storageConfig(c: ApiServerConfig): StorageConfig {
  const s = c.storage;
  return {
    ...DEFAULT_STORAGE_CONFIG,
    storeServers: s.servers,
    storeServersOverrides: s.overrides ?? [],
    storePrefix: s.prefix,
    storeHealthcheckTimeoutMs: s.healthcheckTimeoutMs,
    storageMediaType: s.mediaType,
    leaseReuseDurationSeconds: s.leaseReuseDurationSeconds ?? DEFAULT_STORAGE_CONFIG.leaseReuseDurationSeconds,
    storeWriteTimeoutMs: storeWriteTimeoutFor(c.limits.requestTimeoutMs),
    ...(s.tls?.caFile ? { storeCaFile: s.tls.caFile } : {}),
    ...(s.tls?.certFile ? { storeCertFile: s.tls.certFile } : {}),
    ...(s.tls?.keyFile ? { storeKeyFile: s.tls.keyFile } : {}),
  };
}

/** A status subresource: get and update of the parent's storage, with the status strategy. */
class StatusStore implements Getter, Updater {
  constructor(
    readonly kind: Kind,
    private readonly parent: GenericStore,
    private readonly status: GenericStore,
  ) {}

  get(ctx: RequestContext, name: string, o: { resourceVersion?: string }): Promise<ApiObject> {
    return this.parent.get(ctx, name, o);
  }

  update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    return this.status.update(ctx, info, validateCreate, validateUpdate, o);
  }
}

/** A running API server. */
export class ApiServer {
  readonly secure: SecureServer;
  readonly installer: ApiInstaller;
  readonly scheme: Scheme;
  private readonly serializers: Serializers;
  private readonly caches: Cacher[] = [];
  private readonly stores = new Map<string, GenericStore>();
  private readonly bases = new Map<Store, StoreStorage>();
  private readonly now: () => number;
  private readonly authenticator: Authenticator;
  private readonly authorizer: Authorizer;
  private readonly admission: Admission;
  /** Set by `installAudit` when a policy and a sink are configured. */
  private auditor: Auditor | undefined;
  /** Roles and bindings in memory, fed by their watches: RBAC decisions and escalation checks read it. */
  private readonly rbac = new RbacIndex();
  /** Custom resources (undefined when CRDs are not served, e.g. turned off with --runtime-config). */
  apiExtensions: ApiExtensions | undefined;
  /** API Priority and Fairness, when on (set by `installChain`). */
  private priorityAndFairness: PriorityAndFairness | undefined;
  /** The bootstrap controller and RBAC reconciler (set by `installChecks`). */
  bootstrap!: Bootstrap;
  /** The aggregation layer: APIServices, proxying to extension servers, merged discovery (set by `create`). */
  aggregator!: Aggregator;
  /** `--agent-*`: the credentials files are read at start, so a bad one fails it. */
  private readonly agentTransport: AgentTransport;
  /** With `holdRequestsUntilReady`: what requests and upgrades wait for (set by `installChain`). */
  private readinessGate: ReadinessGate | undefined;

  private constructor(
    private readonly config: ApiServerConfig,
    private readonly factory: StoreFactory,
    /** The Store of each resource (`group/resource`), opened before anything is installed. */
    private readonly storeOf: Map<string, Store>,
  ) {
    this.now = config.now ?? Date.now;
    this.agentTransport = new AgentTransport(config.agentClient ?? DEFAULT_AGENT_CLIENT);
    this.authenticator = config.security?.authenticator ?? requestAuthenticator([], true);
    this.authorizer = config.security?.authorizer ?? ALWAYS_ALLOW;
    this.scheme = builtinScheme();
    this.serializers = { protobuf: new ProtobufCodec(this.scheme) };
    this.secure = new SecureServer({
      serving: config.serving,
      logger: config.logger,
      enableProfiling: config.enableProfiling,
      shutdownDelayMs: config.shutdownDelayMs,
      livezGracePeriodMs: config.livezGracePeriodMs ?? 0,
      goawayChance: config.goawayChance ?? 0,
      logging: config.logging ?? { flush: () => {} },
      notFound: (_req, res) => writeError(res, notFoundPath(), this.serializers),
    });
    const port = (): number => {
      try {
        return this.secure.address().port;
      } catch {
        return config.serving.port;
      }
    };
    this.installer = new ApiInstaller(this.serializers, () => `${config.advertiseAddress}:${port()}`);
    this.installer.kubernetesClientCompatibility = config.kubernetesClientCompatibility !== false;
    this.admission = config.admission
      ? serverAdmission(config.admission, {
          scheme: this.scheme,
          installer: this.installer,
          logger: config.logger,
          now: this.now,
          signal: this.secure.signal,
          authorizer: this.authorizer,
        })
      : ALWAYS_ADMIT;
    // Authenticators read service accounts, secrets and pods from the stores when requests come.
    if (config.authentication)
      this.authenticator = config.authentication.requestAuthenticator({
        objects: objectReader((group, resource) => this.stores.get(`${group}/${resource}`), this.now),
        signal: this.secure.signal,
        log: config.logger,
        now: this.now,
      });
  }

  /** Builds the server: opens the store and prepares every resource. Nothing listens until `start()`. */
  static async create(config: ApiServerConfig): Promise<ApiServer> {
    const factory = new StoreFactory(storageConfig(config));
    const storeOf = new Map<string, Store>();
    try {
      // Every resource's store is opened now (per --store-servers-overrides), so a bad server fails the start.
      for (const kind of builtinScheme().kinds()) {
        const key = `${kind.group}/${kind.plural}`;
        if (!storeOf.has(key)) storeOf.set(key, await factory.storeFor({ group: kind.group, resource: kind.plural }));
      }
      const server = new ApiServer(config, factory, storeOf);
      await server.installAudit();
      server.installResources();
      server.installApiExtensions();
      server.installAggregator();
      server.installChain();
      server.installUpgrades();
      server.installChecks();
      return server;
    } catch (err) {
      await factory.close();
      throw err;
    }
  }

  /** The Store of a resource (the default one for resources without their own). */
  private storeFor(group: string, resource: string): Store {
    const store = this.storeOf.get(`${group}/${resource}`) ?? this.storeOf.get('/namespaces');
    if (!store) throw new Error(`no store opened for ${group}/${resource}`);
    return store;
  }

  /** The typed storage over a resource's Store, shared by every resource on the same Store. */
  private baseStorage(kind: Kind): StoreStorage {
    const store = this.storeFor(kind.group, kind.plural);
    const transformer = this.config.storage.encryption?.transformerFor(kind.group, kind.plural);
    if (transformer) {
      // An encrypted resource has storage of its own: its values pass through its providers.
      return new StoreStorage(store, this.codec(), {
        healthcheckTimeoutMs: this.config.storage.healthcheckTimeoutMs,
        transformer,
      });
    }
    let base = this.bases.get(store);
    if (!base) {
      base = new StoreStorage(store, this.codec(), { healthcheckTimeoutMs: this.config.storage.healthcheckTimeoutMs });
      this.bases.set(store, base);
    }
    return base;
  }

  private codec(): Codec {
    const t = this.config.storage.mediaType;
    if (t === PROTOBUF_MEDIA_TYPE) return this.serializers.protobuf;
    if (t === 'application/json') return jsonCodec;
    throw new Error(
      `--storage-media-type: unsupported media type ${JSON.stringify(t)}: supported: application/json, ${PROTOBUF_MEDIA_TYPE}`,
    );
  }

  private cacheSize(kind: Pick<Kind, 'group' | 'plural'>): number {
    const c = this.config.watchCache;
    if (!c.enabled) return 0;
    const name = kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
    return c.sizes[name] ?? c.defaultSize;
  }

  /** Kubernetes 1.31's metric of ConsistentListFromCache: fallback="true" when the store answered the list. */
  private consistentReadsMetric: ReturnType<SecureServer['metrics']['counter']> | undefined;

  /** The watch cache of the resource under `keyPrefix` (`resource`: plural.group), counted in the metrics. */
  private newCacher(storage: Storage, keyPrefix: string, resource: string, capacity: number): Cacher {
    const consistentReads = (this.consistentReadsMetric ??= this.secure.metrics.counter({
      name: 'apiserver_watch_cache_consistent_read_total',
      help: 'Counter for consistent reads from cache.',
      labelNames: ['resource', 'success', 'fallback'],
    }));
    return new Cacher(storage, {
      resourcePrefix: keyPrefix,
      capacity,
      now: this.now,
      onConsistentList: (o) =>
        consistentReads.inc({ resource, success: String(o.success), fallback: String(o.fallback) }),
    });
  }

  private installResources(): void {
    const served = resolveResourceConfig(this.config.runtimeConfig ?? new Map(), servedResources(this.scheme));
    const isServed = (kind: Kind): boolean =>
      served.resourceEnabled(kind.group ? `${kind.group}/${kind.version}` : kind.version, kind.plural);
    const definitions = new Map<string, StoreDefinition>();
    const install: InstallContext = {
      definitionOf: (group, resource) => definitions.get(`${group}/${resource}`),
      kindFor: (apiVersion, kind) => this.scheme.kindFor(apiVersion, kind),
      rangeStorage: new StoreStorage(this.storeFor('', 'services'), jsonCodec, {
        healthcheckTimeoutMs: this.config.storage.healthcheckTimeoutMs,
      }),
      storePrefix: this.config.storage.prefix,
      serviceClusterIPRange: this.config.services?.clusterIPRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE,
      serviceNodePortRange: this.config.services?.nodePortRange ?? DEFAULT_SERVICE_NODE_PORT_RANGE,
      ...(this.config.authentication?.tokenIssuer
        ? { serviceAccountTokens: this.config.authentication.tokenIssuer }
        : {}),
      ...(this.config.authentication?.tokenReviewer()
        ? { tokenReviewer: this.config.authentication.tokenReviewer()! }
        : {}),
      authorizer: this.authorizer,
      rbacRules: this.rbac,
      agentTransport: this.agentTransport,
    };
    // Versions of one group share their resource's storage (and watch cache), as in Kubernetes. Objects are stored
    // in the version that wrote them and read back in any version of the group; the schemas of those versions are
    // compatible, so no conversion runs. A resource another group also serves with a different schema (core and
    // events.platform Events) is stored in the owner's shape under the owner's keys, converted on the way in and out.
    const storageOfPrefix = new Map<string, Storage>();
    for (const kind of this.scheme.kinds()) {
      if (kind.spec.persisted === false) continue;
      const behaviour = builtinResource(kind);
      if (!behaviour || isVirtualResource(behaviour) || !isServed(kind)) continue;
      const keyPrefix = `${this.config.storage.prefix}/${kind.plural}`;
      let storage = storageOfPrefix.get(keyPrefix);
      if (!storage) {
        const base = this.baseStorage(kind);
        storage = base;
        const size = this.cacheSize(kind);
        if (size > 0) {
          const resource = kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
          const cacher = this.newCacher(base, keyPrefix, resource, size);
          this.caches.push(cacher);
          storage = cacher;
        }
        storageOfPrefix.set(keyPrefix, storage);
      }
      const conversion =
        STORED_AS[`${kind.group}/${kind.version}/${kind.plural}`] ?? STORED_AS[`${kind.group}/${kind.plural}`];
      const stored = conversion ?? storedVersionConversion(kind);
      if (stored) storage = new ConvertingStorage(storage, stored);
      const definition: StoreDefinition = {
        kind,
        keyPrefix,
        storage,
        predicate: (o: Parameters<typeof selectionPredicate>[1]) => selectionPredicate(kind, o),
        deleteCollectionWorkers: this.config.limits.deleteCollectionWorkers,
        returnDeletedObject: true,
        ...(kind.kind === 'Event' ? { ttlSeconds: this.config.eventTtlSeconds } : {}),
        createStrategy: behaviour.strategy,
        updateStrategy: behaviour.strategy,
        ...(behaviour.deleteStrategy ? { deleteStrategy: behaviour.deleteStrategy } : {}),
        ...(behaviour.nameValidator ? { nameValidator: behaviour.nameValidator } : {}),
      };
      const main = behaviour.store ? behaviour.store(definition, install) : new GenericStore(definition);
      definitions.set(`${kind.group}/${kind.plural}`, definition);
      this.stores.set(`${kind.group}/${kind.plural}`, main);
      this.installer.add(this.scope(kind, kind, main, ''));
      for (const [name, sub] of Object.entries(kind.subresources)) {
        const bodyKind = sub.kind
          ? this.scheme.kindFor(
              sub.kind.group ? `${sub.kind.group}/${sub.kind.version}` : sub.kind.version,
              sub.kind.kind,
            )
          : kind;
        if (!bodyKind) throw new Error(`${kind.plural}/${name}: the scheme has no kind ${JSON.stringify(sub.kind)}`);
        let rest: RestStorage | undefined;
        if (name === 'status') {
          const status = new GenericStore({ ...definition, updateStrategy: behaviour.status ?? statusStrategy() });
          rest = new StatusStore(kind, main, status);
        } else {
          // A subresource the table does not build (serviceaccounts/token) is not served yet.
          rest = behaviour.subresources?.[name]?.({ ...install, kind, bodyKind, main, definition });
        }
        if (rest) this.installer.add(this.scope(bodyKind, kind, rest, name));
      }
    }
    // Virtual resources last: they may reach the stores of the others when a request comes.
    for (const kind of this.scheme.kinds()) {
      const behaviour = builtinResource(kind);
      if (behaviour && isVirtualResource(behaviour) && isServed(kind))
        this.installer.add(this.scope(kind, kind, behaviour.virtual(kind, install), ''));
    }
  }

  /** CustomResourceDefinitions and the custom objects they define (`../apiextensions`). */
  private installApiExtensions(): void {
    if (
      !this.installer.scopeFor({
        apiGroup: 'apiextensions.platform',
        apiVersion: 'v1',
        resource: 'customresourcedefinitions',
        subresource: '',
      } as never)
    )
      return;
    this.apiExtensions = new ApiExtensions({
      installer: this.installer,
      scheme: this.scheme,
      storePrefix: this.config.storage.prefix,
      storageFor: (group, resource, decoded) => this.customObjectStorage(group, resource, decoded),
      scope: (kind, resourceKind, storage, subresource) => this.scope(kind, resourceKind, storage, subresource),
      deleteCollectionWorkers: this.config.limits.deleteCollectionWorkers,
      now: this.now,
      log: this.config.logger,
    });
    this.apiExtensions.install((name, hook) => this.secure.addPostStartHook(name, hook));
  }

  /**
   * The storage of one generation of a CRD's custom objects: JSON in the store of their resource (1.21 never stores
   * them as Protobuf), `decoded` applied to every object decoded, behind a watch cache sized and counted as built-in
   * resources' are (as 1.21's crdHandler builds a cacher per CRD change). The cache starts at once, is stopped on
   * `release()`, and is one of `this.caches` meanwhile, so shutdown stops it too. (The post-start hook that starts
   * `this.caches` has taken them before any CRD is served: CRDs are served after the CRD informer's first list.)
   */
  private customObjectStorage(
    group: string,
    resource: string,
    decoded: (o: ApiObject) => ApiObject,
  ): CustomObjectStorage {
    const codec: Codec = { encode: (o) => jsonCodec.encode(o), decode: (d) => decoded(jsonCodec.decode(d)) };
    const base = new StoreStorage(this.storeFor(group, resource), codec, {
      healthcheckTimeoutMs: this.config.storage.healthcheckTimeoutMs,
    });
    const size = this.cacheSize({ group, plural: resource });
    if (size <= 0 || this.secure.signal.aborted) return { storage: base, release: () => undefined };
    const cacher = this.newCacher(
      base,
      `${this.config.storage.prefix}/${group}/${resource}`,
      `${resource}.${group}`,
      size,
    );
    this.caches.push(cacher);
    // Released (or the server stopped) while its first list is in flight, the cache opens no store watch (Cacher);
    // the signal only ends the retries of a list that failed.
    const released = new AbortController();
    void this.startCache(cacher, AbortSignal.any([released.signal, this.secure.signal])).catch(() => undefined);
    return {
      storage: cacher,
      release: () => {
        released.abort();
        const i = this.caches.indexOf(cacher);
        if (i >= 0) this.caches.splice(i, 1);
        void cacher.stop();
      },
    };
  }

  private scope(kind: Kind, resourceKind: Kind, storage: RequestScope['storage'], subresource: string): RequestScope {
    return {
      kind,
      resourceKind,
      resource: resourceKind.plural,
      subresource,
      storage,
      serializers: this.serializers,
      columns: (kind.spec.columns ?? undefined) as RequestScope['columns'],
      admission: this.admission,
      maxRequestBodyBytes: this.config.limits.maxRequestBodyBytes,
      minRequestTimeoutSeconds: this.config.limits.minRequestTimeoutSeconds,
      now: this.now,
      serverSideApply: this.config.serverSideApply !== false,
      logBug: (err) => this.config.logger.error('Internal error serving a request', { err }),
    };
  }

  /** Builds the auditor (opening the audit log) and flushes it at shutdown. */
  private async installAudit(): Promise<void> {
    if (!this.config.audit) return;
    const protobuf = this.serializers.protobuf;
    this.auditor = await buildAuditor(this.config.audit, this.config.logger, {
      decodeBody: (body, type) =>
        type.startsWith(PROTOBUF_MEDIA_TYPE) ? protobuf.decode(body) : defaultBodyDecoder(body, type),
    });
    const auditor = this.auditor;
    if (auditor) this.secure.addShutdownHook('audit', () => auditor.shutdown());
  }

  private installChain(): void {
    const limits = this.installPriorityAndFairness() ?? maxInFlight(this.config.limits, this.serializers);
    const log = this.config.logger;
    // Transport filters and CORS preflights come before authentication; audit follows it (Kubernetes' order).
    const t = this.config.transport;
    const filters: Middleware[] = [];
    for (const f of [hsts(t?.hstsDirectives ?? []), cors(t?.corsAllowedOrigins ?? [])]) if (f) filters.push(f);
    if (this.auditor) filters.push(auditReceived());
    filters.push(
      authentication(this.authenticator, this.serializers, log, this.auditor ? auditRejected(this.auditor) : undefined),
    );
    if (this.auditor) filters.push(audit(this.auditor, this.serializers, log));
    const throttle = connectionThrottle(t?.maxConnectionBytesPerSec ?? 0);
    if (throttle) filters.push(throttle);
    filters.push(authorization(this.authorizer, this.serializers, log));
    if (this.config.kubernetesClientCompatibility === false) filters.push(kubernetesSpellingsRefused(this.serializers));
    filters.push(discoveryHandler(this.config.authentication?.discovery));
    filters.push(this.aggregator.filter());
    let openapi: OpenApiDocument | undefined;
    let openapiGeneration = -1;
    filters.push((req, res, next) => {
      const info = getRequestInfo(req);
      if (info.path === '/openapi/v2' && (req.method === 'GET' || req.method === 'HEAD')) {
        // Rebuilt when the custom resources served change (their schemas are in it).
        const generation = this.apiExtensions?.generation ?? 0;
        if (!openapi || generation !== openapiGeneration) {
          openapi = buildOpenApi(
            this.scheme,
            'v1.21.0',
            this.installer.openApiResources(),
            this.apiExtensions?.openApiDefinitions(),
          );
          openapiGeneration = generation;
        }
        const wantsProtobuf = (req.headers.accept ?? '').includes(OPENAPI_PROTOBUF_MEDIA_TYPE);
        // The Protobuf document goes out as application/octet-stream: Go's mime parser (kubectl) rejects the '@' of
        // the media type it was asked for.
        res.setHeader('Content-Type', wantsProtobuf ? 'application/octet-stream' : 'application/json');
        res.end(wantsProtobuf ? openapi.protobuf : openapi.json);
        return;
      }
      if (this.priorityAndFairness?.serveDebug(req, res, info.path)) return;
      if (!info.isResourceRequest && !info.path.startsWith('/api')) return next();
      // Long-running requests (watches) also end when the server shuts down; the others are drained.
      const deadline = requestDeadline(req, res, this.config.limits.requestTimeoutMs, this.serializers);
      limits(req, res, () => {
        const user = getUser(req);
        // The signal of a request is made when its work first asks for it (filters/timeout.ts); a long-running one
        // always listens, and ends with the server too.
        const ctx: RequestContext = isLongRunning(info)
          ? {
              namespace: info.namespace,
              now: this.now,
              signal: AbortSignal.any([deadline.signal, this.secure.signal]),
              ...(user ? { user } : {}),
            }
          : deadlineContext(info.namespace, this.now, user, deadline);
        this.installer
          .serve(req, res, info, ctx, (err) => this.config.logger.error('Internal error serving a request', { err }))
          .then((served) => {
            if (!served) next();
          }, next);
      });
    });
    // An unexpected failure in the chain: a Panic audit event and a 500 Status.
    const panic = auditPanics(this.auditor, this.serializers, log);
    // The chain is plain function calls (no express routing per request); what it passes on (health checks,
    // metrics, version, not found) reaches the express app of the secure server.
    const chain = (req: IncomingMessage, res: ServerResponse, passOn: () => void): void => {
      let i = 0;
      const next = (err?: unknown): void => {
        if (err !== undefined) return panic(err, req, res, () => {});
        const f = filters[i++];
        if (!f) return passOn();
        try {
          f(req, res, next);
        } catch (e) {
          panic(e, req, res, () => {});
        }
      };
      next();
    };
    const gate = this.config.holdRequestsUntilReady
      ? new ReadinessGate(() => this.secure.health.readyz, this.secure.signal)
      : undefined;
    this.readinessGate = gate;
    this.secure.setFrontHandler((req, res, passOn) => {
      if (gate?.holds(req.url)) void gate.wait().then(() => chain(req, res, passOn));
      else chain(req, res, passOn);
    });
  }

  /** API Priority and Fairness: its controller's post-start hooks, and the filter that replaces max-in-flight. */
  private installPriorityAndFairness(): Middleware | undefined {
    if (!this.config.priorityAndFairness) return undefined;
    const lookup = (group: string, resource: string): GenericStore | undefined =>
      this.stores.get(`${group}/${resource}`);
    const host = registryAuthorizationHost(lookup, this.rbac, this.config.logger, this.now);
    const limits = this.config.limits;
    const apf = new PriorityAndFairness({
      lookup,
      reflect: (group, resource, handler, signal) => host.reflect(group, resource, handler, signal),
      serverConcurrencyLimit: limits.maxRequestsInFlight + limits.maxMutatingRequestsInFlight,
      // 1.21 lets a request wait in a queue for a quarter of --request-timeout.
      requestWaitLimitMs: limits.requestTimeoutMs / 4,
      metrics: this.secure.metrics,
      serializers: this.serializers,
      log: this.config.logger,
      now: this.now,
    });
    this.secure.addPostStartHook('priority-and-fairness-config-producer', (signal) => apf.produce(signal));
    this.secure.addPostStartHook('priority-and-fairness-config-consumer', (signal) => apf.consume(signal));
    this.priorityAndFairness = apf;
    return apf.filter();
  }

  /** The aggregation layer (`../aggregator`): its filter comes after authorization, its hooks start with the server. */
  private installAggregator(): void {
    const proxyClientCert = this.config.aggregator?.proxyClientCert ?? this.config.admission?.settings.proxyClientCert;
    const requestHeader = this.config.authentication?.config.requestHeader;
    this.aggregator = new Aggregator(
      {
        ...this.config.aggregator,
        ...(proxyClientCert ? { proxyClientCert } : {}),
        ...(requestHeader ? { requestHeader } : {}),
      },
      {
        installer: this.installer,
        scheme: this.scheme,
        secure: this.secure,
        serializers: this.serializers,
        lookup: (group, resource) => this.stores.get(`${group}/${resource}`),
        localOpenApi: () =>
          buildOpenApi(
            this.scheme,
            'v1.21.0',
            this.installer.openApiResources(),
            this.apiExtensions?.openApiDefinitions(),
          ),
        localOpenApiGeneration: () => this.apiExtensions?.generation ?? 0,
        log: this.config.logger,
        now: this.now,
      },
    );
    this.aggregator.install();
  }

  /**
   * Upgrades: watches over WebSocket (accepted, then dispatched like any other watch), and the exec, attach and
   * port-forward subresources of pods (authenticated and authorized here, then spliced to the node agent).
   */
  private installUpgrades(): void {
    const wss = new WebSocketServer({ noServer: true });
    this.secure.onUpgrade((req, socket, head) => {
      const info = getRequestInfo(req);
      const connect = info.isResourceRequest ? this.installer.scopeFor(info)?.storage : undefined;
      const isConnect = connect instanceof PodConnectREST;
      const isAggregated = this.aggregator.handlesUpgrade(req);
      if (!isAggregated && (!info.isResourceRequest || (info.verb !== 'watch' && !isConnect))) {
        socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nonly watches are served over WebSocket\n');
        return;
      }
      const refuse = (err: unknown): void => {
        const status = errorToStatus(err).status;
        const body = JSON.stringify(status);
        socket.end(
          `HTTP/1.1 ${status.code} ${status.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      };
      const log = this.config.logger;
      void (async () => {
        if (this.readinessGate?.holds(req.url)) await this.readinessGate.wait();
        if (!(await authenticateRequest(this.authenticator, req, refuse, log))) return;
        const audited = this.auditor ? await auditUpgrade(this.auditor, req, refuse) : undefined;
        if (audited === false) return;
        if (!(await authorizeRequest(this.authorizer, req, audited?.refuse ?? refuse, log))) return;
        if (isAggregated) {
          this.aggregator.upgrade(req, socket, head);
          return;
        }
        if (isConnect) {
          const user = getUser(req);
          const ctx: RequestContext = {
            namespace: info.namespace,
            now: this.now,
            signal: this.secure.signal,
            ...(user ? { user } : {}),
          };
          await connect.upgrade(ctx, info.name, req, socket, head);
          return;
        }
        wss.handleUpgrade(req, socket, head, (ws) => {
          audited?.started(ws);
          this.serveWebSocket(req, ws);
        });
      })().catch((err: unknown) => {
        log.error('Internal error serving a request', { err });
        refuse(err);
      });
    });
  }

  /** Serves a watch over an accepted WebSocket, as the authenticated user. */
  private serveWebSocket(req: IncomingMessage, ws: WebSocket): void {
    const info = getRequestInfo(req);
    const user = getUser(req);
    const ctx: RequestContext = {
      namespace: info.namespace,
      now: this.now,
      signal: this.secure.signal,
      ...(user ? { user } : {}),
    };
    const logBug = (err: unknown): void => this.config.logger.error('Internal error serving a request', { err });
    // The response object is never written: the WebSocket carries the answer.
    void this.installer.serve(req, new ServerResponse(req), info, ctx, logBug, ws);
  }

  private installChecks(): void {
    const timeoutMs = this.config.storage.healthcheckTimeoutMs;
    const stores = [...new Set(this.storeOf.values())];
    this.secure.health.addHealthChecks(
      namedCheck('store', async () => {
        await Promise.all(stores.map((s) => s.check(timeoutMs)));
      }),
    );
    this.secure.addPostStartHook('generic-apiserver-start-informers', async (signal) => {
      await Promise.all(this.caches.map((c) => this.startCache(c, signal)));
    });
    // The RBAC index and the authorizers that read the registry (Node) are ready before the server is.
    this.secure.addPostStartHook('authorization-informers', async (signal) => {
      const lookup = (group: string, resource: string): GenericStore | undefined =>
        this.stores.get(`${group}/${resource}`);
      const host = registryAuthorizationHost(lookup, this.rbac, this.config.logger, this.now);
      await Promise.all([this.rbac.start(host, signal), this.authorizer.start?.(host, signal)]);
    });
    this.bootstrap = installBootstrap({
      secure: this.secure,
      lookup: (group, resource) => this.stores.get(`${group}/${resource}`),
      leaseStore: this.storeFor('', 'endpoints'),
      storePrefix: this.config.storage.prefix,
      serviceClusterIPRange: this.config.services?.clusterIPRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE,
      advertiseAddress: this.config.advertiseAddress,
      now: this.now,
      log: this.config.logger,
      config: this.config.bootstrap,
      authenticationInfo: authenticationInfoData(this.config.authentication?.config),
    });
    // --store-compaction-interval: each store is compacted to the revision it had one interval before.
    const compactors = stores.map(
      (store) =>
        new Compactor(store, (err) =>
          this.config.logger.warn('Compaction failed; will retry at the next interval', { err }),
        ),
    );
    for (const c of compactors) c.start(this.config.storage.compactionIntervalMs ?? 0);
    this.startStorageMetrics();
    this.secure.addShutdownHook('storage', async () => {
      for (const c of compactors) c.stop();
      await Promise.all(this.caches.map((c) => c.stop()));
      await this.factory.close();
      this.config.storage.encryption?.close();
    });
  }

  /**
   * Starts a watch cache, trying again (1 s doubling to 30 s) while its first list fails, as Kubernetes' reflectors
   * do: a store that is not reachable yet, or a value no configured encryption provider can read, keeps the server
   * unready and says why in the log, and the server becomes ready by itself once the list succeeds.
   */
  private async startCache(cache: Cacher, signal: AbortSignal): Promise<void> {
    for (let delay = 1000; ; delay = Math.min(delay * 2, 30_000)) {
      try {
        await cache.start();
        return;
      } catch (err) {
        if (signal.aborted) throw err;
        this.config.logger.warn('The watch cache could not list its resource; retrying', { err, retryInMs: delay });
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, delay);
          signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
        });
        if (signal.aborted) throw err;
      }
    }
  }

  /** `apiserver_storage_objects{resource}` and `apiserver_storage_db_total_size_in_bytes{endpoint}`, polled. */
  private startStorageMetrics(): void {
    const objects = this.secure.metrics.gauge({
      name: 'apiserver_storage_objects',
      help: 'Number of stored objects at the time of last check split by kind.',
      labelNames: ['resource'],
    });
    const dbSize = this.secure.metrics.gauge({
      name: 'apiserver_storage_db_total_size_in_bytes',
      help: 'Total size of the storage database file physically allocated in bytes.',
      labelNames: ['endpoint'],
    });
    const resources = [...this.stores.values()].map((s) => ({
      label: s.kind.group ? `${s.kind.plural}.${s.kind.group}` : s.kind.plural,
      prefix: `${s.keyPrefix}/`,
      store: this.storeFor(s.kind.group, s.kind.plural),
    }));
    const endpoints = new Map<Store, string>();
    for (const kind of this.scheme.kinds()) {
      const store = this.storeFor(kind.group, kind.plural);
      if (!endpoints.has(store))
        endpoints.set(
          store,
          this.factory.serversFor({ group: kind.group, resource: kind.plural }).join(',') || 'embedded',
        );
    }
    startStorageMetricsPolling(
      { resources, stores: [...endpoints].map(([store, endpoint]) => ({ endpoint, store })) },
      {
        setObjectCount: (resource, count) => objects.set({ resource }, count),
        setDbSize: (endpoint, bytes) => dbSize.set({ endpoint }, bytes),
      },
      {
        countMs: this.config.storage.countMetricPollPeriodMs ?? 60_000,
        dbSizeMs: this.config.storage.dbMetricPollIntervalMs ?? 30_000,
      },
      this.secure.signal,
    );
  }

  /** Compacts every store to its current revision now (operations, and tests that need a 410). */
  async compactNow(): Promise<void> {
    for (const store of new Set(this.storeOf.values())) await store.compact(await store.currentRevision());
  }

  /** Creates the system namespaces that are missing (the bootstrap controller's first pass). */
  async ensureNamespaces(): Promise<void> {
    await this.bootstrap.controller.ensureNamespaces();
  }

  /** Listens; resolves with the address. Post-start hooks run in the background. */
  async start(): Promise<{ port: number; address: string }> {
    const a = await this.secure.start();
    return { port: a.port, address: a.address };
  }

  /** Graceful shutdown (see the secure server). */
  shutdown(): Promise<void> {
    return this.secure.shutdown();
  }
}
