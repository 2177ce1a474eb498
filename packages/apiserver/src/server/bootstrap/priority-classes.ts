/**
 * The `scheduling/bootstrap-system-priority-classes` post-start hook's work (model: Kubernetes 1.21
 * `pkg/registry/scheduling/rest/storage_scheduling.go` `AddSystemPriorityClasses`): the system priority classes
 * exist. Missing ones are created; existing ones are left as they are (their value cannot change anyway).
 */
import { type PriorityClass } from '@platform/api';

import { SYSTEM_PRIORITY_CLASSES } from '../../registry/scheduling/priorityclass/strategy';

import { createIfMissing, requireStore, type StoreLookup, systemContext } from './objects';

const DESCRIPTIONS: Readonly<Record<string, string>> = {
  'system-node-critical': 'Used for system critical pods that must not be moved from their current node.',
  'system-cluster-critical':
    'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
};

/** The system priority classes as Kubernetes 1.21 defines them. */
export function systemPriorityClasses(): PriorityClass[] {
  return Object.entries(SYSTEM_PRIORITY_CLASSES).map(([name, value]) => ({
    apiVersion: 'scheduling.platform/v1',
    kind: 'PriorityClass',
    metadata: { name },
    value,
    ...(DESCRIPTIONS[name] ? { description: DESCRIPTIONS[name] } : {}),
  }));
}

/** Creates the missing system priority classes; returns the names it created. */
export async function ensureSystemPriorityClasses(lookup: StoreLookup, now: () => number): Promise<string[]> {
  const store = requireStore(lookup, 'scheduling.platform', 'priorityclasses');
  const ctx = systemContext('', now);
  const created: string[] = [];
  for (const pc of systemPriorityClasses()) {
    if (await createIfMissing(store, ctx, pc)) created.push(pc.metadata!.name!);
  }
  return created;
}
