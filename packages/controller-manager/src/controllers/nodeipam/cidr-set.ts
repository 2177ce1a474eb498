/**
 * The pod CIDRs of one cluster CIDR (model: Kubernetes 1.21 `pkg/controller/nodeipam/ipam/cidrset/cidr_set.go`):
 * the cluster CIDR cut into node CIDRs of one mask size, a bitmap of those handed out, and the next candidate to
 * try (allocation goes round the range, so a released CIDR is not handed out again at once). Pure and synchronous:
 * the controller allocates and occupies between its awaits.
 */
import { parseIP } from '@platform/api';

/** Kubernetes' `clusterSubnetMaxDiff`: at most 2^16 node CIDRs per cluster CIDR. */
export const MAX_NODE_CIDR_BITS = 16;

/** An IPv4 or IPv6 CIDR as numbers: its first address and prefix length, in the family's width. */
export interface ParsedCIDR {
  family: 'IPv4' | 'IPv6';
  /** 32 or 128. */
  width: number;
  /** The network address (host bits cleared). */
  base: bigint;
  prefix: number;
}

/** Parses `10.0.0.0/8` or `fd00::/48` (host bits are cleared, as Go's `net.ParseCIDR` does); undefined if not one. */
export function parseCIDRNumbers(cidr: string): ParsedCIDR | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  if (!m) return undefined;
  const bytes = parseIP(m[1]!);
  if (!bytes) return undefined;
  const family = m[1]!.includes(':') ? 'IPv6' : 'IPv4';
  const width = family === 'IPv4' ? 32 : 128;
  const prefix = Number(m[2]);
  if (prefix > width) return undefined;
  let n = 0n;
  for (const b of family === 'IPv4' ? bytes.slice(12) : bytes) n = (n << 8n) | BigInt(b);
  const host = BigInt(width - prefix);
  return { family, width, base: (n >> host) << host, prefix };
}

