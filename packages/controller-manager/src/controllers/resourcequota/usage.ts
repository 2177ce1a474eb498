/**
 * What objects use, in quota resources (model: Kubernetes 1.21 `pkg/quota/v1/evaluator/core` and the generic
 * object-count evaluator). It must agree with the API server's ResourceQuota admission, which charges the same
 * names on create: `pods`, `count/<resource>[.<group>]`, the legacy counts (`services`, `secrets`, ...), the pod
 * compute resources (`cpu`, `requests.*`, `limits.*`), `services.loadbalancers`/`services.nodeports`, and the
 * claim storage resources.
 */
import { type ApiObject, newQuantity, parseQuantity, type Pod, type Quantity, type ResourceQuota } from '@platform/api';

/** A group and resource (`{ group: 'apps', resource: 'deployments' }`). */
export interface GroupResource {
  group: string;
  resource: string;
}

/** Usage: quota resource name → amount. */
export type Usage = Map<string, Quantity>;

function add(u: Usage, name: string, q: Quantity): void {
  const cur = u.get(name);
  u.set(name, cur ? cur.add(q) : q);
}

/** A quantity from a resource list value; undefined when absent or malformed. */
export function quantity(v: unknown): Quantity | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  try {
    return parseQuantity(String(v));
  } catch {
    return undefined;
  }
}

/** Kinds with a legacy object-count name. */
const LEGACY_COUNT = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
]);

function countName(gr: GroupResource): string {
  return gr.group ? `count/${gr.resource}.${gr.group}` : `count/${gr.resource}`;
}

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };

function containers(pod: Pod): { init: Resources[]; regular: Resources[] } {
  const r = (cs: { resources?: unknown }[] | undefined): Resources[] =>
    (cs ?? []).map((c) => (c.resources ?? {}) as Resources);
  return { init: r(pod.spec?.initContainers), regular: r(pod.spec?.containers) };
}

/** A pod's requests or limits: the sum over its containers, at least the largest init container's. */
function podTotal(pod: Pod, which: 'requests' | 'limits'): Usage {
  const { init, regular } = containers(pod);
  const sum: Usage = new Map();
  for (const c of regular)
    for (const [k, v] of Object.entries(c[which] ?? {})) {
      const q = quantity(v);
      if (q) add(sum, k, q);
    }
  for (const c of init)
    for (const [k, v] of Object.entries(c[which] ?? {})) {
      const q = quantity(v);
      const cur = sum.get(k);
      if (q && (!cur || q.cmp(cur) > 0)) sum.set(k, q);
    }
  return sum;
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function isBestEffort(pod: Pod): boolean {
  const { init, regular } = containers(pod);
  return [...init, ...regular].every(
    (r) => Object.keys(r.requests ?? {}).length === 0 && Object.keys(r.limits ?? {}).length === 0,
  );
}

/** What one object uses. Finished pods use nothing (as the pod evaluator's `QuotaV1Pod`). */
export function usageOf(gr: GroupResource, obj: ApiObject): Usage {
  const u: Usage = new Map();
  if (gr.group === '' && gr.resource === 'pods') {
    const pod = obj as Pod;
    if (isTerminal(pod)) return u;
    u.set('pods', newQuantity(1));
    u.set('count/pods', newQuantity(1));
    for (const [k, q] of podTotal(pod, 'requests')) {
      add(u, `requests.${k}`, q);
      if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage') add(u, k, q);
    }
    for (const [k, q] of podTotal(pod, 'limits')) add(u, `limits.${k}`, q);
    return u;
  }
  u.set(countName(gr), newQuantity(1));
  if (gr.group === '' && LEGACY_COUNT.has(gr.resource)) u.set(gr.resource, newQuantity(1));
  if (gr.group === '' && gr.resource === 'services') {
    const s = (obj as { spec?: { type?: string; ports?: unknown[] } }).spec;
    if (s?.type === 'LoadBalancer') u.set('services.loadbalancers', newQuantity(1));
    if (s?.type === 'NodePort' || s?.type === 'LoadBalancer')
      u.set('services.nodeports', newQuantity(s.ports?.length ?? 0));
  }
  if (gr.group === '' && gr.resource === 'persistentvolumeclaims') {
    const spec = (obj as { spec?: { resources?: { requests?: Record<string, string> }; storageClassName?: string } })
      .spec;
    const storage = quantity(spec?.resources?.requests?.storage);
    if (storage) u.set('requests.storage', storage);
    const cls = spec?.storageClassName;
    if (cls) {
      u.set(`${cls}.storageclass.storage.platform/persistentvolumeclaims`, newQuantity(1));
      if (storage) u.set(`${cls}.storageclass.storage.platform/requests.storage`, storage);
    }
  }
  return u;
}

type ScopeRequirement = { scopeName: string; operator: string; values?: string[] };

/** Whether a quota covers an object: a scoped quota covers only pods that match every scope. */
export function quotaCovers(q: ResourceQuota, gr: GroupResource, obj: ApiObject): boolean {
  const scopes: ScopeRequirement[] = [
    ...(q.spec?.scopes ?? []).map((s) => ({ scopeName: s, operator: 'Exists' })),
    ...((q.spec?.scopeSelector?.matchExpressions ?? []) as ScopeRequirement[]),
  ];
  if (scopes.length === 0) return true;
  if (gr.group !== '' || gr.resource !== 'pods') return false;
  const pod = obj as Pod;
  return scopes.every((s) => {
    const deadline = pod.spec?.activeDeadlineSeconds;
    switch (s.scopeName) {
      case 'Terminating':
        return deadline !== undefined && deadline !== null;
      case 'NotTerminating':
        return deadline === undefined || deadline === null;
      case 'BestEffort':
        return isBestEffort(pod);
      case 'NotBestEffort':
        return !isBestEffort(pod);
      case 'PriorityClass': {
        const name = pod.spec?.priorityClassName ?? '';
        if (s.operator === 'In') return (s.values ?? []).includes(name);
        if (s.operator === 'NotIn') return !(s.values ?? []).includes(name);
        if (s.operator === 'Exists') return name !== '';
        if (s.operator === 'DoesNotExist') return name === '';
        return false;
      }
      default:
        return false;
    }
  });
}

/**
 * The resource whose objects are counted for a quota resource name (`count/deployments.apps` → deployments.apps,
 * `services.nodeports` → services, `requests.cpu` → pods).
 */
export function resourceFor(name: string): GroupResource {
  const count = /^count\/([^.]+)(?:\.(.+))?$/.exec(name);
  if (count) return { group: count[2] ?? '', resource: count[1] as string };
  if (LEGACY_COUNT.has(name)) return { group: '', resource: name };
  if (name.startsWith('services.')) return { group: '', resource: 'services' };
  if (name === 'requests.storage' || name.includes('.storageclass.'))
    return { group: '', resource: 'persistentvolumeclaims' };
  return { group: '', resource: 'pods' };
}
