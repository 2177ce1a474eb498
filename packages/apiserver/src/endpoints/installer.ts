/**
 * The API's routing and discovery (model: apiserver `pkg/endpoints/installer.go` and `discovery/`).
 *
 * Every resource (and subresource) is registered once, with its scope. A request is dispatched by its request info
 * (group, version, resource, subresource, verb) to the handler of that verb, if the resource's storage has the
 * capability; discovery documents are computed from the same table, so they always say exactly what is served.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import {
  type APIGroup,
  type APIGroupList,
  type APIResource,
  type APIResourceList,
  type APIVersions,
  badRequest,
  compareVersions,
  errorToStatus,
  formatApiVersion,
  isStatusError,
  StatusError,
  unsupportedMediaType,
} from '@platform/api';

import { type WebSocket } from 'ws';

import { capabilities, type RequestContext, withNamespace } from '../registry/rest/rest';
import { type RequestScope } from './handlers/scope';
import {
  createHandler,
  deleteCollectionHandler,
  deleteHandler,
  getHandler,
  listHandler,
  updateHandler,
  type VerbRequest,
} from './handlers/verbs';
import { watchHandler } from './handlers/watch';
import { patchHandler } from './handlers/patch';
import { negotiateOutput, type OutputFormat } from './negotiation/negotiate';
import { discoveryAliasTarget, respellDiscovery, setResponseGroupAlias, withDiscoveryAliases } from './group-alias';
import { isTrueParam } from './parse-bool';
import { isCleanPath, type RequestInfo } from './request-info';
import { type Serializers, setResponseContentType, writeError, writeObject } from './responses/writers';

/** 404 for a path that names no resource, as Kubernetes words it. */
export function notFoundPath(): StatusError {
  return new StatusError({
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
    details: {},
  });
}

/** 405 for a method the path has no route for, as Kubernetes words it. */
function methodNotAllowed(): StatusError {
  return new StatusError({
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
    details: {},
  });
}

/** Why a name or namespace from the path cannot name an object: a path segment rule, or a NUL character. */
function pathNameProblems(name: string): string[] {
  const problems: string[] = [];
  if (name === '.' || name === '..') problems.push(`may not be '${name}'`);
  if (name.includes('/')) problems.push("may not contain '/'");
  if (name.includes('%')) problems.push("may not contain '%'");
  if (name.includes('\0')) problems.push('may not contain NUL characters');
  return problems;
}

/**
 * 400 for a namespace or object name on the path that no object can have (model: `ScopeNamer.Name`, which checks
 * `IsValidPathSegmentName`); a NUL character, which no store key may hold, is refused too.
 */
function checkPathNames(info: RequestInfo): void {
  const name = info.parts[1] ?? '';
  for (const [what, value] of [
    ['Namespace', info.namespace],
    ['Name', name],
  ] as const) {
    if (value === '') continue;
    const problems = pathNameProblems(value);
    if (problems.length)
      throw badRequest(`${what} parameter invalid: ${JSON.stringify(value)}: ${problems.join('; ')}`);
  }
}

/** 415 for a Protobuf body sent to a custom resource (1.21 reads custom objects as JSON or YAML only). */
function refuseProtobufBody(req: IncomingMessage): void {
  const ct = req.headers['content-type'] ?? '';
  if (ct.toLowerCase().includes('protobuf')) throw unsupportedMediaType(ct, ['application/json', 'application/yaml']);
}

function scopeKey(group: string, version: string, resource: string, subresource: string): string {
  return `${group}/${version}/${resource}/${subresource}`;
}

/** The verbs discovery lists for a storage, from its capabilities. */
function verbsOf(scope: RequestScope): string[] {
  const s = scope.storage;
  const verbs: string[] = [];
  if (capabilities.creater(s)) verbs.push('create');
  if (capabilities.deleter(s)) verbs.push('delete');
  if (capabilities.collectionDeleter(s)) verbs.push('deletecollection');
  if (capabilities.getter(s)) verbs.push('get');
  if (capabilities.lister(s)) verbs.push('list');
  if (capabilities.updater(s)) verbs.push('patch', 'update');
  if (capabilities.connecter(s)) {
    if (s.connectMethods.includes('POST')) verbs.push('create');
    if (s.connectMethods.includes('GET')) verbs.push('get');
  }
  if (capabilities.watcher(s)) verbs.push('watch');
  return verbs;
}

