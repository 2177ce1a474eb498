/**
 * A small discovery client (model: client-go `discovery.ServerPreferredResources`): reads `/api`, `/apis` and each
 * group version's resource list, and keeps the preferred version of each group. The namespace controller, the
 * garbage collector and the resource quota controller find every served resource through it, so a resource added
 * to the API server is covered without changing them.
 */
import { type Kind } from '@platform/api';
import { type RestClient } from '@platform/client';

/** One resource of a group version, as discovery lists it (subresources left out). */
export interface DiscoveredResource {
  group: string;
  version: string;
  /** The plural name (`deployments`). */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  /** The scheme's kind of the resource, when the client knows it (it can read and write only those). */
  schemeKind?: Kind;
}

/** The result of one discovery: what was found, and the group versions that could not be read. */
export interface DiscoveryResult {
  resources: DiscoveredResource[];
  /** Group versions (`apps/v1`) whose resource list failed, with why. */
  failed: { groupVersion: string; error: string }[];
}

interface APIResourceListBody {
  groupVersion?: string;
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}

interface APIGroupListBody {
  groups?: {
    name: string;
    versions?: { groupVersion: string; version: string }[];
    preferredVersion?: { version: string };
  }[];
}

const JSON_ACCEPT = 'application/json';
const K8S_SUFFIX = '.k8s.io';

/**
 * The resources of the preferred version of every group. A group version that fails is reported in `failed` and
 * the rest is still returned (as client-go's `ErrGroupDiscoveryFailed`); a failure of `/api` or `/apis` throws.
 */
export async function discoverPreferredResources(rest: RestClient, signal?: AbortSignal): Promise<DiscoveryResult> {
  const gvs: { group: string; version: string }[] = [];
  const core = (await rest.request({ method: 'GET', path: '/api', accept: JSON_ACCEPT, signal })) as unknown as {
    versions?: string[];
  };
  const coreVersion = core.versions?.[0];
  if (coreVersion) gvs.push({ group: '', version: coreVersion });
  const groups = (await rest.request({
    method: 'GET',
    path: '/apis',
    accept: JSON_ACCEPT,
    signal,
  })) as unknown as APIGroupListBody;
  const listed = new Set((groups.groups ?? []).map((g) => g.name));
  for (const g of groups.groups ?? []) {
    // The API server also lists the Kubernetes name of a few `.platform` groups for kubectl (`certificates.k8s.io`,
    // `metrics.k8s.io`): aliases, skipped so that no resource is found twice.
    if (g.name.endsWith(K8S_SUFFIX) && listed.has(`${g.name.slice(0, -K8S_SUFFIX.length)}.platform`)) continue;
    const version = g.preferredVersion?.version ?? g.versions?.[0]?.version;
    if (version) gvs.push({ group: g.name, version });
  }
  const result: DiscoveryResult = { resources: [], failed: [] };
  const lists = await Promise.all(
    gvs.map(async (gv) => {
      const groupVersion = gv.group ? `${gv.group}/${gv.version}` : gv.version;
      const path = gv.group ? `/apis/${groupVersion}` : `/api/${gv.version}`;
      try {
        const list = (await rest.request({
          method: 'GET',
          path,
          accept: JSON_ACCEPT,
          signal,
        })) as unknown as APIResourceListBody;
        return { gv, list };
      } catch (err) {
        result.failed.push({ groupVersion, error: (err as Error).message });
        return undefined;
      }
    }),
  );
  for (const entry of lists) {
    if (!entry) continue;
    const { gv, list } = entry;
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue; // a subresource
      result.resources.push({
        group: gv.group,
        version: gv.version,
        resource: r.name,
        kind: r.kind,
        namespaced: r.namespaced,
        verbs: r.verbs ?? [],
        schemeKind: rest.scheme.kindForResource(gv, r.name),
      });
    }
  }
  result.failed.sort((a, b) => a.groupVersion.localeCompare(b.groupVersion));
  return result;
}

/** client-go's wording of a partial discovery failure. */
export function discoveryFailureMessage(failed: DiscoveryResult['failed']): string {
  return `unable to retrieve the complete list of server APIs: ${failed.map((f) => `${f.groupVersion}: ${f.error}`).join(', ')}`;
}

/** `deployments.apps` (the core group has an empty group: `pods.`), as Kubernetes prints a GroupResource. */
export function groupResourceString(r: { group: string; resource: string }): string {
  return `${r.resource}.${r.group}`;
}
