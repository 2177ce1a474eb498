/**
 * The Service store (model: Kubernetes 1.21 `pkg/registry/core/service/storage/rest.go`): the generic store, with
 * cluster IPs and node ports allocated before a service is written and released when it goes.
 *
 * - A service that is not headless (`clusterIP: None`) and not ExternalName gets a cluster IP of each of its IP
 *   families (see ip-families.ts): the one it asks for, when free and in that family's range of
 *   `--service-cluster-ip-range` (422 otherwise), or a free one.
 * - NodePort and LoadBalancer services get a node port for every port that names none; named ones must be free
 *   and in `--service-node-port-range` (422 otherwise).
 * - An update allocates what the new type needs and releases what the old one held and the new one does not.
 * - A delete that removes the service releases its IP and ports, and so does the update that removes the last
 *   finalizer of a terminating service. A dry-run allocates nothing.
 *
 * Allocation happens before the write; when the write fails, what this request allocated is released again.
 */
import { type ApiObject, FieldPath, field, invalid, isValidIP, type Service } from '@platform/api';

import { GenericStore, type StoreDefinition } from '../../generic/store';
import {
  type DeleteRequest,
  type DeleteResult,
  type RequestContext,
  type UpdatedObjectInfo,
  type ValidateObjectFunc,
  type WriteOptions,
} from '../../rest/rest';
import {
  type AllocationErrorReason,
  type IPFamily,
  ipFamilyOf,
  isAllocationError,
  type RangeAllocator,
} from './allocator';
import { clusterIPsOf, defaultIPFamilies } from './ip-families';

/** The allocators a service store uses. */
export interface ServiceAllocators {
  /** One per family of `--service-cluster-ip-range`, the primary first. */
  clusterIPs: RangeAllocator[];
  nodePorts: RangeAllocator;
}

function needsClusterIP(s: Service): boolean {
  return (s.spec?.type ?? 'ClusterIP') !== 'ExternalName' && s.spec?.clusterIP !== 'None';
}

function needsNodePorts(s: Service): boolean {
  const type = s.spec?.type ?? 'ClusterIP';
  return type === 'NodePort' || type === 'LoadBalancer';
}

/** What a service holds of the allocators. */
export function holdings(s: Service | undefined): { ips: string[]; ports: number[] } {
  if (!s) return { ips: [], ports: [] };
  const ips = needsClusterIP(s) ? clusterIPsOf(s).filter((ip) => isValidIP(ip).length === 0) : [];
  const ports = needsNodePorts(s) ? (s.spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p > 0) : [];
  return { ips, ports };
}

/** What a repair pass changed: values marked in use, leaked values released, values in use outside the ranges. */
export interface RepairReport {
  marked: string[];
  released: string[];
  outOfRange: string[];
}

/** The Service store. */
export class ServiceStore extends GenericStore {
  private readonly families: IPFamily[];

  constructor(
    definition: StoreDefinition,
    private readonly allocators: ServiceAllocators,
  ) {
    super(definition);
    this.families = allocators.clusterIPs.map((a) => a.range.family ?? 'IPv4');
  }

  private ipAllocator(ip: string): RangeAllocator | undefined {
    const family = ipFamilyOf(ip);
    return this.allocators.clusterIPs.find((a) => a.range.family === family);
  }

