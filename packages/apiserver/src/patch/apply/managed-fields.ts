/**
 * Field ownership of server-side apply (model: apiserver `pkg/endpoints/handlers/fieldmanager` over
 * structured-merge-diff `merge.Updater`).
 *
 * Every write records who set which fields in `metadata.managedFields`:
 *
 * - an **update** (create, PUT, and the JSON, merge and strategic patches) gives its manager the fields it changed,
 *   and takes those fields away from every other manager; removed fields leave every manager;
 * - an **apply** merges a configuration into the object, makes its manager own exactly the fields of the
 *   configuration, and removes the fields it owned before and no longer applies unless someone else owns them.
 *   Changing a field another manager owns is a conflict (409) unless forced, which takes the field over.
 *
 * Entries are keyed by manager name and operation (and API version for updates), as Kubernetes keys them, so one
 * manager may hold both an `Apply` and an `Update` entry. Paths that the server owns (`metadata.name`,
 * `metadata.uid`, `metadata.resourceVersion`, ...) are never recorded. At most ten `Update` entries are kept: the
 * oldest are merged into one `ancient-changes` entry per API version.
 *
 * Everything here is pure; the clock is passed in.
 */
import { type AnnotatedSchema, type ManagedFieldsEntry, type StatusCause, StatusError } from '@platform/api';

import { comparePaths, FieldSet, type Path, pathString } from './field-set';
import {
  compare,
  type Comparison,
  dropNulls,
  fieldSetOf,
  isSame,
  type Json,
  merge,
  removePaths,
  withNamedParents,
} from './typed';

/** The operation of a managed-fields entry. */
export type Operation = 'Apply' | 'Update';

/** One manager's fields. */
export interface ManagerEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  /** RFC 3339, seconds. */
  time?: string;
  set: FieldSet;
}

/** The managers of one object, by identity (see {@link managerKey}). */
export type Managers = Map<string, ManagerEntry>;

/** The JSON form of a managed-fields entry. */
export interface ManagedFieldsEntryJson {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

/** How many `Update` entries are kept before the oldest are merged. */
export const MAX_UPDATE_MANAGERS = 10;
/** The manager the oldest `Update` entries are merged into. */
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/** The fields the server owns: never recorded for a manager. */
const SERVER_PATHS: Path[] = [
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ['f:metadata', 'f:name'],
  ['f:metadata', 'f:namespace'],
  ['f:metadata', 'f:creationTimestamp'],
  ['f:metadata', 'f:selfLink'],
  ['f:metadata', 'f:uid'],
  ['f:metadata', 'f:clusterName'],
  ['f:metadata', 'f:generation'],
  ['f:metadata', 'f:managedFields'],
  ['f:metadata', 'f:resourceVersion'],
];
const SERVER_SET = FieldSet.of(SERVER_PATHS);

/** The identity of an entry: the same manager and operation (and version, for updates) is the same entry. */
export function managerKey(manager: string, operation: Operation, apiVersion: string): string {
  return JSON.stringify(operation === 'Apply' ? { manager, operation } : { manager, operation, apiVersion });
}

/** A managed-fields list that cannot be read; the write then keeps what the object had. */
export class ManagedFieldsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManagedFieldsError';
  }
}

/**
 * Reads `metadata.managedFields`. `undefined` reads as no managers. Throws a {@link ManagedFieldsError} for
 * anything else that is not a list of valid entries (operation `Apply`/`Update`, fieldsType `FieldsV1`, a readable
 * `fieldsV1`, no manager twice).
 */
export function decodeManagedFields(value: unknown): Managers {
  const out: Managers = new Map();
  if (value === undefined || value === null) return out;
  if (!Array.isArray(value)) throw new ManagedFieldsError('managedFields must be a list');
  value.forEach((raw: unknown, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new ManagedFieldsError(`managedFields[${i}] must be an object`);
    }
    const e = raw as ManagedFieldsEntryJson;
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      throw new ManagedFieldsError(`managedFields[${i}].operation must be Apply or Update`);
    }
    if (e.fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`managedFields[${i}].fieldsType must be FieldsV1`);
    if (e.manager !== undefined && typeof e.manager !== 'string') {
      throw new ManagedFieldsError(`managedFields[${i}].manager must be a string`);
    }
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`managedFields[${i}].fieldsV1: ${(err as Error).message}`);
    }
    const entry: ManagerEntry = {
      manager: e.manager ?? '',
      operation: e.operation,
      apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : '',
      set,
      ...(typeof e.time === 'string' ? { time: e.time } : {}),
    };
    const key = managerKey(entry.manager, entry.operation, entry.apiVersion);
    if (out.has(key)) throw new ManagedFieldsError(`managedFields has a duplicate entry for manager ${key}`);
    out.set(key, entry);
  });
  return out;
}

function seconds(time: string | undefined): number {
  if (!time) return 0;
  const t = Date.parse(time);
  return Number.isNaN(t) ? 0 : Math.floor(t / 1000);
}

