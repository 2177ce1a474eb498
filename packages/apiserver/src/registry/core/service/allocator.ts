/**
 * Cluster IP and node port allocation (model: Kubernetes 1.21 `pkg/registry/core/service/ipallocator`,
 * `portallocator` and `allocator/storage`): each range is a bitmap persisted in storage as a `RangeAllocation`
 * object (`<prefix>/ranges/serviceips`, `<prefix>/ranges/servicenodeports`), changed only by compare-and-swap, so
 * that API servers sharing a store never hand out the same address or port twice.
 *
 * Only IPv4 service ranges are supported (TODO(#4): dual stack).
 */
import { type ApiObject } from '@platform/api';

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
}

function ipv4ToInt(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

function intToIPv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** The addresses of an IPv4 CIDR, without its network and broadcast addresses (as Kubernetes allocates them). */
export function cidrRange(cidr: string): Range {
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d{1,2})$/.exec(cidr.trim());
  const base = m ? ipv4ToInt(m[1] as string) : undefined;
  const bits = m ? Number(m[2]) : NaN;
  if (base === undefined || !(bits >= 1 && bits <= 30)) {
    throw new Error(`invalid service cluster IP range ${JSON.stringify(cidr)}: expected an IPv4 CIDR of /1 to /30`);
  }
  const block = 2 ** (32 - bits);
  const network = base - (base % block);
  return {
    text: `${intToIPv4(network)}/${bits}`,
    size: block - 2,
    offsetOf(value) {
      const n = typeof value === 'string' ? ipv4ToInt(value) : undefined;
      if (n === undefined) return -1;
      const off = n - network - 1;
      return off >= 0 && off < block - 2 ? off : -1;
    },
    valueAt: (offset) => intToIPv4(network + 1 + offset),
  };
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