  /**
   * Gives `svc` what its type needs, reusing what `old` holds; returns what was newly allocated. Throws a 422
   * naming the field when a requested value cannot be had (and releases what it took before).
   */
  private async allocate(
    svc: Service,
    old: Service | undefined,
    dryRun: boolean,
  ): Promise<{ ips: string[]; ports: number[] }> {
    const taken = { ips: [] as string[], ports: [] as number[] };
    const held = holdings(old);
    const name = svc.metadata?.name ?? '';
    const familyErrors = defaultIPFamilies(svc, old, this.families);
    if (familyErrors.length > 0) throw invalid({ group: '', kind: 'Service' }, name, familyErrors);
    const reject = (
      path: FieldPath,
      value: unknown,
      reason: AllocationErrorReason,
      what: string,
      range: string,
    ): never => {
      const detail =
        reason === 'Allocated'
          ? `provided ${what} is already allocated`
          : reason === 'OutOfRange'
            ? `provided ${what} is not in the valid range. The range of valid ${what}s is ${range}`
            : `failed to allocate ${what === 'IP' ? 'an IP' : 'a port'}: range ${range} is full`;
      throw invalid({ group: '', kind: 'Service' }, name, [field.invalid(path, value ?? '', detail)]);
    };
    const fail = (path: FieldPath, value: unknown, err: unknown, what: string, range: string): never => {
      if (!isAllocationError(err)) throw err;
      return reject(path, value, err.reason, what, range);
    };
    try {
      const spec = svc.spec ?? {};
      if (needsClusterIP(svc)) {
        const wantedIPs = clusterIPsOf(svc);
        const ips: string[] = [];
        for (const [i, family] of (spec.ipFamilies ?? []).entries()) {
          const a = this.allocators.clusterIPs.find((x) => x.range.family === family);
          if (!a) continue; // defaultIPFamilies reported it
          const at = new FieldPath('spec', 'clusterIPs').index(i);
          const wanted = wantedIPs[i] || undefined;
          if ((wanted && held.ips.includes(wanted)) || (wanted && isValidIP(wanted).length > 0)) {
            // Kept from the old object, or not an address at all (validation reports it).
            ips.push(wanted);
          } else if (dryRun) {
            if (wanted && a.range.offsetOf(wanted) < 0) reject(at, wanted, 'OutOfRange', 'IP', a.range.text);
            if (wanted) ips.push(wanted);
          } else {
            try {
              const ip = (await a.allocate(wanted)) as string;
              taken.ips.push(ip);
              ips.push(ip);
            } catch (err) {
              fail(at, wanted, err, 'IP', a.range.text);
            }
          }
        }
        if (ips.length > 0) {
          spec.clusterIPs = ips;
          spec.clusterIP = ips[0] as string;
        }
      }
      if (needsNodePorts(svc) && !dryRun) {
        const a = this.allocators.nodePorts;
        for (const [i, port] of (spec.ports ?? []).entries()) {
          const wanted = port.nodePort || undefined;
          if (wanted && held.ports.includes(wanted)) continue;
          try {
            const p = (await a.allocate(wanted)) as number;
            taken.ports.push(p);
            port.nodePort = p;
          } catch (err) {
            fail(new FieldPath('spec', 'ports').index(i).child('nodePort'), wanted, err, 'port', a.range.text);
          }
        }
      }
    } catch (err) {
      await this.release(taken.ips, taken.ports);
      throw err;
    }
    return taken;
  }

  private async release(ips: readonly string[], ports: readonly number[]): Promise<void> {
    for (const ip of ips) await this.ipAllocator(ip)?.release(ip);
    for (const p of ports) await this.allocators.nodePorts.release(p);
  }

  /** Leak counts of the repair loop, per allocator. */
  private readonly leaks = new Map<RangeAllocator, Map<number, number>>();