/** The text of a parsed CIDR: dotted IPv4, or IPv6 in RFC 5952's canonical form (as Go prints it). */
export function formatCIDR(c: ParsedCIDR): string {
  if (c.family === 'IPv4')
    return `${[24n, 16n, 8n, 0n].map((s) => String((c.base >> s) & 0xffn)).join('.')}/${c.prefix}`;
  const groups = Array.from({ length: 8 }, (_, i) => Number((c.base >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups (the first of equals) is written `::`.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (g: number[]): string => g.map((x) => x.toString(16)).join(':');
  const text = best < 0 ? hex(groups) : `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
  return `${text}/${c.prefix}`;
}

/** Whether two CIDRs of one family share an address. */
export function cidrsOverlap(a: ParsedCIDR, b: ParsedCIDR): boolean {
  if (a.family !== b.family) return false;
  const p = BigInt(a.width - Math.min(a.prefix, b.prefix));
  return a.base >> p === b.base >> p;
}

/** Why a CIDR set cannot be made from a cluster CIDR and a node mask size (the caller names the flags). */
export function cidrSetProblem(cluster: ParsedCIDR, nodeMaskSize: number): string | undefined {
  if (!Number.isInteger(nodeMaskSize) || nodeMaskSize < 1 || nodeMaskSize > cluster.width)
    return `the node CIDR mask size ${nodeMaskSize} is not a valid ${cluster.family} prefix length (1 to ${cluster.width})`;
  if (nodeMaskSize < cluster.prefix)
    return `the node CIDR mask size /${nodeMaskSize} is larger than the cluster CIDR ${formatCIDR(cluster)} it is cut from`;
  if (nodeMaskSize - cluster.prefix > MAX_NODE_CIDR_BITS)
    return `the node CIDR mask size /${nodeMaskSize} cuts ${formatCIDR(cluster)} into more than 2^${MAX_NODE_CIDR_BITS} node CIDRs; use a mask size of at most /${cluster.prefix + MAX_NODE_CIDR_BITS}`;
  return undefined;
}

/** Thrown by {@link CIDRSet.allocateNext} when every node CIDR is taken (Kubernetes' `ErrCIDRRangeNoCIDRsRemaining`). */
export class CIDRRangeFullError extends Error {
  override readonly name = 'CIDRRangeFullError';
}

/** The node CIDRs of one cluster CIDR. */
export class CIDRSet {
  readonly cluster: ParsedCIDR;
  /** How many node CIDRs the cluster CIDR holds. */
  readonly size: number;
  private readonly used: Uint8Array;
  private allocated = 0;
  private nextCandidate = 0;
  private readonly hostBits: bigint;

  /** Throws when {@link cidrSetProblem} names a problem. */
  constructor(
    cluster: ParsedCIDR,
    readonly nodeMaskSize: number,
  ) {
    const problem = cidrSetProblem(cluster, nodeMaskSize);
    if (problem) throw new Error(problem);
    this.cluster = cluster;
    this.size = 2 ** (nodeMaskSize - cluster.prefix);
    this.used = new Uint8Array(this.size);
    this.hostBits = BigInt(cluster.width - nodeMaskSize);
  }

  /** Node CIDRs handed out or occupied. */
  get count(): number {
    return this.allocated;
  }

  /** The next free node CIDR, marked used; throws {@link CIDRRangeFullError} when none is left. */
  allocateNext(): string {
    if (this.allocated === this.size)
      throw new CIDRRangeFullError(`no node CIDR of /${this.nodeMaskSize} is left in ${formatCIDR(this.cluster)}`);
    for (let i = 0; i < this.size; i++) {
      const idx = (this.nextCandidate + i) % this.size;
      if (this.used[idx]) continue;
      this.used[idx] = 1;
      this.allocated++;
      this.nextCandidate = (idx + 1) % this.size;
      return this.cidrAt(idx);
    }
    throw new CIDRRangeFullError(`no node CIDR of /${this.nodeMaskSize} is left in ${formatCIDR(this.cluster)}`);
  }

  /**
   * Marks every node CIDR that `cidr` covers as used (a node's existing CIDR, the service range). A CIDR larger
   * than the cluster CIDR occupies all of it. Returns false, changing nothing, when they do not overlap.
   */
  occupy(cidr: ParsedCIDR): boolean {
    const r = this.indices(cidr);
    if (!r) return false;
    for (let i = r.begin; i <= r.end; i++) {
      if (!this.used[i]) this.allocated++;
      this.used[i] = 1;
    }
    return true;
  }

  /** Frees the node CIDRs `cidr` covers (a deleted node's). Returns false when it is outside the cluster CIDR. */
  release(cidr: ParsedCIDR): boolean {
    const r = this.indices(cidr);
    if (!r) return false;
    for (let i = r.begin; i <= r.end; i++) {
      if (this.used[i]) this.allocated--;
      this.used[i] = 0;
    }
    return true;
  }

  /** Whether `cidr` lies inside the cluster CIDR (the set it belongs to, for a node's existing CIDRs). */
  contains(cidr: ParsedCIDR): boolean {
    return (
      cidr.family === this.cluster.family && cidr.prefix >= this.cluster.prefix && cidrsOverlap(cidr, this.cluster)
    );
  }

  private cidrAt(idx: number): string {
    return formatCIDR({
      ...this.cluster,
      base: this.cluster.base + (BigInt(idx) << this.hostBits),
      prefix: this.nodeMaskSize,
    });
  }

  /** The first and last node CIDR indices `cidr` covers, clipped to the cluster CIDR. */
  private indices(cidr: ParsedCIDR): { begin: number; end: number } | undefined {
    if (!cidrsOverlap(cidr, this.cluster)) return undefined;
    if (cidr.prefix <= this.cluster.prefix) return { begin: 0, end: this.size - 1 };
    const width = BigInt(this.cluster.width);
    const last = cidr.base + (1n << (width - BigInt(cidr.prefix))) - 1n;
    const begin = Number((cidr.base - this.cluster.base) >> this.hostBits);
    const end = Number((last - this.cluster.base) >> this.hostBits);
    return { begin, end };
  }
}
