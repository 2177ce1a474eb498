/**
 * Validation of `metadata` common to every kind, modelled on apimachinery
 * `pkg/api/validation/objectmeta.go` (Kubernetes 1.21): what a strategy's `validate` and
 * `validateUpdate` call before checking their own fields. Pure functions: they never mutate their
 * input and never throw on malformed input (a wrong type is reported as a field error).
 */
import { FieldPath, forbidden, invalid, notSupported, required, tooLong, type FieldError } from './field-errors';
import { goQuote } from './go-format';
import {
  isQualifiedName,
  nameIsDNS1035Label,
  validateAnnotations,
  validateLabels,
  validateNamespaceName,
  type NameValidator,
} from './names';

/** An owner reference as in the JSON of Kubernetes 1.21 `metav1.OwnerReference`. */
export interface OwnerReferenceLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A managed-fields entry as in the JSON of `metav1.ManagedFieldsEntry`. */
export interface ManagedFieldsEntryLike {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

/** The fields of `metav1.ObjectMeta` in its JSON form, as far as validation reads them. */
export interface ObjectMetaLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  selfLink?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number | null;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReferenceLike[];
  finalizers?: string[];
  clusterName?: string;
  managedFields?: ManagedFieldsEntryLike[];
}

/** How the metadata of a kind is checked on create. */
export interface ObjectMetaValidationOptions {
  /** True for namespaced kinds: `namespace` is then required; for cluster-scoped kinds it is forbidden. */
  namespaced: boolean;
  /** Checks `name` (prefix false) and `generateName` (prefix true); e.g. `nameIsDNSSubdomain`. */
  nameValidator: NameValidator;
}

/** Detail of the error reported when an immutable field changes. */
export const FIELD_IMMUTABLE_ERROR_MSG = 'field is immutable';
/** Detail of the error reported for a negative count. */
export const IS_NEGATIVE_ERROR_MSG = 'must be greater than or equal to 0';
/** The finalizer that orphans dependents on deletion. */
export const FINALIZER_ORPHAN_DEPENDENTS = 'orphan';
/** The finalizer that deletes dependents in the foreground before the owner. */
export const FINALIZER_DELETE_DEPENDENTS = 'foregroundDeletion';
/** Maximum length of a field manager name. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** Kinds that may never own objects (`group/version, Kind=kind` → banned). */
const BANNED_OWNERS = new Set(['/v1, Kind=Event']);

function isString(v: unknown): v is string {
  return typeof v === 'string';
}

function str(v: unknown): string {
  return isString(v) ? v : '';
}

/** Reports a negative number; `value` undefined counts as 0. */
export function validateNonnegativeField(value: number | undefined, path: FieldPath): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'number' || !Number.isFinite(value)) return [invalid(path, value, 'must be a number')];
  return value < 0 ? [invalid(path, value, IS_NEGATIVE_ERROR_MSG)] : [];
}

/** Splits `group/version` as Go's `schema.ParseGroupVersion` does leniently for owner references. */
function splitAPIVersion(apiVersion: string): { group: string; version: string } {
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: parts[0] as string };
  if (parts.length === 2) return { group: parts[0] as string, version: parts[1] as string };
  return { group: '', version: '' };
}

function validateOwnerReference(ref: OwnerReferenceLike, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (ref === null || typeof ref !== 'object') return [invalid(path, ref, 'must be an object')];
  const apiVersion = str(ref.apiVersion);
  const kind = str(ref.kind);
  const gv = splitAPIVersion(apiVersion);
  if (gv.version.length === 0) errs.push(invalid(path.child('apiVersion'), apiVersion, 'version must not be empty'));
  if (kind.length === 0) errs.push(invalid(path.child('kind'), kind, 'kind must not be empty'));
  if (str(ref.name).length === 0) errs.push(invalid(path.child('name'), str(ref.name), 'name must not be empty'));
  if (str(ref.uid).length === 0) errs.push(invalid(path.child('uid'), str(ref.uid), 'uid must not be empty'));
  const gvk = `${gv.group}/${gv.version}, Kind=${kind}`;
  if (BANNED_OWNERS.has(gvk)) errs.push(invalid(path, ref, `${gvk} is disallowed from being an owner`));
  return errs;
}

