import { startEtcd, type EtcdCluster } from '../testing/etcd';
import { runStoreConformance } from '../testing/store-conformance';

import { Etcd3Store } from './etcd3-store';

runStoreConformance('etcd3', async () => {
  const cluster: EtcdCluster = await startEtcd();
  const store = new Etcd3Store({ endpoints: cluster.endpoints });
  return { store, cleanup: () => cluster.stop() };
});
