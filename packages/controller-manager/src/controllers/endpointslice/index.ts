/**
 * The EndpointSlice controller (model: Kubernetes 1.21 `pkg/controller/endpointslice`). For every Service with a
 * selector it keeps `discovery.platform/v1` EndpointSlices listing the pods the selector picks (the same pods as
 * the endpoint controller: with an IP, not finished, not being deleted unless the Service publishes not-ready
 * addresses or the EndpointSliceTerminatingCondition gate is on):
 *
 * - slices are labelled `kubernetes.io/service-name: <service>` (the spelling of the API server's own slice) and
 *   `endpointslice.platform/managed-by: endpointslice-controller.platform`, carry the Service's labels (and
 *   `service.kubernetes.io/headless` for a headless Service) and are owned by the Service;
 * - one slice family per address type of the Service (`ipFamilies`), endpoints grouped by their resolved ports
 *   (a named `targetPort` resolves per pod), at most `--max-endpoints-per-slice` endpoints per slice;
 * - each endpoint has its address, `conditions.ready` (and, with the EndpointSliceTerminatingCondition gate,
 *   `serving` and `terminating`), `nodeName`, `zone` (its node's `topology.kubernetes.io/zone`), `targetRef` and,
 *   for a pod whose `subdomain` names the Service, `hostname`;
 * - an update keeps endpoints in the slice they are in, fills slices being written anyway before others, and
 *   creates slices only for what does not fit; empty slices are deleted, and a Service with no endpoints has one
 *   empty placeholder slice;
 * - the controller remembers the resourceVersion of every slice it wrote and does not act on a Service until its
 *   cache has caught up (Kubernetes' `endpointSliceTracker`), so it never duplicates a slice it just created;
 * - deleting the Service deletes its slices (the garbage collector would too, through the owner reference).
 *
 * Pod changes are batched by `--endpointslice-updates-batch-period`; `--concurrent-service-endpoint-syncs`
 * Services sync at once.
 */
