/**
 * The aggregation layer of the API server (model: kube-aggregator 1.21 `pkg/apiserver/apiserver.go`): APIServices
 * name the server of each group version; this server answers the local ones itself and proxies the others to
 * their extension servers. Kubernetes runs the aggregator as a server in front of the kube-apiserver; here it is
 * one filter of the same handler chain, after authentication and authorization (so the user is known and allowed),
 * before the API's own routes.
 *
 * What it runs, with the post-start hooks and checks of Kubernetes' names:
 * - `start-aggregator-informers`: APIServices, Services and Endpoints in memory (list, then watch);
 * - `apiserver-autoregistration` and the `autoregister-completion` check: a local APIService for every group
 *   version served here (see `autoregister.ts`; {@link Aggregator.setLocalGroupVersions} for the custom resources);
 * - `apiservice-registration-controller`: the routing table follows the APIServices (proxying and discovery read
 *   the informer's objects at each request, so it is ready once the informers are);
 * - `apiservice-status-available-controller`: the `Available` conditions (`available-controller.ts`);
 * - `apiservice-openapi-controller`: the extension servers' OpenAPI documents, merged into `/openapi/v2`.
 *
 * Kubernetes' spelling of an aggregated group (`/apis/metrics.k8s.io/...` for `metrics.platform`) reaches its
 * extension server in the `.platform` spelling, and the JSON answers come back in the spelling the request used
 * (`../endpoints/group-alias.ts`: the discovery aliases, and why).
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { type Duplex } from 'node:stream';

import {
  type APIGroup,
  type APIService,
  type ApiObject,
  apiServiceCondition,
  type Endpoints,
  errorToStatus,
  type Scheme,
  type Service,
  StatusError,
} from '@platform/api';
import { type Logger, namedCheck, type SecureServer } from '@platform/common';

import { RegistryClient } from '../admission/internal-client';
import { registryAuthorizationHost } from '../auth/authorization/host';
import { type ReflectHandler } from '../auth/authorizer';
import {
  discoveryAliasTarget,
  type GroupAlias,
  respellDiscovery,
  withDiscoveryAliases,
} from '../endpoints/group-alias';
import { type ApiInstaller } from '../endpoints/installer';
import { negotiateOutput } from '../endpoints/negotiation/negotiate';
import { encodeOpenApi, OPENAPI_PROTOBUF_MEDIA_TYPE, type OpenApiDocument } from '../endpoints/openapi';
import { type RequestInfo } from '../endpoints/request-info';
import { type Serializers, writeError, writeObject } from '../endpoints/responses/writers';
import { getRequestInfo, getUser, type Middleware } from '../filters/request-info';
import { type GenericStore } from '../registry/generic/store';
import { AutoRegistration, apiServiceName, type LocalGroupVersion } from './autoregister';
import { checkAvailability, nextCondition } from './available-controller';
import { apiGroup, apiGroupList, type DiscoveryEntry, mergeOpenApi } from './discovery';
import { builtinPriority, CRD_PRIORITY, type Priority } from './priorities';
import {
  agentFor,
  DEFAULT_USER_HEADERS,
  proxyRequest,
  type ProxyTarget,
  proxyUpgrade,
  resolveLocation,
  serverNameOf,
  type UserHeaders,
  userHeaders,
} from './proxy';

/** The aggregator's options. */
export interface AggregatorConfig {
  /** `--enable-aggregator-routing`: proxy to an endpoint address instead of the service's cluster IP. */
  enableAggregatorRouting?: boolean;
  /** `--proxy-client-cert-file` / `--proxy-client-key-file` (PEM): how this server proves itself to extension servers. */
  proxyClientCert?: { cert: string; key: string };
  /** `--requestheader-username-headers`, `-group-headers`, `-extra-headers-prefix`: the first of each names the user. */
  requestHeader?: {
    usernameHeaders?: readonly string[];
    groupHeaders?: readonly string[];
    extraHeaderPrefixes?: readonly string[];
  };
  /** How often every APIService's availability is checked again besides on changes, ms (30 s). */
  availabilityResyncMs?: number;
  /** Timeout of one discovery or OpenAPI request to an extension server, ms (5 s). */
  probeTimeoutMs?: number;
}

