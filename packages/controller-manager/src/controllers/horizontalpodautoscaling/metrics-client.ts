/**
 * The HPA's client of the resource metrics API, `metrics.platform/v1beta1` (model: Kubernetes 1.21
 * `pkg/controller/podautoscaler/metrics/rest_metrics_client.go`). The API is an aggregated one: a metrics server
 * registers it with an APIService, possibly after the controller started, and may go away. So whether it is served
 * is asked of discovery, and asked again once the answer is older than `recheckMs`; while it is not served every
 * read fails with the error 1.21 reports when the API answers 404.
 */
import { type ApiObject, isNotFound, parseDuration, parseQuantity } from '@platform/api';
import { type RestClient } from '@platform/client';

import { type PodMetricsInfo } from './replica-calculator';

/** The group version of the resource metrics API. */
export const METRICS_GROUP_VERSION = 'metrics.platform/v1beta1';

/** The text of 1.21's error when the resource metrics API is not served (a 404 from the API server). */
export const METRICS_NOT_SERVED = 'the server could not find the requested resource (get pods.metrics.platform)';

/** A PodMetrics of `metrics.platform/v1beta1`, as much of it as the HPA reads. */
interface PodMetricsItem {
  metadata?: { name?: string };
  timestamp?: string;
  window?: string;
  containers?: { name?: string; usage?: Record<string, string> }[];
}

/** The samples of a resource in a PodMetricsList, and the time of the first. */
export interface ResourceMetrics {
  metrics: PodMetricsInfo;
  timestampMs: number;
}

/**
 * Each pod's usage of `resource`, summed over its containers (1.21's `getPodMetrics`): a pod with no containers, or
 * a container without the resource, has no sample. Throws 1.21's error for an empty list.
 */
export function podMetricsOf(items: readonly PodMetricsItem[], resource: string): ResourceMetrics {
  if (items.length === 0) throw new Error('no metrics returned from resource metrics API');
  const metrics: PodMetricsInfo = new Map();
  for (const m of items) {
    const containers = m.containers ?? [];
    let sum = 0;
    let missing = containers.length === 0;
    for (const c of containers) {
      const usage = c.usage?.[resource];
      if (usage === undefined) {
        missing = true;
        break;
      }
      sum += parseQuantity(String(usage)).milliValueNumber();
    }
    if (!missing)
      metrics.set(m.metadata?.name ?? '', {
        timestampMs: Date.parse(m.timestamp ?? '') || 0,
        windowMs: m.window ? Number(parseDuration(m.window) / 1_000_000n) : 0,
        value: sum,
      });
  }
  return { metrics, timestampMs: Date.parse(items[0]?.timestamp ?? '') || 0 };
}

/** Reads pod metrics from `metrics.platform/v1beta1` when it is served. */
export class ResourceMetricsClient {
  private checkedAt = -Infinity;
  private served = false;

  constructor(
    private readonly rest: RestClient,
    private readonly recheckMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether discovery lists the API, asked again when the last answer is older than `recheckMs`. */
  async isServed(signal?: AbortSignal): Promise<boolean> {
    if (this.now() - this.checkedAt < this.recheckMs) return this.served;
    try {
      await this.rest.request({
        method: 'GET',
        path: `/apis/${METRICS_GROUP_VERSION}`,
        accept: 'application/json',
        signal,
      });
      this.served = true;
    } catch (err) {
      // Anything but "not there" (a 503 while the metrics server is down, a time-out) is the read's to report.
      this.served = !isNotFound(err);
    }
    this.checkedAt = this.now();
    return this.served;
  }

  /** Forgets the last discovery answer (after a read found the API gone). */
  recheck(): void {
    this.checkedAt = -Infinity;
  }

  /**
   * The samples of `resource` of the pods `labelSelector` selects in `namespace`. Errors carry 1.21's text:
   * `unable to fetch metrics from resource metrics API: <why>`, or `no metrics returned from resource metrics API`.
   */
  async resourceMetric(
    resource: string,
    namespace: string,
    labelSelector: string,
    signal?: AbortSignal,
  ): Promise<ResourceMetrics> {
    let items: PodMetricsItem[];
    try {
      if (!(await this.isServed(signal))) throw new Error(METRICS_NOT_SERVED);
      const list = await this.rest.request<ApiObject & { items?: PodMetricsItem[] }>({
        method: 'GET',
        path: `/apis/${METRICS_GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/pods`,
        query: { labelSelector: labelSelector || undefined },
        accept: 'application/json',
        signal,
      });
      items = Array.isArray(list.items) ? list.items : [];
    } catch (err) {
      // A 404 is the API gone: said as 1.21 says it, whatever the server's text; discovery is asked again.
      if (isNotFound(err)) this.recheck();
      const why = isNotFound(err) ? METRICS_NOT_SERVED : (err as Error).message;
      throw new Error(`unable to fetch metrics from resource metrics API: ${why}`);
    }
    return podMetricsOf(items, resource);
  }
}
