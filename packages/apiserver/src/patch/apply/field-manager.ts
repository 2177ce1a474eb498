/**
 * The field manager of one kind (model: apiserver `fieldmanager.FieldManager`): what the write handlers call to
 * keep `metadata.managedFields` current. `update` runs on every create, PUT and non-apply patch; `apply` runs the
 * server-side apply of an `application/apply-patch+yaml` PATCH.
 *
 * Managed fields a client sends with an update are taken as they are (clients may edit them), except that an empty
 * list, or a list of one empty entry, clears them, and a list that cannot be read is replaced by the stored one
 * (on create: by none), as Kubernetes does.
 */
import { type AnnotatedSchema, type ApiObject, badRequest, type Kind } from '@platform/api';

import { type FieldSet } from './field-set';
import {
  applyOwnership,
  conflictError,
  decodeManagedFields,
  encodeManagedFields,
  isApplyConflicts,
  isResetManagedFields,
  type Managers,
  type OwnershipOptions,
  type OwnershipResult,
  updateOwnership,
} from './managed-fields';
import { compare, fieldSetOf, isTypedValueError, type Json } from './typed';

/** kubectl's record of a client-side apply (kubectl keeps Kubernetes' annotation name). */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** The manager of `kubectl apply --server-side`, which moves objects from client-side apply. */
const KUBECTL_MANAGER = 'kubectl';

type Meta = Record<string, unknown>;

function metaOf(obj: unknown): Meta | undefined {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const m = (obj as Record<string, unknown>).metadata;
  return m !== null && typeof m === 'object' && !Array.isArray(m) ? (m as Meta) : undefined;
}

function tryDecode(value: unknown): Managers | undefined {
  try {
    return decodeManagedFields(value);
  } catch {
    return undefined;
  }
}

/** A RangeError from walking a value nested deeper than the stack allows (checked by name: realms differ). */
function isStackOverflow(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Error).name === 'RangeError';
}

/** The longest manager name Kubernetes accepts. */
const FIELD_MANAGER_MAX_LENGTH = 128;

/**
 * The manager of a write: the `fieldManager` parameter, or else the User-Agent up to its first `/`, without
 * unprintable characters and cut at 128 characters (`kubectl/v1.20.0 (linux/amd64)` → `kubectl`).
 */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  let out = '';
  for (const ch of (userAgent ?? '').split('/')[0] ?? '') {
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) continue;
    if (Buffer.byteLength(out + ch, 'utf8') > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
  }
  return out;
}

/**
 * Removes managed fields that cannot be read from a decoded-but-unchecked request value, so that schema validation
 * does not refuse a write Kubernetes would accept (it keeps the stored managed fields instead). Changes `value`.
 */
export function dropUnreadableManagedFields(value: unknown): void {
  const m = metaOf(value);
  if (!m || m.managedFields === undefined) return;
  if (isResetManagedFields(m.managedFields)) {
    m.managedFields = [];
    return;
  }
  if (!tryDecode(m.managedFields)) delete m.managedFields;
}

/** Removes `metadata.managedFields` (the ServerSideApply gate is off: nothing is tracked). Changes `obj`. */
export function clearManagedFields(obj: unknown): void {
  const m = metaOf(obj);
  if (m) delete m.managedFields;
}

/** Keeps `metadata.managedFields` of one kind's objects. */
export class FieldManager {
  private readonly schema: AnnotatedSchema;

  /** `schema`: how objects are read when it is not the kind's own (a CRD version's structural schema). */
  constructor(
    private readonly kind: Pick<Kind, 'apiVersion' | 'kind' | 'schema'>,
    private readonly now: () => number,
    schema?: AnnotatedSchema,
  ) {
    this.schema = schema ?? ({ $ref: kind.schema.$id as string } as AnnotatedSchema);
  }

  private options(): OwnershipOptions {
    return { schema: this.schema, apiVersion: this.kind.apiVersion, now: this.now() };
  }

  private static write(result: OwnershipResult): Json {
    const obj = result.object as { metadata?: Meta };
    const encoded = encodeManagedFields(result.managers);
    if (encoded) (obj.metadata ??= {}).managedFields = encoded;
    else if (obj.metadata) delete obj.metadata.managedFields;
    return result.object;
  }

