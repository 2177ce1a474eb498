/**
 * `--runtime-config` (model: Kubernetes 1.21 `pkg/kubeapiserver/options` and apiserver `server/resourceconfig`): which
 * built-in group versions (and, for a `group/version/resource` key, which resources) the server serves.
 *
 * Keys, applied in this order whatever their order on the command line:
 * 1. `api/all`: every group version;
 * 2. `api/ga` (versions `v[0-9]+`), `api/beta` (`v[0-9]+beta[0-9]+`), `api/alpha` (`v[0-9]+alpha[0-9]+`);
 * 3. `v1`, `api/v1` or the deprecated `api/legacy` (the core group), and `<group>/<version>`;
 * 4. `<group>/<version>/<resource>` (`api/v1/<resource>` for the core group): one resource of a served version.
 * Values are `true`, `false`, or empty (true). Without the option, GA and beta versions are served and alpha ones are
 * not (Kubernetes' defaults). An unknown group version or resource is an error: a typo must not silently serve the
 * wrong API.
 */
import { type Scheme } from '@platform/api';

import { builtinResource } from '../registry/builtin';

/** The group versions and resources a server serves. */
export interface ResourceConfig {
  /** True when `group/version` is served (`v1` for the core group). */
  versionEnabled(groupVersion: string): boolean;
  /** True when the resource (lowercase plural) of a served group version is served. */
  resourceEnabled(groupVersion: string, resource: string): boolean;
}

const STABILITY: Record<string, RegExp> = {
  'api/ga': /^v\d+$/,
  'api/beta': /^v\d+beta\d+$/,
  'api/alpha': /^v\d+alpha\d+$/,
};

const CORE_KEYS = new Set(['v1', 'api/v1', 'api/legacy']);

function versionOf(groupVersion: string): string {
  const i = groupVersion.lastIndexOf('/');
  return i < 0 ? groupVersion : groupVersion.slice(i + 1);
}

function parseBool(key: string, value: string): boolean {
  if (value === '' || value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`invalid value ${key}=${value}: the value must be true, false or empty`);
}

/**
 * The configuration of `--runtime-config` entries over the server's group versions and their resources
 * (`groupVersion` → resources). Throws with a message naming the bad entry.
 */
export function resolveResourceConfig(
  entries: ReadonlyMap<string, string>,
  served: ReadonlyMap<string, readonly string[]>,
): ResourceConfig {
  const enabled = new Map<string, boolean>();
  for (const gv of served.keys()) enabled.set(gv, !STABILITY['api/alpha']!.test(versionOf(gv)));
  const resources = new Map<string, boolean>();

  const all = entries.get('api/all');
  if (all !== undefined) {
    const on = parseBool('api/all', all);
    for (const gv of served.keys()) enabled.set(gv, on);
  }
  for (const [key, pattern] of Object.entries(STABILITY)) {
    const v = entries.get(key);
    if (v === undefined) continue;
    const on = parseBool(key, v);
    for (const gv of served.keys()) if (pattern.test(versionOf(gv))) enabled.set(gv, on);
  }
  const unknown: string[] = [];
  const resourceKeys: [string, string][] = [];
  for (const [key, value] of entries) {
    if (key === 'api/all' || key in STABILITY) continue;
    const gv = CORE_KEYS.has(key) ? 'v1' : key;
    const parts = gv.split('/');
    if (parts.length === 3) {
      resourceKeys.push([key, value]);
      continue;
    }
    if (!served.has(gv) || parts.length > 3) {
      unknown.push(key);
      continue;
    }
    enabled.set(gv, parseBool(key, value));
  }
  for (const [key, value] of resourceKeys) {
    const [group, version, resource] = key.split('/') as [string, string, string];
    const gv = group === 'api' ? version : `${group}/${version}`;
    if (!served.get(gv)?.includes(resource)) {
      unknown.push(key);
      continue;
    }
    resources.set(`${gv}/${resource}`, parseBool(key, value));
  }
  if (unknown.length > 0) {
    throw new Error(
      `unknown API group versions or resources: ${unknown.join(', ')}; this server serves: ${[...served.keys()].join(', ')}`,
    );
  }
  return {
    versionEnabled: (gv) => enabled.get(gv) === true,
    resourceEnabled: (gv, resource) => enabled.get(gv) === true && resources.get(`${gv}/${resource}`) !== false,
  };
}

/** Every group version and resource on (no `--runtime-config`). */
export const ALL_RESOURCES: ResourceConfig = { versionEnabled: () => true, resourceEnabled: () => true };

/** The group versions of the scheme the server serves, with their resources (`v1` for the core group). */
export function servedResources(scheme: Scheme): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const kind of scheme.kinds()) {
    if (!builtinResource(kind)) continue;
    const gv = kind.group ? `${kind.group}/${kind.version}` : kind.version;
    let list = out.get(gv);
    if (!list) out.set(gv, (list = []));
    if (!list.includes(kind.plural)) list.push(kind.plural);
  }
  return out;
}
