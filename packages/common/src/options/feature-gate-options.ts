/** `--feature-gates` for one component's {@link FeatureGate}. */
import { type FeatureGate } from '../features/feature-gate';

import { type FlagDef, OptionGroupBase } from './flags';

/** The feature gate option family; values go straight into the gate it was built with. */
export class FeatureGateOptions extends OptionGroupBase<{ featureGate?: FeatureGate }> {
  /** @param deprecated the node agent's message (Document 3 marks the flag deprecated there). */
  constructor(
    readonly gate: FeatureGate,
    private readonly deprecated?: string,
  ) {
    super('Feature gate');
  }

  protected flagDefs(): FlagDef[] {
    return [
      {
        name: 'feature-gates',
        type: 'mapStringBool',
        usage: `A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n${this.gate.knownFeatures().join('\n')}`,
        defaultText: '',
        ...(this.deprecated !== undefined ? { deprecated: this.deprecated } : {}),
        set: (raw) => this.gate.set(raw),
      },
    ];
  }

  applyTo(config: { featureGate?: FeatureGate }): void {
    config.featureGate = this.gate;
  }
}