/** What the aggregator needs of the API server. */
export interface AggregatorHost {
  installer: ApiInstaller;
  scheme: Scheme;
  secure: SecureServer;
  serializers: Serializers;
  /** The main store of a served resource. */
  lookup(group: string, resource: string): GenericStore | undefined;
  /** The server's own OpenAPI document. */
  localOpenApi(): OpenApiDocument;
  /** Changes whenever the server's own document does (custom resources served or gone). */
  localOpenApiGeneration(): number;
  log: Logger;
  now: () => number;
}

/** Objects of one resource kept by a reflector, by `namespace/name`. */
class ObjectCache<T extends ApiObject> implements ReflectHandler {
  readonly items = new Map<string, T>();
  constructor(private readonly changed: () => void) {}
  private key(o: ApiObject): string {
    const m = o.metadata ?? {};
    return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
  }
  replace(objects: readonly ApiObject[]): void {
    this.items.clear();
    for (const o of objects) this.items.set(this.key(o), o as T);
    this.changed();
  }
  upsert(obj: ApiObject): void {
    this.items.set(this.key(obj), obj as T);
    this.changed();
  }
  remove(obj: ApiObject): void {
    this.items.delete(this.key(obj));
    this.changed();
  }
}

/** Runs `fn` once at a time; a call while it runs runs it once more afterwards. */
function serialized(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await fn();
      } while (again);
    })().finally(() => (running = undefined));
    return running;
  };
  return run;
}

const APIREGISTRATION = 'apiregistration.platform';

/** The user the aggregator's own requests to extension servers are made as (1.21's `aggregatorUser`). */
const AGGREGATOR_USER = 'system:aggregator';

/** The aggregation layer of one API server. */
export class Aggregator {
  private readonly apiServices = new ObjectCache<APIService & ApiObject>(() => this.onAPIServicesChanged());
  private readonly services = new ObjectCache<Service & ApiObject>(() => this.onServicesChanged());
  private readonly endpoints = new ObjectCache<Endpoints & ApiObject>(() => this.onServicesChanged());
  private readonly autoRegistration: AutoRegistration;
  private readonly userHeaders: UserHeaders;
  private readonly client: RegistryClient;
  /** APIService name → its extension server's OpenAPI document (JSON), for the available remote APIServices. */
  private readonly openApiSpecs = new Map<string, Record<string, unknown>>();
  private mergedOpenApi: OpenApiDocument | undefined;
  /** The local document's generation {@link mergedOpenApi} was built from. */
  private mergedGeneration = -1;
  /** The availability the controller last computed, by APIService name (ahead of the informer's copy). */
  private readonly available = new Map<string, boolean>();
  private informersSynced = false;
  /** Closers of the proxied connections still open (watches, upgrades), run at shutdown. */
  private readonly connections = new Set<() => void>();
  /** The periodic passes, stopped at shutdown. */
  private readonly timers: NodeJS.Timeout[] = [];
  private controllersStarted = false;
  private readonly checkAvailability = serialized(() => this.availabilityPass());
  private readonly refreshOpenApi = serialized(() => this.openApiPass());

  constructor(
    private readonly config: AggregatorConfig,
    private readonly host: AggregatorHost,
  ) {
    const rh = config.requestHeader;
    this.userHeaders = {
      username: rh?.usernameHeaders?.[0] ?? DEFAULT_USER_HEADERS.username,
      group: rh?.groupHeaders?.[0] ?? DEFAULT_USER_HEADERS.group,
      extraPrefix: rh?.extraHeaderPrefixes?.[0] ?? DEFAULT_USER_HEADERS.extraPrefix,
    };
    this.autoRegistration = new AutoRegistration({
      current: () => this.apiServices.items,
      store: () => host.lookup(APIREGISTRATION, 'apiservices'),
      now: host.now,
      log: host.log,
    });
    this.client = new RegistryClient(
      host.scheme,
      (apiGroup, apiVersion, resource, subresource) =>
        host.installer.scopeFor({ apiGroup, apiVersion, resource, subresource } as RequestInfo),
      host.now,
    );
  }

