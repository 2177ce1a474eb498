/**
 * The metrics option family: `--allow-metric-labels`, `--disabled-metrics`, `--show-hidden-metrics-for-version`.
 */
import { previousMinorVersion } from '../version/version';

import { type FlagDef, OptionGroupBase, stringArrayFlag, stringFlag, stringsFlag } from './flags';
import { FlagValueError } from './parsers';

/** Settings the metrics registry honours. */
export interface MetricsConfig {
  /** Fully qualified names of metrics that are not exposed. */
  disabledMetrics: string[];
  /** `metric` → `label` → allowed values; any other value is exposed as `unexpected`. */
  allowListMapping: Map<string, Map<string, Set<string>>>;
  /** `<major>.<minor>` whose hidden metrics are shown again, or empty. */
  showHiddenMetricsForVersion: string;
}

const ENTRY =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*),([a-zA-Z_][a-zA-Z0-9_]*)=('([^']*)'|"([^"]*)"|(.*?))(?:,(?=[a-zA-Z_:][a-zA-Z0-9_:]*,[a-zA-Z_][a-zA-Z0-9_]*=)|$)/;

/**
 * Parses one `--allow-metric-labels` occurrence: `metric,label='v1,v2',metric2,label2=v3` (quotes optional). Throws
 * naming the part that does not fit `<MetricName>,<LabelName>=<allowed_value>,...`.
 */
export function parseAllowMetricLabels(text: string): [metric: string, label: string, values: string[]][] {
  const out: [string, string, string[]][] = [];
  let rest = text.trim();
  while (rest !== '') {
    const m = ENTRY.exec(rest);
    if (!m) {
      throw new FlagValueError(
        `malformed entry ${JSON.stringify(rest)}: expect <MetricName>,<LabelName>=<allowed_value>,<allowed_value>...`,
      );
    }
    const raw = m[4] ?? m[5] ?? m[6] ?? '';
    out.push([
      m[1]!,
      m[2]!,
      raw
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== ''),
    ]);
    rest = rest.slice(m[0].length).trim();
  }
  return out;
}

/** The metrics option family. */
export class MetricsOptions extends OptionGroupBase<{ metrics?: MetricsConfig }> {
  readonly config: MetricsConfig = {
    disabledMetrics: [],
    allowListMapping: new Map(),
    showHiddenMetricsForVersion: '',
  };

  constructor() {
    super('Metrics');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.config;
    return [
      stringArrayFlag(
        'allow-metric-labels',
        "The map from metric-label to value allow-list of this label. The key's format is <MetricName>,<LabelName>. The value's format is <allowed_value>,<allowed_value>...e.g. metric1,label1='v1,v2,v3', metric1,label2='v1,v2,v3' metric2,label1='v1,v2,v3'.",
        [],
        () => {},
        {
          type: 'mapStringString',
          item: (raw) => {
            for (const [metric, label, values] of parseAllowMetricLabels(raw)) {
              const labels = c.allowListMapping.get(metric) ?? new Map<string, Set<string>>();
              labels.set(label, new Set(values));
              c.allowListMapping.set(metric, labels);
            }
            return raw;
          },
        },
      ),
      stringsFlag(
        'disabled-metrics',
        'This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it. Disclaimer: disabling metrics is higher in precedence than showing hidden metrics.',
        [],
        (v) => (c.disabledMetrics = v),
        {
          item: (s) => {
            if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(s))
              throw new FlagValueError(`${JSON.stringify(s)} is not a valid metric name`);
            return s;
          },
        },
      ),
      stringFlag(
        'show-hidden-metrics-for-version',
        "The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: '1.16'. The purpose of this format is make sure you have the opportunity to notice if the next release hides additional metrics, rather than being surprised when they are permanently removed in the release after that.",
        '',
        (v) => (c.showHiddenMetricsForVersion = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const v = this.config.showHiddenMetricsForVersion;
    if (v === '') return [];
    if (!/^[0-9]+\.[0-9]+$/.test(v)) {
      return [
        new Error(
          `--show-hidden-metrics-for-version: illegal version string ${JSON.stringify(v)}: want <major>.<minor>, e.g. ${previousMinorVersion()}`,
        ),
      ];
    }
    if (v !== previousMinorVersion()) {
      return [
        new Error(
          `--show-hidden-metrics-for-version must be omitted or have the value '${previousMinorVersion()}'. Only the previous minor version is allowed`,
        ),
      ];
    }
    return [];
  }

  applyTo(config: { metrics?: MetricsConfig }): void {
    config.metrics = {
      disabledMetrics: [...this.config.disabledMetrics],
      allowListMapping: new Map(this.config.allowListMapping),
      showHiddenMetricsForVersion: this.config.showHiddenMetricsForVersion,
    };
  }
}
