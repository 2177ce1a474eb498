/**
 * The EndpointSlice mirroring controller (model: Kubernetes 1.21 `pkg/controller/endpointslicemirroring`). The
 * Endpoints of a Service without a selector are written by hand (or by another controller); this controller
 * mirrors them into EndpointSlices so that slice readers see them too:
 *
 * - mirrored: Endpoints whose Service exists and has no selector, unless labelled
 *   `endpointslice.kubernetes.io/skip-mirror: "true"` or used as a leader-election lock; the API server's own
 *   `default/platform` Endpoints are skipped too (the API server writes their slice itself);
 * - each subset becomes slices of its ports, one family per address type; `addresses` are ready endpoints and
 *   `notReadyAddresses` not-ready ones, each with hostname, nodeName and targetRef; only the first
 *   `--mirroring-max-endpoints-per-subset` addresses of a subset are mirrored;
 * - slices are labelled with the Endpoints' labels, `kubernetes.io/service-name` and
 *   `endpointslice.platform/managed-by: endpointslicemirroring-controller.platform`, and owned by the Endpoints;
 * - slices no longer wanted (the Endpoints or Service gone, a selector added, the skip label set) are deleted.
 *
 * Changes are batched by `--mirroring-endpointslice-updates-batch-period`;
 * `--mirroring-concurrent-service-endpoint-syncs` Endpoints sync at once.
 */
import {
  type EndpointSlice,
  EndpointSliceKind,
  type Endpoints,
  EndpointsKind,
  isNotFound,
  ServiceKind,
} from '@platform/api';
import { type FlagDef, INT32, durationFlag, intFlag } from '@platform/common';
import { LABEL_INDEX, metaNamespaceKey, runWorkers, splitMetaNamespaceKey, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { hasSelector } from '../endpoint';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../endpointslice';
import { unwrapTombstone } from '../util/informers';
import { canonicalJson } from '../util/pods';
import { waitForSynced } from '../util/wait-synced';

/** The value of `endpointslice.platform/managed-by` on mirrored slices. */
export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.platform';
/** Kubernetes' `discovery.LabelSkipMirror`. */
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

/** The values of the mirroring controller's options. */
export interface MirroringControllerConfig {
  workers: number;
  maxEndpointsPerSubset: number;
  batchPeriodMs: number;
}

/** `--mirroring-concurrent-service-endpoint-syncs`, `--mirroring-max-endpoints-per-subset`, `--mirroring-endpointslice-updates-batch-period`. */
export class MirroringControllerOptions extends ControllerOptions<MirroringControllerConfig> {
  workers = 5;
  maxEndpointsPerSubset = 1000;
  batchPeriodMs = 0;

  constructor() {
    super('EndpointSliceMirroring controller');
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        'mirroring-concurrent-service-endpoint-syncs',
        'The number of service endpoint syncing operations that will be done concurrently by the EndpointSliceMirroring controller. Larger number = faster endpoint slice updating, but more CPU (and network) load. Defaults to 5.',
        this.workers,
        (v) => (this.workers = v),
        { range: INT32, type: 'int32' },
      ),
      intFlag(
        'mirroring-max-endpoints-per-subset',
        'The maximum number of endpoints that will be added to an EndpointSlice by the EndpointSliceMirroring controller. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 1000.',
        this.maxEndpointsPerSubset,
        (v) => (this.maxEndpointsPerSubset = v),
        { range: INT32, type: 'int32' },
      ),
      durationFlag(
        'mirroring-endpointslice-updates-batch-period',
        'The length of EndpointSlice updates batching period for EndpointSliceMirroring controller. Processing of EndpointSlice changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of EndpointSlice updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated',
        undefined,
        (v) => (this.batchPeriodMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    if (this.workers < 1 || this.workers > 50)
      errs.push(
        new Error(`--mirroring-concurrent-service-endpoint-syncs must be between 1 and 50, got ${this.workers}`),
      );
    if (this.maxEndpointsPerSubset < 1 || this.maxEndpointsPerSubset > 1000)
      errs.push(
        new Error(`--mirroring-max-endpoints-per-subset must be between 1 and 1000, got ${this.maxEndpointsPerSubset}`),
      );
    return errs;
  }

  values(): MirroringControllerConfig {
    return {
      workers: this.workers,
      maxEndpointsPerSubset: this.maxEndpointsPerSubset,
      batchPeriodMs: this.batchPeriodMs,
    };
  }
}

type SliceEndpoint = NonNullable<EndpointSlice['endpoints']>[number];
type SlicePort = NonNullable<EndpointSlice['ports']>[number];
type Address = NonNullable<NonNullable<Endpoints['subsets']>[number]['addresses']>[number];

/** The contents of one wanted slice. */
interface Want {
  addressType: 'IPv4' | 'IPv6';
  ports: SlicePort[];
  endpoints: SliceEndpoint[];
}

function contentKey(addressType: string, ports: SlicePort[] | undefined): string {
  return canonicalJson({
    t: addressType,
    p: (ports ?? [])
      .map((p) => ({ n: p.name ?? '', p: p.port ?? 0, t: p.protocol ?? 'TCP', a: p.appProtocol ?? '' }))
      .sort((a, b) => a.n.localeCompare(b.n) || a.p - b.p),
  });
}

function endpointsJson(es: SliceEndpoint[] | undefined): string {
  return canonicalJson(
    (es ?? []).map((e) => ({
      a: e.addresses,
      c: e.conditions?.ready ?? null,
      h: e.hostname ?? '',
      n: e.nodeName ?? '',
      r: e.targetRef ? `${e.targetRef.kind}/${e.targetRef.namespace}/${e.targetRef.name}/${e.targetRef.uid ?? ''}` : '',
    })),
  );
}

/** The slices mirroring `e` (Kubernetes' reconciler, grouped by address type and ports). */
export function wantedSlices(e: Endpoints, maxPerSubset: number): Want[] {
  const groups = new Map<string, Want>();
  for (const s of e.subsets ?? []) {
    const ports: SlicePort[] = (s.ports ?? []).map((p) => ({
      name: p.name ?? '',
      port: p.port,
      protocol: p.protocol ?? 'TCP',
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    }));
    const all: [Address, boolean][] = [
      ...(s.addresses ?? []).map((a): [Address, boolean] => [a, true]),
      ...(s.notReadyAddresses ?? []).map((a): [Address, boolean] => [a, false]),
    ].slice(0, maxPerSubset);
    for (const [a, ready] of all) {
      const addressType = a.ip.includes(':') ? 'IPv6' : 'IPv4';
      const k = contentKey(addressType, ports);
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { addressType, ports, endpoints: [] }));
      g.endpoints.push({
        addresses: [a.ip],
        conditions: { ready },
        ...(a.hostname ? { hostname: a.hostname } : {}),
        ...(a.nodeName ? { nodeName: a.nodeName } : {}),
        ...(a.targetRef
          ? {
              targetRef: {
                kind: a.targetRef.kind ?? '',
                namespace: a.targetRef.namespace ?? '',
                name: a.targetRef.name ?? '',
                uid: a.targetRef.uid ?? '',
              },
            }
          : {}),
      });
    }
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, g]) => g);
}

