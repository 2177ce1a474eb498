/**
 * The field selectors each built-in kind supports, as registered by Kubernetes 1.21
 * (`AddFieldLabelConversionFunc` in `pkg/apis/*\/v1/conversion.go`), and the transform the API
 * server applies to a list or watch request's `fieldSelector` for a kind: unknown fields are
 * refused with `field label not supported: <field>` (400 BadRequest), legacy names are renamed.
 */
import { FieldSelectorParseError, type FieldSelector, type FieldTransform } from './selector';

/** The field labels of one kind. */
export interface FieldLabelSupport {
  /** Fields that may be used in a field selector, besides the metadata ones. */
  readonly fields: readonly string[];
  /** Legacy field names accepted and rewritten to their current name (`spec.host` → `spec.nodeName`). */
  readonly renames?: Readonly<Record<string, string>>;
}

/**
 * Extra field labels of the built-in kinds, keyed by `group/Kind` (`/Pod` for the core group).
 * Kinds not listed support only `metadata.name` and, when namespaced, `metadata.namespace`.
 */
export const BUILTIN_FIELD_LABELS: Readonly<Record<string, FieldLabelSupport>> = {
  '/Pod': {
    fields: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'status.phase',
      'status.podIP',
      'status.podIPs',
      'status.nominatedNodeName',
    ],
    renames: { 'spec.host': 'spec.nodeName' },
  },
  '/Node': { fields: ['spec.unschedulable'] },
  '/ReplicationController': { fields: ['status.replicas'] },
  '/Event': {
    fields: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
  },
  '/Namespace': { fields: ['status.phase'] },
  '/Secret': { fields: ['type'] },
  'apps/ReplicaSet': { fields: ['status.replicas'] },
  'batch/Job': { fields: ['status.successful'] },
  'certificates.platform/CertificateSigningRequest': { fields: ['spec.signerName'] },
};

/**
 * The transform for `group/Kind`'s field selectors: metadata fields (`metadata.namespace` only for
 * namespaced kinds), the kind's own fields and renames from `BUILTIN_FIELD_LABELS` or `support`.
 * Anything else throws `FieldSelectorParseError` (`UnsupportedField`): `field label not supported: x`.
 */
export function fieldLabelTransform(
  group: string,
  kind: string,
  namespaced: boolean,
  support: FieldLabelSupport | undefined = BUILTIN_FIELD_LABELS[`${group}/${kind}`],
): FieldTransform {
  const allowed = new Set<string>([
    'metadata.name',
    ...(namespaced ? ['metadata.namespace'] : []),
    ...(support?.fields ?? []),
  ]);
  const renames = support?.renames ?? {};
  return (field, value) => {
    if (allowed.has(field)) return [field, value];
    if (Object.prototype.hasOwnProperty.call(renames, field)) return [renames[field] as string, value];
    throw new FieldSelectorParseError(`field label not supported: ${field}`, 'UnsupportedField');
  };
}

/** Applies `fieldLabelTransform` to a parsed selector; throws for an unsupported field. */
export function convertFieldSelectorForKind(
  selector: FieldSelector,
  group: string,
  kind: string,
  namespaced: boolean,
): FieldSelector {
  return selector.transform(fieldLabelTransform(group, kind, namespaced));
}

/** Field values that Kubernetes computes rather than copies (defaults, renamed sources). */
const EXTRACTORS: Readonly<Record<string, (obj: unknown) => string>> = {
  '/Pod status.podIP': (o) => {
    const ip = text(read(o, 'status.podIP'));
    if (ip !== '') return ip;
    const ips = read(o, 'status.podIPs');
    return Array.isArray(ips) && ips.length > 0 ? text(read(ips[0], 'ip')) : '';
  },
  '/Node spec.unschedulable': (o) => String(read(o, 'spec.unschedulable') === true),
  '/ReplicationController status.replicas': (o) => integer(read(o, 'status.replicas')),
  'apps/ReplicaSet status.replicas': (o) => integer(read(o, 'status.replicas')),
  'batch/Job status.successful': (o) => integer(read(o, 'status.succeeded')),
  '/Event source': (o) => text(read(o, 'source.component')) || text(read(o, 'reportingComponent')),
};

/**
 * The field values of an object for matching a field selector (the registry's `GetAttrs`):
 * `metadata.name`, `metadata.namespace` for namespaced kinds, and every supported field of the kind
 * as Kubernetes computes it: read by its dotted path (absent → `''`), with Kubernetes' defaults for
 * counts (`'0'`) and `spec.unschedulable` (`'false'`), a Job's `status.successful` read from
 * `status.succeeded`, an Event's `source` from `source.component` or `reportingComponent`. Fields
 * Kubernetes never fills (`status.podIPs`) are `''`.
 */
export function fieldsOfObject(
  obj: unknown,
  group: string,
  kind: string,
  namespaced: boolean,
  support: FieldLabelSupport | undefined = BUILTIN_FIELD_LABELS[`${group}/${kind}`],
): Record<string, string> {
  const out: Record<string, string> = { 'metadata.name': text(read(obj, 'metadata.name')) };
  if (namespaced) out['metadata.namespace'] = text(read(obj, 'metadata.namespace'));
  for (const f of support?.fields ?? []) {
    const extract = EXTRACTORS[`${group}/${kind} ${f}`];
    out[f] = extract ? extract(obj) : text(read(obj, f));
  }
  return out;
}

function read(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return '';
}

function integer(v: unknown): string {
  return typeof v === 'number' && Number.isFinite(v) ? String(Math.trunc(v)) : '0';
}
