import { MetricsOptions, parseAllowMetricLabels } from './metrics-options';
import { parseForTest } from './testing/parse';

const parse = parseForTest;

describe('metrics options', () => {
  it('parses the allow-list, disabled metrics and the hidden version', () => {
    const o = new MetricsOptions();
    const r = parse(
      [o],
      [
        "--allow-metric-labels=apiserver_request_total,verb='GET,LIST',apiserver_request_total,code=200",
        '--allow-metric-labels=workqueue_depth,name="a,b"',
        '--disabled-metrics=a_total,b_total',
        '--disabled-metrics=c_total',
        '--show-hidden-metrics-for-version=1.20',
      ],
    );
    expect(r.errors).toEqual([]);
    const config: Parameters<MetricsOptions['applyTo']>[0] = {};
    o.applyTo(config);
    expect(config.metrics!.disabledMetrics).toEqual(['a_total', 'b_total', 'c_total']);
    const allow = config.metrics!.allowListMapping;
    expect([...allow.get('apiserver_request_total')!.get('verb')!]).toEqual(['GET', 'LIST']);
    expect([...allow.get('apiserver_request_total')!.get('code')!]).toEqual(['200']);
    expect([...allow.get('workqueue_depth')!.get('name')!]).toEqual(['a', 'b']);
    expect(parseAllowMetricLabels('m,l=v1,v2')).toEqual([['m', 'l', ['v1', 'v2']]]);
  });

  it('rejects bad values', () => {
    const r = parse([new MetricsOptions()], ['--allow-metric-labels=justametric', '--disabled-metrics=bad-name']);
    expect(r.messages).toEqual([
      'invalid argument "justametric" for "--allow-metric-labels" flag: malformed entry "justametric": expect <MetricName>,<LabelName>=<allowed_value>,<allowed_value>...',
      'invalid argument "bad-name" for "--disabled-metrics" flag: "bad-name" is not a valid metric name',
    ]);
    expect(parse([new MetricsOptions()], ['--show-hidden-metrics-for-version=1.19']).messages).toEqual([
      "--show-hidden-metrics-for-version must be omitted or have the value '1.20'. Only the previous minor version is allowed",
    ]);
    expect(parse([new MetricsOptions()], ['--show-hidden-metrics-for-version=v1']).messages[0]).toMatch(
      /illegal version string "v1"/,
    );
  });
});