/** Validates owner references: apiVersion (with a version), kind, name and uid set; at most one controller. */
export function validateOwnerReferences(refs: OwnerReferenceLike[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (refs === undefined || refs === null) return errs;
  if (!Array.isArray(refs)) return [invalid(path, refs, 'must be a list')];
  let controllerName: string | undefined;
  for (const ref of refs) {
    // Kubernetes reports these at the list path, not per index.
    errs.push(...validateOwnerReference(ref, path));
    if (ref !== null && typeof ref === 'object' && ref.controller === true) {
      if (controllerName !== undefined) {
        errs.push(
          invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${controllerName} and ${str(ref.name)}`,
          ),
        );
      } else {
        controllerName = str(ref.name);
      }
    }
  }
  return errs;
}

/** Validates one finalizer name: a qualified name (`example.com/cleanup`, or a standard one like `orphan`). */
export function validateFinalizerName(name: string, path: FieldPath): FieldError[] {
  if (!isString(name)) return [invalid(path, name, 'must be a string')];
  return isQualifiedName(name).map((msg) => invalid(path, name, msg));
}

/** Validates a finalizer list: each a qualified name; `orphan` and `foregroundDeletion` not both. */
export function validateFinalizers(finalizers: string[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (finalizers === undefined || finalizers === null) return errs;
  if (!Array.isArray(finalizers)) return [invalid(path, finalizers, 'must be a list')];
  let orphan = false;
  let foreground = false;
  for (const f of finalizers) {
    errs.push(...validateFinalizerName(f, path));
    if (f === FINALIZER_ORPHAN_DEPENDENTS) orphan = true;
    if (f === FINALIZER_DELETE_DEPENDENTS) foreground = true;
  }
  if (orphan && foreground) {
    errs.push(
      invalid(
        path,
        finalizers,
        `finalizer ${FINALIZER_ORPHAN_DEPENDENTS} and ${FINALIZER_DELETE_DEPENDENTS} cannot be both set`,
      ),
    );
  }
  return errs;
}

/** Validates a field manager name: at most 128 bytes, printable characters only. */
export function validateFieldManager(manager: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!isString(manager)) return [invalid(path, manager, 'must be a string')];
  if (Buffer.byteLength(manager, 'utf8') > FIELD_MANAGER_MAX_LENGTH) {
    errs.push(tooLong(path, manager, FIELD_MANAGER_MAX_LENGTH));
  }
  let pos = 0;
  for (const ch of manager) {
    const cp = ch.codePointAt(0) ?? 0;
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      const u = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      errs.push(invalid(path, manager, `invalid character ${u} (at position ${pos})`));
    }
    pos += Buffer.byteLength(ch, 'utf8');
  }
  return errs;
}

/** Validates managed-fields entries: operation `Apply` or `Update`, fieldsType empty or `FieldsV1`. */
export function validateManagedFields(entries: ManagedFieldsEntryLike[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (entries === undefined || entries === null) return errs;
  if (!Array.isArray(entries)) return [invalid(path, entries, 'must be a list')];
  entries.forEach((e, i) => {
    const p = path.index(i);
    if (e === null || typeof e !== 'object') {
      errs.push(invalid(p, e, 'must be an object'));
      return;
    }
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      errs.push(invalid(p.child('operation'), e.operation ?? '', 'must be `Apply` or `Update`'));
    }
    if (e.fieldsType !== undefined && e.fieldsType !== '' && e.fieldsType !== 'FieldsV1') {
      errs.push(invalid(p.child('fieldsType'), e.fieldsType, 'must be `FieldsV1`'));
    }
  });
  return errs;
}

function validateResourceVersionSyntax(rv: string | undefined, path: FieldPath): FieldError[] {
  if (rv === undefined || rv === null || rv === '') return [];
  if (!isString(rv)) return [invalid(path, rv, 'must be a string')];
  // Resource versions are opaque to clients but are the store's unsigned revisions on the server.
  if (!/^[0-9]+$/.test(rv) || BigInt(rv) > 0xffffffffffffffffn) {
    return [invalid(path, rv, `strconv.ParseUint: parsing ${goQuote(rv)}: invalid syntax`)];
  }
  return [];
}

/**
 * Validates the metadata of an object being created (after `generateName` has been expanded):
 * name (or generateName) present and well formed, namespace required and a DNS-1123 label for
 * namespaced kinds and forbidden otherwise, labels, annotations, owner references, finalizers,
 * managed fields, and non-negative generation and resourceVersion. Returns every problem found.
 */
export function validateObjectMeta(
  meta: ObjectMetaLike | undefined,
  opts: ObjectMetaValidationOptions,
  path: FieldPath = new FieldPath('metadata'),
): FieldError[] {
  if (meta === undefined || meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    return [required(path.child('name'), 'name or generateName is required')];
  }
  const errs: FieldError[] = [];
  const generateName = meta.generateName;
  if (generateName !== undefined && generateName !== null && generateName !== '') {
    if (!isString(generateName)) errs.push(invalid(path.child('generateName'), generateName, 'must be a string'));
    else {
      for (const msg of opts.nameValidator(generateName, true)) {
        errs.push(invalid(path.child('generateName'), generateName, msg));
      }
    }
  }
  const name = meta.name;
  if (name === undefined || name === null || name === '') {
    errs.push(required(path.child('name'), 'name or generateName is required'));
  } else if (!isString(name)) {
    errs.push(invalid(path.child('name'), name, 'must be a string'));
  } else {
    for (const msg of opts.nameValidator(name, false)) errs.push(invalid(path.child('name'), name, msg));
  }
  const ns = meta.namespace;
  if (opts.namespaced) {
    if (ns === undefined || ns === null || ns === '') {
      errs.push(required(path.child('namespace'), ''));
    } else if (!isString(ns)) {
      errs.push(invalid(path.child('namespace'), ns, 'must be a string'));
    } else {
      for (const msg of validateNamespaceName(ns, false)) errs.push(invalid(path.child('namespace'), ns, msg));
    }
  } else if (ns !== undefined && ns !== null && ns !== '') {
    errs.push(forbidden(path.child('namespace'), 'not allowed on this type'));
  }
  if (meta.clusterName !== undefined && meta.clusterName !== null && meta.clusterName !== '') {
    const cn = meta.clusterName;
    const msgs = isString(cn) ? nameIsDNS1035Label(cn, false) : ['must be a string'];
    for (const msg of msgs) errs.push(invalid(path.child('clusterName'), cn, msg));
  }
  if (Array.isArray(meta.managedFields)) {
    for (const entry of meta.managedFields) {
      if (entry !== null && typeof entry === 'object' && entry.manager !== undefined) {
        errs.push(...validateFieldManager(entry.manager, path.child('fieldManager')));
      }
    }
  }
  errs.push(...validateNonnegativeField(meta.generation, path.child('generation')));
  errs.push(...validateResourceVersionSyntax(meta.resourceVersion, path.child('resourceVersion')));
  errs.push(...validateMapField(meta.labels, path.child('labels'), validateLabels));
  errs.push(...validateMapField(meta.annotations, path.child('annotations'), validateAnnotations));
  errs.push(...validateOwnerReferences(meta.ownerReferences, path.child('ownerReferences')));
  errs.push(...validateFinalizers(meta.finalizers, path.child('finalizers')));
  errs.push(...validateManagedFields(meta.managedFields, path.child('managedFields')));
  return errs;
}

function validateMapField(
  value: unknown,
  path: FieldPath,
  fn: (m: Record<string, string>, p: FieldPath) => FieldError[],
): FieldError[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) return [invalid(path, value, 'must be a map of strings')];
  return fn(value as Record<string, string>, path);
}

/**
 * Compares two optional RFC 3339 timestamps by instant (Kubernetes compares `metav1.Time`
 * semantically, so `+01:00` and `Z` spellings of one instant are equal).
 */
function sameTime(a: string | null | undefined, b: string | null | undefined): boolean {
  const na = a === undefined || a === null || a === '' ? undefined : a;
  const nb = b === undefined || b === null || b === '' ? undefined : b;
  if (na === undefined || nb === undefined) return na === nb;
  if (na === nb) return true;
  const ta = Date.parse(na);
  const tb = Date.parse(nb);
  return Number.isFinite(ta) && Number.isFinite(tb) && Math.floor(ta / 1000) === Math.floor(tb / 1000);
}

function sameScalar(a: unknown, b: unknown): boolean {
  const na = a === undefined || a === null || a === '' ? undefined : a;
  const nb = b === undefined || b === null || b === '' ? undefined : b;
  return na === nb;
}

/** How the metadata of an update is checked. */
export interface ObjectMetaUpdateOptions {
  /**
   * Allow `deletionTimestamp` (and `deletionGracePeriodSeconds`) to go from unset to set: true only
   * for the registry's own graceful-deletion write. A client update can never set, change or clear them.
   */
  allowDeletionStart?: boolean;
}

/**
 * Validates the metadata of an update against the stored object: name, namespace, uid,
 * creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds and clusterName are immutable
 * (a deletionTimestamp is set once, by deletion); resourceVersion must be given; generation may not
 * decrease; no finalizer may be added once deletion started; labels, annotations, owner references,
 * finalizers and managed fields of the new object must be valid. Returns every problem found.
 */
export function validateObjectMetaUpdate(
  newMeta: ObjectMetaLike,
  oldMeta: ObjectMetaLike,
  path: FieldPath = new FieldPath('metadata'),
  opts: ObjectMetaUpdateOptions = {},
): FieldError[] {
  const errs: FieldError[] = [];
  const n: ObjectMetaLike = newMeta !== null && typeof newMeta === 'object' ? newMeta : {};
  const o: ObjectMetaLike = oldMeta !== null && typeof oldMeta === 'object' ? oldMeta : {};

  const oldDeleting = o.deletionTimestamp !== undefined && o.deletionTimestamp !== null && o.deletionTimestamp !== '';
  if (oldDeleting) errs.push(...validateNoNewFinalizers(n.finalizers, o.finalizers, path.child('finalizers')));
  if (n.resourceVersion === undefined || n.resourceVersion === null || n.resourceVersion === '') {
    errs.push(invalid(path.child('resourceVersion'), n.resourceVersion ?? '', 'must be specified for an update'));
  }
  if ((n.generation ?? 0) < (o.generation ?? 0)) {
    errs.push(invalid(path.child('generation'), n.generation ?? 0, 'must not be decremented'));
  }
  const immutable = (field: keyof ObjectMetaLike, same: boolean): void => {
    if (!same) errs.push(invalid(path.child(field), n[field] ?? null, FIELD_IMMUTABLE_ERROR_MSG));
  };
  immutable('name', sameScalar(n.name, o.name));
  immutable('namespace', sameScalar(n.namespace, o.namespace));
  immutable('uid', sameScalar(n.uid, o.uid));
  immutable('creationTimestamp', sameTime(n.creationTimestamp, o.creationTimestamp));
  const deletionStart = opts.allowDeletionStart === true && !oldDeleting;
  if (!deletionStart) {
    immutable('deletionTimestamp', sameTime(n.deletionTimestamp, o.deletionTimestamp));
    immutable('deletionGracePeriodSeconds', sameScalar(n.deletionGracePeriodSeconds, o.deletionGracePeriodSeconds));
  }
  immutable('clusterName', sameScalar(n.clusterName, o.clusterName));

  errs.push(...validateMapField(n.labels, path.child('labels'), validateLabels));
  errs.push(...validateMapField(n.annotations, path.child('annotations'), validateAnnotations));
  errs.push(...validateOwnerReferences(n.ownerReferences, path.child('ownerReferences')));
  // Kubernetes 1.21 does not re-check finalizer names on update; we do, so that no update can
  // introduce a finalizer that create would have refused.
  errs.push(...validateFinalizers(n.finalizers, path.child('finalizers')));
  errs.push(...validateManagedFields(n.managedFields, path.child('managedFields')));
  return errs;
}

/**
 * Structural equality of decoded API values, as Kubernetes' semantic `DeepEqual` for our JSON
 * shapes: absent, `undefined` and `null` are equal (all Go's nil); objects with an `equals` method
 * (quantities) compare with it; arrays element by element; strings as written.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // JSON null and an absent field both decode to Go's nil.
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const eq = (a as { equals?: unknown }).equals;
  if (typeof eq === 'function' || typeof (b as { equals?: unknown }).equals === 'function') {
    // Value types (quantities) compare with their own equality, and only with their own kind.
    return (
      a.constructor === b.constructor && typeof eq === 'function' && (eq as (o: unknown) => boolean).call(a, b) === true
    );
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => semanticEqual(v, bb[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const k of keys) if (!semanticEqual(ra[k], rb[k])) return false;
  return true;
}

/** Reports a field whose value changed: `Invalid value: <new>: field is immutable`. */
export function validateImmutableField(newVal: unknown, oldVal: unknown, path: FieldPath): FieldError[] {
  return semanticEqual(newVal, oldVal) ? [] : [invalid(path, newVal, FIELD_IMMUTABLE_ERROR_MSG)];
}

/**
 * Forbids finalizers in `newFinalizers` that are not in `oldFinalizers` (used once deletion has
 * started): `Forbidden: no new finalizers can be added if the object is being deleted, found new
 * finalizers []string{"a"}`.
 */
export function validateNoNewFinalizers(
  newFinalizers: readonly string[] | undefined,
  oldFinalizers: readonly string[] | undefined,
  path: FieldPath,
): FieldError[] {
  const oldSet = new Set(Array.isArray(oldFinalizers) ? oldFinalizers : []);
  const extra = [...new Set(Array.isArray(newFinalizers) ? newFinalizers : [])].filter((f) => !oldSet.has(f)).sort();
  if (extra.length === 0) return [];
  return [
    forbidden(
      path,
      `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra
        .map(goQuote)
        .join(', ')}}`,
    ),
  ];
}

/** The operations a managed-fields entry may record. */
export const MANAGED_FIELDS_OPERATIONS: readonly string[] = ['Apply', 'Update'];

/** Reports `value` unless it is one of `allowed` (a helper for enum-like string fields). */
export function validateEnum(value: string, allowed: readonly string[], path: FieldPath): FieldError[] {
  return allowed.includes(value) ? [] : [notSupported(path, value, allowed)];
}
