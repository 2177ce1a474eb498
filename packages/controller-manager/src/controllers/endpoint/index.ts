/**
 * The endpoints controller (model: Kubernetes 1.21 `pkg/controller/endpoint/endpoints_controller.go`). For every
 * Service with a selector it keeps an Endpoints object of the same name listing the pods the selector picks:
 *
 * - a pod is listed once it has an IP (`status.podIP`, set by its node agent) and is not finished (Succeeded, or
 *   Failed under a `Never`/`OnFailure` restart policy); a pod being deleted is dropped unless the Service
 *   publishes not-ready addresses;
 * - ready pods (or every pod with `publishNotReadyAddresses`, or the deprecated
 *   `service.alpha.kubernetes.io/tolerate-unready-endpoints: "true"`) go to `addresses`, the others to
 *   `notReadyAddresses`, each with its IP, `nodeName`, `targetRef` and, for a headless Service whose name is the
 *   pod's `subdomain`, its `hostname`;
 * - every Service port becomes an Endpoints port of the same name, protocol and appProtocol; a numeric `targetPort`
 *   is used as is, a named one is looked up in the pod's container ports (a pod without it is left out of that
 *   port); pods with the same ports share a subset (Kubernetes' `RepackSubsets`);
 * - a headless Service without ports lists its pods with no ports;
 * - the Endpoints carry the Service's labels (plus `service.kubernetes.io/headless` for a headless Service) and
 *   `endpoints.kubernetes.io/last-change-trigger-time`, the latest change of the pods or Service behind the write;
 * - deleting a Service deletes its Endpoints; at start every Endpoints is looked at once, so Endpoints of Services
 *   deleted while the controller was down go too (Endpoints used as a leader-election lock are left alone).
 *
 * Pod changes are batched by `--endpoint-updates-batch-period`; `--concurrent-endpoint-syncs` Services sync at once.
 */
import {
  type Endpoints,
  EndpointsKind,
  isForbidden,
  isNotFound,
  type Pod,
  PodKind,
  type Service,
  ServiceKind,
} from '@platform/api';
import { type FlagDef, INT32, durationFlag, intFlag } from '@platform/common';
import {
  type DeletedFinalStateUnknown,
  metaNamespaceKey,
  NAMESPACE_INDEX,
  runWorkers,
  splitMetaNamespaceKey,
  WorkQueue,
} from '@platform/client';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { canonicalJson, isPodReady } from '../util/pods';
import { waitForSynced } from '../util/wait-synced';

/** Kubernetes' `v1.EndpointsLastChangeTriggerTime`. */
export const LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
/** Kubernetes' `v1.IsHeadlessService` label. */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** Kubernetes' `TolerateUnreadyEndpointsAnnotation` (deprecated for `publishNotReadyAddresses`). */
export const TOLERATE_UNREADY_ANNOTATION = 'service.alpha.kubernetes.io/tolerate-unready-endpoints';
/** Kubernetes' `resourcelock.LeaderElectionRecordAnnotationKey`: Endpoints used as a lock are not ours. */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

/** The values of the endpoints controller's options. */
export interface EndpointControllerConfig {
  /** `--concurrent-endpoint-syncs`. */
  workers: number;
  /** `--endpoint-updates-batch-period` (ms); 0: every pod change is synced at once. */
  batchPeriodMs: number;
}

/** `--concurrent-endpoint-syncs`, `--endpoint-updates-batch-period`. */
export class EndpointControllerOptions extends ControllerOptions<EndpointControllerConfig> {
  workers = 5;
  batchPeriodMs = 0;

