import { RestClient } from '../rest/rest-client';
import { Clientset } from '../rest/resource-client';
import { LeaderElector } from './leader-elector';
import { newResourceLock } from './resource-lock';

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
  const clientset = new Clientset(rest);
  const lock = newResourceLock(clientset, config, 'a');
  afterAll(() => rest.close());

  it('refuses inconsistent durations and an empty identity', () => {
    const make = (c: Partial<typeof config>, identity = 'a'): LeaderElector =>
      new LeaderElector({ lock, config: { ...config, ...c }, identity, callbacks: { onStartedLeading: () => {} } });
    expect(() => make({ renewDeadlineMs: 15_000 })).toThrow(/lease duration > renew deadline/);
    expect(() => make({ retryPeriodMs: 9_000 })).toThrow(/renew deadline > 1\.2 × retry period/);
    expect(() => make({}, '')).toThrow(/identity must not be empty/);
    expect(make({}).isLeader()).toBe(false);
  });
});
