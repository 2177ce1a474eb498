/**
 * The node IPAM options of Document 2 and how they combine (model: Kubernetes 1.21
 * `cmd/kube-controller-manager/app/core.go` `startNodeIpamController`, `setNodeCIDRMaskSizes`,
 * `processCIDRs`): one cluster CIDR, or two of different families for dual stack; one node mask size per family,
 * from `--node-cidr-mask-size` (single stack only) or the per-family flags; the service range kept out.
 */
import { boolFlag, type FlagDef, INT32, intFlag, stringFlag } from '@platform/common';

import { ControllerOptions } from '../../controller';
import { cidrSetProblem, cidrsOverlap, formatCIDR, type ParsedCIDR, parseCIDRNumbers } from './cidr-set';

/** The allocator this controller manager has. */
export const RANGE_ALLOCATOR = 'RangeAllocator';
/** Kubernetes' allocator that asks the cloud; there is no cloud here. */
export const CLOUD_ALLOCATOR = 'CloudAllocator';

/** The values of the node IPAM options, as given (unset mask sizes are undefined). */
export interface NodeIPAMConfig {
  allocateNodeCIDRs: boolean;
  /** `--cluster-cidr`, comma-separated: one CIDR, or an IPv4 and an IPv6 one. */
  clusterCIDR: string;
  /** `--service-cluster-ip-range`, comma-separated, at most two. */
  serviceClusterIPRange: string;
  nodeCIDRMaskSize?: number;
  nodeCIDRMaskSizeIPv4?: number;
  nodeCIDRMaskSizeIPv6?: number;
  cidrAllocatorType: string;
}

/** What the allocator does: one set of node CIDRs per cluster CIDR, in the flag's order, and ranges kept out. */
export interface NodeIPAMPlan {
  sets: { cluster: ParsedCIDR; maskSize: number }[];
  /** The service ranges (each is occupied in the set of its family, where they overlap). */
  services: ParsedCIDR[];
}

const DEFAULT_MASK = { IPv4: 24, IPv6: 64 } as const;

function splitList(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

function parseList(flag: string, text: string, errs: string[]): ParsedCIDR[] {
  const out: ParsedCIDR[] = [];
  for (const item of splitList(text)) {
    const c = parseCIDRNumbers(item);
    if (c) out.push(c);
    else errs.push(`--${flag}: ${JSON.stringify(item)} is not a valid CIDR`);
  }
  return out;
}

/** The node mask size of each family, or the problem (as `setNodeCIDRMaskSizes` words it, naming the flags). */
function maskSizes(c: NodeIPAMConfig, clusters: ParsedCIDR[], errs: string[]): Record<'IPv4' | 'IPv6', number> {
  const sizes: Record<'IPv4' | 'IPv6', number> = { ...DEFAULT_MASK };
  const v4 = c.nodeCIDRMaskSizeIPv4;
  const v6 = c.nodeCIDRMaskSizeIPv6;
  if (clusters.length > 1) {
    if (c.nodeCIDRMaskSize !== undefined)
      errs.push(
        '--node-cidr-mask-size is not allowed with dual-stack clusters: use --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6',
      );
    if (v4 !== undefined) sizes.IPv4 = v4;
    if (v6 !== undefined) sizes.IPv6 = v6;
    return sizes;
  }
  const isIPv6 = clusters[0]?.family === 'IPv6';
  if (c.nodeCIDRMaskSize !== undefined) {
    if (v4 !== undefined || v6 !== undefined)
      errs.push(
        '--node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 are not allowed if --node-cidr-mask-size is set. For dual-stack clusters please unset it and use IPFamily specific flags',
      );
    return { IPv4: c.nodeCIDRMaskSize, IPv6: c.nodeCIDRMaskSize };
  }
  if (v4 !== undefined) {
    if (isIPv6) errs.push('--node-cidr-mask-size-ipv4 is not allowed for a single-stack IPv6 cluster');
    sizes.IPv4 = v4;
  }
  if (v6 !== undefined) {
    if (!isIPv6) errs.push('--node-cidr-mask-size-ipv6 is not allowed for a single-stack IPv4 cluster');
    sizes.IPv6 = v6;
  }
  return sizes;
}

/** The flag that set the mask size of `family` (for error messages). */
function maskFlag(c: NodeIPAMConfig, family: 'IPv4' | 'IPv6'): string {
  if (c.nodeCIDRMaskSize !== undefined) return '--node-cidr-mask-size';
  const own = family === 'IPv4' ? c.nodeCIDRMaskSizeIPv4 : c.nodeCIDRMaskSizeIPv6;
  return own !== undefined
    ? `--node-cidr-mask-size-${family.toLowerCase()}`
    : `the default node CIDR mask size of ${family}`;
}

/**
 * Checks the options and works out the allocation. Returns the plan (undefined when `--allocate-node-cidrs` is
 * false: nothing is allocated) or every problem found, each naming its flag.
 */
export function planNodeIPAM(c: NodeIPAMConfig): { plan?: NodeIPAMPlan; errors: string[] } {
  const errs: string[] = [];
  if (c.cidrAllocatorType === CLOUD_ALLOCATOR)
    errs.push(
      `--cidr-allocator-type=${CLOUD_ALLOCATOR} is not supported: this controller manager has no cloud provider; use ${RANGE_ALLOCATOR}`,
    );
  else if (c.cidrAllocatorType !== RANGE_ALLOCATOR)
    errs.push(
      `--cidr-allocator-type: unknown allocator ${JSON.stringify(c.cidrAllocatorType)} (supported: ${RANGE_ALLOCATOR})`,
    );
  const clusters = parseList('cluster-cidr', c.clusterCIDR, errs);
  const services = parseList('service-cluster-ip-range', c.serviceClusterIPRange, errs);
  if (splitList(c.serviceClusterIPRange).length > 2)
    errs.push('--service-cluster-ip-range: at most two CIDRs (one per IP family) may be given');
  for (const [flag, v] of [
    ['node-cidr-mask-size', c.nodeCIDRMaskSize],
    ['node-cidr-mask-size-ipv4', c.nodeCIDRMaskSizeIPv4],
    ['node-cidr-mask-size-ipv6', c.nodeCIDRMaskSizeIPv6],
  ] as const)
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) errs.push(`--${flag} must be positive, got ${v}`);
  if (!c.allocateNodeCIDRs) return { errors: errs };
  const n = splitList(c.clusterCIDR).length;
  if (n === 0) errs.push('--cluster-cidr is required when --allocate-node-cidrs is true');
  if (n > 2) errs.push('--cluster-cidr: at most two CIDRs (one IPv4 and one IPv6, for dual stack) may be given');
  if (clusters.length === 2 && clusters[0]!.family === clusters[1]!.family)
    errs.push('--cluster-cidr: a dual-stack cluster needs one IPv4 and one IPv6 CIDR');
  const sizes = maskSizes(c, clusters, errs);
  const sets: NodeIPAMPlan['sets'] = [];
  for (const cluster of clusters) {
    const maskSize = sizes[cluster.family];
    const problem = cidrSetProblem(cluster, maskSize);
    if (problem) errs.push(`${maskFlag(c, cluster.family)} (${maskSize}) and --cluster-cidr: ${problem}`);
    else sets.push({ cluster, maskSize });
  }
  for (const s of services)
    if (clusters.some((cl) => cl.family === s.family && s.prefix <= cl.prefix && cidrsOverlap(s, cl)))
      errs.push(
        `--service-cluster-ip-range ${formatCIDR(s)} covers the whole cluster CIDR of its family: no pod CIDR would be left`,
      );
  return errs.length ? { errors: errs } : { plan: { sets, services }, errors: [] };
}

