/**
 * LimitRanger (model: Kubernetes 1.21 `plugin/pkg/admission/limitranger`): the LimitRanges of a namespace give a
 * new pod's containers their default limits and requests (`default`, `defaultRequest` of `type: Container`), then
 * every container, the pod as a whole (`type: Pod`) and each PersistentVolumeClaim (`type: PersistentVolumeClaim`,
 * `storage`) must stay within `min`, `max` and `maxLimitRequestRatio`. Pod updates are not checked: containers'
 * resources cannot change. A violation is a 403 listing every problem.
 *
 * The LimitRanges are read as Kubernetes' plugin reads them ({@link LiveLookup}: the watch cache, the store when
 * the cache has none): three consistent store lists per pod (admit, then validate for containers and for the pod)
 * were a tenth of the API server's CPU for a pod create.
 */
import { type LimitRange, type PersistentVolumeClaim, type Pod, type Quantity } from '@platform/api';

import { type InternalClient } from '../internal-client';
import {
  type AdmissionAttributes,
  type AdmissionPlugin,
  admissionForbidden,
  type Operation,
  type PluginFactory,
} from '../interfaces';
import { LiveLookup, quantity } from './util';

export const NAME = 'LimitRanger';

const LIMIT_RANGES = { group: '', resource: 'limitranges' };

type ResourceMap = Record<string, string>;
type LimitItem = NonNullable<NonNullable<LimitRange['spec']>['limits']>[number];
interface Resources {
  limits?: ResourceMap;
  requests?: ResourceMap;
}

function applies(a: AdmissionAttributes): 'pod' | 'pvc' | undefined {
  if (a.resource.group !== '' || a.subresource !== '') return undefined;
  if (a.resource.resource === 'pods' && a.operation === 'CREATE') return 'pod';
  if (a.resource.resource === 'persistentvolumeclaims') return 'pvc';
  return undefined;
}

function containersOf(pod: Pod): { name?: string; resources?: Resources }[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])] as {
    name?: string;
    resources?: Resources;
  }[];
}

function fmt(q: Quantity | string | undefined): string {
  return q === undefined ? '' : typeof q === 'string' ? q : q.toString();
}

/** Checks `observed` requests and limits against one item's bounds (as `minConstraint`, `maxConstraint`, `limitRequestRatioConstraint`). */
function checkBounds(
  kind: string,
  item: LimitItem,
  requests: Record<string, Quantity>,
  limits: Record<string, Quantity>,
  errs: string[],
): void {
  for (const [res, v] of Object.entries((item.min ?? {}) as ResourceMap)) {
    const min = quantity(v);
    if (!min) continue;
    const req = requests[res];
    const lim = limits[res];
    // One error per constraint and resource, the first that fails (as Kubernetes reports them).
    if (!req) errs.push(`minimum ${res} usage per ${kind} is ${fmt(v)}.  No request is specified`);
    else if (req.cmp(min) < 0) errs.push(`minimum ${res} usage per ${kind} is ${fmt(v)}, but request is ${fmt(req)}`);
    else if (lim && lim.cmp(min) < 0) {
      errs.push(`minimum ${res} usage per ${kind} is ${fmt(v)}, but limit is ${fmt(lim)}`);
    }
  }
  for (const [res, v] of Object.entries((item.max ?? {}) as ResourceMap)) {
    const max = quantity(v);
    if (!max) continue;
    const req = requests[res];
    const lim = limits[res];
    if (!lim) errs.push(`maximum ${res} usage per ${kind} is ${fmt(v)}.  No limit is specified`);
    else if (lim.cmp(max) > 0) errs.push(`maximum ${res} usage per ${kind} is ${fmt(v)}, but limit is ${fmt(lim)}`);
    else if (req && req.cmp(max) > 0)
      errs.push(`maximum ${res} usage per ${kind} is ${fmt(v)}, but request is ${fmt(req)}`);
  }
  for (const [res, v] of Object.entries((item.maxLimitRequestRatio ?? {}) as ResourceMap)) {
    const ratio = quantity(v);
    if (!ratio) continue;
    const req = requests[res];
    const lim = limits[res];
    if (!lim || !req) {
      errs.push(
        `${res} max limit to request ratio per ${kind} is ${fmt(v)}, but no ${!lim ? 'limit' : 'request'} is specified`,
      );
      continue;
    }
    const reqMilli = Number(req.milliValue());
    const observed = reqMilli === 0 ? Infinity : Number(lim.milliValue()) / reqMilli;
    if (observed > ratio.asApproximateFloat64()) {
      errs.push(
        `${res} max limit to request ratio per ${kind} is ${fmt(v)}, but provided ratio is ${observed.toFixed(6)}`,
      );
    }
  }
}

