/**
 * Leader election on `coordination.platform/v1` Leases (model: client-go `tools/leaderelection/leaderelection.go`
 * and `resourcelock/leaselock.go`), with the option family of `@platform/common` (`LeaderElectionConfig`).
 *
 * A candidate tries every retry period (with jitter) to create the Lease or take it over once it has not been
 * renewed for a whole lease duration — measured on the candidate's own clock from when it last saw the record
 * change, so clock skew between machines does not matter. Writes carry the resourceVersion read, so two
 * candidates racing for an expired lease cannot both win (one gets 409). The leader renews every retry period;
 * when it cannot renew within the renew deadline it stops leading (`onStoppedLeading`, and the leading signal
 * aborts). On a clean shutdown (the run signal aborts) the leader releases the lease (empty holder, 1 s duration)
 * so that another candidate takes over at once.
 */
import { type ApiObject, isConflict, isNotFound, type Lease } from '@platform/api';
import { type LeaderElectionConfig, type Logger, NOP_LOGGER } from '@platform/common';

import { type ResourceClient } from '../rest/resource-client';
import { type Clock, REAL_CLOCK } from '../util/clock';

/** What the elector tells its owner. */
export interface LeaderCallbacks {
  /** Leadership was gained; run the main loop until `signal` aborts (leadership lost or shutdown). */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Leadership ended (lost or released). Called once after each `onStartedLeading`. */
  onStoppedLeading?(): void;
  /** Another (or this) identity was observed holding the lease. */
  onNewLeader?(identity: string): void;
}

/** Settings of an elector. */
export interface LeaderElectorOptions {
  /** Leases of `config.resourceNamespace`. */
  leases: ResourceClient<Lease & ApiObject>;
  /** `--leader-elect-*` settings. */
  config: LeaderElectionConfig;
  /** This candidate's identity (hostname + unique suffix, as kube-controller-manager). */
  identity: string;
  callbacks: LeaderCallbacks;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
  /** Release the lease when the run signal aborts (default true). */
  releaseOnCancel?: boolean;
}

/** Refuses lock types other than `leases` with a message saying so. */
export function checkResourceLock(lock: string): void {
  if (lock !== 'leases')
    throw new Error(
      `--leader-elect-resource-lock=${lock} is not supported: only "leases" is implemented (the endpoints and configmaps locks, and the migration locks that combine them with leases, are deprecated in Kubernetes 1.21)`,
    );
}

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

/** Elects one leader among candidates sharing a Lease. */
export class LeaderElector {
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly random: () => number;
  private observed?: { key: string; holder: string; at: number; lease: Lease & ApiObject };
  private leading = false;
  private reportedLeader = '';

  constructor(private readonly o: LeaderElectorOptions) {
    checkResourceLock(o.config.resourceLock);
    const c = o.config;
    if (!(c.leaseDurationMs > c.renewDeadlineMs && c.renewDeadlineMs > 1.2 * c.retryPeriodMs && c.retryPeriodMs > 0))
      throw new Error('leader election: want lease duration > renew deadline > 1.2 × retry period > 0');
    if (!o.identity) throw new Error('leader election: the identity must not be empty');
    this.clock = o.clock ?? REAL_CLOCK;
    this.log = o.logger ?? NOP_LOGGER;
    this.random = o.random ?? Math.random;
  }

  /** True while this candidate holds the lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** The identity last seen holding the lease ('' when none). */
  getLeader(): string {
    return this.observed?.holder ?? '';
  }

  private jittered(ms: number): number {
    return Math.round(ms * (1 + 1.2 * this.random()));
  }