/** A served resource or subresource as the OpenAPI paths describe it. */
export interface OpenApiResource {
  group: string;
  version: string;
  resource: string;
  /** '' for the main resource. */
  subresource: string;
  namespaced: boolean;
  /** The kind of the bodies (for subresources such as scale, the subresource's kind). */
  kind: { group: string; version: string; kind: string };
  schemaId: string;
  listSchemaId: string;
  verbs: string[];
}

/** The routing table of the API and its discovery documents. */
export class ApiInstaller {
  private readonly scopes = new Map<string, RequestScope>();
  /** group → version → scopes in registration order. */
  private readonly byGroupVersion = new Map<string, Map<string, RequestScope[]>>();

  /** `--kubernetes-client-compatibility`: `/apis` also lists the Kubernetes names of some groups (group-alias.ts). */
  kubernetesClientCompatibility = true;

  constructor(
    private readonly serializers: Serializers,
    private readonly serverAddress: () => string,
  ) {}

  /** Serves a resource or subresource. Throws when it is registered twice. */
  add(scope: RequestScope): void {
    const { group, version } = scope.resourceKind;
    const key = scopeKey(group, version, scope.resource, scope.subresource);
    if (this.scopes.has(key)) throw new Error(`resource ${key} is registered twice`);
    this.scopes.set(key, scope);
    let versions = this.byGroupVersion.get(group);
    if (!versions) this.byGroupVersion.set(group, (versions = new Map()));
    let list = versions.get(version);
    if (!list) versions.set(version, (list = []));
    list.push(scope);
  }

  /**
   * Stops serving a resource and its subresources in one group version (a CRD version no longer served); discovery
   * stops listing them at once. Returns whether anything was served.
   */
  remove(group: string, version: string, resource: string): boolean {
    const list = this.byGroupVersion.get(group)?.get(version);
    if (!list) return false;
    const kept = list.filter((s) => s.resource !== resource);
    for (const s of list)
      if (s.resource === resource) this.scopes.delete(scopeKey(group, version, resource, s.subresource));
    if (kept.length) this.byGroupVersion.get(group)!.set(version, kept);
    else {
      this.byGroupVersion.get(group)!.delete(version);
      if (this.byGroupVersion.get(group)!.size === 0) this.byGroupVersion.delete(group);
    }
    return kept.length !== list.length;
  }

  /** Every served resource and subresource, for the paths of `/openapi/v2`. */
  openApiResources(): OpenApiResource[] {
    return [...this.scopes.values()].map((scope) => {
      const s = scope.storage;
      const verbs = verbsOf(scope);
      if (capabilities.namedCreater(s) && !verbs.includes('create')) verbs.push('create');
      return {
        group: scope.resourceKind.group,
        version: scope.resourceKind.version,
        resource: scope.resource,
        subresource: scope.subresource,
        namespaced: scope.resourceKind.scope === 'Namespaced',
        kind: { group: scope.kind.group, version: scope.kind.version, kind: scope.kind.kind },
        schemaId: (scope.unstructured && scope.kind === scope.resourceKind
          ? scope.unstructured.schemaId
          : scope.kind.schema.$id) as string,
        listSchemaId: (scope.unstructured && scope.kind === scope.resourceKind
          ? scope.unstructured.listSchemaId
          : scope.kind.listSchema.$id) as string,
        verbs,
      };
    });
  }

  /** The scope serving a request, if any. */
  scopeFor(info: RequestInfo): RequestScope | undefined {
    return this.scopes.get(scopeKey(info.apiGroup, info.apiVersion, info.resource, info.subresource));
  }

  // ---- discovery -------------------------------------------------------------------------------------------