  constructor() {
    super('Endpoint controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'concurrent-endpoint-syncs',
        'The number of endpoint syncing operations that will be done concurrently. Larger number = faster endpoint updating, but more CPU (and network) load',
        this.workers,
        (v) => (this.workers = v),
        { range: INT32, type: 'int32' },
      ),
      durationFlag(
        'endpoint-updates-batch-period',
        'The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated',
        undefined,
        (v) => (this.batchPeriodMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.workers < 1 ? [new Error(`--concurrent-endpoint-syncs must be at least 1, got ${this.workers}`)] : [];
  }

  values(): EndpointControllerConfig {
    return { workers: this.workers, batchPeriodMs: this.batchPeriodMs };
  }
}

type EndpointAddress = NonNullable<NonNullable<Endpoints['subsets']>[number]['addresses']>[number];
type EndpointPort = NonNullable<NonNullable<Endpoints['subsets']>[number]['ports']>[number];
type EndpointSubset = NonNullable<Endpoints['subsets']>[number];
type ServicePort = NonNullable<NonNullable<Service['spec']>['ports']>[number];

/** The selector of a Service matches the labels (an empty selector matches nothing here: no Endpoints managed). */
export function selectorMatches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  for (const [k, v] of Object.entries(selector)) if (labels?.[k] !== v) return false;
  return true;
}

/** The Service has a selector the controllers manage endpoints for. */
export function hasSelector(s: Service): s is Service & { spec: { selector: Record<string, string> } } {
  return Object.keys(s.spec?.selector ?? {}).length > 0;
}

/** Kubernetes' `IsPodTerminal` as 1.21's endpoint controllers use it. */
function isPodTerminal(p: Pod): boolean {
  const phase = p.status?.phase;
  const policy = p.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') return phase === 'Failed' || phase === 'Succeeded';
  if (policy === 'OnFailure') return phase === 'Succeeded';
  return false;
}

/** Kubernetes' `ShouldPodBeInEndpoints`. */
export function shouldPodBeInEndpoints(p: Pod, includeTerminating: boolean): boolean {
  if (isPodTerminal(p)) return false;
  if (!p.status?.podIP && !p.status?.podIPs?.length) return false;
  if (!includeTerminating && p.metadata?.deletionTimestamp) return false;
  return true;
}

/** Whether not-ready pods count as ready (`publishNotReadyAddresses` or the deprecated annotation). */
export function toleratesUnready(s: Service): boolean {
  if (s.spec?.publishNotReadyAddresses) return true;
  const a = s.metadata?.annotations?.[TOLERATE_UNREADY_ANNOTATION];
  return a !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(a);
}

/** The pod's IP of the Service's family (Kubernetes' `getEndpointIP`: the first IP when families do not decide). */
export function podIPFor(s: Service, p: Pod): string | undefined {
  const ips = (p.status?.podIPs ?? []).map((x) => x.ip).filter((x): x is string => !!x);
  if (!ips.length && p.status?.podIP) ips.push(p.status.podIP);
  const family = s.spec?.ipFamilies?.[0] ?? (s.spec?.clusterIP?.includes(':') ? 'IPv6' : undefined);
  if (family) {
    const v6 = family === 'IPv6';
    const match = ips.find((ip) => ip.includes(':') === v6);
    if (match) return match;
    if (ips.length > 1) return undefined;
  }
  return ips[0];
}

/** Kubernetes' `podutil.FindPort`: the container port of a Service port's target, or undefined. */
export function findPort(p: Pod, sp: ServicePort): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = sp.protocol ?? 'TCP';
  for (const c of p.spec?.containers ?? [])
    for (const cp of c.ports ?? [])
      if (cp.name === target && (cp.protocol ?? 'TCP') === protocol) return cp.containerPort;
  return undefined;
}

export function isHeadless(s: Service): boolean {
  return s.spec?.clusterIP === 'None';
}

/** The latest time among the pods and the Service (Kubernetes' trigger time, simplified to what is known). */
function triggerTime(s: Service, pods: Pod[]): string | undefined {
  let best = s.metadata?.creationTimestamp;
  for (const p of pods) {
    for (const t of [
      p.metadata?.creationTimestamp,
      p.metadata?.deletionTimestamp,
      p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime,
    ])
      if (t && (!best || t > best)) best = t;
  }
  return best ?? undefined;
}

