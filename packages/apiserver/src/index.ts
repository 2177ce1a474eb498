/**
 * @platform/apiserver — the API server: the server itself, its command line, and the test harness for a real etcd.
 */
export { ApiServer, type ApiServerConfig, SYSTEM_NAMESPACES } from './server/api-server';
export { openStore, StoreFactory } from './storage/factory';
export { apiServerCommand, main } from './cmd/main';
export { startTestServer, testLogger, type TestServer, type TestResponse } from './testing/test-server';
export { startEtcd, freePort, type EtcdCluster, type EtcdMember, type StartEtcdOptions } from './storage/testing/etcd';
