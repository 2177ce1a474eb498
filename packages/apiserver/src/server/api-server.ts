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
  isAlreadyExists,
  jsonCodec,
  type Kind,
  PROTOBUF_MEDIA_TYPE,
  ProtobufCodec,
  type Scheme,
} from '@platform/api';
import { type Logger, namedCheck, SecureServer, type SecureServingInfo } from '@platform/common';
import { WebSocketServer } from 'ws';

import { ApiInstaller, notFoundPath } from '../endpoints/installer';
import { buildOpenApi, OPENAPI_PROTOBUF_MEDIA_TYPE, type OpenApiDocument } from '../endpoints/openapi';
import { ALWAYS_ADMIT, type RequestScope } from '../endpoints/handlers/scope';
import { type Serializers, writeError } from '../endpoints/responses/writers';
import { getRequestInfo } from '../filters/request-info';
import { maxInFlight } from '../filters/max-in-flight';
import { requestDeadline } from '../filters/timeout';
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
import { type Codec } from '../storage/api-object';
import { Cacher } from '../storage/cacher/cacher';
import { Etcd3Store } from '../storage/etcd3/etcd3-store';
import { type Store } from '../storage/interface';
import { parseSqliteUrl, SqliteStore } from '../storage/sqlite/sqlite-store';
import { type Storage, StoreStorage } from '../storage/storage';

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
  /** Injectable clock (tests). */
  now?: () => number;
}

/** The namespaces the bootstrap controller keeps in existence. */
export const SYSTEM_NAMESPACES = ['default', 'system', 'public', 'node-lease'];