/** The subsets of the Endpoints of `s` over the pods of its namespace. */
export function computeSubsets(s: Service, pods: Pod[]): { subsets: EndpointSubset[]; used: Pod[] } {
  const selector = s.spec?.selector ?? {};
  const tolerate = toleratesUnready(s);
  const groups = new Map<string, { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }>();
  const used: Pod[] = [];
  const headless = isHeadless(s);
  for (const p of pods) {
    if (!selectorMatches(selector, p.metadata?.labels)) continue;
    if (!shouldPodBeInEndpoints(p, tolerate)) continue;
    const ip = podIPFor(s, p);
    if (!ip) continue;
    const addr: EndpointAddress = {
      ip,
      ...(p.spec?.nodeName ? { nodeName: p.spec.nodeName } : {}),
      targetRef: {
        kind: 'Pod',
        namespace: p.metadata?.namespace ?? '',
        name: p.metadata?.name ?? '',
        uid: p.metadata?.uid ?? '',
        resourceVersion: p.metadata?.resourceVersion ?? '',
      },
    };
    if (headless && p.spec?.hostname && p.spec.subdomain === s.metadata?.name) addr.hostname = p.spec.hostname;
    const ready = tolerate || isPodReady(p);
    const ports: EndpointPort[] = [];
    const sports = s.spec?.ports ?? [];
    for (const sp of sports) {
      const port = findPort(p, sp);
      if (port === undefined) continue; // Kubernetes logs and skips this port for the pod
      ports.push({
        ...(sp.name ? { name: sp.name } : {}),
        port,
        protocol: sp.protocol ?? 'TCP',
        ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
      });
    }
    // A pod none of whose ports resolve is listed only for a headless Service without ports.
    if (!ports.length && !(sports.length === 0 && headless)) continue;
    used.push(p);
    ports.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.port - b.port);
    const key = canonicalJson(ports);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ports, ready: [], notReady: [] }));
    (ready ? g.ready : g.notReady).push(addr);
  }
  const byIP = (a: EndpointAddress, b: EndpointAddress): number =>
    a.ip.localeCompare(b.ip) || (a.targetRef?.uid ?? '').localeCompare(b.targetRef?.uid ?? '');
  const subsets = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, g]) => ({
      ...(g.ready.length ? { addresses: g.ready.sort(byIP) } : {}),
      ...(g.notReady.length ? { notReadyAddresses: g.notReady.sort(byIP) } : {}),
      ...(g.ports.length ? { ports: g.ports } : {}),
    }));
  return { subsets, used };
}

/** Subsets without the fields that change on every pod write (targetRef.resourceVersion), for comparison. */
function comparable(subsets: EndpointSubset[] | undefined): string {
  const strip = (as: EndpointAddress[] | undefined): unknown =>
    (as ?? []).map((a) => ({
      ip: a.ip,
      hostname: a.hostname ?? '',
      nodeName: a.nodeName ?? '',
      ref: a.targetRef ? `${a.targetRef.namespace}/${a.targetRef.name}/${a.targetRef.uid ?? ''}` : '',
    }));
  return canonicalJson(
    (subsets ?? []).map((s) => ({
      a: strip(s.addresses),
      n: strip(s.notReadyAddresses),
      p: (s.ports ?? []).map((p) => ({
        name: p.name ?? '',
        port: p.port,
        protocol: p.protocol ?? 'TCP',
        app: p.appProtocol ?? '',
      })),
    })),
  );
}

function labelsFor(s: Service): Record<string, string> {
  const labels: Record<string, string> = { ...(s.metadata?.labels ?? {}) };
  if (isHeadless(s)) labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  return labels;
}

