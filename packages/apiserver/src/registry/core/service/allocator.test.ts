import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { jsonCodec } from '@platform/api';

import { SqliteStore } from '../../../storage/sqlite/sqlite-store';
import { StoreStorage } from '../../../storage/storage';
import { cidrRange, isAllocationError, portRange, RangeAllocator } from './allocator';

let dir: string;
let store: SqliteStore;
let storage: StoreStorage;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'allocator-'));
  store = await SqliteStore.open(join(dir, 'state.db'));
  storage = new StoreStorage(store, jsonCodec);
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ranges', () => {
  it('leave out the network and broadcast addresses of a CIDR', () => {
    const r = cidrRange('10.0.0.7/29');
    expect([r.text, r.size, r.valueAt(0), r.valueAt(5)]).toEqual(['10.0.0.0/29', 6, '10.0.0.1', '10.0.0.6']);
    expect([r.offsetOf('10.0.0.0'), r.offsetOf('10.0.0.7'), r.offsetOf('10.0.0.3'), r.offsetOf('x')]).toEqual([
      -1, -1, 2, -1,
    ]);
  });

  it('number the ports of a port range', () => {
    const r = portRange('30000-30002');
    expect([r.size, r.offsetOf(30001), r.offsetOf(29999), r.valueAt(2)]).toEqual([3, 1, -1, 30002]);
  });

  it.each(['10.0.0.0', '10.0.0.0/31', 'fd00::/127', 'x/8', '10.0.0.0/33'])('reject the CIDR %j', (cidr) => {
    expect(() => cidrRange(cidr)).toThrow('invalid service cluster IP range');
  });

  it.each([
    ['10.0.0.0/11', 'for 32-bit addresses, the mask must be >= 12'],
    ['fd00::/64', 'for 128-bit addresses, the mask must be >= 108'],
  ])('reject the too large range %j', (cidr, message) => {
    expect(() => cidrRange(cidr)).toThrow(message);
  });

  it('number the addresses of an IPv6 CIDR from the one after the network address, printed canonically', () => {
    const r = cidrRange('FD00:0:0:0:0:0:0:5/120');
    expect([r.text, r.size, r.family, r.valueAt(0), r.valueAt(254)]).toEqual([
      'fd00::/120',
      255,
      'IPv6',
      'fd00::1',
      'fd00::ff',
    ]);
    expect([r.offsetOf('fd00::'), r.offsetOf('fd00::1'), r.offsetOf('fd00::ff'), r.offsetOf('fd00::100')]).toEqual([
      -1, 0, 254, -1,
    ]);
    expect([r.offsetOf('10.0.0.1'), cidrRange('10.0.0.0/24').offsetOf('fd00::1')]).toEqual([-1, -1]);
    expect(cidrRange('2001:db8:0:1:0:0:1:0/112').valueAt(0)).toBe('2001:db8:0:1::1:1');
    expect(cidrRange('2001:db8:0:1:1:1:1:0/120').valueAt(0)).toBe('2001:db8:0:1:1:1:1:1');
    expect(cidrRange('2001:db8::/108').valueAt(0)).toBe('2001:db8::1');
  });

  it.each(['30000', '3-2', '0-10', '1-70000'])('reject the port range %j', (text) => {
    expect(() => portRange(text)).toThrow('invalid service node port range');
  });
});

describe('RangeAllocator', () => {
  it('hands out every value once, then reports the range full; released values come back', async () => {
    const a = new RangeAllocator(cidrRange('10.1.0.0/30'), storage, '/registry/ranges/test-a', 'test-a', () => 0);
    const first = await a.allocate();
    const second = await a.allocate();
    expect([first, second].sort()).toEqual(['10.1.0.1', '10.1.0.2']);
    const full = await a.allocate().catch((e: unknown) => e);
    expect(isAllocationError(full) && full.reason).toBe('Full');
    await a.release('10.1.0.1');
    expect(await a.has('10.1.0.1')).toBe(false);
    expect(await a.allocate()).toBe('10.1.0.1');
  });

  it('allocates a requested value once, and refuses values out of range', async () => {
    const a = new RangeAllocator(portRange('30000-30009'), storage, '/registry/ranges/test-b', 'test-b');
    expect(await a.allocate(30005)).toBe(30005);
    expect(await a.has(30005)).toBe(true);
    const again = await a.allocate(30005).catch((e: unknown) => e);
    expect(isAllocationError(again) && again.reason).toBe('Allocated');
    const out = await a.allocate(40000).catch((e: unknown) => e);
    expect(isAllocationError(out) && out.reason).toBe('OutOfRange');
  });

  it('never gives one value twice to concurrent callers of one storage', async () => {
    const a = new RangeAllocator(portRange('31000-31049'), storage, '/registry/ranges/test-c', 'test-c');
    const b = new RangeAllocator(portRange('31000-31049'), storage, '/registry/ranges/test-c', 'test-c');
    const got = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).allocate()));
    expect(new Set(got).size).toBe(50);
  });

  it('never gives one value twice to API servers sharing the store (compare-and-swap between them)', async () => {
    const a = new RangeAllocator(portRange('31000-31049'), storage, '/registry/ranges/test-d', 'test-d');
    const b = new RangeAllocator(
      portRange('31000-31049'),
      new StoreStorage(store, jsonCodec),
      '/registry/ranges/test-d',
      'test-d',
    );
    const got = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).allocate()));
    expect(new Set(got).size).toBe(50);
  });

  it('repairs: marks values in use, releases a leak only after it stayed unused three passes, reports strays', async () => {
    const a = new RangeAllocator(portRange('32000-32009'), storage, '/registry/ranges/test-e', 'test-e');
    await a.allocate(32001); // in use
    await a.allocate(32002); // leaked: allocated, never used
    const leaks = new Map<number, number>();
    const inUse = [32001, 32005, 40000];
    const first = await a.repair(inUse, leaks);
    expect(first).toEqual({ marked: [32005], released: [], outOfRange: [40000] });
    expect(await a.has(32005)).toBe(true);
    expect((await a.repair(inUse, leaks)).released).toEqual([]);
    expect(await a.has(32002)).toBe(true);
    expect((await a.repair(inUse, leaks)).released).toEqual([32002]);
    expect([await a.has(32001), await a.has(32002), await a.has(32005)]).toEqual([true, false, true]);
    // A value that comes into use between passes is no longer a leak.
    await a.allocate(32003);
    await a.repair(inUse, leaks);
    await a.repair([...inUse, 32003], leaks);
    await a.repair(inUse, leaks);
    expect(await a.has(32003)).toBe(true);
  });
});
