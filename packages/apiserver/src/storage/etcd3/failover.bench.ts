/**
 * etcd failover benchmark (`npm run bench -- failover`): an API server on a 3-member etcd cluster (etcd's default
 * raft timing: 100 ms heartbeat, 1 s election timeout), 8 writers creating ConfigMaps and 2 watchers, while the leader
 * is SIGKILLed, then a follower, then the leader is SIGSTOPped (hung) and then a follower, each for 10 s before it is
 * brought back. Prints, per fault: errors in the first 3 s, errors 3-10 s after, the time to the first acknowledged
 * write, the time to the last error, acknowledged writes lost, and what the watchers missed or saw twice. Figures are
 * printed, never asserted (the test `failover.integration.test.ts` asserts the bounds).
 */
import { startTestServer } from '../../testing/test-server';
import { startEtcd } from '../testing/etcd';
import { type Fault, formatScenario, runFailoverScenario, waitHealthy } from '../testing/failover';

async function main(): Promise<void> {
  const cluster = await startEtcd({ members: 3, timing: 'defaults' });
  const server = await startTestServer({ store: 'etcd', etcd: cluster });
  try {
    const faults: Fault[] = ['kill-leader', 'kill-follower', 'hang-leader', 'hang-follower'];
    for (const fault of faults) {
      const ns = `bench-${fault}`;
      const r = await server.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
      if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`);
      const result = await runFailoverScenario({ url: server.url, ca: server.ca, cluster, fault, namespace: ns });
      console.log(formatScenario(result));
      await waitHealthy(cluster, server.url, server.ca);
    }
  } finally {
    await server.stop();
    await cluster.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
