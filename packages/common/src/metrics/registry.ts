/**
 * The metrics registry of a daemon, on prom-client, honouring the metrics flags the way Kubernetes'
 * `component-base/metrics` does:
 * - `--disabled-metrics`: a disabled metric still works for its owner but is never exposed;
 * - `--allow-metric-labels`: a label value outside the allow-list is recorded as `unexpected`;
 * - deprecation: a metric deprecated in the current minor version gets `(Deprecated since 1.21.0)` in its help; one
 *   deprecated in an earlier version is hidden, unless `--show-hidden-metrics-for-version` names that version.
 * Daemons create their metrics here (names as Kubernetes': `apiserver_request_total`, `workqueue_depth`, ...).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

import { type MetricsConfig } from '../options/metrics-options';
import { KUBERNETES_VERSION } from '../version/version';

/** Label values of one observation. */
export type Labels = Record<string, string | number>;

/** Common metric options. */
export interface MetricOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** `<major>.<minor>` in which the metric was deprecated. */
  deprecatedVersion?: string;
}

/** A counter. */
export interface CounterMetric {
  inc(labels?: Labels, value?: number): void;
}

/** A gauge. */
export interface GaugeMetric {
  set(labels: Labels, value: number): void;
  inc(labels?: Labels, value?: number): void;
  dec(labels?: Labels, value?: number): void;
}

/** A histogram (`buckets` in the unit of the metric, seconds for durations). */
export interface HistogramMetric {
  observe(labels: Labels, value: number): void;
  /** Starts a timer; calling the result observes the elapsed seconds. */
  startTimer(labels?: Labels): () => void;
}

/** A duplicate metric name or a malformed deprecated version (programming errors). */
export class MetricRegistrationError extends Error {
  readonly isMetricRegistrationError = true;
}

/** Brand check for {@link MetricRegistrationError}. */
export function isMetricRegistrationError(err: unknown): err is MetricRegistrationError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { isMetricRegistrationError?: unknown }).isMetricRegistrationError === true
  );
}

function minorOf(version: string): [number, number] {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  if (!m) throw new MetricRegistrationError(`malformed deprecated version ${JSON.stringify(version)}`);
  return [Number(m[1]), Number(m[2])];
}

/** One daemon's metrics. */
export class MetricsRegistry {
  /** What `/metrics` serves. */
  readonly registry = new Registry();
  private readonly config: MetricsConfig;
  private readonly names = new Set<string>();

  constructor(config?: MetricsConfig, o: { collectDefaultMetrics?: boolean } = {}) {
    this.config = config ?? { disabledMetrics: [], allowListMapping: new Map(), showHiddenMetricsForVersion: '' };
    // Kubernetes exposes process_* metrics; ours add nodejs_* where Kubernetes has go_*.
    if (o.collectDefaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Whether `--disabled-metrics` or hiding keeps a metric from being exposed. */
  isExposed(o: MetricOptions): boolean {
    if (this.config.disabledMetrics.includes(o.name)) return false;
    if (o.deprecatedVersion === undefined) return true;
    const [major, minor] = minorOf(o.deprecatedVersion);
    const current = KUBERNETES_VERSION;
    const hidden = major < current.major || (major === current.major && minor < current.minor);
    return !hidden || this.config.showHiddenMetricsForVersion === `${major}.${minor}`;
  }

  private prepare(o: MetricOptions): {
    help: string;
    registers: Registry[];
    sanitize: (l: Labels | undefined) => Labels;
  } {
    if (this.names.has(o.name)) throw new MetricRegistrationError(`metric ${o.name} is already registered`);
    this.names.add(o.name);
    let help = o.help;
    if (o.deprecatedVersion !== undefined) {
      const [major, minor] = minorOf(o.deprecatedVersion);
      help = `(Deprecated since ${major}.${minor}.0) ${help}`;
    }
    const allow = this.config.allowListMapping.get(o.name);
    const sanitize = (labels: Labels | undefined): Labels => {
      if (!labels) return {};
      if (!allow) return labels;
      const out: Labels = { ...labels };
      for (const [label, values] of allow) {
        const v = out[label];
        if (v !== undefined && !values.has(String(v))) out[label] = 'unexpected';
      }
      return out;
    };
    return { help, registers: this.isExposed(o) ? [this.registry] : [], sanitize };
  }

  /** Creates a counter. Throws {@link MetricRegistrationError} for a duplicate name. */
  counter(o: MetricOptions): CounterMetric {
    const { help, registers, sanitize } = this.prepare(o);
    const c = new Counter({ name: o.name, help, labelNames: [...(o.labelNames ?? [])], registers });
    return { inc: (labels, value = 1) => c.inc(sanitize(labels), value) };
  }

  /** Creates a gauge. */
  gauge(o: MetricOptions): GaugeMetric {
    const { help, registers, sanitize } = this.prepare(o);
    const g = new Gauge({ name: o.name, help, labelNames: [...(o.labelNames ?? [])], registers });
    return {
      set: (labels, value) => g.set(sanitize(labels), value),
      inc: (labels, value = 1) => g.inc(sanitize(labels), value),
      dec: (labels, value = 1) => g.dec(sanitize(labels), value),
    };
  }

  /** Creates a histogram. */
  histogram(o: MetricOptions & { buckets?: number[] }): HistogramMetric {
    const { help, registers, sanitize } = this.prepare(o);
    const h = new Histogram({
      name: o.name,
      help,
      labelNames: [...(o.labelNames ?? [])],
      registers,
      ...(o.buckets ? { buckets: o.buckets } : {}),
    });
    return {
      observe: (labels, value) => h.observe(sanitize(labels), value),
      startTimer: (labels) => {
        const end = h.startTimer(sanitize(labels));
        return () => void end();
      },
    };
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
