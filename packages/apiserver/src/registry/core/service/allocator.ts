/**
 * Cluster IP and node port allocation (model: Kubernetes 1.21 `pkg/registry/core/service/ipallocator`,
 * `portallocator` and `allocator/storage`): each range is a bitmap persisted in storage as a `RangeAllocation`
 * object (`<prefix>/ranges/serviceips`, `<prefix>/ranges/servicenodeports`), changed only by compare-and-swap, so
 * that API servers sharing a store never hand out the same address or port twice.
 *
 * IP ranges are IPv4 or IPv6; a dual-stack cluster has one allocator of each family (`serviceips` for the primary
 * range, `secondaryserviceips` for the other, as in Kubernetes).
 */
import { type ApiObject, parseIP } from '@platform/api';

import { isStorageError } from '../../../storage/errors';
import { type ObjectStorage } from '../../generic/storage-interface';

/** The errors of an allocation: the value is taken, outside the range, or the range is full. */
export type AllocationErrorReason = 'Allocated' | 'OutOfRange' | 'Full';

const BRAND = Symbol.for('platform.apiserver.AllocationError');

/** Why a value could not be allocated. */
export class AllocationError extends Error {
  readonly [BRAND] = true;
  constructor(
    readonly reason: AllocationErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'AllocationError';
  }
}

/** Brand check of AllocationError. */
export function isAllocationError(err: unknown): err is AllocationError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
}

/** The stored form of a range: Kubernetes' core RangeAllocation. */
interface RangeAllocation extends ApiObject {
  range?: string;
  /** The bitmap, base64: bit i set when offset i is allocated. */
  data?: string;
}

/** A range of values, numbered by offset. */
export interface Range {
  /** What the range is, as stored and in errors (`10.0.0.0/24`, `30000-32767`). */
  readonly text: string;
  readonly size: number;
  /** The offset of a value, or -1 when it is outside the range. */
  offsetOf(value: string | number): number;
  valueAt(offset: number): string | number;
  /** The address family of an IP range. */
  readonly family?: IPFamily;
}

export type IPFamily = 'IPv4' | 'IPv6';

/** An address as a 128-bit number (IPv4 as its IPv4-mapped form), and its family; undefined when it is not one. */
function ipToBig(ip: string): { n: bigint; family: IPFamily } | undefined {
  const bytes = parseIP(ip);
  if (!bytes) return undefined;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return { n, family: ip.includes(':') ? 'IPv6' : 'IPv4' };
}

const V4_MAPPED = 0xffffn << 32n;

/** The text of an address: dotted IPv4, or IPv6 in the canonical form of RFC 5952 (as Go prints it). */
function bigToIP(n: bigint, family: IPFamily): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups (the first of equals) becomes `::`.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (g: number[]): string => g.map((x) => x.toString(16)).join(':');
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/** The largest service ranges Kubernetes accepts: 2^20 addresses (an IPv4 /12, an IPv6 /108). */
const MAX_RANGE_BITS = 20;

/**
 * The addresses of an IPv4 or IPv6 CIDR that services get, as Kubernetes allocates them: without the network
 * address, and for IPv4 without the broadcast address.
 */
export function cidrRange(cidr: string): Range {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  const ip = m ? ipToBig(m[1] as string) : undefined;
  const bits = m ? Number(m[2]) : NaN;
  const width = ip?.family === 'IPv6' ? 128 : 32;
  if (!ip || !(bits >= 1 && bits <= width - 2)) {
    throw new Error(
      `invalid service cluster IP range ${JSON.stringify(cidr)}: expected an IPv4 CIDR of /1 to /30 or an IPv6 CIDR of /1 to /126`,
    );
  }
  const hostBits = width - bits;
  if (hostBits > MAX_RANGE_BITS) {
    throw new Error(
      `service cluster IP range ${JSON.stringify(cidr)} is too large; for ${width}-bit addresses, the mask must be >= ${width - MAX_RANGE_BITS}`,
    );
  }
  const family = ip.family;
  const block = 1n << BigInt(hostBits);
  const network = ip.n - (ip.n % block);
  const size = Number(block) - (family === 'IPv4' ? 2 : 1);
  const shown = family === 'IPv4' ? network - V4_MAPPED : network;
  return {
    text: `${bigToIP(shown, family)}/${bits}`,
    size,
    family,
    offsetOf(value) {
      const v = typeof value === 'string' ? ipToBig(value) : undefined;
      if (!v || v.family !== family) return -1;
      const off = v.n - network - 1n;
      return off >= 0n && off < BigInt(size) ? Number(off) : -1;
    },
    valueAt: (offset) => bigToIP(shown + 1n + BigInt(offset), family),
  };
}

