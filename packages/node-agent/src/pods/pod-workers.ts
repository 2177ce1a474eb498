/**
 * One worker per pod (model: kubelet `pod_workers.go`): a pod's sync never runs twice at once, and different pods
 * never wait on each other. `update` records the newest pod and asks for a sync; requests that arrive while a sync
 * runs collapse into one more sync afterwards. `syncAfter` schedules a sync (back-off, probes, periodic resync).
 */

/** What a worker calls. Resolves with the delay (ms) before the pod wants another sync, or undefined. */
export type SyncFn<P> = (uid: string, pod: P | undefined) => Promise<number | undefined>;

interface Worker<P> {
  pod: P | undefined;
  running: boolean;
  again: boolean;
  timer?: NodeJS.Timeout;
  timerAt?: number;
}

/** The pod workers. */
export class PodWorkers<P> {
  private readonly workers = new Map<string, Worker<P>>();
  private closed = false;

  constructor(
    private readonly sync: SyncFn<P>,
    private readonly onError: (uid: string, err: unknown) => void,
  ) {}

  /** Records the newest desired pod (undefined: removed from every source) and asks for a sync. */
  update(uid: string, pod: P | undefined): void {
    let w = this.workers.get(uid);
    if (!w) {
      w = { pod, running: false, again: false };
      this.workers.set(uid, w);
    }
    w.pod = pod;
    this.kick(uid, w);
  }

  /**
   * Records the newest desired pod without asking for a sync: a change the pod's sync does not act on (its status
   * coming back from the API). The next sync sees it.
   */
  record(uid: string, pod: P): void {
    const w = this.workers.get(uid);
    if (w) w.pod = pod;
  }

  /** Asks for a sync of a known pod now. */
  trigger(uid: string): void {
    const w = this.workers.get(uid);
    if (w) this.kick(uid, w);
  }

  /** Asks for a sync after `ms` (keeps the earliest of several requests). */
  syncAfter(uid: string, ms: number): void {
    const w = this.workers.get(uid);
    if (!w || this.closed) return;
    const at = Date.now() + ms;
    if (w.timer && w.timerAt !== undefined && w.timerAt <= at) return;
    clearTimeout(w.timer);
    w.timerAt = at;
    w.timer = setTimeout(() => {
      w.timer = undefined;
      w.timerAt = undefined;
      this.kick(uid, w);
    }, ms);
    w.timer.unref?.();
  }

  /** Whether a sync of the pod is running (it reads the runtime again before it ends). */
  busy(uid: string): boolean {
    return this.workers.get(uid)?.running ?? false;
  }

  /** Uids of every pod with a worker. */
  uids(): string[] {
    return [...this.workers.keys()];
  }

  /** Forgets a pod whose teardown finished. */
  forget(uid: string): void {
    const w = this.workers.get(uid);
    if (w) clearTimeout(w.timer);
    this.workers.delete(uid);
  }

  /** Stops scheduling syncs. */
  close(): void {
    this.closed = true;
    for (const w of this.workers.values()) clearTimeout(w.timer);
  }

  private kick(uid: string, w: Worker<P>): void {
    if (this.closed) return;
    if (w.running) {
      w.again = true;
      return;
    }
    w.running = true;
    void (async () => {
      do {
        w.again = false;
        let next: number | undefined;
        try {
          next = await this.sync(uid, w.pod);
        } catch (err) {
          this.onError(uid, err);
          next = 2000;
        }
        if (next !== undefined && this.workers.get(uid) === w) this.syncAfter(uid, next);
      } while (w.again && !this.closed);
      w.running = false;
    })();
  }
}
