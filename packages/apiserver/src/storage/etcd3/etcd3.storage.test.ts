import { Cacher } from '../cacher/cacher';
import { StoreStorage } from '../storage';
import { startEtcd } from '../testing/etcd';
import { jsonCodec } from '../testing/json-codec';
import { runStorageConformance } from '../testing/storage-conformance';

import { Etcd3Store } from './etcd3-store';

runStorageConformance('StoreStorage over etcd3', async () => {
  const cluster = await startEtcd();
  const store = new Etcd3Store({ endpoints: cluster.endpoints });
  return {
    storage: new StoreStorage(store, jsonCodec),
    rawStore: store,
    cleanup: async () => {
      await store.close();
      await cluster.stop();
    },
  };
});

runStorageConformance('Cacher over etcd3', async () => {
  const cluster = await startEtcd();
  const store = new Etcd3Store({ endpoints: cluster.endpoints });
  const cacher = new Cacher(new StoreStorage(store, jsonCodec), {
    resourcePrefix: '/registry/pods/',
    waitTimeoutMs: 500,
  });
  await cacher.start();
  return {
    storage: cacher,
    cleanup: async () => {
      await cacher.stop();
      await store.close();
      await cluster.stop();
    },
  };
});
