/**
 * The endpoint reconcilers of the `platform` Service (model: Kubernetes 1.21 `pkg/controlplane/reconcilers`):
 * they keep the Endpoints `default/platform` listing the API servers that serve the cluster.
 *
 * - `lease` ({@link LeaseEndpointReconciler}, the default): each server keeps a key with a TTL under
 *   `<store-prefix>/masterleases/<ip>` in the backing store and renews it on every pass; the Endpoints list the IPs
 *   whose keys exist. A server that stops renewing (crash) drops out when its key expires; one that shuts down
 *   gracefully deletes its key and rewrites the Endpoints at once.
 * - `master-count` ({@link MasterCountEndpointReconciler}): every server adds its own IP; when there are more IPs
 *   than `--apiserver-count`, the ones after its own (in lexicographic order, wrapping around) are removed.
 * - `none`: no reconciler; the Endpoints are left to whoever manages them.
 *
 * The Endpoints are mirrored into the EndpointSlice `default/platform` (label `kubernetes.io/service-name`), as
 * Kubernetes 1.21 does for its `kubernetes` Service. Writes go through the registry (validation applies); the leases
 * go to the store directly, as in Kubernetes.
 */
import { type ApiObject, type EndpointSubset, type Endpoints } from '@platform/api';

import { isStorageError } from '../../storage/errors';
import { type Store } from '../../storage/interface';

import { createIfMissing, getOrUndefined, type ObjectStore, systemContext, updateIfNeeded } from './objects';

/** The Service (and Endpoints) of the API servers. */
export const PLATFORM_SERVICE_NAME = 'platform';
/** Its namespace. */
export const PLATFORM_SERVICE_NAMESPACE = 'default';

/** One port of the Endpoints. */
export interface EndpointPort {
  name: string;
  port: number;
  protocol: 'TCP';
}

/** What an endpoint reconciler does (Kubernetes' `EndpointReconciler`). */
export interface EndpointReconciler {
  /** Makes the Endpoints list this server (`ip`) with `ports`. A no-op after `stopReconciling()`. */
  reconcileEndpoints(ip: string, ports: EndpointPort[]): Promise<void>;
  /** Takes this server out of the Endpoints (graceful shutdown). */
  removeEndpoints(ip: string, ports: EndpointPort[]): Promise<void>;
  /** Later `reconcileEndpoints` calls do nothing (so a pass racing the shutdown cannot add the server back). */
  stopReconciling(): void;
}

/** The reconciler types of `--endpoint-reconciler-type`. */
export const ENDPOINT_RECONCILER_TYPES = ['lease', 'master-count', 'none'] as const;
/** One of {@link ENDPOINT_RECONCILER_TYPES}. */
export type EndpointReconcilerType = (typeof ENDPOINT_RECONCILER_TYPES)[number];

/** The TTL of a master lease (Kubernetes' `DefaultEndpointReconcilerTTL`). */
export const DEFAULT_MASTER_LEASE_TTL_SECONDS = 15;

const sortIPs = (ips: Iterable<string>): string[] => [...new Set(ips)].sort();

function samePorts(a: EndpointSubset['ports'], b: readonly EndpointPort[]): boolean {
  const x = a ?? [];
  return (
    x.length === b.length &&
    x.every((p, i) => p.name === b[i]!.name && p.port === b[i]!.port && (p.protocol ?? 'TCP') === b[i]!.protocol)
  );
}

function endpointsObject(subsets: EndpointSubset[]): Endpoints {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: PLATFORM_SERVICE_NAME, namespace: PLATFORM_SERVICE_NAMESPACE },
    subsets,
  };
}

function subsetOf(ips: string[], ports: EndpointPort[]): EndpointSubset[] {
  return ips.length === 0 ? [] : [{ addresses: ips.map((ip) => ({ ip })), ports: ports.map((p) => ({ ...p })) }];
}

/** The label naming a slice's Service (Kubernetes' `discovery.LabelServiceName`). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** The fields of an EndpointSlice the mirroring writes (the rest is defaulted by the server). */
interface SliceShape {
  addressType: 'IPv4' | 'IPv6';
  endpoints: { addresses: string[]; conditions: { ready: boolean } }[];
  ports: { name: string; port: number; protocol: string }[];
}

