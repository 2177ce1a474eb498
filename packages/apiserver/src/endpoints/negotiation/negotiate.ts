/**
 * Content negotiation (model: apiserver `pkg/endpoints/handlers/negotiation`): which serialization a response uses,
 * from the `Accept` header, and which decoder reads a request body, from its `Content-Type`.
 *
 * Responses: JSON (default, also for `*` ranges), YAML, Protobuf (`application/vnd.platform.protobuf`). A range may
 * ask for another view with `as=Table;g=meta.platform;v=v1beta1` (or `v=v1`) or `as=PartialObjectMetadata[List]`;
 * `g=meta.k8s.io` (kubectl's spelling) is an alias of `meta.platform`, and the view is answered in the spelling asked
 * for. Ranges are tried in order of `q`, then as written; one the server cannot serve is skipped, so fallback lists
 * work; when none can be served the answer is 406.
 *
 * Kubernetes' `application/vnd.kubernetes.protobuf` is the platform's Protobuf (the same `k8s\0` envelope and field
 * numbers), in a request's Content-Type and in Accept; a response asked for by that name carries that name, since
 * client-go (which sends `application/vnd.kubernetes.protobuf, *\/*`) reads only the media type it asked for.
 */
import {
  KUBERNETES_PROTOBUF_MEDIA_TYPE,
  notAcceptable,
  PROTOBUF_MEDIA_TYPE,
  unsupportedMediaType,
} from '@platform/api';

export { KUBERNETES_PROTOBUF_MEDIA_TYPE };

/** A serialization format. */
export type Format = 'json' | 'yaml' | 'protobuf';

/** The view of the objects a response carries. */
export type View = 'object' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** The outcome of output negotiation. */
export interface OutputFormat {
  format: Format;
  view: View;
  /** The Content-Type of the response. */
  contentType: string;
  /** Table: whether rows carry the object (`includeObject` is a query parameter; this records the media type asked). */
  viewVersion?: string;
  /** The group of a view as the request spelled it (`meta.platform` or its alias `meta.k8s.io`). */
  viewGroup?: string;
}

/** One parsed media range of an Accept header. */
export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

export const YAML_MEDIA_TYPE = 'application/yaml';
export const JSON_MEDIA_TYPE = 'application/json';

/** The media types a response can be served in, for 406 messages. */
export const SUPPORTED_OUTPUT = [JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE];

/** Parses one media type with parameters (`application/json;as=Table;g=x`). Returns undefined when malformed. */
export function parseMediaType(
  text: string,
): { type: string; subtype: string; params: Record<string, string> } | undefined {
  const [head, ...rest] = text.split(';');
  const m = /^\s*([a-zA-Z0-9!#$&^_.+*-]+)\/([a-zA-Z0-9!#$&^_.+*-]+)\s*$/.exec(head ?? '');
  if (!m) return undefined;
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) {
      if (p.trim() === '') continue;
      return undefined;
    }
    const key = p.slice(0, eq).trim().toLowerCase();
    let value = p.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    params[key] = value;
  }
  return { type: (m[1] as string).toLowerCase(), subtype: (m[2] as string).toLowerCase(), params };
}

/** Parses an Accept header into media ranges, best first (by `q`, then as written). Malformed ranges are skipped. */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const ranges: (MediaRange & { index: number })[] = [];
  header.split(',').forEach((part, index) => {
    const mt = parseMediaType(part);
    if (!mt) return;
    const { q: qText, ...params } = mt.params;
    const q = qText === undefined ? 1 : Number(qText);
    if (!Number.isFinite(q) || q <= 0) return;
    ranges.push({ ...mt, params, q, index });
  });
  ranges.sort((a, b) => b.q - a.q || a.index - b.index);
  return ranges.map(({ index: _index, ...r }) => r);
}

/** The group of the views, and the Kubernetes spelling kubectl uses, answered in kind. */
const META_GROUPS = new Set(['meta.platform', 'meta.k8s.io']);
const VIEW_VERSIONS: Record<string, string[]> = {
  Table: ['v1', 'v1beta1'],
  PartialObjectMetadata: ['v1', 'v1beta1'],
  PartialObjectMetadataList: ['v1', 'v1beta1'],
};

