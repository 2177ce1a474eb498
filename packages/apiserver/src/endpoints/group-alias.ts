/**
 * Kubernetes' `.k8s.io` group spellings as aliases of the platform's `.platform` groups (DESIGN.md): kubectl's typed
 * commands call `/apis/rbac.authorization.k8s.io/v1/...`, `/apis/authorization.k8s.io/v1/...` and the like directly,
 * without discovery. A resource request on such a path is the same request as on the `.platform` path (request info,
 * authorization, audit and admission see the `.platform` group); its answers are spelled with the group the request
 * used. OpenAPI and stored objects keep the `.platform` spelling.
 *
 * Discovery keeps it too, with one deliberate exception ({@link DISCOVERY_ALIAS_GROUPS}): kubectl 1.20 looks two
 * groups up by their Kubernetes name in discovery. `kubectl top` requires a group named exactly `metrics.k8s.io`
 * (version v1beta1) in `/apis`. `kubectl certificate approve|deny` (1.20.2) resolves the plain resource name
 * `certificatesigningrequests` through discovery and refuses the object unless its group kind is
 * `CertificateSigningRequest.certificates.k8s.io`. Design decision: `/apis` (JSON and Protobuf) also lists the
 * `.k8s.io` spelling of these groups, and only of these, when their `.platform` group is served (for
 * `metrics.platform`, by an aggregated APIService such as a metrics server), each directly before its `.platform`
 * group: kubectl's RESTMapper prefers the group listed first (never an ambiguity error), and for `certificate
 * approve` it must pick `certificates.k8s.io` (listed after, `certificate approve` fails with "can only handle
 * CertificateSigningRequest.certificates.k8s.io objects"). So kubectl addresses CertificateSigningRequests (`csr`)
 * by the Kubernetes name, through the path aliases; the metrics resources (`nodes`, `pods`) stay the core group's,
 * which kubectl always prefers. `/apis/<group>.k8s.io` and `/apis/<group>.k8s.io/<version>` answer for them too,
 * as the `.platform` documents respelled. Requests on aggregated groups reach the extension server in the
 * `.platform` spelling, and its JSON answers come back in the spelling the request used (`../aggregator/proxy.ts`).
 * The platform's own discovery clients skip these aliases. See docs/architecture.md.
 */
import { type ServerResponse } from 'node:http';

import { type APIGroup, type APIGroupList, type APIResourceList } from '@platform/api';

const K8S_SUFFIX = '.k8s.io';
const PLATFORM_SUFFIX = '.platform';

/** The `.platform` group a Kubernetes spelling stands for (`rbac.authorization.k8s.io` → `...platform`), if it is one. */
export function platformGroupOf(group: string): string | undefined {
  if (!group.endsWith(K8S_SUFFIX) || group.length === K8S_SUFFIX.length) return undefined;
  return `${group.slice(0, -K8S_SUFFIX.length)}${PLATFORM_SUFFIX}`;
}

/**
 * The groups discovery also lists under their Kubernetes name: those kubectl 1.20 looks up by that name (see the
 * header). Kept to this list on purpose: every other group is discovered only as `.platform`.
 */
export const DISCOVERY_ALIAS_GROUPS: readonly string[] = ['certificates.k8s.io', 'metrics.k8s.io'];

/** The `.platform` group a discovery alias stands for (`metrics.k8s.io` → `metrics.platform`), if it is one. */
export function discoveryAliasTarget(group: string): string | undefined {
  return DISCOVERY_ALIAS_GROUPS.includes(group) ? platformGroupOf(group) : undefined;
}

/** `/apis` with the discovery alias of each listed `.platform` group served, directly before that group. */
export function withDiscoveryAliases(list: APIGroupList): APIGroupList {
  const aliasOf = new Map(DISCOVERY_ALIAS_GROUPS.map((requested) => [platformGroupOf(requested) ?? '', requested]));
  if (!list.groups.some((g) => aliasOf.has(g.name))) return list;
  const groups = list.groups.flatMap((g) => {
    const requested = aliasOf.get(g.name);
    return requested ? [respellDiscovery(g, { platform: g.name, requested }), g] : [g];
  });
  return { ...list, groups };
}