/** The family of an address, or undefined when it is not one. */
export function ipFamilyOf(ip: string): IPFamily | undefined {
  return ipToBig(ip)?.family;
}

/** The ports `base`-`base+size-1` of a port range such as `30000-32767`. */
export function portRange(text: string): Range {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  const lo = m ? Number(m[1]) : NaN;
  const hi = m ? Number(m[2]) : NaN;
  if (!(lo >= 1 && hi <= 65535 && lo <= hi))
    throw new Error(`invalid service node port range ${JSON.stringify(text)}: expected <low>-<high> within 1-65535`);
  return {
    text: `${lo}-${hi}`,
    size: hi - lo + 1,
    offsetOf: (value) =>
      typeof value === 'number' && Number.isInteger(value) && value >= lo && value <= hi ? value - lo : -1,
    valueAt: (offset) => lo + offset,
  };
}

/**
 * The tail of the queue of changes of each bitmap key in this process. Changes of one key run one after the other
 * (as Kubernetes' allocator locks in-process), so that compare-and-swap conflicts happen only between processes:
 * concurrent callers of one API server never retry against each other.
 */
const queues = new WeakMap<ObjectStorage, Map<string, Promise<unknown>>>();

function serialized<T>(storage: ObjectStorage, key: string, fn: () => Promise<T>): Promise<T> {
  let byKey = queues.get(storage);
  if (!byKey) queues.set(storage, (byKey = new Map()));
  const previous = byKey.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => undefined);
  byKey.set(key, tail);
  void tail.then(() => {
    if (byKey.get(key) === tail) byKey.delete(key);
  });
  return run;
}

/** A range allocator whose bitmap lives in storage. */
export class RangeAllocator {
  /**
   * @param storage storage of any codec able to hold a RangeAllocation (JSON)
   * @param key the storage key of the bitmap
   * @param random a random number in [0, 1) (injectable for tests): where the search for a free value starts
   */
  constructor(
    readonly range: Range,
    private readonly storage: ObjectStorage,
    private readonly key: string,
    private readonly name: string,
    private readonly random: () => number = Math.random,
  ) {}

  private change(fn: (bits: Uint8Array) => number): Promise<number> {
    return serialized(this.storage, this.key, () => this.changeNow(fn));
  }

  private async changeNow(fn: (bits: Uint8Array) => number): Promise<number> {
    let result = -1;
    await this.storage.guaranteedUpdate(
      this.key,
      (current) => {
        const stored = current as RangeAllocation;
        const bits = new Uint8Array(Math.ceil(this.range.size / 8));
        // A range changed by configuration keeps nothing of the old bitmap: Kubernetes' repair loop rebuilds it.
        if (stored.range === this.range.text && stored.data)
          bits.set(Buffer.from(stored.data, 'base64').subarray(0, bits.length));
        result = fn(bits);
        return {
          apiVersion: 'v1',
          kind: 'RangeAllocation',
          metadata: { name: this.name },
          range: this.range.text,
          data: Buffer.from(bits).toString('base64'),
        } as RangeAllocation;
      },
      { ignoreNotFound: true },
    );
    return result;
  }