function formatOf(r: MediaRange): Format | undefined {
  const full = `${r.type}/${r.subtype}`;
  if (full === JSON_MEDIA_TYPE || full === '*/*' || full === 'application/*') return 'json';
  if (full === YAML_MEDIA_TYPE) return 'yaml';
  if (full === PROTOBUF_MEDIA_TYPE || full === KUBERNETES_PROTOBUF_MEDIA_TYPE) return 'protobuf';
  return undefined;
}

/** The Content-Type answering a range: Protobuf under the name it was asked for. */
function contentTypeOf(r: MediaRange, format: Format): string {
  return format === 'protobuf' && `${r.type}/${r.subtype}` === KUBERNETES_PROTOBUF_MEDIA_TYPE
    ? KUBERNETES_PROTOBUF_MEDIA_TYPE
    : CONTENT_TYPES[format];
}

const CONTENT_TYPES: Record<Format, string> = {
  json: JSON_MEDIA_TYPE,
  yaml: YAML_MEDIA_TYPE,
  protobuf: PROTOBUF_MEDIA_TYPE,
};

/** Options of {@link negotiateOutput}. */
export interface NegotiateOptions {
  /** The endpoint can serve Table and PartialObjectMetadata views (get, list and watch of resources). */
  allowViews: boolean;
  /** A watch stream: YAML is not offered (as in Kubernetes). */
  stream?: boolean;
  /** Custom objects: JSON and YAML only, as Kubernetes 1.21 serves them (Protobuf is not acceptable). */
  noProtobuf?: boolean;
}

/** Chooses the response format for an Accept header; throws a 406 StatusError when nothing acceptable is served. */
export function negotiateOutput(accept: string | undefined, o: NegotiateOptions): OutputFormat {
  for (const r of parseAccept(accept)) {
    const format = formatOf(r);
    if (!format) continue;
    if (o.stream && format === 'yaml') continue;
    if (o.noProtobuf && format === 'protobuf') continue;
    const as = r.params.as;
    if (as === undefined) return { format, view: 'object', contentType: contentTypeOf(r, format) };
    if (!o.allowViews || format === 'protobuf') continue;
    const versions = VIEW_VERSIONS[as];
    const group = r.params.g ?? '';
    if (!versions || !META_GROUPS.has(group) || !versions.includes(r.params.v ?? '')) continue;
    return {
      format,
      view: as as View,
      contentType: CONTENT_TYPES[format],
      viewVersion: r.params.v,
      viewGroup: group,
    };
  }
  throw notAcceptable(o.noProtobuf ? SUPPORTED_OUTPUT.filter((t) => t !== PROTOBUF_MEDIA_TYPE) : SUPPORTED_OUTPUT);
}

/** The body formats of create and update. */
export const SUPPORTED_INPUT = [JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE];

/** The patch types, by Content-Type. */
export const PATCH_TYPES = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
} as const;

/** A patch type. */
export type PatchType = (typeof PATCH_TYPES)[keyof typeof PATCH_TYPES];

/**
 * The format of a request body from its Content-Type (JSON when there is none, as in Kubernetes); throws a 415
 * StatusError for anything else.
 */
export function negotiateInput(contentType: string | undefined): Format {
  if (!contentType || contentType.trim() === '') return 'json';
  const mt = parseMediaType(contentType);
  const full = mt ? `${mt.type}/${mt.subtype}` : '';
  if (full === JSON_MEDIA_TYPE) return 'json';
  if (full === YAML_MEDIA_TYPE) return 'yaml';
  if (full === PROTOBUF_MEDIA_TYPE || full === KUBERNETES_PROTOBUF_MEDIA_TYPE) return 'protobuf';
  throw unsupportedMediaType(contentType, SUPPORTED_INPUT);
}

/** The patch type of a PATCH request from its Content-Type; throws a 415 StatusError naming the accepted ones. */
export function negotiatePatch(contentType: string | undefined, allowed: readonly PatchType[]): PatchType {
  const mt = contentType ? parseMediaType(contentType) : undefined;
  const full = mt ? `${mt.type}/${mt.subtype}` : '';
  const type = (PATCH_TYPES as Record<string, PatchType | undefined>)[full];
  if (type && allowed.includes(type)) return type;
  const accepted = Object.entries(PATCH_TYPES)
    .filter(([, t]) => allowed.includes(t))
    .map(([m]) => m);
  throw unsupportedMediaType(contentType ?? '', accepted);
}