/**
 * Writes managers as `metadata.managedFields` in Kubernetes' order: `Apply` entries before `Update` entries, then
 * oldest first, then by manager and version. Managers that own nothing are left out; no managers give `undefined`.
 */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] | undefined {
  const entries = [...managers.values()].filter((e) => !e.set.isEmpty());
  entries.sort(
    (p, q) =>
      (p.operation < q.operation ? -1 : p.operation > q.operation ? 1 : 0) ||
      seconds(p.time) - seconds(q.time) ||
      (p.manager < q.manager ? -1 : p.manager > q.manager ? 1 : 0) ||
      (p.apiVersion < q.apiVersion ? -1 : p.apiVersion > q.apiVersion ? 1 : 0),
  );
  if (entries.length === 0) return undefined;
  return entries.map((e) => ({
    manager: e.manager,
    operation: e.operation,
    apiVersion: e.apiVersion,
    ...(e.time ? { time: e.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: e.set.toFieldsV1(),
  }));
}

/** A timestamp as managed fields carry it (RFC 3339 in UTC, whole seconds). */
export function managedTime(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  // Every write within a second stamps the same time: formatted once.
  if (lastManagedTime.seconds !== seconds)
    lastManagedTime = { seconds, text: `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z` };
  return lastManagedTime.text;
}

let lastManagedTime = { seconds: NaN, text: '' };

/** True when the list asks for managed fields to be cleared: an empty list, or a list of one empty entry. */
export function isResetManagedFields(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  if (value.length === 0) return true;
  const only: unknown = value[0];
  return (
    value.length === 1 &&
    only !== null &&
    typeof only === 'object' &&
    Object.values(only as Record<string, unknown>).every((v) => v === undefined)
  );
}

function stripServerFields(set: FieldSet): FieldSet {
  return set.difference(SERVER_SET);
}

function copyManagers(m: Managers): Managers {
  return new Map([...m].map(([k, e]) => [k, { ...e }]));
}

function capUpdateManagers(managers: Managers): void {
  const updaters = [...managers.entries()].filter(([, e]) => e.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  updaters.sort(([, a], [, b]) => seconds(a.time) - seconds(b.time));
  let count = updaters.length;
  const firstOfVersion = new Map<string, string>();
  for (const [key, e] of updaters) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    const bucket = managerKey(ANCIENT_CHANGES_MANAGER, 'Update', e.apiVersion);
    const first = firstOfVersion.get(e.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(e.apiVersion, key);
      continue;
    }
    if (!managers.has(bucket)) {
      const f = managers.get(first) as ManagerEntry;
      managers.delete(first);
      managers.set(bucket, { ...f, manager: ANCIENT_CHANGES_MANAGER });
    }
    const b = managers.get(bucket) as ManagerEntry;
    managers.set(bucket, { ...b, set: b.set.union(e.set), ...(e.time ? { time: e.time } : {}) });
    if (key !== bucket) managers.delete(key);
    count--;
  }
}

function finish(managers: Managers): Managers {
  for (const [k, e] of managers) {
    const set = stripServerFields(e.set);
    if (set.isEmpty()) managers.delete(k);
    else managers.set(k, { ...e, set });
  }
  capUpdateManagers(managers);
  return managers;
}

/** What an update or apply produced. */
export interface OwnershipResult {
  /** The new object (without `metadata.managedFields`; after an update it shares nested values with `next`). */
  object: Json;
  managers: Managers;
  /** Whether the object changed. */
  changed: boolean;
}

/** Options of {@link updateOwnership} and {@link applyOwnership}. */
export interface OwnershipOptions {
  /** The schema of the object's kind (a `$ref` to it). */
  schema: AnnotatedSchema;
  /** The `apiVersion` the request was made in. */
  apiVersion: string;
  /** The current time, ms. */
  now: number;
}

/** A shallow copy (object and metadata) without `metadata.managedFields`; nested values are shared. */
function withoutManagedFields(obj: unknown): Json {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return {};
  const copy = { ...(obj as { [k: string]: Json }) };
  const meta = copy.metadata;
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    const { managedFields: _mf, ...rest } = meta;
    copy.metadata = rest;
  }
  return copy;
}

/**
 * An update by `manager` from `live` (undefined on create) to `next`: the manager gains the fields that were
 * added or changed, every other manager loses them, removed fields leave everyone. The manager's entry gets a new
 * time only when it gained something.
 */
export function updateOwnership(
  live: unknown,
  next: unknown,
  managers: Managers,
  manager: string,
  o: OwnershipOptions,
): OwnershipResult {
  const before = withoutManagedFields(live ?? {});
  const after = withoutManagedFields(next);
  const c = compare(before, after, o.schema);
  const out = copyManagers(managers);
  const key = managerKey(manager, 'Update', o.apiVersion);
  const changed = c.modified.union(c.added);
  for (const [k, e] of out) {
    if (k === key) continue;
    out.set(k, { ...e, set: e.set.difference(changed).difference(c.removed) });
  }
  const own = stripServerFields(changed.difference(c.removed));
  const previous = out.get(key);
  if (!own.isEmpty()) {
    out.set(key, {
      manager,
      operation: 'Update',
      apiVersion: o.apiVersion,
      time: managedTime(o.now),
      set: own.union(previous ? previous.set.difference(c.removed) : FieldSet.empty()),
    });
  } else if (previous) {
    out.set(key, { ...previous, set: previous.set.difference(c.removed) });
  }
  return { object: after, managers: finish(out), changed: !isSame(c) };
}

/** One field another manager owns and an apply would change. */
export interface Conflict {
  /** The other manager's entry. */
  entry: ManagerEntry;
  path: Path;
}

/** An apply that would change fields other managers own; {@link conflictError} turns it into the 409. */
export class ApplyConflicts extends Error {
  readonly isApplyConflicts = true;
  constructor(readonly conflicts: Conflict[]) {
    super(`apply would change ${conflicts.length} field(s) other managers own`);
    this.name = 'ApplyConflicts';
  }
}

/** Brand check for {@link ApplyConflicts}. */
export function isApplyConflicts(err: unknown): err is ApplyConflicts {
  return typeof err === 'object' && err !== null && (err as { isApplyConflicts?: unknown }).isApplyConflicts === true;
}

function printManager(e: ManagerEntry): string {
  return e.operation === 'Update' ? `${JSON.stringify(e.manager)} using ${e.apiVersion}` : JSON.stringify(e.manager);
}

/**
 * The 409 of an apply that would change fields other managers own, worded as Kubernetes words it: one cause of
 * type `FieldManagerConflict` per field, and a message listing the fields by manager.
 */
export function conflictError(conflicts: Conflict[]): StatusError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    type: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.entry)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0] as Conflict;
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.entry)}: ${pathString(c.path)}`;
  } else {
    const byManager = new Map<string, Conflict[]>();
    for (const c of conflicts) {
      const name = printManager(c.entry);
      byManager.set(name, [...(byManager.get(name) ?? []), c]);
    }
    const lines: string[] = [];
    for (const name of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${name}:`);
      for (const c of byManager.get(name) as Conflict[]) lines.push(`- ${pathString(c.path)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError({ code: 409, reason: 'Conflict', message, details: { causes } });
}

/**
 * An apply of `config` by `manager` to `live` (undefined when the object does not exist yet). Returns the merged
 * object, with the fields the manager applied before and no longer applies removed unless another manager owns
 * them; throws {@link ApplyConflicts} when fields other managers own would change and `force` is false (with
 * `force`, the manager takes them over). Throws a `TypedValueError` for a configuration that does not fit the
 * schema (undeclared fields, duplicate list keys).
 */
export function applyOwnership(
  live: unknown,
  config: unknown,
  managers: Managers,
  manager: string,
  force: boolean,
  o: OwnershipOptions,
): OwnershipResult {
  const before = withoutManagedFields(live ?? {});
  const applied = fieldSetOf(config, o.schema, true);
  const key = managerKey(manager, 'Apply', o.apiVersion);
  const out = copyManagers(managers);
  const last = out.get(key);
  const merged = merge(before, config, o.schema);
  out.set(key, {
    manager,
    operation: 'Apply',
    apiVersion: o.apiVersion,
    set: applied,
    ...(last?.time ? { time: last.time } : {}),
  });
  const copy = dropNulls(merged);
  const pruned = last ? prune(copy, out, last.set, o.schema) : copy;
  const c: Comparison = compare(before, pruned, o.schema);
  const changed = c.modified.union(c.added);
  const conflicts: Conflict[] = [];
  for (const [k, e] of out) {
    if (k === key) continue;
    for (const path of e.set.intersection(changed).sorted()) conflicts.push({ entry: e, path });
  }
  if (conflicts.length && !force) {
    conflicts.sort(
      (a, b) =>
        (printManager(a.entry) < printManager(b.entry) ? -1 : printManager(a.entry) > printManager(b.entry) ? 1 : 0) ||
        comparePaths(a.path, b.path),
    );
    throw new ApplyConflicts(conflicts);
  }
  for (const [k, e] of out) {
    if (k === key) continue;
    out.set(k, { ...e, set: e.set.difference(changed).difference(c.removed) });
  }
  const isChanged = !isSame(c);
  const self = out.get(key) as ManagerEntry;
  if (isChanged || !self.time) out.set(key, { ...self, time: managedTime(o.now) });
  return { object: pruned, managers: finish(out), changed: isChanged };
}

/**
 * Removes from `merged` (in place) what the applier owned before (`last`) and owns no longer, unless another manager (or the
 * new configuration) still owns it. A struct that held such fields goes too when nobody owns anything inside it;
 * the server's own fields (`metadata`, its name, ...) are never removed.
 */
function prune(merged: Json, managers: Managers, last: FieldSet, schema: AnnotatedSchema): Json {
  let keep = FieldSet.empty();
  for (const e of managers.values()) keep = keep.union(e.set);
  const candidates = [...withNamedParents(last, merged, schema)].sort((a, b) => a.length - b.length);
  const removed: Path[] = [];
  for (const path of candidates) {
    if (SERVER_SET.has(path) || keep.has(path) || keep.hasDescendant(path)) continue;
    if (removed.some((r) => r.length < path.length && r.every((e, i) => path[i] === e))) continue;
    removed.push(path);
  }
  return removePaths(merged, removed, schema);
}