  private groupVersions(group: string): string[] {
    return [...(this.byGroupVersion.get(group)?.keys() ?? [])].sort(compareVersions);
  }

  /** `/api`. */
  apiVersions(): APIVersions {
    return {
      kind: 'APIVersions',
      versions: this.groupVersions(''),
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.serverAddress() }],
    };
  }

  /** `/apis/<group>`, or undefined for an unknown group. */
  apiGroup(group: string): APIGroup | undefined {
    const versions = this.groupVersions(group);
    if (group === '' || versions.length === 0) return undefined;
    const gvs = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
    return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: gvs, preferredVersion: gvs[0] };
  }

  /** `/apis`. */
  apiGroupList(): APIGroupList {
    const groups = [...this.byGroupVersion.keys()]
      .filter((g) => g !== '')
      .map((g) => {
        const grp = this.apiGroup(g) as APIGroup;
        const { kind: _k, apiVersion: _a, ...rest } = grp;
        return rest;
      });
    const list: APIGroupList = { kind: 'APIGroupList', apiVersion: 'v1', groups };
    return this.kubernetesClientCompatibility ? withDiscoveryAliases(list) : list;
  }

  /** `/api/v1` and `/apis/<group>/<version>`, or undefined for an unknown group version. */
  apiResourceList(group: string, version: string): APIResourceList | undefined {
    const scopes = this.byGroupVersion.get(group)?.get(version);
    if (!scopes) return undefined;
    const resources: APIResource[] = scopes.map((s) => {
      const k = s.kind;
      const r: APIResource = {
        name: s.subresource ? `${s.resource}/${s.subresource}` : s.resource,
        singularName: s.subresource ? '' : k.singular,
        namespaced: s.resourceKind.namespaced,
        kind: k.kind,
        verbs: verbsOf(s),
      };
      if (k.group !== group || k.version !== version) {
        r.group = k.group;
        r.version = k.version;
      }
      if (!s.subresource && k.shortNames.length) r.shortNames = [...k.shortNames];
      if (!s.subresource && k.categories.length) r.categories = [...k.categories];
      return r;
    });
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: formatApiVersion({ group, version }), resources };
  }

  /** The discovery document of a non-resource path, if the path is one. */
  discovery(path: string): object | undefined {
    const parts = path.split('/').filter((p) => p !== '');
    if (parts[0] === 'api') {
      if (parts.length === 1) return this.apiVersions();
      if (parts.length === 2) return this.apiResourceList('', parts[1] as string);
    } else if (parts[0] === 'apis') {
      if (parts.length === 1) return this.apiGroupList();
      // The Kubernetes spelling of a group that discovery lists under both names (group-alias.ts).
      const platform = discoveryAliasTarget(parts[1] as string);
      if (platform && parts.length <= 3) {
        const doc = parts.length === 2 ? this.apiGroup(platform) : this.apiResourceList(platform, parts[2] as string);
        return doc && respellDiscovery(doc, { platform, requested: parts[1] as string });
      }
      if (parts.length === 2) return this.apiGroup(parts[1] as string);
      if (parts.length === 3) return this.apiResourceList(parts[1] as string, parts[2] as string);
    }
    return undefined;
  }

  // ---- dispatch --------------------------------------------------------------------------------------------

  /**
   * Serves a request on the API. Returns false when the path is not part of the API (the caller goes on to its
   * other routes); every failure is written as a Status.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    ctx: RequestContext,
    logBug?: (err: unknown) => void,
    ws?: WebSocket,
  ): Promise<boolean> {
    let output: OutputFormat | undefined;
    try {
      if (ws && !(info.isResourceRequest && info.verb === 'watch')) {
        throw new StatusError({ code: 400, reason: 'BadRequest', message: 'only watches are served over WebSocket' });
      }
      if (!info.isResourceRequest) {
        if (!info.path.startsWith('/api')) return false;
        // `..`, `.` and `//` in an API path name nothing: never resolved to another path.
        if (!isCleanPath(info.path)) throw notFoundPath();
        const doc = info.verb === 'get' ? this.discovery(info.path) : undefined;
        if (!doc) {
          if (
            info.path === '/api' ||
            info.path.startsWith('/api/') ||
            info.path === '/apis' ||
            info.path.startsWith('/apis/')
          )
            throw notFoundPath();
          return false;
        }
        output = negotiateOutput(req.headers.accept, { allowViews: false });
        setResponseContentType(res, output);
        writeObject(
          res,
          200,
          doc as never,
          output.format,
          this.serializers,
          isTrueParam(new URLSearchParams(req.url?.split('?')[1] ?? '').get('pretty')),
        );
        return true;
      }
      const scope = this.scopeFor(info);
      if (!scope) throw notFoundPath();
      if (info.requestedGroup) setResponseGroupAlias(res, { platform: info.apiGroup, requested: info.requestedGroup });
      checkPathNames(info);
      const namespaced = scope.resourceKind.namespaced;
      // From the path: a list narrowed to one name by a field selector is still a collection read.
      const isCollection = (info.parts[1] ?? '') === '';
      // A cluster-scoped resource has no namespaced path; a namespaced one is reached across namespaces only by
      // collection reads (and the namespace resource itself names its namespace in `info.namespace`).
      if (!namespaced && info.namespace && scope.resource !== 'namespaces') throw notFoundPath();
      if (namespaced && !info.namespace && !(isCollection && (info.verb === 'list' || info.verb === 'watch')))
        throw notFoundPath();
      // A subresource another server answers (pods/log): handed over whole.
      if (capabilities.connecter(scope.storage)) {
        if (!scope.storage.connectMethods.includes(req.method ?? 'GET')) throw methodNotAllowed();
        await scope.storage.connect(withNamespace(ctx, info.namespace), info.name, req, res);
        return true;
      }
      // Routes as Kubernetes installs them: a main resource is created on its collection path and replaced or
      // patched on its item path; the other method/path pairs are not routes (405, not a 400 about a name).
      if (
        !info.subresource &&
        (isCollection ? info.verb === 'update' || info.verb === 'patch' : info.verb === 'create')
      ) {
        throw methodNotAllowed();
      }
      // A watch is a GET (the /watch/ prefix takes its verb from the path, whatever the method).
      if (info.verb === 'watch' && !ws && req.method !== 'GET') throw methodNotAllowed();
      const isRead = info.verb === 'get' || info.verb === 'list' || info.verb === 'watch';
      const unstructured = scope.unstructured !== undefined;
      output = negotiateOutput(req.headers.accept, {
        allowViews: isRead,
        stream: info.verb === 'watch',
        noProtobuf: unstructured,
      });
      setResponseContentType(res, output);
      if (unstructured && (info.verb === 'create' || info.verb === 'update')) refuseProtobufBody(req);
      const query = new URLSearchParams(req.url?.split('?')[1] ?? '');
      const r: VerbRequest = {
        req,
        res,
        ctx: withNamespace(ctx, namespaced ? info.namespace : ''),
        scope,
        query,
        output,
        name: info.name,
      };
      switch (info.verb) {
        case 'get':
          await getHandler(r);
          break;
        case 'list':
          await listHandler(r);
          break;
        case 'watch':
          await watchHandler(r, ws);
          break;
        case 'create':
          await createHandler(r);
          break;
        case 'update':
          await updateHandler(r);
          break;
        case 'patch':
          await patchHandler(r);
          break;
        case 'delete':
          await deleteHandler(r);
          break;
        case 'deletecollection':
          await deleteCollectionHandler(r);
          break;
        default:
          throw methodNotAllowed();
      }
    } catch (err) {
      if (!isStatusError(err)) logBug?.(err);
      if (ws) {
        // Over a WebSocket, a failure before the stream started is one ERROR event, then the socket closes.
        ws.send(JSON.stringify({ type: 'ERROR', object: errorToStatus(err).status }));
        ws.close(1000);
      } else {
        writeError(res, err, this.serializers, output?.format ?? 'json');
      }
    }
    return true;
  }
}
