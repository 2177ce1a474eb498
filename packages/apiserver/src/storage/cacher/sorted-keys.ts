/**
 * The keys of a watch cache in byte order, for lists and the initial events of watches. Chunked: a sorted array of
 * sorted chunks of at most {@link MAX_CHUNK} keys, so that an insert or a delete moves at most a chunk's worth of
 * entries (one flat array moved half of every key on each write: with tens of thousands of objects, that was a
 * visible share of a create's cost).
 */

/** A chunk splits in two past this size. */
const MAX_CHUNK = 512;

export class SortedKeys {
  /** Non-empty chunks, each sorted; every key of a chunk sorts before every key of the next. */
  private chunks: string[][] = [];
  private count = 0;

  /** Builds the list from keys already sorted (byte order) and free of duplicates. */
  static fromSorted(keys: readonly string[]): SortedKeys {
    const s = new SortedKeys();
    for (let i = 0; i < keys.length; i += MAX_CHUNK / 2) s.chunks.push(keys.slice(i, i + MAX_CHUNK / 2));
    s.count = keys.length;
    return s;
  }

  get size(): number {
    return this.count;
  }

  /** Adds a key (no-op when present). */
  insert(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.count = 1;
      return;
    }
    const c = Math.min(this.chunkFor(key), this.chunks.length - 1);
    const chunk = this.chunks[c]!;
    const i = lowerBound(chunk, key);
    if (chunk[i] === key) return;
    chunk.splice(i, 0, key);
    this.count++;
    if (chunk.length > MAX_CHUNK) this.chunks.splice(c + 1, 0, chunk.splice(MAX_CHUNK / 2));
  }

  /** Removes a key (no-op when absent). */
  delete(key: string): void {
    const c = this.chunkFor(key);
    const chunk = this.chunks[c];
    if (!chunk) return;
    const i = lowerBound(chunk, key);
    if (chunk[i] !== key) return;
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(c, 1);
  }

  /** The keys from the first one not before `from`, in order. */
  *from(from: string): Generator<string, void, undefined> {
    let c = this.chunkFor(from);
    if (c >= this.chunks.length) return;
    let i = lowerBound(this.chunks[c]!, from);
    for (; c < this.chunks.length; c++, i = 0) {
      const chunk = this.chunks[c]!;
      for (; i < chunk.length; i++) yield chunk[i]!;
    }
  }

  /** The first chunk whose last key is not before `key` (the chunk count when there is none). */
  private chunkFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = this.chunks[mid]!;
      if (chunk[chunk.length - 1]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
