/**
 * The resource metrics API the metrics server serves (model: metrics-server 0.5 `pkg/api/`): `metrics.platform/
 * v1beta1` NodeMetrics at `/apis/metrics.platform/v1beta1/nodes[/<name>]` and PodMetrics at `.../pods` (every
 * namespace) and `.../namespaces/<ns>/pods[/<name>]`, read-only (`get`, `list`), with label selectors (and field
 * selectors on `metadata.name`/`metadata.namespace`), as JSON or as a Table (`as=Table;g=meta.platform` or
 * `meta.k8s.io`, `v=v1` or `v1beta1`); the discovery documents of the group (`/apis`, `/apis/metrics.platform`,
 * `/apis/metrics.platform/v1beta1`). Every failure is a `Status`.
 *
 * What is listed is what the informers have (nodes, pods) joined with the storage: a node or pod without metrics
 * yet is left out of a list and is NotFound on a get. Objects carry the name, namespace and labels of their node or
 * pod and are created at the time of the request, as metrics-server's.
 *
 * The group is also answered as `metrics.k8s.io` (Kubernetes' spelling, which `kubectl top` asks for), in the
 * spelling of the request.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';

import {
  type ApiObject,
  checkSupportedFields,
  errorToStatus,
  forbidden,
  isFieldSelectorParseError,
  isLabelSelectorParseError,
  type Kind,
  methodNotSupported,
  METRICS_GROUP,
  newQuantity,
  newScaledQuantity,
  type Node,
  NodeMetricsKind,
  type NodeMetrics,
  notAcceptable,
  notFound,
  objectMetaFieldsSet,
  parseFieldSelector,
  parseSelector,
  type Pod,
  type PodMetrics,
  PodMetricsKind,
  StatusError,
  type TableColumn,
  tableColumns,
  toTable,
  formatDurationMs,
  badRequest,
} from '@platform/api';
import { type AccessAttributes, type DelegatedUser } from '@platform/client';

import { type MetricsStorage, type Usage } from '../storage/storage';

/** Kubernetes' spelling of the group, answered as an alias. */
export const METRICS_GROUP_ALIAS = 'metrics.k8s.io';
const VERSION = 'v1beta1';
const GROUPS = [METRICS_GROUP, METRICS_GROUP_ALIAS];

/** What the API reads. */
export interface MetricsApiSource {
  nodes(): readonly Node[];
  node(name: string): Node | undefined;
  pods(namespace?: string): readonly Pod[];
  pod(namespace: string, name: string): Pod | undefined;
  storage: MetricsStorage;
  now?: () => number;
}

/** A request for a metrics resource, as the path names it. */
export interface MetricsRequest {
  group: string;
  resource: 'nodes' | 'pods';
  namespace?: string;
  name?: string;
}

/**
 * The resource a path names (`/apis/<group>/v1beta1/nodes[/name]`, `.../pods`, `.../namespaces/<ns>/pods[/name]`),
 * or undefined for any other path.
 */
export function parseMetricsPath(path: string): MetricsRequest | undefined {
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  if (parts[0] !== 'apis' || !GROUPS.includes(parts[1] ?? '') || parts[2] !== VERSION) return undefined;
  const group = parts[1] as string;
  const rest = parts.slice(3);
  if (rest[0] === 'nodes' && rest.length <= 2) return { group, resource: 'nodes', name: rest[1] };
  if (rest[0] === 'pods' && rest.length === 1) return { group, resource: 'pods' };
  if (rest[0] === 'namespaces' && rest[1] && rest[2] === 'pods' && rest.length <= 4)
    return { group, resource: 'pods', namespace: rest[1], name: rest[3] };
  return undefined;
}

/** The verb of a request for a resource, as Kubernetes' request info names it. */
function verbOf(req: IncomingMessage, r: MetricsRequest): string {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method === 'GET' || method === 'HEAD') {
    if (r.name) return 'get';
    return new URLSearchParams(req.url?.split('?')[1] ?? '').get('watch') === 'true' ? 'watch' : 'list';
  }
  return (
    { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: r.name ? 'delete' : 'deletecollection' }[method] ??
    method.toLowerCase()
  );
}

/** The SubjectAccessReview attributes of a request (delegated authorization). */
export function accessAttributes(req: IncomingMessage, path: string): AccessAttributes {
  const r = parseMetricsPath(path);
  if (!r) return { nonResourceAttributes: { path, verb: (req.method ?? 'GET').toLowerCase() } };
  return {
    resourceAttributes: {
      verb: verbOf(req, r),
      group: METRICS_GROUP,
      version: VERSION,
      resource: r.resource,
      ...(r.namespace ? { namespace: r.namespace } : {}),
      ...(r.name ? { name: r.name } : {}),
    },
  };
}

