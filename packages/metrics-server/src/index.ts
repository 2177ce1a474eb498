/**
 * @platform/metrics-server — the metrics server: scrapes the node agents' resource metrics and serves the
 * `metrics.platform/v1beta1` API behind the aggregation layer, and the `platform-metrics-server` daemon.
 */
import { describeFlags, type ReferencePage } from '@platform/common';

import { metricsServerCommand } from './cmd/main';

export { main, metricsServerCommand, METRICS_SERVER_SERVING } from './cmd/main';
export * from './scraper/decode';
export * from './storage/storage';
export { METRICS_GROUP_ALIAS, parseMetricsPath } from './api/metrics-api';

/** The reference page of `platform-metrics-server` (docs/reference/metrics-server.md, `npm run docs`). */
export function referencePages(): ReferencePage[] {
  return [
    {
      file: 'metrics-server.md',
      title: 'platform-metrics-server',
      intro: [
        "The metrics server is Kubernetes' metrics-server (0.5) for this platform: every `--metric-resolution` it scrapes each node agent's `/metrics/resource` (HTTPS, at the node's preferred address), keeps the last two readings of every node and container, and serves their usage — CPU as the rate between the two readings, memory as the working set, the window the time between them — as `metrics.platform/v1beta1` NodeMetrics and PodMetrics, an extension API server that the API server's aggregation layer proxies to (APIService `v1beta1.metrics.platform`). `kubectl top` and the horizontal pod autoscaler read it. `platform up` runs it; see [docs/operations.md](../operations.md).",
        '',
        "Its options are metrics-server's, with the node agent options named `--agent-*` (metrics-server's `--kubelet-*`) and the client configuration `--clientconfig` (`--kubeconfig`). `--metric-resolution` may be as short as 1s (metrics-server: 10s), for tests. Without `--authentication-clientconfig` and `--authorization-clientconfig`, the token and access reviews and the lookup of `system/extension-apiserver-authentication` use `--clientconfig`, as metrics-server uses its in-cluster configuration.",
      ].join('\n'),
      sections: () => describeFlags(metricsServerCommand().cmd),
    },
  ];
}