  /**
   * Campaigns until leadership is gained, leads until it is lost, and returns (client-go's `Run`: a daemon exits
   * then). Returns at once when `signal` aborts, after releasing a held lease.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.acquire(signal))) return;
    const leading = new AbortController();
    const onAbort = (): void => leading.abort(new Error('shutting down'));
    signal.addEventListener('abort', onAbort, { once: true });
    this.leading = true;
    let mainLoop: Promise<void> = Promise.resolve();
    try {
      mainLoop = Promise.resolve()
        .then(() => this.o.callbacks.onStartedLeading(leading.signal))
        .catch((err: unknown) => this.log.error('Leader main loop failed', { error: String(err) }));
      await this.renewLoop(leading.signal);
    } finally {
      this.leading = false;
      signal.removeEventListener('abort', onAbort);
      if (!leading.signal.aborted) leading.abort(new Error('leadership lost'));
      if (signal.aborted && this.o.releaseOnCancel !== false) await this.release();
      try {
        this.o.callbacks.onStoppedLeading?.();
      } catch (err) {
        this.log.error('onStoppedLeading failed', { error: String(err) });
      }
    }
    await mainLoop;
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    const name = `${this.o.config.resourceNamespace}/${this.o.config.resourceName}`;
    this.log.info('Attempting to acquire leader lease', { lease: name, identity: this.o.identity });
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew(signal)) {
        this.log.info('Successfully acquired lease', { lease: name, identity: this.o.identity });
        return true;
      }
      try {
        await this.clock.sleep(this.jittered(this.o.config.retryPeriodMs), signal);
      } catch {
        return false;
      }
    }
    return false;
  }

  private async renewLoop(signal: AbortSignal): Promise<void> {
    const c = this.o.config;
    let lastRenew = this.clock.now();
    while (!signal.aborted) {
      try {
        await this.clock.sleep(c.retryPeriodMs, signal);
      } catch {
        return;
      }
      // One renewal may not outlast the renew deadline (a hung request must not keep a stale leader leading).
      const attempt = new AbortController();
      const onAbort = (): void => attempt.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const deadline = Math.max(1, c.renewDeadlineMs - (this.clock.now() - lastRenew));
      this.clock.sleep(deadline, attempt.signal).then(
        () => attempt.abort(new Error('renew deadline exceeded')),
        () => {},
      );
      let renewed: boolean;
      try {
        renewed = await this.tryAcquireOrRenew(attempt.signal);
      } finally {
        signal.removeEventListener('abort', onAbort);
        attempt.abort();
      }
      if (renewed) {
        lastRenew = this.clock.now();
        continue;
      }
      if (signal.aborted) return;
      if (
        this.clock.now() - lastRenew >= c.renewDeadlineMs ||
        (this.observed && this.observed.holder !== this.o.identity)
      ) {
        this.log.info('Failed to renew lease; stopping leading', {
          identity: this.o.identity,
          holder: this.getLeader(),
        });
        return;
      }
    }
  }

  private observe(lease: Lease & ApiObject): void {
    const holder = lease.spec?.holderIdentity ?? '';
    const key = `${holder}|${lease.spec?.renewTime ?? ''}|${lease.spec?.acquireTime ?? ''}|${lease.spec?.leaseDurationSeconds ?? ''}`;
    if (!this.observed || this.observed.key !== key) this.observed = { key, holder, at: this.clock.now(), lease };
    else this.observed.lease = lease;
    if (holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      if (holder) {
        this.log.info('New leader observed', { leader: holder });
        try {
          this.o.callbacks.onNewLeader?.(holder);
        } catch (err) {
          this.log.error('onNewLeader failed', { error: String(err) });
        }
      }
    }
  }

  /** One attempt to create, take over or renew the lease. False when another holds it or the write lost a race. */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const c = this.o.config;
    const now = this.clock.now();
    const durationSeconds = Math.max(1, Math.round(c.leaseDurationMs / 1000));
    const leases = this.o.leases;
    let current: Lease & ApiObject;
    try {
      current = await leases.get(c.resourceName, { signal });
    } catch (err) {
      if (!isNotFound(err)) {
        this.log.warn('Error retrieving lease', { error: String(err) });
        return false;
      }
      try {
        const created = await leases.create(
          {
            metadata: { name: c.resourceName, namespace: c.resourceNamespace },
            spec: {
              holderIdentity: this.o.identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: microTime(now),
              renewTime: microTime(now),
              leaseTransitions: 0,
            },
          },
          { signal },
        );
        this.observe(created);
        return true;
      } catch (err2) {
        this.log.v(2).info('Lease creation lost a race or failed', { error: String(err2) });
        return false;
      }
    }
    this.observe(current);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const observedAt = this.observed?.at ?? now;
    const heldBySomeoneElse = holder !== '' && holder !== this.o.identity;
    const expiredAfterMs = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (heldBySomeoneElse && observedAt + expiredAfterMs > now) return false;
    const iAmHolder = holder === this.o.identity;
    const next: Lease & ApiObject = {
      ...current,
      spec: {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: iAmHolder ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: iAmHolder ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      const updated = await leases.update(next, { signal });
      this.observe(updated);
      return true;
    } catch (err) {
      if (!isConflict(err)) this.log.warn('Error updating lease', { error: String(err) });
      return false;
    }
  }

  /** Gives the lease up (empty holder, 1 s duration) when this candidate holds it. Errors are logged. */
  private async release(): Promise<void> {
    const lease = this.observed?.lease;
    if (!lease || lease.spec?.holderIdentity !== this.o.identity) return;
    const now = this.clock.now();
    try {
      await this.o.leases.update({
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: microTime(now),
          renewTime: microTime(now),
        },
      });
      this.log.info('Released lease', { identity: this.o.identity });
    } catch (err) {
      this.log.warn('Failed to release lease', { error: String(err) });
    }
  }
}