/** Opens the backing store named by `--store-servers`. */
export async function openStore(servers: string[], tls?: ApiServerConfig['storage']['tls']): Promise<Store> {
  const first = servers[0];
  if (!first) throw new Error('--store-servers must name the backing store (sqlite:///path/state.db or etcd URLs)');
  if (first.startsWith('sqlite:')) {
    if (servers.length > 1) throw new Error('--store-servers: an embedded sqlite store takes exactly one URL');
    return SqliteStore.open(parseSqliteUrl(first));
  }
  for (const s of servers) {
    if (!/^https?:\/\/[^/]+/.test(s))
      throw new Error(
        `--store-servers: invalid server ${JSON.stringify(s)}: expected http(s)://host:port or sqlite:///path`,
      );
  }
  return new Etcd3Store({ endpoints: servers, ...(tls ? { tls } : {}) });
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
  private readonly now: () => number;

  private constructor(
    private readonly config: ApiServerConfig,
    private readonly store: Store,
  ) {
    this.now = config.now ?? Date.now;
    this.scheme = builtinScheme();
    this.serializers = { protobuf: new ProtobufCodec(this.scheme) };
    this.secure = new SecureServer({
      serving: config.serving,
      logger: config.logger,
      enableProfiling: config.enableProfiling,
      shutdownDelayMs: config.shutdownDelayMs,
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
  }

  /** Builds the server: opens the store and prepares every resource. Nothing listens until `start()`. */
  static async create(config: ApiServerConfig): Promise<ApiServer> {
    const store = await openStore(config.storage.servers, config.storage.tls);
    const server = new ApiServer(config, store);
    try {
      server.installResources();
      server.installChain();
      server.installUpgrades();
      server.installChecks();
    } catch (err) {
      await store.close();
      throw err;
    }
    return server;
  }

  private codec(): Codec {
    const t = this.config.storage.mediaType;
    if (t === PROTOBUF_MEDIA_TYPE) return this.serializers.protobuf;
    if (t === 'application/json') return jsonCodec;
    throw new Error(
      `--storage-media-type: unsupported media type ${JSON.stringify(t)}: supported: application/json, ${PROTOBUF_MEDIA_TYPE}`,
    );
  }

  private cacheSize(kind: Kind): number {
    const c = this.config.watchCache;
    if (!c.enabled) return 0;
    const name = kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
    return c.sizes[name] ?? c.defaultSize;
  }

  private installResources(): void {
    const definitions = new Map<string, StoreDefinition>();
    const install: InstallContext = {
      definitionOf: (group, resource) => definitions.get(`${group}/${resource}`),
      kindFor: (apiVersion, kind) => this.scheme.kindFor(apiVersion, kind),
      rangeStorage: new StoreStorage(this.store, jsonCodec, {
        healthcheckTimeoutMs: this.config.storage.healthcheckTimeoutMs,
      }),
      storePrefix: this.config.storage.prefix,
      serviceClusterIPRange: this.config.services?.clusterIPRange ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE,
      serviceNodePortRange: this.config.services?.nodePortRange ?? DEFAULT_SERVICE_NODE_PORT_RANGE,
    };
    const codec = this.codec();
    const base = new StoreStorage(this.store, codec, {
      healthcheckTimeoutMs: this.config.storage.healthcheckTimeoutMs,
    });
    // Versions of one group share their resource's storage (and watch cache), as in Kubernetes. Objects are stored
    // in the version that wrote them and read back in any version of the group; the schemas of those versions are
    // compatible, so no conversion runs yet. A resource name reused by another group (core and events.platform
    // Events), whose schema differs, gets its own key prefix until conversion between them exists.
    const groupOfPlural = new Map<string, string>();
    const storageOfPrefix = new Map<string, Storage>();
    for (const kind of this.scheme.kinds()) {
      if (kind.spec.persisted === false) continue;
      const behaviour = builtinResource(kind);
      if (!behaviour || isVirtualResource(behaviour)) continue;
      const owner = groupOfPlural.get(kind.plural);
      if (owner === undefined) groupOfPlural.set(kind.plural, kind.group);
      const keyPrefix =
        owner === undefined || owner === kind.group
          ? `${this.config.storage.prefix}/${kind.plural}`
          : `${this.config.storage.prefix}/${kind.group}/${kind.plural}`;
      let storage = storageOfPrefix.get(keyPrefix);
      if (!storage) {
        storage = base;
        const size = this.cacheSize(kind);
        if (size > 0) {
          const cacher = new Cacher(base, { resourcePrefix: keyPrefix, capacity: size, now: this.now });
          this.caches.push(cacher);
          storage = cacher;
        }
        storageOfPrefix.set(keyPrefix, storage);
      }
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
      if (behaviour && isVirtualResource(behaviour))
        this.installer.add(this.scope(kind, kind, behaviour.virtual(kind, install), ''));
    }
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
      admission: ALWAYS_ADMIT,
      maxRequestBodyBytes: this.config.limits.maxRequestBodyBytes,
      minRequestTimeoutSeconds: this.config.limits.minRequestTimeoutSeconds,
      now: this.now,
      logBug: (err) => this.config.logger.error('Internal error serving a request', { err }),
    };
  }

  private installChain(): void {
    const app = this.secure.app;
    const limits = maxInFlight(this.config.limits, this.serializers);
    let openapi: OpenApiDocument | undefined;
    app.use((req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
      const info = getRequestInfo(req);
      if (info.path === '/openapi/v2' && (req.method === 'GET' || req.method === 'HEAD')) {
        openapi ??= buildOpenApi(this.scheme, 'v1.21.0');
        const wantsProtobuf = (req.headers.accept ?? '').includes(OPENAPI_PROTOBUF_MEDIA_TYPE);
        // The Protobuf document goes out as application/octet-stream: Go's mime parser (kubectl) rejects the '@' of
        // the media type it was asked for.
        res.setHeader('Content-Type', wantsProtobuf ? 'application/octet-stream' : 'application/json');
        res.end(wantsProtobuf ? openapi.protobuf : openapi.json);
        return;
      }
      if (!info.isResourceRequest && !info.path.startsWith('/api')) return next();
      const signal = AbortSignal.any([
        requestDeadline(req, res, this.config.limits.requestTimeoutMs, this.serializers),
        this.secure.signal,
      ]);
      limits(req, res, () => {
        const ctx: RequestContext = { namespace: info.namespace, now: this.now, signal };
        this.installer
          .serve(req, res, info, ctx, (err) => this.config.logger.error('Internal error serving a request', { err }))
          .then((served) => {
            if (!served) next();
          }, next);
      });
    });
  }

  /** Watches over WebSocket: the upgrade is accepted, then the request is dispatched like any other watch. */
  private installUpgrades(): void {
    const wss = new WebSocketServer({ noServer: true });
    this.secure.onUpgrade((req, socket, head) => {
      const info = getRequestInfo(req);
      if (!info.isResourceRequest || info.verb !== 'watch') {
        socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nonly watches are served over WebSocket\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const ctx: RequestContext = { namespace: info.namespace, now: this.now, signal: this.secure.signal };
        const logBug = (err: unknown): void => this.config.logger.error('Internal error serving a request', { err });
        // The response object is never written: the WebSocket carries the answer.
        void this.installer.serve(req, new ServerResponse(req), info, ctx, logBug, ws);
      });
    });
  }

  private installChecks(): void {
    const timeoutMs = this.config.storage.healthcheckTimeoutMs;
    this.secure.health.addHealthChecks(namedCheck('store', () => this.store.check(timeoutMs)));
    this.secure.addPostStartHook('generic-apiserver-start-informers', async () => {
      await Promise.all(this.caches.map((c) => c.start()));
    });
    this.secure.addPostStartHook('bootstrap-controller', () => this.ensureNamespaces());
    const compaction = this.startCompaction();
    this.secure.addShutdownHook('storage', async () => {
      clearInterval(compaction);
      await Promise.all(this.caches.map((c) => c.stop()));
      await this.store.close();
    });
  }

  /**
   * `--store-compaction-interval`: every interval, compacts the store to the revision it had one interval before
   * (as Kubernetes' compactor does), so watches and paged lists keep that much history.
   */
  private startCompaction(): NodeJS.Timeout | undefined {
    const interval = this.config.storage.compactionIntervalMs ?? 0;
    if (interval <= 0) return undefined;
    let previous: bigint | undefined;
    const timer = setInterval(() => {
      void (async () => {
        try {
          const current = await this.store.currentRevision();
          if (previous !== undefined && previous > 0n) await this.store.compact(previous);
          previous = current;
        } catch (err) {
          this.config.logger.warn('Compaction failed; will retry at the next interval', { err });
        }
      })();
    }, interval);
    timer.unref();
    return timer;
  }

  /** Creates the system namespaces that are missing (the bootstrap controller's first pass). */
  async ensureNamespaces(): Promise<void> {
    const namespaces = this.stores.get('/namespaces');
    if (!namespaces) return;
    const ctx: RequestContext = { namespace: '', now: this.now };
    for (const name of SYSTEM_NAMESPACES) {
      try {
        await namespaces.create(ctx, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, undefined, {
          dryRun: false,
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
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
