import { LeaseKind } from '@platform/api';

import { RestClient } from '../rest/rest-client';
import { Clientset } from '../rest/resource-client';
import { checkResourceLock, LeaderElector } from './leader-elector';

const config = {
  leaderElect: true,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  resourceLock: 'leases',
  resourceName: 'controller-manager',
  resourceNamespace: 'system',
};

describe('LeaderElector', () => {
  const rest = new RestClient({ server: 'https://127.0.0.1:1' });
  const leases = new Clientset(rest).resource(LeaseKind, 'system');
  afterAll(() => rest.close());

  it('refuses lock types other than leases, saying so', () => {
    for (const lock of ['endpoints', 'configmaps', 'endpointsleases', 'configmapsleases'])
      expect(() => checkResourceLock(lock)).toThrow(
        `--leader-elect-resource-lock=${lock} is not supported: only "leases" is implemented`,
      );
    expect(
      () =>
        new LeaderElector({
          leases,
          config: { ...config, resourceLock: 'configmaps' },
          identity: 'a',
          callbacks: { onStartedLeading: () => {} },
        }),
    ).toThrow(/only "leases" is implemented/);
    expect(() => checkResourceLock('leases')).not.toThrow();
  });

  it('refuses inconsistent durations and an empty identity', () => {
    const make = (c: Partial<typeof config>, identity = 'a'): LeaderElector =>
      new LeaderElector({ leases, config: { ...config, ...c }, identity, callbacks: { onStartedLeading: () => {} } });
    expect(() => make({ renewDeadlineMs: 15_000 })).toThrow(/lease duration > renew deadline/);
    expect(() => make({ retryPeriodMs: 9_000 })).toThrow(/renew deadline > 1\.2 × retry period/);
    expect(() => make({}, '')).toThrow(/identity must not be empty/);
    expect(make({}).isLeader()).toBe(false);
  });
});
