/** The metrics server's own metrics (names and labels of metrics-server 0.5 `pkg/scraper`, `pkg/server`, `pkg/storage`). */
import { type CounterMetric, type GaugeMetric, type HistogramMetric, type MetricsRegistry } from '@platform/common';

import { type ScrapeObserver } from './scraper/scraper';

/** Buckets of request and tick durations (seconds), as metrics-server's. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The metrics one metrics server reports. */
export class ServerMetrics implements ScrapeObserver {
  readonly requestDuration: HistogramMetric;
  readonly requestTotal: CounterMetric;
  readonly lastRequestTime: GaugeMetric;
  readonly tickDuration: HistogramMetric;
  readonly storagePoints: GaugeMetric;

  constructor(registry: MetricsRegistry) {
    this.requestDuration = registry.histogram({
      name: 'metrics_server_kubelet_request_duration_seconds',
      help: 'Duration of requests to node agent API in seconds',
      labelNames: ['node'],
      buckets: DURATION_BUCKETS,
    });
    this.requestTotal = registry.counter({
      name: 'metrics_server_kubelet_request_total',
      help: 'Number of requests sent to node agent API',
      labelNames: ['success'],
    });
    this.lastRequestTime = registry.gauge({
      name: 'metrics_server_kubelet_last_request_time_seconds',
      help: 'Time of last request performed to node agent API.',
      labelNames: ['node'],
    });
    this.tickDuration = registry.histogram({
      name: 'metrics_server_manager_tick_duration_seconds',
      help: 'The total time spent collecting and storing metrics in seconds.',
      buckets: DURATION_BUCKETS,
    });
    this.storagePoints = registry.gauge({
      name: 'metrics_server_storage_points',
      help: 'Number of metrics points stored.',
      labelNames: ['type'],
    });
  }

  /** One request to a node agent. */
  request(node: string, ok: boolean, seconds: number): void {
    this.requestDuration.observe({ node }, seconds);
    this.requestTotal.inc({ success: String(ok) });
    this.lastRequestTime.set({ node }, Date.now() / 1000);
  }
}