/** Writes a Status. */
export function writeStatus(res: ServerResponse, err: StatusError): void {
  const body = JSON.stringify(err.status);
  res.writeHead(err.status.code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** The refusals of delegated authentication and authorization, as Status objects with Kubernetes' messages. */
export function denyAsStatus(
  res: ServerResponse,
  code: 401 | 403,
  user: DelegatedUser | undefined,
  attrs: AccessAttributes,
): void {
  if (code === 401) {
    return writeStatus(res, new StatusError({ code: 401, reason: 'Unauthorized', message: 'Unauthorized' }));
  }
  const who = `User "${user?.username ?? ''}"`;
  const ra = attrs.resourceAttributes;
  if (!ra) {
    const nr = attrs.nonResourceAttributes;
    return writeStatus(
      res,
      new StatusError({
        code: 403,
        reason: 'Forbidden',
        message: `forbidden: ${who} cannot ${nr?.verb ?? ''} path "${nr?.path ?? ''}"`,
      }),
    );
  }
  const scope = ra.namespace ? `in the namespace "${ra.namespace}"` : 'at the cluster scope';
  const detail = `${who} cannot ${ra.verb} resource "${ra.resource}" in API group "${ra.group}" ${scope}`;
  writeStatus(res, forbidden({ group: ra.group, resource: ra.resource }, ra.name ?? '', detail));
}

/** What a request asked to get back: a Table (of which group and version) or the objects. */
type View = { table: false } | { table: true; apiVersion: string };

/** The view an `Accept` header asks for; throws 406 when it accepts nothing served here. */
function negotiate(accept: string | undefined): View {
  if (!accept) return { table: false };
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((s) => s.trim());
    const p = Object.fromEntries(params.map((kv) => kv.split('=').map((s) => s.trim()) as [string, string]));
    const t = type.toLowerCase();
    if (p.as === 'Table') {
      if (
        (t === 'application/json' || t === '*/*') &&
        (p.g === 'meta.platform' || p.g === 'meta.k8s.io') &&
        (p.v === 'v1' || p.v === 'v1beta1')
      )
        return { table: true, apiVersion: `${p.g}/${p.v}` };
      continue;
    }
    if (p.as) continue;
    if (t === 'application/json' || t === 'application/*' || t === '*/*') return { table: false };
  }
  throw notAcceptable(['application/json', 'application/json;as=Table;v=v1;g=meta.platform']);
}

function writeJson(res: ServerResponse, code: number, body: unknown, head: boolean): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(head ? undefined : text);
}

function groupVersion(group: string): { groupVersion: string; version: string } {
  return { groupVersion: `${group}/${VERSION}`, version: VERSION };
}

/** `/apis/<group>`: the group with its one version. */
function apiGroup(group: string): Record<string, unknown> {
  return { name: group, versions: [groupVersion(group)], preferredVersion: groupVersion(group) };
}

function apiResource(k: Kind): Record<string, unknown> {
  return { name: k.plural, singularName: k.singular, namespaced: k.namespaced, kind: k.kind, verbs: [...k.verbs] };
}

/** The discovery document of a path, or undefined when the path is not one. */
function discovery(path: string): Record<string, unknown> | undefined {
  const p = path.replace(/\/+$/, '');
  if (p === '/apis') return { kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup(METRICS_GROUP)] };
  for (const g of GROUPS) {
    if (p === `/apis/${g}`) return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g) };
    if (p === `/apis/${g}/${VERSION}`)
      return {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: `${g}/${VERSION}`,
        resources: [apiResource(NodeMetricsKind), apiResource(PodMetricsKind)],
      };
  }
  return undefined;
}

function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The CPU (nanocores) and memory (bytes) of a usage, as metrics-server writes them. */
function usageOf(u: { cpuNanoCores: number; memoryBytes: number }): Record<string, string> {
  return {
    cpu: newScaledQuantity(BigInt(Math.max(0, Math.floor(u.cpuNanoCores))), -9).toString(),
    memory: newQuantity(BigInt(Math.max(0, Math.floor(u.memoryBytes))), 'BinarySI').toString(),
  };
}

function nodeMetrics(node: Node, u: Usage, now: number): NodeMetrics {
  const labels = node.metadata?.labels;
  return {
    metadata: { name: node.metadata?.name ?? '', creationTimestamp: iso(now), ...(labels ? { labels } : {}) },
    timestamp: iso(u.timestamp),
    window: formatDurationMs(u.windowMs),
    usage: usageOf(u),
  };
}