  /**
   * Records an update by `manager` from `live` (undefined on create) to `obj`, and returns `obj` with its managed
   * fields set (a new object; neither input is changed). Never fails: managed fields that cannot be read are
   * replaced as described above.
   */
  update<T extends ApiObject>(live: ApiObject | undefined, obj: T, manager: string): T {
    const sent = metaOf(obj)?.managedFields;
    let managers: Managers | undefined;
    if (isResetManagedFields(sent)) managers = new Map();
    else {
      managers = tryDecode(sent);
      if (!managers || managers.size === 0) managers = tryDecode(metaOf(live)?.managedFields) ?? new Map();
    }
    try {
      return FieldManager.write(updateOwnership(live, obj, managers, manager, this.options())) as unknown as T;
    } catch (err) {
      // Only a value nested too deeply to walk gets here; as Kubernetes' UpdateNoErrors, the write goes on
      // without managed fields rather than failing.
      if (!isStackOverflow(err)) throw err;
      const copy = { ...obj, metadata: { ...obj.metadata } };
      delete copy.metadata.managedFields;
      return copy;
    }
  }

  /**
   * Applies `config` (the parsed body of an apply patch) by `manager` to `live` (undefined when the object does not
   * exist yet) and returns the merged object with its managed fields, not yet defaulted or validated. Throws 400
   * for a configuration that is not an object of this kind, and the 409 of `conflictError` on conflicts unless
   * `force`.
   */
  apply(live: ApiObject | undefined, config: unknown, manager: string, force: boolean): Json {
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      throw badRequest('error decoding YAML: the apply configuration must be an object');
    }
    const c = config as Record<string, unknown>;
    if (c.apiVersion !== this.kind.apiVersion) {
      throw badRequest(
        `Incorrect version specified in apply patch. Specified patch version: ${typeof c.apiVersion === 'string' ? c.apiVersion : ''}, expected: ${this.kind.apiVersion}`,
      );
    }
    if (c.kind !== this.kind.kind) {
      throw badRequest(
        `Incorrect kind specified in apply patch. Specified patch kind: ${typeof c.kind === 'string' ? c.kind : ''}, expected: ${this.kind.kind}`,
      );
    }
    const sent = metaOf(config)?.managedFields;
    if (sent !== undefined && sent !== null) {
      throw badRequest('metadata.managedFields must be nil in an apply configuration');
    }
    const managers = tryDecode(metaOf(live)?.managedFields) ?? new Map();
    let result: OwnershipResult;
    try {
      try {
        result = applyOwnership(live, config, managers, manager, force, this.options());
      } catch (err) {
        if (!isApplyConflicts(err)) throw err;
        // kubectl moving an object from client-side apply: fields whose live value is still what the last
        // client-side apply set are taken over without a conflict (Kubernetes' lastAppliedManager).
        const allowed = manager === KUBECTL_MANAGER ? this.lastAppliedFields(live) : undefined;
        const remaining = err.conflicts.filter((c) => !allowed?.has(c.path));
        if (remaining.length) throw conflictError(remaining);
        result = applyOwnership(live, config, managers, manager, true, this.options());
      }
    } catch (err) {
      if (isTypedValueError(err)) throw badRequest(`failed to create typed patch object: ${err.message}`);
      if (isStackOverflow(err)) throw badRequest('failed to create typed patch object: nested too deeply');
      throw err;
    }
    if (manager === KUBECTL_MANAGER) syncLastApplied(result.object, config);
    return FieldManager.write(result);
  }

  /** The fields of the object's last client-side apply whose live values it still sets; undefined without one. */
  private lastAppliedFields(live: ApiObject | undefined): FieldSet | undefined {
    const text = (metaOf(live)?.annotations as Record<string, unknown> | undefined)?.[LAST_APPLIED_ANNOTATION];
    if (typeof text !== 'string' || text === '') return undefined;
    let last: unknown;
    try {
      last = JSON.parse(text);
    } catch {
      return undefined;
    }
    const c = compare(last, live, this.schema);
    return fieldSetOf(last, this.schema).difference(c.modified).difference(c.added).difference(c.removed);
  }
}

/**
 * After kubectl applies server-side to an object that carries a client-side apply record, the record is set to the
 * applied configuration, so that a later client-side apply computes its changes from it (Kubernetes'
 * lastAppliedUpdater). Changes `obj`.
 */
function syncLastApplied(obj: Json, config: unknown): void {
  const annotations = metaOf(obj)?.annotations as Record<string, unknown> | undefined;
  if (!annotations || typeof annotations[LAST_APPLIED_ANNOTATION] !== 'string') return;
  const copy = structuredClone(config) as { metadata?: { annotations?: Record<string, unknown> } };
  if (copy.metadata?.annotations) {
    delete copy.metadata.annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(copy.metadata.annotations).length === 0) delete copy.metadata.annotations;
  }
  annotations[LAST_APPLIED_ANNOTATION] = JSON.stringify(copy);
}
