/**
 * An unbounded single-consumer queue with an async iterator, used to hand watch events from a producer (the write
 * path, an etcd stream, the cacher) to one consumer. The producer never blocks; `end()` finishes the iteration after
 * the queued items, `fail(err)` makes the iterator throw once the queued items are consumed.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private waiter: (() => void) | undefined;
  private done = false;
  private error: unknown;
  private hasError = false;

  /** Queues an item; ignored once the queue has ended or failed. */
  push(item: T): void {
    if (this.done) return;
    this.items.push(item);
    this.wake();
  }

  /** Ends the iteration once queued items are consumed. Idempotent. */
  end(): void {
    this.done = true;
    this.wake();
  }

  /** Ends the iteration now, dropping what is queued (a consumer too slow to keep up is cut off). */
  discard(): void {
    this.items.length = 0;
    this.head = 0;
    this.end();
  }

  /** Ends the iteration with `err` (thrown by the iterator) once queued items are consumed. First call wins. */
  fail(err: unknown): void {
    if (this.done) return;
    this.error = err;
    this.hasError = true;
    this.done = true;
    this.wake();
  }

  /** True once `end` or `fail` was called. */
  get isEnded(): boolean {
    return this.done;
  }

  /** Number of items waiting. */
  get size(): number {
    return this.items.length - this.head;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  /** Takes the next item, waiting for one; undefined when the queue ended. Throws the `fail` error. */
  async next(): Promise<{ value: T } | undefined> {
    for (;;) {
      if (this.head < this.items.length) {
        const value = this.items[this.head] as T;
        this.items[this.head] = undefined as T;
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.items.length) {
          this.items.splice(0, this.head);
          this.head = 0;
        }
        return { value };
      }
      if (this.done) {
        if (this.hasError) throw this.error;
        return undefined;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const n = await this.next();
      if (n === undefined) return;
      yield n.value;
    }
  }
}
