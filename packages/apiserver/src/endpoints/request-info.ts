/**
 * What a request is about, read from its method, path and query alone (model: apiserver
 * `pkg/endpoints/request/requestinfo.go`). Authentication, audit, in-flight limits and authorization all read this,
 * before any handler runs, so it must never fail: a path it does not understand is a non-resource request.
 *
 * Resource paths:
 *   /api/v1/<resource>[/<name>[/<subresource>[/<rest>...]]]
 *   /api/v1/namespaces/<ns>/<resource>[/<name>[/<subresource>...]]
 *   /apis/<group>/<version>/... the same
 *   /api/v1/namespaces/<ns>[/status|/finalize]         (the namespace itself)
 *   /api/v1/watch/...                                   (deprecated watch prefix)
 */

import { platformGroupOf } from './group-alias';
import { isTrueParam } from './parse-bool';

/** The verbs authorization knows for resource requests. */
export type ResourceVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'proxy';

/** What a request is about. */
export interface RequestInfo {
  /** True for a request on an API resource (authorized by resource), false for any other path. */
  isResourceRequest: boolean;
  path: string;
  /** The resource verb, or the lowercased HTTP method for non-resource requests. */
  verb: string;
  /** `api` or `apis` (empty for non-resource requests). */
  apiPrefix: string;
  /** The group, always in the platform's spelling (a `.k8s.io` alias is read as its `.platform` group). */
  apiGroup: string;
  /** The group as the path spelled it, when that is a Kubernetes alias (`rbac.authorization.k8s.io`); else unset. */
  requestedGroup?: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** The path segments after the version, with the namespace part removed. */
  parts: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const SPECIAL_VERBS = new Set(['proxy', 'watch']);

function nonResource(path: string, method: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
}

/**
 * Whether a request path is written the one way it can be served: absolute, no empty segment (`//`) except a trailing
 * slash, and no segment that is or decodes to `.` or `..` (`%2e%2e`). Anything else names no resource: it is never
 * resolved to another path (Kubernetes answers 404 or 400 and never serves a path other than the one written).
 */
export function isCleanPath(path: string): boolean {
  if (!path.startsWith('/')) return false;
  const segments = path.split('/');
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i] as string;
    if (s === '') {
      if (i !== segments.length - 1) return false;
      continue;
    }
    if (s === '.' || s === '..') return false;
    if (s.length <= 6 && s.includes('%') && /^(?:\.|%2e){1,2}$/i.test(s)) return false;
  }
  return true;
}

/**
 * Reads a request's info from its method and URL (path plus query). `url` is the raw request target
 * (`/api/v1/pods?watch=1`). A path that is not clean (`isCleanPath`) is a non-resource request, whatever it names.
 */
export function parseRequestInfo(method: string, url: string): RequestInfo {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!isCleanPath(path)) return nonResource(path, method);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const segments = path.split('/').filter((s) => s !== '');
  let decoded: string[];
  try {
    decoded = segments.map((s) => decodeURIComponent(s));
  } catch {
    return nonResource(path, method);
  }
  let rest: string[];
  const info = nonResource(path, method);
  if (decoded[0] === 'api' && decoded.length >= 2) {
    info.apiPrefix = 'api';
    info.apiVersion = decoded[1] as string;
    rest = decoded.slice(2);
  } else if (decoded[0] === 'apis' && decoded.length >= 3) {
    info.apiPrefix = 'apis';
    info.apiGroup = decoded[1] as string;
    info.apiVersion = decoded[2] as string;
    rest = decoded.slice(3);
  } else {
    return info;
  }
  if (rest.length === 0) return info; // discovery of a group version: a non-resource request

  info.isResourceRequest = true;
  // Kubernetes' spelling of a group is the platform's group (discovery above stays on the `.platform` spelling).
  const platformGroup = platformGroupOf(info.apiGroup);
  if (platformGroup) {
    info.requestedGroup = info.apiGroup;
    info.apiGroup = platformGroup;
  }
  const m = method.toUpperCase();
  if (SPECIAL_VERBS.has(rest[0] as string)) {
    if (rest.length < 2) return nonResource(path, method);
    info.verb = rest[0] as string;
    rest = rest.slice(1);
  } else {
    switch (m) {
      case 'POST':
        info.verb = 'create';
        break;
      case 'GET':
      case 'HEAD':
        info.verb = 'get';
        break;
      case 'PUT':
        info.verb = 'update';
        break;
      case 'PATCH':
        info.verb = 'patch';
        break;
      case 'DELETE':
        info.verb = 'delete';
        break;
      default:
        info.verb = '';
    }
  }

  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      info.namespace = rest[1] as string;
      // Anything after the namespace name that is not one of its own subresources is a resource of its own.
      if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) rest = rest.slice(2);
    }
  }
  info.parts = rest;
  if (rest.length >= 3) info.subresource = rest[2] as string;
  if (rest.length >= 2) info.name = rest[1] as string;
  if (rest.length >= 1) info.resource = rest[0] as string;

  // A collection read is a list (or a watch: `watch` read as Go's ParseBool, `watch=True` included; a bad value is a
  // list here, and the list handler answers it 400); a collection delete is a deletecollection.
  if (info.name === '' && info.verb === 'get') {
    info.verb = isTrueParam(query.get('watch')) ? 'watch' : 'list';
  }
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection';
  // A list or watch narrowed to one name by field selector is authorized like a request for that name.
  if ((info.verb === 'list' || info.verb === 'watch') && info.name === '') {
    const name = singleNameFromFieldSelector(query.get('fieldSelector'));
    if (name) info.name = name;
  }
  return info;
}

function singleNameFromFieldSelector(selector: string | null): string {
  if (!selector) return '';
  const terms = selector.split(',');
  for (const term of terms) {
    const m = /^\s*metadata\.name\s*==?\s*([^,\s]+)\s*$/.exec(term);
    if (m) return m[1] as string;
  }
  return '';
}

/** True for verbs that change state (counted by `--max-mutating-requests-inflight`). */
export function isMutatingVerb(verb: string): boolean {
  return verb === 'create' || verb === 'update' || verb === 'patch' || verb === 'delete' || verb === 'deletecollection';
}

/**
 * True for requests that stay open (watches, proxies, exec/attach/log streams): they are exempt from the in-flight
 * limits and from `--request-timeout` (model: `BasicLongRunningRequestCheck`).
 */
export function isLongRunning(info: RequestInfo): boolean {
  if (!info.isResourceRequest) return false;
  if (info.verb === 'watch' || info.verb === 'proxy') return true;
  return ['attach', 'exec', 'log', 'portforward', 'proxy'].includes(info.subresource);
}