async function run(ctx: ControllerContext, o: EndpointControllerConfig): Promise<void> {
  const services = ctx.informers.informerFor(ServiceKind);
  const pods = ctx.informers.informerFor(PodKind);
  const endpoints = ctx.informers.informerFor(EndpointsKind);
  const queue = new WorkQueue<string>({ name: 'endpoint', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });

  /** Keys of the Services of the pod's namespace whose selector picks it. */
  const servicesOf = (p: Pod): string[] =>
    services.indexer
      .byIndex(NAMESPACE_INDEX, p.metadata?.namespace ?? '')
      .filter((s) => hasSelector(s) && selectorMatches(s.spec.selector, p.metadata?.labels))
      .map((s) => metaNamespaceKey(s));
  const enqueuePodServices = (...ps: Pod[]): void => {
    const keys = new Set(ps.flatMap(servicesOf));
    for (const k of keys) {
      if (o.batchPeriodMs > 0) queue.addAfter(k, o.batchPeriodMs);
      else queue.add(k);
    }
  };

  services.addEventHandler({
    onAdd: (s) => queue.add(metaNamespaceKey(s)),
    onUpdate: (_old, s) => queue.add(metaNamespaceKey(s)),
    onDelete: (s) => queue.add(metaNamespaceKey(unwrapTombstone(s))),
  });
  pods.addEventHandler({
    onAdd: (p) => enqueuePodServices(p),
    onUpdate: (old, p) => {
      if (old.metadata?.resourceVersion === p.metadata?.resourceVersion) return;
      enqueuePodServices(old, p);
    },
    onDelete: (p: Pod | DeletedFinalStateUnknown<Pod>) => enqueuePodServices(unwrapTombstone(p)),
  });
  endpoints.addEventHandler({
    onDelete: (e) => queue.add(metaNamespaceKey(unwrapTombstone(e))),
  });

  const sync = async (key: string): Promise<void> => {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const client = ctx.client.resource(EndpointsKind, namespace);
    const svc = services.indexer.get(key);
    if (!svc) {
      const current = endpoints.indexer.get(key);
      if (current?.metadata?.annotations?.[LEADER_ANNOTATION] !== undefined) return;
      if (!current) return;
      try {
        await client.delete(name, { signal: ctx.signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    }
    if (!hasSelector(svc)) return; // Endpoints of Services without a selector are the user's
    const { subsets, used } = computeSubsets(svc, pods.indexer.byIndex(NAMESPACE_INDEX, namespace));
    const labels = labelsFor(svc);
    const current = endpoints.indexer.get(key);
    if (
      current &&
      comparable(current.subsets) === comparable(subsets) &&
      canonicalJson(current.metadata?.labels ?? {}) === canonicalJson(labels)
    )
      return;
    const trigger = triggerTime(svc, used);
    const annotations: Record<string, string> = { ...(current?.metadata?.annotations ?? {}) };
    if (trigger) annotations[LAST_CHANGE_TRIGGER_TIME] = trigger;
    else delete annotations[LAST_CHANGE_TRIGGER_TIME];
    if (current) {
      const next: Endpoints = structuredClone(current);
      next.metadata = { ...next.metadata, labels, annotations };
      next.subsets = subsets;
      await client.update(next, { signal: ctx.signal });
      return;
    }
    if (svc.metadata?.deletionTimestamp) return;
    try {
      await client.create({ metadata: { name, namespace, labels, annotations }, subsets } as Endpoints, {
        signal: ctx.signal,
      });
    } catch (err) {
      // A namespace being deleted refuses new objects: nothing to do.
      if (isForbidden(err) && /terminat/i.test(String(err))) return;
      throw err;
    }
  };

  if (!(await waitForSynced(ctx.signal, [services, pods, endpoints]))) return;
  // Endpoints of Services deleted while the controller was not running (Kubernetes' checkLeftoverEndpoints).
  for (const e of endpoints.indexer.list())
    if (!services.indexer.get(metaNamespaceKey(e)) && e.metadata?.annotations?.[LEADER_ANNOTATION] === undefined)
      queue.add(metaNamespaceKey(e));
  await runWorkers(queue, o.workers, sync, (key, err) => {
    if (!ctx.signal.aborted) ctx.logger.info('Error syncing endpoints, retrying', { service: key, error: String(err) });
  });
}

/** The `endpoint` controller. */
export const endpointController: ControllerDefinition<EndpointControllerConfig> = {
  name: 'endpoint',
  enabledByDefault: true,
  serviceAccount: 'endpoint-controller',
  options: () => new EndpointControllerOptions(),
  run,
};
