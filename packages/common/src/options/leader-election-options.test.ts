import { LeaderElectionOptions } from './leader-election-options';
import { parseForTest } from './testing/parse';

const parse = parseForTest;

describe('leader election options', () => {
  it('parses and defaults per daemon', () => {
    const o = new LeaderElectionOptions('scheduler');
    const r = parse(
      [o],
      [
        '--leader-elect-lease-duration=30s',
        '--leader-elect-renew-deadline=20s',
        '--leader-elect-retry-period=3s',
        '--leader-elect-resource-namespace=kube',
      ],
    );
    expect(r.errors).toEqual([]);
    const c: Parameters<LeaderElectionOptions['applyTo']>[0] = {};
    o.applyTo(c);
    expect(c.leaderElection).toEqual({
      leaderElect: true,
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 3_000,
      resourceLock: 'leases',
      resourceName: 'scheduler',
      resourceNamespace: 'kube',
    });
  });

  it('accepts every lock type of Kubernetes 1.21 with its name and namespace', () => {
    for (const lock of ['endpoints', 'configmaps', 'leases', 'endpointsleases', 'configmapsleases']) {
      const o = new LeaderElectionOptions('cm');
      const r = parse(
        [o],
        [
          `--leader-elect-resource-lock=${lock}`,
          '--leader-elect-resource-name=n',
          '--leader-elect-resource-namespace=ns',
        ],
      );
      expect(r.errors).toEqual([]);
      const c: Parameters<LeaderElectionOptions['applyTo']>[0] = {};
      o.applyTo(c);
      expect(c.leaderElection).toMatchObject({ resourceLock: lock, resourceName: 'n', resourceNamespace: 'ns' });
    }
  });

  it('rejects unknown locks and inconsistent durations', () => {
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-resource-lock=zookeeper']).messages[0]).toBe(
      '--leader-elect-resource-lock: unknown lock type "zookeeper": want one of endpoints, configmaps, leases, endpointsleases, configmapsleases',
    );
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-renew-deadline=20s']).messages).toEqual([
      '--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline',
    ]);
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-retry-period=9s']).messages).toEqual([
      '--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period',
    ]);
    expect(
      parse([new LeaderElectionOptions('cm')], ['--leader-elect=false', '--leader-elect-retry-period=9s']).errors,
    ).toEqual([]);
    expect(parse([new LeaderElectionOptions('cm')], ['--leader-elect-lease-duration=-1s']).messages).toEqual([
      'invalid argument "-1s" for "--leader-elect-lease-duration" flag: duration must not be negative',
    ]);
  });
});