  /**
   * One pass of the repair loops of Kubernetes' bootstrap controller (`repairip`, `repairnodeport`): the allocation
   * bitmaps are made to agree with the services stored, so an address or port leaked by a crash between allocation
   * and write comes back, and one in use but lost from a bitmap is marked again. Returns what it changed.
   */
  async repairAllocations(ctx: RequestContext): Promise<RepairReport> {
    const services = (await this.list({ ...ctx, namespace: '' }, {})).items as Service[];
    const report: RepairReport = { marked: [], released: [], outOfRange: [] };
    const byAllocator = new Map<RangeAllocator, (string | number)[]>(
      [...this.allocators.clusterIPs, this.allocators.nodePorts].map((a) => [a, []]),
    );
    for (const svc of services) {
      const held = holdings(svc);
      const where = `${svc.metadata?.namespace}/${svc.metadata?.name}`;
      for (const ip of held.ips) {
        const a = this.ipAllocator(ip);
        if (a && a.range.offsetOf(ip) >= 0) byAllocator.get(a)!.push(ip);
        else report.outOfRange.push(`${where}: ${ip}`);
      }
      for (const port of held.ports) {
        if (this.allocators.nodePorts.range.offsetOf(port) >= 0) byAllocator.get(this.allocators.nodePorts)!.push(port);
        else report.outOfRange.push(`${where}: ${port}`);
      }
    }
    for (const [a, values] of byAllocator) {
      let leaks = this.leaks.get(a);
      if (!leaks) this.leaks.set(a, (leaks = new Map()));
      const r = await a.repair(values, leaks);
      report.marked.push(...r.marked.map(String));
      report.released.push(...r.released.map(String));
      report.outOfRange.push(...r.outOfRange.map(String));
    }
    return report;
  }

  override async create(
    ctx: RequestContext,
    obj: ApiObject,
    validate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<ApiObject> {
    const taken = await this.allocate(obj as Service, undefined, o.dryRun);
    try {
      return await super.create(ctx, obj, validate, o);
    } catch (err) {
      await this.release(taken.ips, taken.ports);
      throw err;
    }
  }

  override async update(
    ctx: RequestContext,
    info: UpdatedObjectInfo,
    validateCreate: ValidateObjectFunc | undefined,
    validateUpdate: ValidateObjectFunc | undefined,
    o: WriteOptions,
  ): Promise<{ object: ApiObject; created: boolean }> {
    // Allocations of every attempt (storage retries the update on conflicts), and the last old object seen.
    const taken = { ips: [] as string[], ports: [] as number[] };
    let old: Service | undefined;
    let result: { object: ApiObject; created: boolean };
    try {
      result = await super.update(
        ctx,
        {
          name: info.name,
          updatedObject: async (c, current) => {
            const next = (await info.updatedObject(c, current)) as Service;
            old = current as Service | undefined;
            // Keep the cluster IPs the client left out (as the strategy does), before allocating.
            if (old?.spec?.clusterIP && next.spec && !next.spec.clusterIP && needsClusterIP(next)) {
              next.spec.clusterIP = old.spec.clusterIP;
              next.spec.clusterIPs = old.spec.clusterIPs ?? [old.spec.clusterIP];
            } else if (
              next.spec?.clusterIP &&
              !next.spec.clusterIPs?.length &&
              old?.spec?.clusterIPs?.[0] === next.spec.clusterIP
            ) {
              next.spec.clusterIPs = [...old.spec.clusterIPs];
            }
            const got = await this.allocate(next, old, o.dryRun);
            taken.ips.push(...got.ips);
            taken.ports.push(...got.ports);
            return next;
          },
        },
        validateCreate,
        validateUpdate,
        o,
      );
    } catch (err) {
      await this.release(taken.ips, taken.ports);
      throw err;
    }
    // An update that removed the last finalizer of a terminating service removed the service: it holds nothing.
    const m = result.object.metadata;
    const removed =
      !o.dryRun && !!m?.deletionTimestamp && !m.finalizers?.length && !(m.deletionGracePeriodSeconds ?? 0);
    const now = removed ? { ips: [] as string[], ports: [] as number[] } : holdings(result.object as Service);
    const before = holdings(old);
    await this.release(
      [...taken.ips, ...before.ips].filter((ip) => !now.ips.includes(ip)),
      [...taken.ports, ...before.ports].filter((p) => !now.ports.includes(p)),
    );
    return result;
  }

  override async delete(
    ctx: RequestContext,
    name: string,
    validate: ValidateObjectFunc | undefined,
    o: DeleteRequest,
  ): Promise<DeleteResult> {
    const result = await super.delete(ctx, name, validate, o);
    if (result.deleted && !o.dryRun) {
      const held = holdings(result.object as Service);
      await this.release(held.ips, held.ports);
    }
    return result;
  }
}
