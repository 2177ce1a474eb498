import { SortedKeys } from './sorted-keys';

/** A seeded generator, so that a failure replays. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

describe('SortedKeys', () => {
  it('keeps byte order through random inserts and deletes across chunk splits', () => {
    const keys = new SortedKeys();
    const model = new Set<string>();
    const rand = rng(7);
    for (let n = 0; n < 20000; n++) {
      const key = `/registry/configmaps/ns${Math.floor(rand() * 5)}/cm-${Math.floor(rand() * 5000)}`;
      if (rand() < 0.3) {
        keys.delete(key);
        model.delete(key);
      } else {
        keys.insert(key);
        model.add(key);
      }
    }
    const want = [...model].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(keys.size).toBe(want.length);
    expect([...keys.from('')]).toEqual(want);
    const from = '/registry/configmaps/ns3/';
    expect([...keys.from(from)]).toEqual(want.filter((k) => k >= from));
    expect([...keys.from('/registry/configmaps/ns9')]).toEqual([]);
  });

  it('builds from sorted keys and deletes down to empty', () => {
    const sorted = Array.from({ length: 1500 }, (_, i) => `k${String(i).padStart(5, '0')}`);
    const keys = SortedKeys.fromSorted(sorted);
    expect([...keys.from('k00750')]).toEqual(sorted.slice(750));
    keys.insert('k00750'); // present: no-op
    expect(keys.size).toBe(1500);
    for (const k of sorted) keys.delete(k);
    expect(keys.size).toBe(0);
    expect([...keys.from('')]).toEqual([]);
    keys.delete('k1'); // absent: no-op
    keys.insert('a');
    expect([...keys.from('')]).toEqual(['a']);
  });
});