/** `--allocate-node-cidrs`, `--cluster-cidr`, `--service-cluster-ip-range`, `--node-cidr-mask-size*`, `--cidr-allocator-type`. */
export class NodeIPAMOptions extends ControllerOptions<NodeIPAMConfig> {
  private readonly c: NodeIPAMConfig = {
    allocateNodeCIDRs: false,
    clusterCIDR: '',
    serviceClusterIPRange: '',
    cidrAllocatorType: RANGE_ALLOCATOR,
  };

  constructor() {
    super('Node IPAM controller');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.c;
    const int32 = { range: INT32, type: 'int32' } as const;
    return [
      boolFlag(
        'allocate-node-cidrs',
        'Should CIDRs for Pods be allocated and set on the nodes (spec.podCIDR, spec.podCIDRs).',
        c.allocateNodeCIDRs,
        (v) => (c.allocateNodeCIDRs = v),
      ),
      stringFlag(
        'cluster-cidr',
        'CIDR Range for Pods in cluster: one CIDR, or an IPv4 and an IPv6 CIDR separated by a comma (dual stack). Requires --allocate-node-cidrs to be true.',
        c.clusterCIDR,
        (v) => (c.clusterCIDR = v),
      ),
      stringFlag(
        'service-cluster-ip-range',
        'CIDR Range for Services in cluster (comma-separated, at most one per IP family): no node gets a pod CIDR that overlaps it. Requires --allocate-node-cidrs to be true.',
        c.serviceClusterIPRange,
        (v) => (c.serviceClusterIPRange = v),
      ),
      intFlag(
        'node-cidr-mask-size',
        'Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.',
        undefined,
        (v) => (c.nodeCIDRMaskSize = v),
        int32,
      ),
      intFlag(
        'node-cidr-mask-size-ipv4',
        'Mask size for IPv4 node cidr in dual-stack cluster. Default is 24.',
        undefined,
        (v) => (c.nodeCIDRMaskSizeIPv4 = v),
        { ...int32, defaultText: '24' },
      ),
      intFlag(
        'node-cidr-mask-size-ipv6',
        'Mask size for IPv6 node cidr in dual-stack cluster. Default is 64.',
        undefined,
        (v) => (c.nodeCIDRMaskSizeIPv6 = v),
        { ...int32, defaultText: '64' },
      ),
      stringFlag(
        'cidr-allocator-type',
        `Type of CIDR allocator to use (${RANGE_ALLOCATOR}; ${CLOUD_ALLOCATOR} needs a cloud provider, which this controller manager does not have).`,
        c.cidrAllocatorType,
        (v) => (c.cidrAllocatorType = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return planNodeIPAM(this.c).errors.map((m) => new Error(m));
  }

  values(): NodeIPAMConfig {
    return { ...this.c };
  }
}
