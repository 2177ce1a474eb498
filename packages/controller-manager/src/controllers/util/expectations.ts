/**
 * Controller expectations (model: `pkg/controller/controller_utils.go` `ControllerExpectations` and
 * `UIDTrackingControllerExpectations`): what a controller has asked the API to create and delete and not yet seen
 * in its informer. A sync acts only when the last one's writes have all been observed (or five minutes passed),
 * so a controller never creates pods twice because its cache lagged behind its own writes.
 */

/** How long unobserved expectations block a controller before it acts again anyway. */
export const EXPECTATIONS_TTL_MS = 5 * 60_000;

interface Expectation {
  add: number;
  del: number;
  /** Keys of the pods whose deletion is awaited. */
  deleting: Set<string>;
  at: number;
}

/** Expectations per controller key (`namespace/name`). Synchronous; shared by handlers and workers. */
export class ControllerExpectations {
  private readonly m = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when the controller may act: nothing awaited, all observed, or the expectations expired. */
  satisfied(key: string): boolean {
    const e = this.m.get(key);
    if (!e) return true;
    if (e.add <= 0 && e.del <= 0) return true;
    return this.now() - e.at > EXPECTATIONS_TTL_MS;
  }

  /** Records that `n` creations were just asked for (replaces what was awaited). */
  expectCreations(key: string, n: number): void {
    this.m.set(key, { add: n, del: 0, deleting: new Set(), at: this.now() });
  }

  /** Records that the pods `podKeys` are about to be deleted (replaces what was awaited). */
  expectDeletions(key: string, podKeys: readonly string[]): void {
    this.m.set(key, { add: 0, del: podKeys.length, deleting: new Set(podKeys), at: this.now() });
  }

  /** One creation seen (or given up on). */
  creationObserved(key: string): void {
    const e = this.m.get(key);
    if (e) e.add--;
  }

  /** The deletion of `podKey` seen (or given up on); a pod not awaited changes nothing. */
  deletionObserved(key: string, podKey: string): void {
    const e = this.m.get(key);
    if (e?.deleting.delete(podKey)) e.del--;
  }

  /** Forgets a controller (it was deleted). */
  delete(key: string): void {
    this.m.delete(key);
  }

  /** What is awaited for `key` (tests). */
  pending(key: string): { add: number; del: number } | undefined {
    const e = this.m.get(key);
    return e && { add: e.add, del: e.del };
  }
}
