/**
 * ResourceQuota (model: Kubernetes 1.21 `plugin/pkg/admission/resourcequota` and `pkg/quota/v1/evaluator/core`):
 * a create (or an update that raises usage) is checked against every ResourceQuota of its namespace that covers
 * it, and charged to their `status.used` before the object is stored.
 *
 * Atomicity: checks and charges of one namespace run one after the other in this process (a per-namespace queue),
 * and each charge is a compare-and-swap of the quota through `resourcequotas/status` (the stored
 * `resourceVersion`), so concurrent creates never overshoot a quota, even across API servers (a lost swap re-reads
 * the quotas and checks again). A dry-run is checked but never charged.
 *
 * A quota whose status has not been filled yet (no quota controller has seen it, or its spec changed) is completed
 * here: `status.hard` from `spec.hard`, and the usage of resources missing from `status.used` counted from the
 * namespace's objects. Usage is never released here: the quota controller recomputes it.
 */
import {
  type ApiObject,
  isConflict,
  newQuantity,
  type Pod,
  type Quantity,
  type ResourceQuota,
  serverTimeout,
  type Service,
  type PersistentVolumeClaim,
} from '@platform/api';

import { type GroupResource, type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { LiveLookup, quantity } from './util';

export const NAME = 'ResourceQuota';

const QUOTAS: GroupResource = { group: '', resource: 'resourcequotas' };
// Each lost swap means another server charged the quota, so a loser retries at most about as often as there are
// charges left to make; past this, 500 ServerTimeout and the client retries.
const MAX_ATTEMPTS = 20;

/** Usage: resource name → amount. */
export type Usage = Map<string, Quantity>;

function add(u: Usage, name: string, q: Quantity): void {
  const cur = u.get(name);
  u.set(name, cur ? cur.add(q) : q);
}

const one = (): Quantity => newQuantity(1);

/** The resources of one object kind that quotas count (`count/<resource>[.<group>]` for every kind). */
function countName(gr: GroupResource): string {
  return gr.group ? `count/${gr.resource}.${gr.group}` : `count/${gr.resource}`;
}

/** Kinds with a legacy object-count name (`pods`, `services`, ...). */
const LEGACY_COUNT = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
]);

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };

function containerResources(pod: Pod): { init: Resources[]; regular: Resources[] } {
  const r = (cs: { resources?: unknown }[] | undefined): Resources[] =>
    (cs ?? []).map((c) => (c.resources ?? {}) as Resources);
  return { init: r(pod.spec?.initContainers), regular: r(pod.spec?.containers) };
}