async function run(ctx: ControllerContext, o: MirroringControllerConfig): Promise<void> {
  const services = ctx.informers.informerFor(ServiceKind);
  const endpoints = ctx.informers.informerFor(EndpointsKind);
  const slices = ctx.informers.informerFor(EndpointSliceKind);
  const queue = new WorkQueue<string>({ name: 'endpoint_slice_mirroring', metrics: ctx.metrics });
  ctx.signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  /** Slices written, by key: name → resourceVersion ('' deleted), until the cache shows them. */
  const written = new Map<string, Map<string, string>>();

  const enqueue = (key: string): void => {
    if (o.batchPeriodMs > 0) queue.addAfter(key, o.batchPeriodMs);
    else queue.add(key);
  };
  const byKey = { onAdd: (x: { metadata?: unknown }) => enqueue(metaNamespaceKey(x as Endpoints)) };
  services.addEventHandler({
    onAdd: byKey.onAdd,
    onUpdate: (_old, s) => enqueue(metaNamespaceKey(s)),
    onDelete: (s) => enqueue(metaNamespaceKey(unwrapTombstone(s))),
  });
  endpoints.addEventHandler({
    onAdd: byKey.onAdd,
    onUpdate: (_old, e) => enqueue(metaNamespaceKey(e)),
    onDelete: (e) => enqueue(metaNamespaceKey(unwrapTombstone(e))),
  });
  const onSlice = (s: EndpointSlice): void => {
    const svc = s.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (svc && s.metadata?.labels?.[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME)
      enqueue(`${s.metadata?.namespace ?? ''}/${svc}`);
  };
  slices.addEventHandler({
    onAdd: onSlice,
    onUpdate: (_old, s) => onSlice(s),
    onDelete: (s) => onSlice(unwrapTombstone(s)),
  });

  const cacheCurrent = (key: string, ns: string): boolean => {
    const w = written.get(key);
    if (!w) return true;
    for (const [name, rv] of w) {
      const cached = slices.indexer.get(`${ns}/${name}`);
      if (rv === '' ? !!cached : !cached || BigInt(cached.metadata?.resourceVersion ?? '0') < BigInt(rv)) return false;
      w.delete(name);
    }
    written.delete(key);
    return true;
  };
  const remember = (key: string, name: string, rv: string): void => {
    let w = written.get(key);
    if (!w) written.set(key, (w = new Map()));
    w.set(name, rv);
  };

  const sync = async (key: string): Promise<void> => {
    const { namespace: ns, name } = splitMetaNamespaceKey(key);
    if (!cacheCurrent(key, ns)) {
      queue.addAfter(key, 100);
      return;
    }
    const client = ctx.client.resource(EndpointSliceKind, ns);
    const existing = slices.indexer
      .byIndex(LABEL_INDEX, `${SERVICE_NAME_LABEL}=${name}`)
      .filter(
        (s) => s.metadata?.namespace === ns && s.metadata?.labels?.[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME,
      );
    const svc = services.indexer.get(key);
    const ep = endpoints.indexer.get(key);
    const mirror =
      svc &&
      !hasSelector(svc) &&
      ep &&
      !ep.metadata?.deletionTimestamp &&
      ep.metadata?.labels?.[SKIP_MIRROR_LABEL] !== 'true' &&
      ep.metadata?.annotations?.[LEADER_ANNOTATION] === undefined &&
      !(ns === 'default' && name === 'platform');
    const wanted = mirror ? wantedSlices(ep, o.maxEndpointsPerSubset) : [];
    const labels: Record<string, string> = {
      ...(ep?.metadata?.labels ?? {}),
      [SERVICE_NAME_LABEL]: name,
      [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME,
    };
    const unused = [...existing];
    for (const w of wanted) {
      const k = contentKey(w.addressType, w.ports);
      const i = unused.findIndex((s) => contentKey(s.addressType, s.ports) === k);
      if (i >= 0) {
        const cur = unused.splice(i, 1)[0]!;
        if (
          endpointsJson(cur.endpoints) === endpointsJson(w.endpoints) &&
          canonicalJson(cur.metadata?.labels ?? {}) === canonicalJson(labels)
        )
          continue;
        const next = structuredClone(cur);
        next.metadata = { ...next.metadata, labels };
        next.endpoints = w.endpoints;
        const u = await client.update(next, { signal: ctx.signal });
        remember(key, u.metadata?.name ?? '', u.metadata?.resourceVersion ?? '0');
        continue;
      }
      const c = await client.create(
        {
          metadata: {
            generateName: `${name.slice(0, 57)}-`,
            namespace: ns,
            labels,
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'Endpoints',
                name,
                uid: ep!.metadata?.uid ?? '',
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
          addressType: w.addressType,
          endpoints: w.endpoints,
          ports: w.ports,
        } as EndpointSlice,
        { signal: ctx.signal },
      );
      remember(key, c.metadata?.name ?? '', c.metadata?.resourceVersion ?? '0');
    }
    for (const s of unused) {
      try {
        await client.delete(s.metadata?.name ?? '', { preconditions: { uid: s.metadata?.uid }, signal: ctx.signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      remember(key, s.metadata?.name ?? '', '');
    }
  };

  if (!(await waitForSynced(ctx.signal, [services, endpoints, slices]))) return;
  await runWorkers(queue, o.workers, sync, (key, err) => {
    if (!ctx.signal.aborted)
      ctx.logger.info('Error mirroring endpoints, retrying', { endpoints: key, error: String(err) });
  });
}

/** The `endpointslicemirroring` controller. */
export const endpointSliceMirroringController: ControllerDefinition<MirroringControllerConfig> = {
  name: 'endpointslicemirroring',
  enabledByDefault: true,
  serviceAccount: 'endpointslicemirroring-controller',
  options: () => new MirroringControllerOptions(),
  run,
};
