/**
 * @platform/apiserver — the API server: the server itself, its command line, and the test harness for a real etcd.
 */
import { describeFlags, type ReferencePage } from '@platform/common';

import { apiServerCommand } from './cmd/main';

export { ApiServer, type ApiServerConfig, SYSTEM_NAMESPACES } from './server/api-server';
export { openStore, StoreFactory } from './storage/factory';
export { apiServerCommand, main } from './cmd/main';
export {
  startTestServer,
  testLogger,
  type TestServer,
  type TestResponse,
  type TestServerOptions,
} from './testing/test-server';
export { startEtcd, freePort, type EtcdCluster, type EtcdMember, type StartEtcdOptions } from './storage/testing/etcd';
export { testCA, type TestCA, type TestCert } from './auth/authentication/testing/pki';

/** The options reference of `platform-apiserver` (docs/reference/apiserver.md), from the same definitions as `--help`. */
export function referencePages(): ReferencePage[] {
  return [
    {
      file: 'apiserver.md',
      title: 'platform-apiserver',
      intro: [
        'The API server validates and configures data for the API objects and serves the REST operations of Document 1; every other component works through it.',
        '',
        'Options of features not implemented yet exist with their defaults: those that change whom the server trusts or talks to (egress selection, aggregator routing, node agent client certificates, cloud providers) reject any other value with "not supported yet"; inert options are accepted and named in a warning at start.',
      ].join('\n'),
      sections: () => describeFlags(apiServerCommand().cmd),
    },
  ];
}
