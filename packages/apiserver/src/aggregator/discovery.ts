/**
 * Discovery across the API server and its extension servers (model: kube-aggregator 1.21
 * `pkg/apiserver/handler_apis.go`, `apiservice/helpers.go` `SortedByGroupAndVersion`): `/apis` lists every group
 * of the APIServices and of the local group versions, the groups by their highest groupPriorityMinimum (then by
 * name), the versions of a group by versionPriority (then by Kubernetes' version order); the first version is the
 * preferred one. The legacy core group (`v1`) is served at `/api`, never listed here.
 */
import { type APIGroup, type APIGroupList, compareVersions } from '@platform/api';

/** One group version as discovery orders it. */
export interface DiscoveryEntry {
  group: string;
  version: string;
  groupPriority: number;
  versionPriority: number;
}

/** The groups of `entries` in discovery order, each with its versions in order (duplicates merged). */
export function orderedGroups(entries: readonly DiscoveryEntry[]): { name: string; versions: string[] }[] {
  const byGroup = new Map<string, DiscoveryEntry[]>();
  for (const e of entries) {
    if (e.group === '') continue;
    const list = byGroup.get(e.group) ?? [];
    if (!list.some((x) => x.version === e.version)) list.push(e);
    byGroup.set(e.group, list);
  }
  const groups = [...byGroup.entries()].map(([name, list]) => ({
    name,
    priority: Math.max(...list.map((e) => e.groupPriority)),
    versions: list
      .sort((a, b) => b.versionPriority - a.versionPriority || compareVersions(a.version, b.version))
      .map((e) => e.version),
  }));
  groups.sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return groups.map(({ name, versions }) => ({ name, versions }));
}

function toAPIGroup(g: { name: string; versions: string[] }): APIGroup {
  const gvs = g.versions.map((version) => ({ groupVersion: `${g.name}/${version}`, version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: g.name, versions: gvs, preferredVersion: gvs[0] };
}

/** `/apis`. */
export function apiGroupList(entries: readonly DiscoveryEntry[]): APIGroupList {
  const groups = orderedGroups(entries).map((g) => {
    const { kind: _k, apiVersion: _a, ...rest } = toAPIGroup(g);
    return rest;
  });
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** `/apis/<group>`, or undefined when no entry has the group. */
export function apiGroup(entries: readonly DiscoveryEntry[], group: string): APIGroup | undefined {
  const g = orderedGroups(entries.filter((e) => e.group === group))[0];
  return g && toAPIGroup(g);
}

type Json = Record<string, unknown>;

/**
 * The OpenAPI document of the server with the extension servers' documents merged in: their paths and
 * definitions are added; a path or definition the server (or an earlier extension) already has is kept as is.
 */
export function mergeOpenApi(local: Json, extensions: readonly Json[]): Json {
  const paths = { ...(local.paths as Json | undefined) };
  const definitions = { ...(local.definitions as Json | undefined) };
  for (const ext of extensions) {
    for (const [k, v] of Object.entries((ext.paths as Json | undefined) ?? {})) if (!(k in paths)) paths[k] = v;
    for (const [k, v] of Object.entries((ext.definitions as Json | undefined) ?? {}))
      if (!(k in definitions)) definitions[k] = v;
  }
  return { ...local, paths, definitions };
}
