/**
 * Ownership of `spec.replicas` through the `scale` subresource (model: apiserver `fieldmanager.ScaleHandler`,
 * Kubernetes 1.21). A Scale write is tracked by the field manager of the Scale kind; these two functions carry the
 * ownership of the replicas field between the parent's managed fields and the Scale's:
 *
 * - {@link scaleManagedFields}: the parent's entries that own `.spec.replicas`, as Scale entries owning its
 *   `.spec.replicas` (what the Scale's field manager starts from);
 * - {@link parentManagedFields}: the parent's entries after the Scale write: whoever owns the Scale's replicas now
 *   owns the parent's, and the others lose it.
 *
 * Managed fields that cannot be read are left as they are (the parent's) or read as none (the Scale's).
 */
import { type ManagedFieldsEntry } from '@platform/api';

import { FieldSet, type Path } from './field-set';
import {
  decodeManagedFields,
  encodeManagedFields,
  managerKey,
  type ManagerEntry,
  type Managers,
} from './managed-fields';

/** The replicas field, at the same path in the Scale and in every replicated kind. */
const REPLICAS: Path = ['f:spec', 'f:replicas'];
/** The API version of the Scale subresource. */
const SCALE_API_VERSION = 'autoscaling/v1';

function read(entries: unknown): Managers | undefined {
  try {
    return decodeManagedFields(entries);
  } catch {
    return undefined;
  }
}

function identity(e: ManagerEntry): string {
  return `${e.operation}\u0000${e.manager}`;
}

/** The Scale's managed fields from the parent's (entries without the replicas field are left out). */
export function scaleManagedFields(parentEntries: unknown): ManagedFieldsEntry[] | undefined {
  const parent = read(parentEntries);
  if (!parent) return undefined;
  const out: Managers = new Map();
  for (const e of parent.values()) {
    if (!e.set.has(REPLICAS)) continue;
    const entry: ManagerEntry = { ...e, apiVersion: SCALE_API_VERSION, set: FieldSet.of([REPLICAS]) };
    out.set(managerKey(e.manager, e.operation, SCALE_API_VERSION), entry);
  }
  return encodeManagedFields(out);
}

/**
 * The parent's managed fields after a Scale write whose result carries `scaleEntries`. `parentApiVersion` is the
 * version new parent entries are recorded in. Returns the parent's entries unchanged when they cannot be read.
 */
export function parentManagedFields(
  parentEntries: unknown,
  scaleEntries: unknown,
  parentApiVersion: string,
): ManagedFieldsEntry[] | undefined {
  const parent = read(parentEntries);
  if (!parent) return parentEntries as ManagedFieldsEntry[] | undefined;
  const owners = new Map<string, ManagerEntry>();
  for (const e of (read(scaleEntries) ?? new Map<string, ManagerEntry>()).values()) {
    if (e.set.has(REPLICAS)) owners.set(identity(e), e);
  }
  const out: Managers = new Map();
  for (const [key, e] of parent) {
    if (!e.set.has(REPLICAS)) out.set(key, e);
    else if (owners.delete(identity(e))) out.set(key, e);
    else out.set(key, { ...e, set: e.set.difference(FieldSet.of([REPLICAS])) });
  }
  for (const s of owners.values()) {
    const same = [...out.entries()].find(([, e]) => identity(e) === identity(s));
    if (same) {
      const [key, e] = same;
      out.set(key, { ...e, set: e.set.with(REPLICAS), ...(s.time ? { time: s.time } : {}) });
    } else {
      out.set(managerKey(s.manager, s.operation, parentApiVersion), {
        ...s,
        apiVersion: parentApiVersion,
        set: FieldSet.of([REPLICAS]),
      });
    }
  }
  return encodeManagedFields(out);
}