/** The slice mirroring Endpoints (model: `EndpointsAdapter.EnsureEndpointSliceFromEndpoints`). */
function sliceShape(e: Endpoints): SliceShape {
  const subset = e.subsets?.[0];
  const ips = (subset?.addresses ?? []).map((a) => a.ip);
  return {
    addressType: ips.some((ip) => ip.includes(':')) ? 'IPv6' : 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: (subset?.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP' })),
  };
}

/** What of a stored slice {@link sliceShape} decides, to compare with it. */
function storedShape(o: ApiObject): SliceShape {
  const s = o as ApiObject & {
    addressType?: SliceShape['addressType'];
    endpoints?: { addresses?: string[]; conditions?: { ready?: boolean | null } }[];
    ports?: { name?: string | null; port?: number | null; protocol?: string | null }[];
  };
  return {
    addressType: s.addressType ?? 'IPv4',
    endpoints: (s.endpoints ?? []).map((x) => ({
      addresses: x.addresses ?? [],
      conditions: { ready: x.conditions?.ready ?? false },
    })),
    ports: (s.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port ?? 0, protocol: p.protocol ?? 'TCP' })),
  };
}

/** Reads and writes the Endpoints of the `platform` Service, and the EndpointSlice that mirrors them. */
class EndpointsAccess {
  constructor(
    private readonly endpoints: ObjectStore,
    private readonly now: () => number,
    private readonly slices: ObjectStore | undefined,
  ) {}

  private ctx(): ReturnType<typeof systemContext> {
    return systemContext(PLATFORM_SERVICE_NAMESPACE, this.now);
  }

  async get(): Promise<Endpoints | undefined> {
    return (await getOrUndefined(this.endpoints, this.ctx(), PLATFORM_SERVICE_NAME)) as Endpoints | undefined;
  }

  /**
   * Creates the Endpoints with what `compute` returns for no current object, or updates them when `compute` returns
   * other subsets than the current ones (undefined: keep).
   */
  async write(compute: (current: Endpoints | undefined) => EndpointSubset[] | undefined): Promise<void> {
    const ctx = this.ctx();
    const current = await this.get();
    let created = false;
    if (!current) {
      const subsets = compute(undefined);
      created = subsets !== undefined && (await createIfMissing(this.endpoints, ctx, endpointsObject(subsets)));
    }
    if (!created) {
      await updateIfNeeded(this.endpoints, ctx, PLATFORM_SERVICE_NAME, (obj: ApiObject) => {
        const e = obj as Endpoints;
        const subsets = compute(e);
        if (!subsets || JSON.stringify(subsets) === JSON.stringify(e.subsets ?? [])) return undefined;
        e.subsets = subsets;
        return e;
      });
    }
    await this.mirror();
  }

  /** Makes the EndpointSlice `default/platform` match the Endpoints (when slices are served). */
  private async mirror(): Promise<void> {
    const slices = this.slices;
    const endpoints = await this.get();
    if (!slices || !endpoints) return;
    const ctx = this.ctx();
    const want = sliceShape(endpoints);
    const slice = {
      apiVersion: 'discovery.platform/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: PLATFORM_SERVICE_NAME,
        namespace: PLATFORM_SERVICE_NAMESPACE,
        labels: { [SERVICE_NAME_LABEL]: PLATFORM_SERVICE_NAME },
      },
      ...want,
    } as ApiObject;
    const existing = await getOrUndefined(slices, ctx, PLATFORM_SERVICE_NAME);
    if (!existing) {
      await createIfMissing(slices, ctx, slice);
      return;
    }
    if (storedShape(existing).addressType !== want.addressType) {
      // The address type of a slice cannot change: replace it.
      await slices.delete(ctx, PLATFORM_SERVICE_NAME, undefined, { dryRun: false });
      await createIfMissing(slices, ctx, slice);
      return;
    }
    await updateIfNeeded(slices, ctx, PLATFORM_SERVICE_NAME, (obj) => {
      const labels = ((obj.metadata ??= {}) as { labels?: Record<string, string> }).labels ?? {};
      const labelRight = labels[SERVICE_NAME_LABEL] === PLATFORM_SERVICE_NAME;
      if (labelRight && JSON.stringify(storedShape(obj)) === JSON.stringify(want)) return undefined;
      (obj.metadata as { labels?: Record<string, string> }).labels = {
        ...labels,
        [SERVICE_NAME_LABEL]: PLATFORM_SERVICE_NAME,
      };
      return Object.assign(obj, { endpoints: want.endpoints, ports: want.ports });
    });
  }
}

/** The `lease` reconciler: see the module comment. */
export class LeaseEndpointReconciler implements EndpointReconciler {
  private readonly access: EndpointsAccess;
  private stopped = false;

  /**
   * @param store the backing store holding the leases
   * @param leasePrefix `<store-prefix>/masterleases/`
   * @param ttlSeconds lifetime of a lease that is not renewed
   * @param slices the EndpointSlice store, when slices are served (the Endpoints are mirrored into a slice)
   */
  constructor(
    endpoints: ObjectStore,
    private readonly store: Store,
    private readonly leasePrefix: string,
    private readonly ttlSeconds: number,
    now: () => number,
    slices?: ObjectStore,
  ) {
    this.access = new EndpointsAccess(endpoints, now, slices);
  }