import {
  type EndpointSlice,
  EndpointSliceKind,
  isNotFound,
  NodeKind,
  type Pod,
  PodKind,
  type Service,
  ServiceKind,
} from '@platform/api';
import {
  CONTROL_PLANE_FEATURES,
  type FeatureGateReader,
  type FlagDef,
  INT32,
  durationFlag,
  intFlag,
} from '@platform/common';
import {
  LABEL_INDEX,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  runWorkers,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import {
  findPort,
  HEADLESS_LABEL,
  hasSelector,
  isHeadless,
  LAST_CHANGE_TRIGGER_TIME,
  selectorMatches,
  shouldPodBeInEndpoints,
  toleratesUnready,
} from '../endpoint';
import { unwrapTombstone } from '../util/informers';
import { canonicalJson, isPodReady } from '../util/pods';
import { waitForSynced } from '../util/wait-synced';

/** Kubernetes' `discovery.LabelServiceName`, spelled as the API server's bootstrap spells it. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** Kubernetes' `discovery.LabelManagedBy`, renamed. */
export const MANAGED_BY_LABEL = 'endpointslice.platform/managed-by';
/** The value of {@link MANAGED_BY_LABEL} on this controller's slices. */
export const CONTROLLER_NAME = 'endpointslice-controller.platform';
const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** The values of the EndpointSlice controller's options. */
export interface EndpointSliceControllerConfig {
  /** `--concurrent-service-endpoint-syncs`. */
  workers: number;
  /** `--max-endpoints-per-slice`. */
  maxEndpointsPerSlice: number;
  /** `--endpointslice-updates-batch-period` (ms). */
  batchPeriodMs: number;
  /** The EndpointSliceTerminatingCondition gate when the daemon does not pass its gates (`ctx.featureGates`). */
  terminatingCondition?: boolean;
}

/** `--concurrent-service-endpoint-syncs`, `--max-endpoints-per-slice`, `--endpointslice-updates-batch-period`. */
export class EndpointSliceControllerOptions extends ControllerOptions<EndpointSliceControllerConfig> {
  workers = 5;
  maxEndpointsPerSlice = 100;
  batchPeriodMs = 0;

  constructor() {
    super('EndpointSlice controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-service-endpoint-syncs',
        'The number of service endpoint syncing operations that will be done concurrently. Larger number = faster endpoint slice updating, but more CPU (and network) load. Defaults to 5.',
        this.workers,
        (v) => (this.workers = v),
        { range: INT32, type: 'int32' },
      ),
      intFlag(
        'max-endpoints-per-slice',
        'The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.',
        this.maxEndpointsPerSlice,
        (v) => (this.maxEndpointsPerSlice = v),
        { range: INT32, type: 'int32' },
      ),
      durationFlag(
        'endpointslice-updates-batch-period',
        'The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated',
        undefined,
        (v) => (this.batchPeriodMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    if (this.workers < 1 || this.workers > 50)
      errs.push(new Error(`--concurrent-service-endpoint-syncs must be between 1 and 50, got ${this.workers}`));
    if (this.maxEndpointsPerSlice < 1 || this.maxEndpointsPerSlice > 1000)
      errs.push(new Error(`--max-endpoints-per-slice must be between 1 and 1000, got ${this.maxEndpointsPerSlice}`));
    return errs;
  }

  values(): EndpointSliceControllerConfig {
    return {
      workers: this.workers,
      maxEndpointsPerSlice: this.maxEndpointsPerSlice,
      batchPeriodMs: this.batchPeriodMs,
    };
  }
}

type SliceEndpoint = NonNullable<EndpointSlice['endpoints']>[number] & { zone?: string };
type SlicePort = NonNullable<EndpointSlice['ports']>[number];
type AddressType = 'IPv4' | 'IPv6';

/** The address types of a Service's slices (Kubernetes' `getAddressTypesForService`). */
export function addressTypesOf(s: Service): AddressType[] {
  const fams = (s.spec?.ipFamilies ?? []).filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6');
  if (fams.length) return fams;
  const ip = s.spec?.clusterIP;
  if (ip && ip !== 'None') return [ip.includes(':') ? 'IPv6' : 'IPv4'];
  return ['IPv4'];
}

/** The identity of an endpoint inside a slice family (its pod, else its address). */
function endpointKey(e: SliceEndpoint): string {
  return e.targetRef?.uid ? `pod/${e.targetRef.uid}` : `addr/${(e.addresses ?? []).join(',')}`;
}

/** An endpoint for comparison (without fields that do not matter). */
function endpointJson(e: SliceEndpoint): string {
  return canonicalJson({
    a: e.addresses ?? [],
    c: e.conditions ?? {},
    h: e.hostname ?? '',
    n: e.nodeName ?? '',
    z: e.zone ?? '',
    r: e.targetRef ? `${e.targetRef.namespace}/${e.targetRef.name}/${e.targetRef.uid ?? ''}` : '',
  });
}

function portsKey(ports: SlicePort[]): string {
  return canonicalJson(
    [...ports]
      .map((p) => ({ n: p.name ?? '', p: p.port ?? 0, t: p.protocol ?? 'TCP', a: p.appProtocol ?? '' }))
      .sort((a, b) => a.n.localeCompare(b.n) || a.p - b.p),
  );
}

/** What the slices of a Service should hold: by address type, then by ports, the endpoints. */
interface Desired {
  ports: SlicePort[];
  endpoints: Map<string, SliceEndpoint>;
}

async function run(ctx: ControllerContext, o: EndpointSliceControllerConfig): Promise<void> {
  const gates = (ctx as ControllerContext & { featureGates?: FeatureGateReader }).featureGates;
  const terminatingGate = gates
    ? gates.enabled('EndpointSliceTerminatingCondition')
    : (o.terminatingCondition ?? CONTROL_PLANE_FEATURES.get('EndpointSliceTerminatingCondition')?.default ?? false);

  const services = ctx.informers.informerFor(ServiceKind);
  const pods = ctx.informers.informerFor(PodKind);
  const slices = ctx.informers.informerFor(EndpointSliceKind);
  const nodes = ctx.informers.informerFor(NodeKind);
  const queue = new WorkQueue<string>({ name: 'endpoint_slice', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  /** Slices written, by Service key: name → resourceVersion written ('' for deleted). */
  const written = new Map<string, Map<string, string>>();

  const servicesOf = (p: Pod): string[] =>
    services.indexer
      .byIndex(NAMESPACE_INDEX, p.metadata?.namespace ?? '')
      .filter((s) => hasSelector(s) && selectorMatches(s.spec.selector, p.metadata?.labels))
      .map((s) => metaNamespaceKey(s));
  const enqueuePods = (...ps: Pod[]): void => {
    for (const k of new Set(ps.flatMap(servicesOf)))
      if (o.batchPeriodMs > 0) queue.addAfter(k, o.batchPeriodMs);
      else queue.add(k);
  };
  const enqueueSlice = (s: EndpointSlice): void => {
    const svc = s.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (svc && s.metadata?.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME)
      queue.add(`${s.metadata?.namespace ?? ''}/${svc}`);
  };

  services.addEventHandler({
    onAdd: (s) => queue.add(metaNamespaceKey(s)),
    onUpdate: (_old, s) => queue.add(metaNamespaceKey(s)),
    onDelete: (s) => queue.add(metaNamespaceKey(unwrapTombstone(s))),
  });
  pods.addEventHandler({
    onAdd: (p) => enqueuePods(p),
    onUpdate: (old, p) => {
      if (old.metadata?.resourceVersion !== p.metadata?.resourceVersion) enqueuePods(old, p);
    },
    onDelete: (p) => enqueuePods(unwrapTombstone(p)),
  });
  slices.addEventHandler({
    onAdd: enqueueSlice,
    onUpdate: (old, s) => {
      if (old.metadata?.resourceVersion !== s.metadata?.resourceVersion) enqueueSlice(s);
    },
    onDelete: (s) => enqueueSlice(unwrapTombstone(s)),
  });

  /** Whether the cache has every slice write made for the Service (else it is synced again shortly). */
  const cacheCurrent = (key: string, ns: string): boolean => {
    const w = written.get(key);
    if (!w) return true;
    for (const [name, rv] of w) {
      const cached = slices.indexer.get(`${ns}/${name}`);
      if (rv === '') {
        if (cached) return false;
      } else if (!cached || BigInt(cached.metadata?.resourceVersion ?? '0') < BigInt(rv)) return false;
      w.delete(name);
    }
    if (!w.size) written.delete(key);
    return true;
  };
  const remember = (key: string, name: string, rv: string): void => {
    let w = written.get(key);
    if (!w) written.set(key, (w = new Map()));
    w.set(name, rv);
  };

  const ownSlices = (ns: string, name: string): EndpointSlice[] =>
    slices.indexer
      .byIndex(LABEL_INDEX, `${SERVICE_NAME_LABEL}=${name}`)
      .filter((s) => s.metadata?.namespace === ns && s.metadata?.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME);

  const desiredOf = (svc: Service, ns: string): Map<AddressType, Map<string, Desired>> => {
    const tolerate = toleratesUnready(svc);
    const includeTerminating = tolerate || terminatingGate;
    const out = new Map<AddressType, Map<string, Desired>>();
    const types = addressTypesOf(svc);
    for (const t of types) out.set(t, new Map());
    for (const p of pods.indexer.byIndex(NAMESPACE_INDEX, ns)) {
      if (!selectorMatches(svc.spec?.selector ?? {}, p.metadata?.labels)) continue;
      if (!shouldPodBeInEndpoints(p, includeTerminating)) continue;
      const ips = (p.status?.podIPs ?? []).map((x) => x.ip).filter((x): x is string => !!x);
      if (!ips.length && p.status?.podIP) ips.push(p.status.podIP);
      const ports: SlicePort[] = [];
      for (const sp of svc.spec?.ports ?? []) {
        const port = findPort(p, sp);
        if (port === undefined) continue;
        ports.push({
          name: sp.name ?? '',
          port,
          protocol: sp.protocol ?? 'TCP',
          ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
        });
      }
      const terminating = !!p.metadata?.deletionTimestamp;
      const serving = tolerate || isPodReady(p);
      const conditions: SliceEndpoint['conditions'] = terminatingGate
        ? { ready: serving && !terminating, serving, terminating }
        : { ready: serving && !terminating };
      const zone = p.spec?.nodeName ? nodes.indexer.get(p.spec.nodeName)?.metadata?.labels?.[ZONE_LABEL] : undefined;
      for (const t of types) {
        const ip = ips.find((x) => x.includes(':') === (t === 'IPv6'));
        if (!ip) continue;
        const e: SliceEndpoint = {
          addresses: [ip],
          conditions,
          ...(p.spec?.hostname && p.spec.subdomain === svc.metadata?.name ? { hostname: p.spec.hostname } : {}),
          targetRef: {
            kind: 'Pod',
            namespace: p.metadata?.namespace ?? '',
            name: p.metadata?.name ?? '',
            uid: p.metadata?.uid ?? '',
          },
          ...(p.spec?.nodeName ? { nodeName: p.spec.nodeName } : {}),
          ...(zone ? { zone } : {}),
        };
        const pk = portsKey(ports);
        const byPorts = out.get(t)!;
        let d = byPorts.get(pk);
        if (!d) byPorts.set(pk, (d = { ports, endpoints: new Map() }));
        d.endpoints.set(endpointKey(e), e);
      }
    }
    return out;
  };

  const sync = async (key: string): Promise<void> => {
    const { namespace: ns, name } = splitMetaNamespaceKey(key);
    const client = ctx.client.resource(EndpointSliceKind, ns);
    if (!cacheCurrent(key, ns)) {
      queue.addAfter(key, 100);
      return;
    }
    const svc = services.indexer.get(key);
    const existing = ownSlices(ns, name);
    const del = async (s: EndpointSlice): Promise<void> => {
      try {
        await client.delete(s.metadata?.name ?? '', {
          preconditions: { uid: s.metadata?.uid },
          signal: ctx.signal,
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      remember(key, s.metadata?.name ?? '', '');
    };
    if (!svc || svc.metadata?.deletionTimestamp) {
      for (const s of existing) await del(s);
      return;
    }
    if (!hasSelector(svc)) return;

    const labels: Record<string, string> = {
      ...(svc.metadata?.labels ?? {}),
      [SERVICE_NAME_LABEL]: name,
      [MANAGED_BY_LABEL]: CONTROLLER_NAME,
    };
    if (isHeadless(svc)) labels[HEADLESS_LABEL] = '';
    else delete labels[HEADLESS_LABEL];
    const owner = {
      apiVersion: 'v1',
      kind: 'Service',
      name,
      uid: svc.metadata?.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const desired = desiredOf(svc, ns);
    const toCreate: EndpointSlice[] = [];
    const toUpdate: EndpointSlice[] = [];
    const toDelete: EndpointSlice[] = [];
    let total = 0;

    for (const [type, byPorts] of desired) {
      const mine = existing.filter((s) => s.addressType === type);
      for (const [pk, d] of byPorts) {
        const remaining = new Map(d.endpoints);
        const unchanged: { slice: EndpointSlice; endpoints: SliceEndpoint[] }[] = [];
        const changed: { slice: EndpointSlice; endpoints: SliceEndpoint[] }[] = [];
        for (const s of mine.filter((x) => portsKey(x.ports ?? []) === pk)) {
          let dirty = false;
          const kept: SliceEndpoint[] = [];
          for (const e of s.endpoints ?? []) {
            const want = remaining.get(endpointKey(e));
            if (!want) {
              dirty = true;
              continue;
            }
            remaining.delete(endpointKey(e));
            if (endpointJson(want) !== endpointJson(e)) dirty = true;
            kept.push(want);
          }
          if (canonicalJson(s.metadata?.labels ?? {}) !== canonicalJson(labels)) dirty = true;
          if (!kept.length) toDelete.push(s);
          else (dirty ? changed : unchanged).push({ slice: s, endpoints: kept });
        }
        // Fill slices written anyway first, then those that would not be, then new ones.
        const rest = [...remaining.values()];
        for (const c of changed)
          while (rest.length && c.endpoints.length < o.maxEndpointsPerSlice) c.endpoints.push(rest.shift()!);
        for (const u of unchanged)
          if (rest.length && u.endpoints.length < o.maxEndpointsPerSlice) {
            while (rest.length && u.endpoints.length < o.maxEndpointsPerSlice) u.endpoints.push(rest.shift()!);
            changed.push(u);
          }
        for (const c of changed) {
          const s = structuredClone(c.slice);
          s.metadata = {
            ...s.metadata,
            labels,
            annotations: { ...s.metadata?.annotations, [LAST_CHANGE_TRIGGER_TIME]: now },
          };
          s.endpoints = c.endpoints;
          toUpdate.push(s);
        }
        while (rest.length) {
          const chunk = rest.splice(0, o.maxEndpointsPerSlice);
          toCreate.push({
            metadata: {
              generateName: `${name.slice(0, 57)}-`,
              namespace: ns,
              labels,
              annotations: { [LAST_CHANGE_TRIGGER_TIME]: now },
              ownerReferences: [owner],
            },
            addressType: type,
            endpoints: chunk,
            ports: d.ports,
          } as EndpointSlice);
        }
        total += d.endpoints.size;
      }
      // Slices whose ports no endpoint has any more (or of a port set now empty).
      for (const s of mine) if (!byPorts.has(portsKey(s.ports ?? []))) toDelete.push(s);
    }
    // Slices of address types the Service no longer has.
    for (const s of existing) if (!desired.has(s.addressType as AddressType)) toDelete.push(s);

    // A Service with no endpoints has one empty placeholder slice (kept if there is one already).
    if (total === 0) {
      const type = addressTypesOf(svc)[0]!;
      const placeholder = existing.find(
        (s) => s.addressType === type && !(s.endpoints ?? []).length && !(s.ports ?? []).length,
      );
      const others = toDelete.filter((s) => s !== placeholder);
      toDelete.length = 0;
      toDelete.push(...others);
      if (!placeholder)
        toCreate.push({
          metadata: { generateName: `${name.slice(0, 57)}-`, namespace: ns, labels, ownerReferences: [owner] },
          addressType: type,
          endpoints: [],
          ports: [],
        } as EndpointSlice);
      else if (canonicalJson(placeholder.metadata?.labels ?? {}) !== canonicalJson(labels)) {
        const s = structuredClone(placeholder);
        s.metadata = { ...s.metadata, labels };
        toUpdate.push(s);
      }
    }

    for (const s of toCreate) {
      const created = await client.create(s, { signal: ctx.signal });
      remember(key, created.metadata?.name ?? '', created.metadata?.resourceVersion ?? '0');
    }
    for (const s of toUpdate) {
      const updated = await client.update(s, { signal: ctx.signal });
      remember(key, updated.metadata?.name ?? '', updated.metadata?.resourceVersion ?? '0');
    }
    for (const s of new Set(toDelete)) await del(s);
  };

  if (!(await waitForSynced(ctx.signal, [services, pods, slices, nodes]))) return;
  await runWorkers(queue, o.workers, sync, (key, err) => {
    if (!ctx.signal.aborted)
      ctx.logger.info('Error syncing endpoint slices for service, retrying', { service: key, error: String(err) });
  });
}

/** The `endpointslice` controller. */
export const endpointSliceController: ControllerDefinition<EndpointSliceControllerConfig> = {
  name: 'endpointslice',
  enabledByDefault: true,
  serviceAccount: 'endpointslice-controller',
  options: () => new EndpointSliceControllerOptions(),
  run,
};
