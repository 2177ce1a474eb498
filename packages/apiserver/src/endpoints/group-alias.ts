/**
 * Kubernetes' `.k8s.io` group spellings as aliases of the platform's `.platform` groups (DESIGN.md): kubectl's typed
 * commands call `/apis/rbac.authorization.k8s.io/v1/...`, `/apis/authorization.k8s.io/v1/...` and the like directly,
 * without discovery. A resource request on such a path is the same request as on the `.platform` path (request info,
 * authorization, audit and admission see the `.platform` group); its answers are spelled with the group the request
 * used. Discovery, OpenAPI and stored objects keep the `.platform` spelling.
 */
import { type ServerResponse } from 'node:http';

const K8S_SUFFIX = '.k8s.io';
const PLATFORM_SUFFIX = '.platform';

/** The `.platform` group a Kubernetes spelling stands for (`rbac.authorization.k8s.io` → `...platform`), if it is one. */
export function platformGroupOf(group: string): string | undefined {
  if (!group.endsWith(K8S_SUFFIX) || group.length === K8S_SUFFIX.length) return undefined;
  return `${group.slice(0, -K8S_SUFFIX.length)}${PLATFORM_SUFFIX}`;
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