  /** Writes (or renews) the lease of `ip`. */
  async updateLease(ip: string): Promise<void> {
    const key = `${this.leasePrefix}${ip}`;
    const value = new TextEncoder().encode(JSON.stringify({ ip }));
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.store.get(key);
      try {
        if (current) await this.store.update(key, value, current.modRevision, { ttlSeconds: this.ttlSeconds });
        else await this.store.create(key, value, { ttlSeconds: this.ttlSeconds });
        return;
      } catch (err) {
        // Expired or written by someone else between the read and the write: read again.
        if (
          !isStorageError(err, 'KeyExists') &&
          !isStorageError(err, 'Conflict') &&
          !isStorageError(err, 'KeyNotFound')
        )
          throw err;
      }
    }
    throw new Error(`could not write the master lease ${key}: it kept changing`);
  }

  /** The IPs with a live lease, sorted. */
  async listLeases(): Promise<string[]> {
    const { kvs } = await this.store.list(this.leasePrefix);
    return sortIPs(kvs.map((kv) => kv.key.slice(this.leasePrefix.length)));
  }

  async reconcileEndpoints(ip: string, ports: EndpointPort[]): Promise<void> {
    if (this.stopped) return;
    // The lease first, whatever happens to the Endpoints: then at least the other servers list this one.
    await this.updateLease(ip);
    await this.sync(ports);
  }

  async removeEndpoints(ip: string, ports: EndpointPort[]): Promise<void> {
    try {
      await this.store.delete(`${this.leasePrefix}${ip}`);
    } catch (err) {
      if (!isStorageError(err, 'KeyNotFound')) throw err;
    }
    await this.sync(ports);
  }

  stopReconciling(): void {
    this.stopped = true;
  }

  /** Makes the Endpoints list exactly the IPs with a lease. */
  private async sync(ports: EndpointPort[]): Promise<void> {
    const ips = await this.listLeases();
    // As Kubernetes: never erase every address (the last server leaving keeps its entry until a server comes back).
    if (ips.length === 0) return;
    await this.access.write((current) => {
      const subsets = current?.subsets ?? [];
      const have = subsets.length === 1 ? sortIPs((subsets[0]!.addresses ?? []).map((a) => a.ip)) : undefined;
      const addressesRight = have !== undefined && have.length === ips.length && have.every((x, i) => x === ips[i]);
      if (current && addressesRight && samePorts(subsets[0]!.ports, ports)) return undefined;
      return subsetOf(ips, ports);
    });
  }
}

/** The `master-count` reconciler: see the module comment. */
export class MasterCountEndpointReconciler implements EndpointReconciler {
  private readonly access: EndpointsAccess;
  private stopped = false;

  constructor(
    endpoints: ObjectStore,
    private readonly masterCount: number,
    now: () => number,
    slices?: ObjectStore,
  ) {
    this.access = new EndpointsAccess(endpoints, now, slices);
  }

  async reconcileEndpoints(ip: string, ports: EndpointPort[]): Promise<void> {
    if (this.stopped) return;
    await this.access.write((current) => {
      const subsets = current?.subsets ?? [];
      // Anything but one subset is not what a reconciler wrote: start again with this server alone.
      if (!current || subsets.length !== 1) return subsetOf([ip], ports);
      const ips = (subsets[0]!.addresses ?? []).map((a) => a.ip);
      const ipRight = ips.includes(ip) && ips.length <= this.masterCount;
      if (ipRight && samePorts(subsets[0]!.ports, ports)) return undefined;
      if (ipRight) return subsetOf(sortIPs(ips), ports);
      // Always add this server; with too many, drop the ones after it (wrapping around), so that every server
      // applying this rule converges on the same list.
      const all = sortIPs([...ips, ip]);
      while (all.length > this.masterCount) all.splice((all.indexOf(ip) + 1) % all.length, 1);
      return subsetOf(all, ports);
    });
  }

  async removeEndpoints(ip: string, ports: EndpointPort[]): Promise<void> {
    await this.access.write((current) => {
      if (!current) return undefined;
      const subsets = current.subsets ?? [];
      if (subsets.length !== 1) return undefined;
      const ips = (subsets[0]!.addresses ?? []).map((a) => a.ip);
      if (!ips.includes(ip)) return undefined;
      return subsetOf(sortIPs(ips.filter((x) => x !== ip)), ports);
    });
  }

  stopReconciling(): void {
    this.stopped = true;
  }
}
