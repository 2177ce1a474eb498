/**
 * The Service store (model: Kubernetes 1.21 `pkg/registry/core/service/storage/rest.go`): the generic store, with
 * cluster IPs and node ports allocated before a service is written and released when it goes.
 *
 * - A service that is not headless (`clusterIP: None`) and not ExternalName gets a cluster IP: the one it asks
 *   for, when free and in `--service-cluster-ip-range` (422 otherwise), or a free one.
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
import { type AllocationErrorReason, isAllocationError, type RangeAllocator } from './allocator';

/** The allocators a service store uses. */
export interface ServiceAllocators {
  clusterIPs: RangeAllocator;
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
function holdings(s: Service | undefined): { ip?: string; ports: number[] } {
  if (!s) return { ports: [] };
  const ip = needsClusterIP(s) && s.spec?.clusterIP ? s.spec.clusterIP : undefined;
  const ports = needsNodePorts(s) ? (s.spec?.ports ?? []).map((p) => p.nodePort ?? 0).filter((p) => p > 0) : [];
  return { ...(ip ? { ip } : {}), ports };
}

/** The Service store. */
export class ServiceStore extends GenericStore {
  constructor(
    definition: StoreDefinition,
    private readonly allocators: ServiceAllocators,
  ) {
    super(definition);
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
        const a = this.allocators.clusterIPs;
        const wanted = spec.clusterIP || undefined;
        if ((wanted && wanted === held.ip) || (wanted && isValidIP(wanted).length > 0)) {
          // Kept from the old object, or not an address at all (validation reports it).
        } else if (dryRun) {
          if (wanted && a.range.offsetOf(wanted) < 0) {
            reject(new FieldPath('spec', 'clusterIPs').index(0), wanted, 'OutOfRange', 'IP', a.range.text);
          }
        } else {
          try {
            const ip = (await a.allocate(wanted)) as string;
            taken.ips.push(ip);
            spec.clusterIP = ip;
            spec.clusterIPs = [ip];
          } catch (err) {
            fail(new FieldPath('spec', 'clusterIPs').index(0), wanted, err, 'IP', a.range.text);
          }
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
    for (const ip of ips) await this.allocators.clusterIPs.release(ip);
    for (const p of ports) await this.allocators.nodePorts.release(p);
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
            // Keep the cluster IP the client left out (as the strategy does), before allocating.
            if (old?.spec?.clusterIP && next.spec && !next.spec.clusterIP && needsClusterIP(next)) {
              next.spec.clusterIP = old.spec.clusterIP;
              next.spec.clusterIPs = old.spec.clusterIPs ?? [old.spec.clusterIP];
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
    const now = removed ? { ports: [] as number[] } : holdings(result.object as Service);
    const before = holdings(old);
    await this.release(
      [...taken.ips, ...(before.ip ? [before.ip] : [])].filter((ip) => ip !== now.ip),
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
      await this.release(held.ip ? [held.ip] : [], held.ports);
    }
    return result;
  }
}