/** The handler of the metrics API; passes other paths on (`next`). */
export function metricsApiHandler(
  source: MetricsApiSource,
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const now = source.now ?? Date.now;

  const podMetrics = (pod: Pod, at: number): PodMetrics | undefined => {
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const u = source.storage.podUsage(ns, name);
    if (!u) return undefined;
    const labels = pod.metadata?.labels;
    return {
      metadata: { name, namespace: ns, creationTimestamp: iso(at), ...(labels ? { labels } : {}) },
      timestamp: iso(u.timestamp),
      window: formatDurationMs(u.windowMs),
      containers: u.containers.map((c) => ({ name: c.name, usage: usageOf(c) })),
    };
  };

  /** The selected objects of a list request: by labels of the node or pod, and by their metadata fields. */
  const selected = <T extends ApiObject>(items: readonly T[], q: URLSearchParams, namespaced: boolean): T[] => {
    let labels;
    let fields;
    try {
      labels = parseSelector(q.get('labelSelector') ?? '');
      fields = checkSupportedFields(parseFieldSelector(q.get('fieldSelector') ?? ''), [
        'metadata.name',
        ...(namespaced ? ['metadata.namespace'] : []),
      ]);
    } catch (err) {
      if (isLabelSelectorParseError(err) || isFieldSelectorParseError(err)) throw badRequest((err as Error).message);
      throw err;
    }
    return items.filter(
      (o) => labels.matches(o.metadata?.labels) && fields.matches(objectMetaFieldsSet(o.metadata, namespaced)),
    );
  };

  const serve = (req: IncomingMessage, res: ServerResponse, r: MetricsRequest, path: string): void => {
    const kind = r.resource === 'nodes' ? NodeMetricsKind : PodMetricsKind;
    const gr = { group: r.group, resource: r.resource };
    const method = (req.method ?? 'GET').toUpperCase();
    const verb = verbOf(req, r);
    if ((method !== 'GET' && method !== 'HEAD') || verb === 'watch') throw methodNotSupported(gr, verb);
    const view = negotiate(req.headers.accept);
    const q = new URLSearchParams(req.url?.slice(path.length + 1) ?? '');
    const at = now();
    const apiVersion = `${r.group}/${VERSION}`;
    let objects: ApiObject[];
    if (r.resource === 'nodes') {
      const nodes = r.name ? [source.node(r.name)].filter((n): n is Node => !!n) : selected(source.nodes(), q, false);
      objects = nodes.flatMap((n) => {
        const u = source.storage.nodeUsage(n.metadata?.name ?? '');
        return u ? [nodeMetrics(n, u, at)] : [];
      });
    } else {
      const pods =
        r.name && r.namespace
          ? [source.pod(r.namespace, r.name)].filter((p): p is Pod => !!p)
          : selected(source.pods(r.namespace), q, true);
      objects = pods.flatMap((p) => podMetrics(p, at) ?? []);
    }
    objects.sort((a, b) =>
      `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`.localeCompare(
        `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`,
      ),
    );
    // metrics-server's names: `nodemetrics.metrics.k8s.io "n1" not found`, `podmetrics... "default/web" not found`.
    if (r.name && objects.length === 0)
      throw notFound(
        { group: r.group, resource: r.resource === 'nodes' ? 'nodemetrics' : 'podmetrics' },
        r.namespace ? `${r.namespace}/${r.name}` : r.name,
      );
    const head = method === 'HEAD';
    if (view.table) {
      const include = q.get('includeObject');
      const table = toTable<ApiObject>(
        tableColumns(kind.spec.columns as unknown as TableColumn<ApiObject>[]),
        objects.map((o) => ({ ...o, kind: kind.kind, apiVersion })),
        {
          now: at,
          includeObject: include === 'None' || include === 'Object' ? include : 'Metadata',
        },
      );
      return writeJson(res, 200, { ...table, apiVersion: view.apiVersion }, head);
    }
    if (r.name) return writeJson(res, 200, { kind: kind.kind, apiVersion, ...objects[0] }, head);
    writeJson(res, 200, { kind: kind.listKind, apiVersion, metadata: {}, items: objects }, head);
  };

  return (req, res, next) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    try {
      const r = parseMetricsPath(path);
      if (r) return serve(req, res, r, path);
      const doc = discovery(path);
      if (!doc) return next();
      const method = (req.method ?? 'GET').toUpperCase();
      if (method !== 'GET' && method !== 'HEAD')
        throw new StatusError({
          code: 405,
          reason: 'MethodNotAllowed',
          message: `${method} is not allowed on ${path}`,
        });
      writeJson(res, 200, doc, method === 'HEAD');
    } catch (err) {
      writeStatus(res, errorToStatus(err));
    }
  };
}
