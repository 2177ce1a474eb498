/**
 * Holds requests until the server is ready, for one of several server processes sharing a port
 * (`--server-processes`): the port hands a connection to whichever process comes next, so a client that saw
 * `/readyz` succeed on one may reach another that is still starting (or restarting after a crash) and whose RBAC
 * rules, say, are not loaded yet — it would answer 403. Such a process waits with the request until its own
 * readiness checks pass, which costs the client a moment instead of a wrong answer. The gate opens for good once
 * they have passed, or `maxWaitMs` after the first held request (a check that keeps failing then delays requests
 * once, not each of them: the process serves as a lone server does). Health checks, metrics and version are
 * answered at once.
 */
import { type HealthCheck } from '@platform/common';

/** Paths answered without waiting: what tells a client or an operator how the process is doing. */
const UNGATED = /^\/(healthz|livez|readyz|metrics|version|debug)(\/|\?|$)/;

/** See the module comment. */
export class ReadinessGate {
  private isOpen = false;
  private opening: Promise<void> | undefined;

  /**
   * @param checks the readiness checks of the server (`/readyz`'s); `shutdown` is not waited for.
   */
  constructor(
    private readonly checks: () => readonly HealthCheck[],
    private readonly signal: AbortSignal,
    private readonly o: { pollMs: number; maxWaitMs: number } = { pollMs: 100, maxWaitMs: 30_000 },
  ) {}

  /**
   * True once every readiness check has passed or the wait has timed out (it stays open: later failures are
   * `/readyz`'s to report).
   */
  get open(): boolean {
    return this.isOpen;
  }

  /** True when a request to `url` must wait for {@link ReadinessGate.wait} first. */
  holds(url: string | undefined): boolean {
    return !this.isOpen && !UNGATED.test(url ?? '/');
  }

  /** Resolves when the gate opens: readiness, `maxWaitMs` after the first call, or shutdown. */
  wait(): Promise<void> {
    this.opening ??= this.poll(Date.now() + this.o.maxWaitMs);
    return this.opening;
  }

  private async poll(deadline: number): Promise<void> {
    while (!this.signal.aborted && Date.now() < deadline && !(await this.ready()))
      await new Promise<void>((resolve) => setTimeout(resolve, this.o.pollMs).unref());
    this.isOpen = true;
  }

  private async ready(): Promise<boolean> {
    for (const c of this.checks()) {
      if (c.name === 'shutdown') continue;
      try {
        await c.check();
      } catch {
        return false;
      }
    }
    return true;
  }
}
