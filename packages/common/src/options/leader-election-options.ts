/**
 * The leader election option family (Document 2, "Leader election options"), with every lock type of Kubernetes
 * 1.21 (`@platform/client`'s `newResourceLock` builds them).
 */
import { type FlagDef, OptionGroupBase, boolFlag, durationFlag, stringFlag } from './flags';

/** The lock types of Kubernetes 1.21. */
export const RESOURCE_LOCKS = ['endpoints', 'configmaps', 'leases', 'endpointsleases', 'configmapsleases'] as const;

/** Leader election settings (durations in milliseconds). */
export interface LeaderElectionConfig {
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  resourceLock: string;
  resourceName: string;
  resourceNamespace: string;
}

/** The leader election option family; `resourceName` is the daemon's (`controller-manager`, `scheduler`). */
export class LeaderElectionOptions extends OptionGroupBase<{ leaderElection?: LeaderElectionConfig }> {
  readonly config: LeaderElectionConfig;

  constructor(resourceName: string) {
    super('Leader election');
    this.config = {
      leaderElect: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      resourceLock: 'leases',
      resourceName,
      resourceNamespace: 'system',
    };
  }

  protected flagDefs(): FlagDef[] {
    const c = this.config;
    return [
      boolFlag(
        'leader-elect',
        'Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.',
        c.leaderElect,
        (v) => (c.leaderElect = v),
      ),
      durationFlag(
        'leader-elect-lease-duration',
        'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.',
        c.leaseDurationMs,
        (v) => (c.leaseDurationMs = v),
      ),
      durationFlag(
        'leader-elect-renew-deadline',
        'The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than or equal to the lease duration. This is only applicable if leader election is enabled.',
        c.renewDeadlineMs,
        (v) => (c.renewDeadlineMs = v),
      ),
      stringFlag(
        'leader-elect-resource-lock',
        "The type of resource object that is used for locking during leader election. Supported options are 'endpoints', 'configmaps', 'leases', 'endpointsleases' and 'configmapsleases'.",
        c.resourceLock,
        (v) => (c.resourceLock = v),
      ),
      stringFlag(
        'leader-elect-resource-name',
        'The name of resource object that is used for locking during leader election.',
        c.resourceName,
        (v) => (c.resourceName = v),
      ),
      stringFlag(
        'leader-elect-resource-namespace',
        'The namespace of resource object that is used for locking during leader election.',
        c.resourceNamespace,
        (v) => (c.resourceNamespace = v),
      ),
      durationFlag(
        'leader-elect-retry-period',
        'The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.',
        c.retryPeriodMs,
        (v) => (c.retryPeriodMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const c = this.config;
    const errs: Error[] = [];
    const lock = c.resourceLock;
    if (!(RESOURCE_LOCKS as readonly string[]).includes(lock)) {
      errs.push(
        new Error(
          `--leader-elect-resource-lock: unknown lock type ${JSON.stringify(lock)}: want one of ${RESOURCE_LOCKS.join(', ')}`,
        ),
      );
    }
    if (!c.leaderElect) return errs;
    if (c.leaseDurationMs <= 0) errs.push(new Error('--leader-elect-lease-duration must be greater than zero'));
    if (c.renewDeadlineMs <= 0) errs.push(new Error('--leader-elect-renew-deadline must be greater than zero'));
    if (c.retryPeriodMs <= 0) errs.push(new Error('--leader-elect-retry-period must be greater than zero'));
    if (c.leaseDurationMs <= c.renewDeadlineMs) {
      errs.push(new Error('--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline'));
    }
    // client-go's leader elector requires renewDeadline > JitterFactor (1.2) × retryPeriod.
    if (c.renewDeadlineMs <= 1.2 * c.retryPeriodMs) {
      errs.push(new Error('--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period'));
    }
    if (c.resourceName === '') errs.push(new Error('--leader-elect-resource-name must not be empty'));
    if (c.resourceNamespace === '') errs.push(new Error('--leader-elect-resource-namespace must not be empty'));
    return errs;
  }

  applyTo(config: { leaderElection?: LeaderElectionConfig }): void {
    config.leaderElection = { ...this.config };
  }
}