function parsed(map: ResourceMap | undefined): Record<string, Quantity> {
  const out: Record<string, Quantity> = {};
  for (const [k, v] of Object.entries(map ?? {})) {
    const q = quantity(v);
    if (q) out[k] = q;
  }
  return out;
}

/** The pod's total of a resource list: the sum over containers, at least the largest init container. */
function podTotal(pod: Pod, which: 'requests' | 'limits'): Record<string, Quantity> {
  const sum: Record<string, Quantity> = {};
  for (const c of (pod.spec?.containers ?? []) as { resources?: Resources }[]) {
    for (const [k, q] of Object.entries(parsed(c.resources?.[which]))) sum[k] = sum[k] ? sum[k].add(q) : q;
  }
  for (const c of (pod.spec?.initContainers ?? []) as { resources?: Resources }[]) {
    for (const [k, q] of Object.entries(parsed(c.resources?.[which]))) {
      const cur = sum[k];
      if (!cur || q.cmp(cur) > 0) sum[k] = q;
    }
  }
  return sum;
}

/** The LimitRanger plugin. */
export class LimitRangerPlugin implements AdmissionPlugin {
  readonly name = NAME;
  private readonly ranges: LiveLookup;
  constructor(client: InternalClient, now: () => number = Date.now) {
    this.ranges = new LiveLookup(client, LIMIT_RANGES, now);
  }

  handles(op: Operation): boolean {
    return op === 'CREATE' || op === 'UPDATE';
  }

  private async items(namespace: string, type: string): Promise<LimitItem[]> {
    const ranges = (await this.ranges.list(namespace)) as LimitRange[];
    return ranges.flatMap((r) => (r.spec?.limits ?? []).filter((i) => i.type === type));
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (applies(a) !== 'pod' || !a.object || !a.namespace) return;
    const items = await this.items(a.namespace, 'Container');
    if (items.length === 0) return;
    // Defaults: the first item naming a resource wins (Kubernetes merges them in list order).
    const defLimits: ResourceMap = {};
    const defRequests: ResourceMap = {};
    for (const item of items) {
      for (const [k, v] of Object.entries((item.default ?? {}) as ResourceMap)) defLimits[k] ??= String(v);
      for (const [k, v] of Object.entries((item.defaultRequest ?? {}) as ResourceMap)) defRequests[k] ??= String(v);
    }
    for (const c of containersOf(a.object as Pod)) {
      const r = (c.resources ??= {});
      for (const [k, v] of Object.entries(defLimits)) {
        if (r.limits?.[k] === undefined) (r.limits ??= {})[k] = v;
      }
      for (const [k, v] of Object.entries(defRequests)) {
        if (r.requests?.[k] === undefined) (r.requests ??= {})[k] = v;
      }
      // A limit without a request requests the limit (Kubernetes' defaulting does the same).
      for (const [k, v] of Object.entries(r.limits ?? {})) {
        if (r.requests?.[k] === undefined && defRequests[k] === undefined) (r.requests ??= {})[k] = v;
      }
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const what = applies(a);
    if (!what || !a.object || !a.namespace) return;
    const errs: string[] = [];
    if (what === 'pod') {
      const pod = a.object as Pod;
      for (const item of await this.items(a.namespace, 'Container')) {
        for (const c of containersOf(pod)) {
          checkBounds('Container', item, parsed(c.resources?.requests), parsed(c.resources?.limits), errs);
        }
      }
      for (const item of await this.items(a.namespace, 'Pod')) {
        checkBounds('Pod', item, podTotal(pod, 'requests'), podTotal(pod, 'limits'), errs);
      }
    } else {
      const pvc = a.object as PersistentVolumeClaim;
      const r = (pvc.spec?.resources ?? {}) as Resources;
      for (const item of await this.items(a.namespace, 'PersistentVolumeClaim')) {
        checkBounds('PersistentVolumeClaim', item, parsed(r.requests), parsed(r.limits), errs);
      }
    }
    if (errs.length === 1) throw admissionForbidden(a, errs[0] as string);
    if (errs.length > 1) throw admissionForbidden(a, `[${errs.join(', ')}]`);
  }
}

export const factory: PluginFactory = (c) => new LimitRangerPlugin(c.client, () => c.now());
