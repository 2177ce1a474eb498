/** The scheduler's metrics (names and labels of Kubernetes 1.21 `pkg/scheduler/metrics`). */
import { type CounterMetric, type GaugeMetric, type HistogramMetric, MetricsRegistry } from '@platform/common';

/** Exponential buckets: `start`, `start×factor`, … (`count` of them). */
function exp(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

/** The metrics one scheduler process reports. */
export class SchedulerMetrics {
  readonly scheduleAttempts: CounterMetric;
  readonly e2eSchedulingDuration: HistogramMetric;
  readonly schedulingAlgorithmDuration: HistogramMetric;
  readonly pendingPods: GaugeMetric;
  readonly extensionPointDuration: HistogramMetric;
  readonly preemptionVictims: HistogramMetric;
  readonly preemptionAttempts: CounterMetric;
  readonly podSchedulingAttempts: HistogramMetric;

  constructor(readonly registry: MetricsRegistry = new MetricsRegistry()) {
    this.scheduleAttempts = registry.counter({
      name: 'scheduler_schedule_attempts_total',
      help: 'Number of attempts to schedule pods, by the result. "unschedulable" means a pod could not be scheduled, while "error" means an internal scheduler problem.',
      labelNames: ['result', 'profile'],
    });
    this.e2eSchedulingDuration = registry.histogram({
      name: 'scheduler_e2e_scheduling_duration_seconds',
      help: 'E2e scheduling latency in seconds (scheduling algorithm + binding)',
      labelNames: ['result', 'profile'],
      buckets: exp(0.001, 2, 15),
    });
    this.schedulingAlgorithmDuration = registry.histogram({
      name: 'scheduler_scheduling_algorithm_duration_seconds',
      help: 'Scheduling algorithm latency in seconds',
      buckets: exp(0.001, 2, 15),
    });
    this.pendingPods = registry.gauge({
      name: 'scheduler_pending_pods',
      help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableQ.",
      labelNames: ['queue'],
    });
    this.extensionPointDuration = registry.histogram({
      name: 'scheduler_framework_extension_point_duration_seconds',
      help: 'Latency for running all plugins of a specific extension point.',
      labelNames: ['extension_point', 'status', 'profile'],
      buckets: exp(0.0001, 2, 12),
    });
    this.preemptionVictims = registry.histogram({
      name: 'scheduler_preemption_victims',
      help: 'Number of selected preemption victims',
      buckets: exp(1, 2, 7),
    });
    this.preemptionAttempts = registry.counter({
      name: 'scheduler_preemption_attempts_total',
      help: 'Total preemption attempts in the cluster till now',
    });
    this.podSchedulingAttempts = registry.histogram({
      name: 'scheduler_pod_scheduling_attempts',
      help: 'Number of attempts to successfully schedule a pod.',
      buckets: exp(1, 2, 5),
    });
  }

  /** The queue's counts. */
  setPending(c: { active: number; backoff: number; unschedulable: number }): void {
    this.pendingPods.set({ queue: 'active' }, c.active);
    this.pendingPods.set({ queue: 'backoff' }, c.backoff);
    this.pendingPods.set({ queue: 'unschedulable' }, c.unschedulable);
  }
}