  /** Allocates `value`, or any free value when it is undefined; throws an AllocationError. */
  async allocate(value?: string | number): Promise<string | number> {
    const { range } = this;
    let wanted = -1;
    if (value !== undefined) {
      wanted = range.offsetOf(value);
      if (wanted < 0) throw new AllocationError('OutOfRange', `provided value is not in the valid range ${range.text}`);
    }
    const offset = await this.change((bits) => {
      const isSet = (i: number): boolean => ((bits[i >> 3] as number) & (1 << (i & 7))) !== 0;
      let chosen = wanted;
      if (chosen >= 0) {
        if (isSet(chosen)) throw new AllocationError('Allocated', 'provided value is already allocated');
      } else {
        const start = Math.floor(this.random() * range.size);
        for (let k = 0; k < range.size && chosen < 0; k++) {
          const i = (start + k) % range.size;
          if (!isSet(i)) chosen = i;
        }
        if (chosen < 0) throw new AllocationError('Full', `range ${range.text} is full`);
      }
      bits[chosen >> 3] = (bits[chosen >> 3] as number) | (1 << (chosen & 7));
      return chosen;
    });
    return range.valueAt(offset);
  }

  /** Releases a value; values outside the range or not allocated are ignored. */
  async release(value: string | number): Promise<void> {
    const offset = this.range.offsetOf(value);
    if (offset < 0) return;
    await this.change((bits) => {
      bits[offset >> 3] = (bits[offset >> 3] as number) & ~(1 << (offset & 7));
      return offset;
    });
  }

  /**
   * Makes the bitmap agree with the values in use (the repair loop of Kubernetes' `repair.go`): a value in use but
   * not marked is marked; a value marked but not in use is released once it has been seen unused `leakThreshold`
   * times in a row (`leaks` keeps the counts between runs), since an allocation whose object is not written yet
   * looks unused for a moment. A range changed by configuration is rebuilt from the values in use. Values in use
   * outside the range are reported, never marked.
   */
  async repair(
    inUse: Iterable<string | number>,
    leaks: Map<number, number>,
    leakThreshold = 3,
  ): Promise<{ marked: (string | number)[]; released: (string | number)[]; outOfRange: (string | number)[] }> {
    const { range } = this;
    const used = new Set<number>();
    const outOfRange: (string | number)[] = [];
    for (const v of inUse) {
      const offset = range.offsetOf(v);
      if (offset < 0) outOfRange.push(v);
      else used.add(offset);
    }
    const marked: (string | number)[] = [];
    const released: (string | number)[] = [];
    await this.change((bits) => {
      marked.length = 0;
      released.length = 0;
      for (let i = 0; i < range.size; i++) {
        const byte = bits[i >> 3] as number;
        const mask = 1 << (i & 7);
        const set = (byte & mask) !== 0;
        if (used.has(i)) {
          leaks.delete(i);
          if (!set) {
            bits[i >> 3] = byte | mask;
            marked.push(range.valueAt(i));
          }
        } else if (set) {
          const seen = (leaks.get(i) ?? 0) + 1;
          if (seen >= leakThreshold) {
            bits[i >> 3] = byte & ~mask;
            leaks.delete(i);
            released.push(range.valueAt(i));
          } else {
            leaks.set(i, seen);
          }
        } else {
          leaks.delete(i);
        }
      }
      return 0;
    });
    return { marked, released, outOfRange };
  }

  /** Whether a value is allocated now. */
  async has(value: string | number): Promise<boolean> {
    const offset = this.range.offsetOf(value);
    if (offset < 0) return false;
    try {
      const stored = (await this.storage.get(this.key)) as RangeAllocation;
      if (stored.range !== this.range.text || !stored.data) return false;
      const bits = Buffer.from(stored.data, 'base64');
      return ((bits[offset >> 3] ?? 0) & (1 << (offset & 7))) !== 0;
    } catch (err) {
      if (isStorageError(err, 'KeyNotFound')) return false;
      throw err;
    }
  }
}
