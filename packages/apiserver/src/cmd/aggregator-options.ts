/**
 * The aggregation layer's own option (`--enable-aggregator-routing`). The proxy client certificate
 * (`--proxy-client-cert-file`) is an admission option, shared with webhooks; the user headers are `--requestheader-*`.
 */
import { boolFlag, type FlagDef, OptionGroupBase } from '@platform/common';

import { type AggregatorConfig } from '../aggregator/aggregator';

/** What the aggregator options fill in. */
export interface AggregatorFlagsConfig {
  aggregator?: AggregatorConfig;
}

/** `--enable-aggregator-routing`. */
export class AggregatorOptions extends OptionGroupBase<AggregatorFlagsConfig> {
  enableAggregatorRouting = false;

  constructor() {
    super('Aggregator');
  }

  protected flagDefs(): FlagDef[] {
    return [
      boolFlag(
        'enable-aggregator-routing',
        'Turns on aggregator routing requests to endpoints IP rather than cluster IP.',
        this.enableAggregatorRouting,
        (v) => (this.enableAggregatorRouting = v),
      ),
    ];
  }

  applyTo(config: AggregatorFlagsConfig): void {
    config.aggregator = { ...config.aggregator, enableAggregatorRouting: this.enableAggregatorRouting };
  }
}