/** A pod's requests or limits: the sum over containers, at least the largest init container's. */
function podTotal(pod: Pod, which: 'requests' | 'limits'): Usage {
  const { init, regular } = containerResources(pod);
  const sum: Usage = new Map();
  for (const c of regular) {
    for (const [k, v] of Object.entries(c[which] ?? {})) {
      const q = quantity(v);
      if (q) add(sum, k, q);
    }
  }
  for (const c of init) {
    for (const [k, v] of Object.entries(c[which] ?? {})) {
      const q = quantity(v);
      const cur = sum.get(k);
      if (q && (!cur || q.cmp(cur) > 0)) sum.set(k, q);
    }
  }
  return sum;
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function isBestEffort(pod: Pod): boolean {
  const { init, regular } = containerResources(pod);
  return [...init, ...regular].every(
    (r) => Object.keys(r.requests ?? {}).length === 0 && Object.keys(r.limits ?? {}).length === 0,
  );
}

/** What an object uses, for the quota resources of its kind. */
export function usageOf(gr: GroupResource, obj: ApiObject): Usage {
  const u: Usage = new Map();
  if (gr.group === '' && gr.resource === 'pods') {
    const pod = obj as Pod;
    if (isTerminal(pod)) return u;
    u.set('pods', one());
    u.set('count/pods', one());
    for (const [k, q] of podTotal(pod, 'requests')) {
      add(u, `requests.${k}`, q);
      if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage') add(u, k, q);
    }
    for (const [k, q] of podTotal(pod, 'limits')) add(u, `limits.${k}`, q);
    return u;
  }
  u.set(countName(gr), one());
  if (gr.group === '' && LEGACY_COUNT.has(gr.resource)) u.set(gr.resource, one());
  if (gr.group === '' && gr.resource === 'services') {
    const s = (obj as Service).spec;
    if (s?.type === 'LoadBalancer') u.set('services.loadbalancers', one());
    if (s?.type === 'NodePort' || s?.type === 'LoadBalancer') {
      u.set('services.nodeports', newQuantity(s.ports?.length ?? 0));
    }
  }
  if (gr.group === '' && gr.resource === 'persistentvolumeclaims') {
    const pvc = obj as PersistentVolumeClaim;
    const storage = quantity((pvc.spec?.resources?.requests as Record<string, string> | undefined)?.storage);
    if (storage) u.set('requests.storage', storage);
    const cls = pvc.spec?.storageClassName;
    if (cls) {
      u.set(`${cls}.storageclass.storage.platform/persistentvolumeclaims`, one());
      if (storage) u.set(`${cls}.storageclass.storage.platform/requests.storage`, storage);
    }
  }
  return u;
}

type ScopeRequirement = { scopeName: string; operator: string; values?: string[] };

/** Whether a quota covers the object: scoped quotas cover only pods matching every scope. */
export function quotaCovers(q: ResourceQuota, gr: GroupResource, obj: ApiObject): boolean {
  const scopes: ScopeRequirement[] = [
    ...(q.spec?.scopes ?? []).map((s) => ({ scopeName: s, operator: 'Exists' })),
    ...((q.spec?.scopeSelector?.matchExpressions ?? []) as ScopeRequirement[]),
  ];
  if (scopes.length === 0) return true;
  if (gr.group !== '' || gr.resource !== 'pods') return false;
  const pod = obj as Pod;
  return scopes.every((s) => {
    switch (s.scopeName) {
      case 'Terminating':
        return pod.spec?.activeDeadlineSeconds !== undefined && pod.spec?.activeDeadlineSeconds !== null;
      case 'NotTerminating':
        return pod.spec?.activeDeadlineSeconds === undefined || pod.spec?.activeDeadlineSeconds === null;
      case 'BestEffort':
        return isBestEffort(pod);
      case 'NotBestEffort':
        return !isBestEffort(pod);
      case 'PriorityClass': {
        const name = pod.spec?.priorityClassName ?? '';
        switch (s.operator) {
          case 'In':
            return (s.values ?? []).includes(name);
          case 'NotIn':
            return !(s.values ?? []).includes(name);
          case 'Exists':
            return name !== '';
          case 'DoesNotExist':
            return name === '';
          default:
            return false;
        }
      }
      default:
        return false;
    }
  });
}

/** Resources of pod compute quotas that every container must name when the quota limits them. */
const CONTAINER_RESOURCES: Record<string, { which: 'requests' | 'limits'; name: string }> = {
  cpu: { which: 'requests', name: 'cpu' },
  memory: { which: 'requests', name: 'memory' },
  'requests.cpu': { which: 'requests', name: 'cpu' },
  'requests.memory': { which: 'requests', name: 'memory' },
  'limits.cpu': { which: 'limits', name: 'cpu' },
  'limits.memory': { which: 'limits', name: 'memory' },
};

function missingContainerResources(pod: Pod, hard: Record<string, string>): string[] {
  const { init, regular } = containerResources(pod);
  const missing = new Set<string>();
  for (const r of Object.keys(hard)) {
    const need = CONTAINER_RESOURCES[r];
    if (!need) continue;
    for (const c of [...init, ...regular]) if (c[need.which]?.[need.name] === undefined) missing.add(r);
  }
  return [...missing].sort();
}

function text(u: Iterable<[string, Quantity | string]>): string {
  return [...u]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : v.toString()}`)
    .join(',');
}

/** Serializes async work per key (the per-namespace queue). */
class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

/** The ResourceQuota plugin. */
export class ResourceQuotaPlugin implements AdmissionPlugin {
  readonly name = NAME;
  private readonly queue = new KeyedQueue();
  /** The quotas of a namespace, read as Kubernetes reads its quota informer ({@link LiveLookup}). */
  private readonly quotas: LiveLookup;
  constructor(
    private readonly client: InternalClient,
    now: () => number = Date.now,
  ) {
    this.quotas = new LiveLookup(client, QUOTAS, now);
  }

  private async quotasOf(namespace: string): Promise<ResourceQuota[]> {
    return (await this.quotas.list(namespace)) as ResourceQuota[];
  }

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!a.namespace || a.subresource !== '' || !a.object) return;
    const gr = { group: a.resource.group, resource: a.resource.resource };
    const delta = usageOf(gr, a.object);
    if (a.operation === 'UPDATE' && a.oldObject) {
      // Only growth is charged on update; the quota controller accounts for shrinking.
      const before = usageOf(gr, a.oldObject);
      for (const [k, q] of [...delta]) {
        const prev = before.get(k);
        const d = prev ? q.sub(prev) : q;
        if (d.sign() <= 0) delta.delete(k);
        else delta.set(k, d);
      }
    }
    if (delta.size === 0) return;
    // Writes no quota limits are not queued: only charges of one namespace wait for each other. The charge itself
    // reads and swaps the quota consistently.
    const quotas = await this.quotasOf(a.namespace);
    const limited = quotas.some(
      (q) =>
        quotaCovers(q, gr, a.object as ApiObject) &&
        Object.keys(q.spec?.hard ?? {}).some((k) => delta.has(k) || k in CONTAINER_RESOURCES),
    );
    if (!limited) return;
    await this.queue.run(a.namespace, () => this.checkAndCharge(a, gr, delta));
  }

  private async checkAndCharge(a: AdmissionAttributes, gr: GroupResource, delta: Usage): Promise<void> {
    const obj = a.object as ApiObject;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const quotas = (await this.client.list(QUOTAS, a.namespace)) as ResourceQuota[];
      const charged: ResourceQuota[] = [];
      for (const q of quotas) {
        if (!quotaCovers(q, gr, obj)) continue;
        const hard = (q.spec?.hard ?? {}) as Record<string, string>;
        const name = q.metadata?.name ?? '';
        if (gr.group === '' && gr.resource === 'pods') {
          const missing = missingContainerResources(obj as Pod, hard);
          if (missing.length) throw admissionForbidden(a, `failed quota: ${name}: must specify ${missing.join(',')}`);
        }
        const relevant = [...delta.keys()].filter((k) => k in hard);
        if (relevant.length === 0) continue;
        const next = structuredClone(q);
        const status = (next.status ??= {});
        const used = await this.completeStatus(next, a.namespace);
        const exceeded: [string, Quantity][] = [];
        for (const k of relevant) {
          const limit = quantity(hard[k]) ?? newQuantity(0);
          const now = (used[k] !== undefined ? quantity(used[k]) : undefined) ?? newQuantity(0);
          const after = now.add(delta.get(k) as Quantity);
          if (after.cmp(limit) > 0) exceeded.push([k, now]);
          else used[k] = after.toString();
        }
        if (exceeded.length) {
          const keys = exceeded.map(([k]) => k);
          throw admissionForbidden(
            a,
            `exceeded quota: ${name}, requested: ${text(keys.map((k) => [k, delta.get(k) as Quantity]))}, used: ${text(exceeded)}, limited: ${text(keys.map((k) => [k, hard[k] as string]))}`,
          );
        }
        status.used = used;
        charged.push(next);
      }
      if (a.dryRun || charged.length === 0) return;
      try {
        for (const q of charged) await this.client.update(QUOTAS, a.namespace, q, 'status');
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
        // Another API server charged the quota first: read it again and check again.
      }
    }
    throw serverTimeout(QUOTAS, 'charge', 1);
  }

  /**
   * Makes `status.hard` match `spec.hard` and fills `status.used` for every hard resource it lacks, by counting
   * the namespace's objects; returns `status.used` (changed in place).
   */
  private async completeStatus(q: ResourceQuota, namespace: string): Promise<Record<string, string>> {
    const status = (q.status ??= {});
    const hard = (q.spec?.hard ?? {}) as Record<string, string>;
    status.hard = { ...hard };
    const used = (status.used ??= {}) as Record<string, string>;
    const missing = Object.keys(hard).filter((k) => used[k] === undefined);
    if (missing.length === 0) return used;
    const totals: Usage = new Map();
    for (const gr of this.resourcesFor(missing)) {
      if (!this.client.has(gr)) continue;
      for (const o of await this.client.list(gr, namespace)) {
        if (!quotaCovers(q, gr, o)) continue;
        for (const [k, v] of usageOf(gr, o)) add(totals, k, v);
      }
    }
    for (const k of missing) used[k] = (totals.get(k) ?? newQuantity(0)).toString();
    return used;
  }

  /** The resources whose objects must be counted to know the usage of these quota resources. */
  private resourcesFor(names: string[]): GroupResource[] {
    const out = new Map<string, GroupResource>();
    const put = (group: string, resource: string): void => {
      out.set(`${group}/${resource}`, { group, resource });
    };
    for (const n of names) {
      const count = /^count\/([^.]+)(?:\.(.+))?$/.exec(n);
      if (count) put(count[2] ?? '', count[1] as string);
      else if (LEGACY_COUNT.has(n)) put('', n);
      else if (n.startsWith('services.')) put('', 'services');
      else if (n === 'requests.storage' || n.includes('.storageclass.')) put('', 'persistentvolumeclaims');
      else put('', 'pods');
    }
    return [...out.values()];
  }
}

export const factory: PluginFactory = (c) => new ResourceQuotaPlugin(c.client);