  /**
   * The group versions an owner serves locally besides the built-in ones (the custom resources: call it whenever
   * the served versions change, with all of them); each gets a local APIService (`automanaged: true`) at the
   * CRDs' priorities unless `priority` says otherwise, and those the owner no longer lists are deleted.
   */
  setLocalGroupVersions(owner: string, gvs: readonly { group: string; version: string; priority?: Priority }[]): void {
    this.autoRegistration.setGroupVersions(
      owner,
      gvs.map((gv) => ({ group: gv.group, version: gv.version, priority: gv.priority ?? CRD_PRIORITY })),
    );
    if (this.controllersStarted) void this.autoRegistration.sync();
  }

  /** The group versions the installer serves now. */
  private servedGroupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const r of this.host.installer.openApiResources())
      seen.set(`${r.group}/${r.version}`, { group: r.group, version: r.version });
    return [...seen.values()];
  }

  /** Adds the post-start hooks and the `autoregister-completion` check to the server. */
  install(): void {
    const { secure } = this.host;
    secure.signal.addEventListener(
      'abort',
      () => {
        for (const close of [...this.connections]) close();
        for (const t of this.timers) clearInterval(t);
      },
      { once: true },
    );
    secure.addPostStartHook('start-aggregator-informers', async (signal) => {
      const reflectHost = registryAuthorizationHost(
        (group, resource) => this.host.lookup(group, resource),
        { visitRulesFor: () => {} } as never,
        this.host.log,
        this.host.now,
      );
      await Promise.all([
        reflectHost.reflect(APIREGISTRATION, 'apiservices', this.apiServices, signal),
        reflectHost.reflect('', 'services', this.services, signal),
        reflectHost.reflect('', 'endpoints', this.endpoints, signal),
      ]);
      this.informersSynced = true;
    });
    secure.addPostStartHook('apiservice-registration-controller', async (signal) => {
      await this.waitForInformers(signal);
    });
    secure.addPostStartHook('apiserver-autoregistration', async (signal) => {
      await this.waitForInformers(signal);
      const builtin: LocalGroupVersion[] = this.servedGroupVersions().map((gv) => ({
        ...gv,
        priority: builtinPriority(gv.group, gv.version),
      }));
      this.autoRegistration.setBuiltin(builtin);
      this.controllersStarted = true;
      void this.autoRegistration.sync();
      this.every(60_000, () => this.autoRegistration.sync(), signal);
      // Group versions the installer starts serving later (custom resources) are kept in sync continuously.
      const atStart = new Set(builtin.map((gv) => apiServiceName(gv.group, gv.version)));
      let servedKey = '';
      this.every(
        1000,
        () => {
          const later = this.servedGroupVersions().filter((gv) => !atStart.has(apiServiceName(gv.group, gv.version)));
          const key = later.map((gv) => apiServiceName(gv.group, gv.version)).join(',');
          if (key === servedKey) return Promise.resolve();
          servedKey = key;
          this.setLocalGroupVersions('served-later', later);
          return Promise.resolve();
        },
        signal,
      );
    });
    secure.addPostStartHook('apiservice-status-available-controller', async (signal) => {
      await this.waitForInformers(signal);
      void this.checkAvailability();
      this.every(this.config.availabilityResyncMs ?? 30_000, () => this.checkAvailability(), signal);
    });
    secure.addPostStartHook('apiservice-openapi-controller', async (signal) => {
      await this.waitForInformers(signal);
      void this.refreshOpenApi();
      this.every(60_000, () => this.refreshOpenApi(), signal);
    });
    secure.addBootSequenceHealthCheck(
      namedCheck('autoregister-completion', () => {
        if (!this.controllersStarted) throw new Error('autoregistration has not started');
        const missing = this.autoRegistration.missing();
        if (missing.length) throw new Error(`missing APIService: [${missing.join(' ')}]`);
      }),
    );
  }

  private async waitForInformers(signal: AbortSignal): Promise<void> {
    while (!this.informersSynced && !signal.aborted) await sleep(50, signal);
  }

  /** Runs `fn` every `ms` until the server stops (one abort listener for all of them: see `install`). */
  private every(ms: number, fn: () => Promise<void>, signal: AbortSignal): void {
    if (signal.aborted) return;
    const t = setInterval(
      () => void fn().catch((err: unknown) => this.host.log.warn('Aggregator pass failed', { err })),
      ms,
    );
    t.unref();
    this.timers.push(t);
  }

  private onAPIServicesChanged(): void {
    if (!this.controllersStarted) return;
    void this.autoRegistration.sync();
    void this.checkAvailability();
  }

  private onServicesChanged(): void {
    if (this.controllersStarted) void this.checkAvailability();
  }

  /** Checks every APIService and writes the conditions that changed. */
  private async availabilityPass(): Promise<void> {
    const probe = {
      lookup: this.lookup,
      useEndpoints: this.config.enableAggregatorRouting === true,
      tls: this.tls(),
      headers: this.userHeaders,
      timeoutMs: this.config.probeTimeoutMs ?? 5000,
    };
    let retry = false;
    await Promise.all(
      [...this.apiServices.items.values()].map(async (a) => {
        const availability = await checkAvailability(a, probe);
        this.available.set(a.metadata?.name ?? '', availability.status === 'True');
        const current = this.apiServices.items.get(a.metadata?.name ?? '');
        if (!current) return;
        const old = apiServiceCondition(current);
        if (
          old &&
          old.status === availability.status &&
          old.reason === availability.reason &&
          old.message === availability.message
        )
          return;
        const updated = structuredClone(current);
        const others = (updated.status?.conditions ?? []).filter((c) => c.type !== 'Available');
        updated.status = { conditions: [...others, nextCondition(old, availability, this.host.now())] };
        try {
          await this.client.update(
            { group: APIREGISTRATION, resource: 'apiservices' },
            '',
            updated as ApiObject,
            'status',
          );
        } catch (err) {
          retry = true;
          this.host.log.warn('Could not update the availability of an APIService; will retry', {
            name: a.metadata?.name,
            err,
          });
        }
        if (availability.status === 'True' && old?.status !== 'True') void this.refreshOpenApi();
      }),
    );
    if (retry) setTimeout(() => void this.checkAvailability(), 1000).unref();
  }

  /** Fetches the OpenAPI documents of the available remote APIServices. */
  private async openApiPass(): Promise<void> {
    const wanted = new Set<string>();
    await Promise.all(
      [...this.apiServices.items.values()].map(async (a) => {
        const name = a.metadata?.name ?? '';
        if (!a.spec?.service || this.available.get(name) !== true) return;
        wanted.add(name);
        try {
          const doc = await this.fetchOpenApi(a);
          this.openApiSpecs.set(name, doc);
          this.mergedOpenApi = undefined;
        } catch (err) {
          this.host.log.warn('Could not fetch the OpenAPI document of an APIService', { name, err });
        }
      }),
    );
    for (const name of [...this.openApiSpecs.keys()])
      if (!wanted.has(name)) {
        this.openApiSpecs.delete(name);
        this.mergedOpenApi = undefined;
      }
  }

  private fetchOpenApi(a: APIService): Promise<Record<string, unknown>> {
    const location = resolveLocation(a, this.lookup, this.config.enableAggregatorRouting === true);
    return new Promise((resolve, reject) => {
      const req = https.get(
        {
          host: location.host,
          port: location.port,
          path: '/openapi/v2',
          agent: agentFor(a, this.tls()),
          servername: serverNameOf(a),
          timeout: this.config.probeTimeoutMs ?? 5000,
          // As 1.21's OpenAPI downloader: the extension server sees the request as `system:aggregator`, through the
          // same front-proxy headers (and client certificate) as proxied requests, so its delegated authorization
          // decides (the `system:discovery` role allows `/openapi/*` to every authenticated user).
          headers: {
            accept: 'application/json',
            ...userHeaders({ name: AGGREGATOR_USER, groups: [] }, this.userHeaders),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode ?? 0}`));
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
            } catch (err) {
              reject(err as Error);
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
    });
  }

  private readonly lookup = {
    service: (namespace: string, name: string) => this.services.items.get(`${namespace}/${name}`),
    endpoints: (namespace: string, name: string) => this.endpoints.items.get(`${namespace}/${name}`),
  };

  private tls(): { clientCert?: { cert: string; key: string } } {
    return this.config.proxyClientCert ? { clientCert: this.config.proxyClientCert } : {};
  }

  // ---- discovery ---------------------------------------------------------------------------------------------

  /** Every group version of discovery: the local ones (at their APIService's priorities) and the remote ones. */
  private discoveryEntries(): DiscoveryEntry[] {
    const entries: DiscoveryEntry[] = [];
    for (const gv of this.servedGroupVersions()) {
      const a = this.apiServices.items.get(apiServiceName(gv.group, gv.version));
      const p = a?.spec
        ? { group: a.spec.groupPriorityMinimum, version: a.spec.versionPriority }
        : builtinPriority(gv.group, gv.version);
      entries.push({ ...gv, groupPriority: p.group, versionPriority: p.version });
    }
    for (const a of this.apiServices.items.values()) {
      if (!a.spec?.service) continue;
      entries.push({
        group: a.spec.group ?? '',
        version: a.spec.version ?? '',
        groupPriority: a.spec.groupPriorityMinimum,
        versionPriority: a.spec.versionPriority,
      });
    }
    return entries;
  }

  /** The group (`.platform`) and version a path is for, and the Kubernetes spelling the request used, if any. */
  private groupVersionOf(info: RequestInfo): { group: string; version: string; alias?: GroupAlias } | undefined {
    if (info.isResourceRequest) {
      const alias = info.requestedGroup ? { platform: info.apiGroup, requested: info.requestedGroup } : undefined;
      return { group: info.apiGroup, version: info.apiVersion, ...(alias ? { alias } : {}) };
    }
    const parts = info.path.split('/').filter((p) => p !== '');
    if (parts[0] !== 'apis' || parts.length < 3) return undefined;
    const requested = parts[1] as string;
    const platform = discoveryAliasTarget(requested);
    return platform
      ? { group: platform, version: parts[2] as string, alias: { platform, requested } }
      : { group: requested, version: parts[2] as string };
  }

  /** The remote APIService that serves a path, if any. */
  private remoteFor(info: RequestInfo): (APIService & ApiObject) | undefined {
    const gv = this.groupVersionOf(info);
    if (!gv?.group) return undefined;
    const a = this.apiServices.items.get(apiServiceName(gv.group, gv.version));
    return a?.spec?.service ? a : undefined;
  }

  /** The OpenAPI document served: the server's own, with the extension servers' merged in when there are any. */
  private openApi(): OpenApiDocument {
    // Built once per change of the extension documents (each refetch, at least every minute): the server's own
    // document is computed again only then.
    const generation = this.host.localOpenApiGeneration();
    if (!this.mergedOpenApi || generation !== this.mergedGeneration) {
      this.mergedGeneration = generation;
      const local = this.host.localOpenApi();
      const doc = mergeOpenApi(JSON.parse(local.json.toString('utf8')) as Record<string, unknown>, [
        ...this.openApiSpecs.values(),
      ]);
      let protobuf = local.protobuf;
      try {
        protobuf = encodeOpenApi(doc);
      } catch (err) {
        this.host.log.warn('The merged OpenAPI document has no Protobuf form; serving the local one', { err });
      }
      this.mergedOpenApi = { json: Buffer.from(JSON.stringify(doc)), protobuf };
    }
    return this.mergedOpenApi;
  }

  /** Serves `/openapi/v2`: the local document with the extension servers' merged in (as JSON or Protobuf). */
  private serveOpenApi(req: IncomingMessage, res: ServerResponse): void {
    const doc = this.openApi();
    const wantsProtobuf = (req.headers.accept ?? '').includes(OPENAPI_PROTOBUF_MEDIA_TYPE);
    res.setHeader('Content-Type', wantsProtobuf ? 'application/octet-stream' : 'application/json');
    res.end(wantsProtobuf ? doc.protobuf : doc.json);
  }

  /**
   * The filter: `/apis` and `/apis/<group>` from the APIServices, and requests of a remote APIService's group
   * version proxied (503 with a Status while it is unavailable). Everything else passes on.
   */
  filter(): Middleware {
    return (req, res, next) => {
      const info = getRequestInfo(req);
      const isRead = req.method === 'GET' || req.method === 'HEAD';
      if (isRead && info.path === '/openapi/v2' && this.openApiSpecs.size > 0) {
        this.serveOpenApi(req, res);
        return;
      }
      if (isRead && !info.isResourceRequest) {
        const parts = info.path.split('/').filter((p) => p !== '');
        const doc =
          info.path === '/apis' || info.path === '/apis/'
            ? this.host.installer.kubernetesClientCompatibility
              ? withDiscoveryAliases(apiGroupList(this.discoveryEntries()))
              : apiGroupList(this.discoveryEntries())
            : parts[0] === 'apis' && parts.length === 2 && info.path === `/apis/${parts[1] ?? ''}`
              ? this.apiGroupDocument(parts[1] as string)
              : undefined;
        if (doc) {
          try {
            const output = negotiateOutput(req.headers.accept, { allowViews: false });
            writeObject(res, 200, doc as never, output.format, this.host.serializers);
          } catch (err) {
            writeError(res, err, this.host.serializers);
          }
          return;
        }
      }
      const target = this.remoteFor(info);
      if (!target) return next();
      const t = this.target(req, target);
      if (t instanceof StatusError) return writeError(res, t, this.host.serializers);
      proxyRequest(req, res, t, (err) => writeError(res, unreachable(err), this.host.serializers));
    };
  }

  /** `/apis/<group>`, for a group or the Kubernetes spelling of one that discovery lists under both names. */
  private apiGroupDocument(group: string): APIGroup | undefined {
    const platform = discoveryAliasTarget(group);
    if (!platform) return apiGroup(this.discoveryEntries(), group);
    const doc = apiGroup(this.discoveryEntries(), platform);
    return doc && respellDiscovery(doc, { platform, requested: group });
  }

  /** Whether an upgrade request goes to an extension server. */
  handlesUpgrade(req: IncomingMessage): boolean {
    return this.remoteFor(getRequestInfo(req)) !== undefined;
  }

  /** Proxies an upgrade request (authenticated and authorized by the caller) to its extension server. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const a = this.remoteFor(getRequestInfo(req));
    const t = a ? this.target(req, a) : notFoundUpgrade();
    if (t instanceof StatusError) return refuseUpgrade(socket, t);
    proxyUpgrade(req, socket, head, t, (err) => refuseUpgrade(socket, unreachable(err)));
  }

  private target(req: IncomingMessage, a: APIService): ProxyTarget | StatusError {
    const info = getRequestInfo(req);
    const alias = this.groupVersionOf(info)?.alias;
    if (apiServiceCondition(a)?.status !== 'True') return serviceUnavailable('service unavailable');
    let location;
    try {
      location = resolveLocation(a, this.lookup, this.config.enableAggregatorRouting === true);
    } catch (err) {
      return serviceUnavailable((err as Error).message);
    }
    return {
      apiService: a,
      location,
      tls: this.tls(),
      user: getUser(req),
      headers: this.userHeaders,
      // A watch streams its events as they come (and HEAD has no body): passed through as the extension server wrote it.
      ...(alias ? { alias: { ...alias, respellAnswer: info.verb !== 'watch' && req.method !== 'HEAD' } } : {}),
      track: (close) => {
        this.connections.add(close);
        return () => this.connections.delete(close);
      },
    };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function serviceUnavailable(message: string): StatusError {
  return new StatusError({ code: 503, reason: 'ServiceUnavailable', message, details: {} });
}

function unreachable(err: Error): StatusError {
  return serviceUnavailable(`error trying to reach service: ${err.message}`);
}

function notFoundUpgrade(): StatusError {
  return new StatusError({
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
    details: {},
  });
}

function refuseUpgrade(socket: Duplex, err: StatusError): void {
  const status = errorToStatus(err).status;
  const body = JSON.stringify(status);
  socket.end(
    `HTTP/1.1 ${status.code} ${status.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