/**
 * A discovery document (APIGroup or APIResourceList) of a `.platform` group as its alias shows it: the group's name
 * and every `groupVersion` in the requested spelling. A copy.
 */
export function respellDiscovery<T extends APIGroup | APIResourceList>(doc: T, a: GroupAlias): T {
  const gv = (s: string): string =>
    s.startsWith(`${a.platform}/`) ? `${a.requested}${s.slice(a.platform.length)}` : s;
  if ('groupVersion' in doc) return { ...doc, groupVersion: gv(doc.groupVersion) };
  const g = doc as APIGroup;
  const versions = g.versions.map((v) => ({ ...v, groupVersion: gv(v.groupVersion) }));
  return {
    ...g,
    name: g.name === a.platform ? a.requested : g.name,
    versions,
    ...(g.preferredVersion
      ? { preferredVersion: { ...g.preferredVersion, groupVersion: gv(g.preferredVersion.groupVersion) } }
      : {}),
  } as T;
}

/** An apiVersion with a Kubernetes group spelling respelled as the platform's (`coordination.k8s.io/v1` → `...platform/v1`). */
export function platformApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return apiVersion;
  const group = platformGroupOf(apiVersion.slice(0, slash));
  return group ? `${group}${apiVersion.slice(slash)}` : apiVersion;
}

/** How a response respells a group: from the platform's spelling to the one the request used. */
export interface GroupAlias {
  platform: string;
  requested: string;
}

const aliases = new WeakMap<ServerResponse, GroupAlias>();

/** Notes that the answers on `res` are to be spelled with the group the request used. */
export function setResponseGroupAlias(res: ServerResponse, alias: GroupAlias): void {
  aliases.set(res, alias);
}

/** The group alias of a response, if its request used one. */
export function responseGroupAlias(res: ServerResponse): GroupAlias | undefined {
  return aliases.get(res);
}

function respellApiVersion(apiVersion: unknown, a: GroupAlias): unknown {
  if (typeof apiVersion !== 'string' || !apiVersion.startsWith(`${a.platform}/`)) return apiVersion;
  return `${a.requested}${apiVersion.slice(a.platform.length)}`;
}

/**
 * An object (or list, or Status) as the response of an aliased request shows it: its apiVersion, its items'
 * apiVersions and a Status's `details.group` in the requested spelling. A copy: the original (which may be cached
 * or shared) is not changed.
 */
export function respellObject<T>(obj: T, a: GroupAlias): T {
  if (obj === null || typeof obj !== 'object') return obj;
  const o = obj as Record<string, unknown>;
  const out: Record<string, unknown> = { ...o, apiVersion: respellApiVersion(o.apiVersion, a) };
  if (o.apiVersion === undefined) delete out.apiVersion;
  if (Array.isArray(o.items)) {
    out.items = o.items.map((i: unknown) =>
      i && typeof i === 'object' && 'apiVersion' in i
        ? { ...i, apiVersion: respellApiVersion((i as { apiVersion: unknown }).apiVersion, a) }
        : i,
    );
  }
  const details = o.details as Record<string, unknown> | undefined;
  if (o.kind === 'Status' && details && details.group === a.platform) {
    out.details = { ...details, group: a.requested };
  }
  return out as T;
}

/**
 * Group names inside a decoded object that Kubernetes clients write in their spelling: a binding's `roleRef.apiGroup`
 * and `subjects[].apiGroup` (kubectl's `create rolebinding` writes `rbac.authorization.k8s.io`). They are stored in
 * the platform's spelling, so that validation, escalation checks and the authorizer see one group.
 */
export function normalizeGroupReferences(obj: Record<string, unknown>): void {
  if (obj.kind !== 'RoleBinding' && obj.kind !== 'ClusterRoleBinding') return;
  const respell = (ref: unknown): void => {
    if (!ref || typeof ref !== 'object') return;
    const r = ref as { apiGroup?: unknown };
    if (typeof r.apiGroup === 'string') r.apiGroup = platformGroupOf(r.apiGroup) ?? r.apiGroup;
  };
  respell(obj.roleRef);
  if (Array.isArray(obj.subjects)) obj.subjects.forEach(respell);
}
