/**
 * metrics.platform/v1beta1 NodeMetrics and PodMetrics: the resource metrics API (model: `k8s.io/metrics`
 * `pkg/apis/metrics/v1beta1/types.go`), what `kubectl top` and the horizontal pod autoscaler read. The API server
 * does not serve these kinds (they are not in `BUILTIN_KINDS`): the metrics server does, behind the aggregation
 * layer. They are defined here once so that every package reads the same types and printer columns.
 */
import { type Static } from '@sinclair/typebox';

import { formatDuration, parseDuration } from '../../../duration/duration';
import { newMilliQuantity, newQuantity, quantityFromJSON } from '../../../quantity/quantity';
import { object, opt, ref, t } from '../../../schema/schema';
import { defineKind, OBJECT_HEAD, schemaPrefix } from '../../../scheme/kind';
import { type TableColumn } from '../../../table/table';

/** The API group of the resource metrics. */
export const METRICS_GROUP = 'metrics.platform';

const P = schemaPrefix(METRICS_GROUP, 'v1beta1');

/** The usage of one container. */
export const ContainerMetricsSchema = object(`${P}ContainerMetrics`, {
  name: opt(1, t.string(), 'Container name corresponding to the one from pod.spec.containers.'),
  usage: opt(2, t.map(t.quantity()), 'The memory usage is the memory working set.'),
});

/** NodeMetrics, as `k8s.io/metrics` v1beta1 (its Protobuf field numbers included). */
export const NodeMetricsSchema = object(
  `${P}NodeMetrics`,
  {
    ...OBJECT_HEAD,
    timestamp: opt(2, t.time(), 'The following fields define the time interval from which metrics were collected.'),
    window: opt(3, t.duration(), 'The length of the interval the usage was measured over.'),
    usage: opt(4, t.map(t.quantity()), 'The memory usage is the memory working set.'),
  },
  { description: 'NodeMetrics sets resource usage metrics of a node.' },
);
/** A NodeMetrics object in its JSON form. */
export type NodeMetrics = Static<typeof NodeMetricsSchema>;

/** PodMetrics, as `k8s.io/metrics` v1beta1 (its Protobuf field numbers included). */
export const PodMetricsSchema = object(
  `${P}PodMetrics`,
  {
    ...OBJECT_HEAD,
    timestamp: opt(2, t.time(), 'The following fields define the time interval from which metrics were collected.'),
    window: opt(3, t.duration(), 'The length of the interval the usage was measured over.'),
    containers: opt(
      4,
      t.array(ref(ContainerMetricsSchema)),
      'Metrics for all containers are collected within the same time window.',
    ),
  },
  { description: 'PodMetrics sets resource usage metrics of a pod.' },
);
/** A PodMetrics object in its JSON form. */
export type PodMetrics = Static<typeof PodMetricsSchema>;

/** A Go duration string written back as Go prints it (`15.000s` → `15s`); the input when it does not parse. */
function windowCell(window: string | undefined): string {
  if (!window) return '';
  try {
    return formatDuration(parseDuration(window));
  } catch {
    return window;
  }
}

/** The columns of the metrics server's tables: CPU, memory and window, as metrics-server prints them. */
function usageColumns<T>(
  usage: (o: T) => Record<string, string | number> | undefined,
  window: (o: T) => string | undefined,
): TableColumn<T>[] {
  return [
    { name: 'CPU', type: 'string', description: 'CPU usage (cores)', cell: (o) => String(usage(o)?.cpu ?? '') },
    {
      name: 'Memory',
      type: 'string',
      description: 'Memory usage (working set)',
      cell: (o) => String(usage(o)?.memory ?? ''),
    },
    {
      name: 'Window',
      type: 'string',
      description: 'Interval the usage was measured over',
      cell: (o) => windowCell(window(o)),
    },
  ];
}

/** The NodeMetrics kind: read-only (`get`, `list`), cluster-scoped. */
export const NodeMetricsKind = defineKind({
  group: METRICS_GROUP,
  version: 'v1beta1',
  kind: 'NodeMetrics',
  plural: 'nodes',
  singular: '',
  scope: 'Cluster',
  verbs: ['get', 'list'],
  schema: NodeMetricsSchema,
  persisted: false,
  columns: usageColumns<NodeMetrics>(
    (o) => o.usage,
    (o) => o.window,
  ),
});

/** The containers' usage added up: the CPU and Memory cells of a pod's row. */
function podUsage(o: PodMetrics): Record<string, string> | undefined {
  const cs = o.containers ?? [];
  if (!cs.length) return undefined;
  let milliCpu = 0n;
  let bytes = 0n;
  for (const c of cs) {
    milliCpu += quantityFromJSON(c.usage?.cpu ?? '0').milliValue();
    bytes += quantityFromJSON(c.usage?.memory ?? '0').value();
  }
  return {
    cpu: newMilliQuantity(milliCpu, 'DecimalSI').toString(),
    memory: newQuantity(bytes, 'BinarySI').toString(),
  };
}

/** The PodMetrics kind: read-only (`get`, `list`), namespaced. */
export const PodMetricsKind = defineKind({
  group: METRICS_GROUP,
  version: 'v1beta1',
  kind: 'PodMetrics',
  plural: 'pods',
  singular: '',
  scope: 'Namespaced',
  verbs: ['get', 'list'],
  schema: PodMetricsSchema,
  persisted: false,
  columns: usageColumns<PodMetrics>(podUsage, (o) => o.window),
});

/** The kinds of metrics.platform/v1beta1, in discovery order. */
export const METRICS_KINDS = [NodeMetricsKind, PodMetricsKind] as const;
