/** A binary heap of keyed items with update and delete by key (model: 1.21 `internal/heap`). */
export class Heap<T> {
  private readonly items: T[] = [];
  private readonly index = new Map<string, number>();

  constructor(
    private readonly keyOf: (t: T) => string,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get length(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  get(key: string): T | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.items[i];
  }

  /** Adds or replaces the item with the same key. */
  addOrUpdate(t: T): void {
    const key = this.keyOf(t);
    const i = this.index.get(key);
    if (i !== undefined) {
      this.items[i] = t;
      this.fix(i);
      return;
    }
    this.items.push(t);
    this.index.set(key, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  delete(key: string): T | undefined {
    const i = this.index.get(key);
    if (i === undefined) return undefined;
    const t = this.items[i] as T;
    const last = this.items.length - 1;
    this.swap(i, last);
    this.items.pop();
    this.index.delete(key);
    if (i < this.items.length) this.fix(i);
    return t;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  pop(): T | undefined {
    const t = this.items[0];
    if (t === undefined) return undefined;
    this.delete(this.keyOf(t));
    return t;
  }

  list(): T[] {
    return this.items.slice();
  }

  private fix(i: number): void {
    if (!this.down(i)) this.up(i);
  }

  private swap(i: number, j: number): void {
    if (i === j) return;
    const a = this.items[i] as T;
    const b = this.items[j] as T;
    this.items[i] = b;
    this.items[j] = a;
    this.index.set(this.keyOf(b), i);
    this.index.set(this.keyOf(a), j);
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(this.items[i] as T, this.items[p] as T)) break;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i0: number): boolean {
    let i = i0;
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let m = l;
      const r = l + 1;
      if (r < n && this.less(this.items[r] as T, this.items[l] as T)) m = r;
      if (!this.less(this.items[m] as T, this.items[i] as T)) break;
      this.swap(i, m);
      i = m;
    }
    return i > i0;
  }
}
