/**
 * Feature gates as Kubernetes' `component-base/featuregate`: a fixed set of known gates, each with a stage and a
 * default, overridden from `--feature-gates=Name=true,...`. `AllAlpha`/`AllBeta` switch every alpha/beta gate that
 * was not set explicitly. Unknown names and non-bool values are errors naming the gate.
 */
import { FlagValueError, parseBool } from '../options/parsers';

import { type FeatureSpec } from './known-features';

const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

/** A rejected gate setting; the message names the gate. */
export class FeatureGateError extends FlagValueError {
  readonly isFeatureGateError = true;
}

/** Brand check for {@link FeatureGateError}. */
export function isFeatureGateError(err: unknown): err is FeatureGateError {
  return (
    typeof err === 'object' && err !== null && (err as { isFeatureGateError?: unknown }).isFeatureGateError === true
  );
}

/** Read access to gates, what components depend on. */
export interface FeatureGateReader {
  /** Whether the gate is on. Throws for a name that is not a known gate (a programming error). */
  enabled(name: string): boolean;
}

/**
 * The gates of one component. Mutated only while options are parsed (`set`, `setFromMap`); read with `enabled`.
 */
export class FeatureGate implements FeatureGateReader {
  private readonly explicit = new Map<string, boolean>();

  constructor(readonly known: ReadonlyMap<string, FeatureSpec>) {}

  /** Whether `name` is on: its explicit setting, else AllAlpha/AllBeta for its stage, else its default. */
  enabled(name: string): boolean {
    const spec = this.known.get(name);
    if (!spec) throw new Error(`feature "${name}" is not registered in FeatureGate`);
    const set = this.explicit.get(name);
    if (set !== undefined) return set;
    if (spec.stage === 'ALPHA' && name !== ALL_ALPHA && this.explicit.get(ALL_ALPHA) === true) return true;
    if (spec.stage === 'BETA' && name !== ALL_BETA && this.explicit.get(ALL_BETA) === true) return true;
    return spec.default;
  }

  /**
   * Applies `Name=bool` settings in order. Validates every entry first, so a bad entry changes nothing; throws a
   * {@link FeatureGateError} naming the first bad gate (`unrecognized feature gate: Foo`).
   */
  setFromMap(settings: ReadonlyMap<string, boolean>): void {
    for (const name of settings.keys()) {
      const spec = this.known.get(name);
      if (!spec) throw new FeatureGateError(`unrecognized feature gate: ${name}`);
      if (spec.stage === 'GA' && settings.get(name) === false) {
        throw new FeatureGateError(`cannot set feature gate ${name} to false, feature is locked to true`);
      }
    }
    for (const [name, value] of settings) this.explicit.set(name, value);
  }

  /** Parses and applies the text of one `--feature-gates` occurrence (`A=true,B=false`). */
  set(text: string): void {
    const settings = new Map<string, boolean>();
    for (const raw of text.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const eq = item.indexOf('=');
      if (eq < 0) throw new FeatureGateError(`missing bool value for ${item}`);
      const key = item.slice(0, eq).trim();
      const value = item.slice(eq + 1).trim();
      let b: boolean;
      try {
        b = parseBool(value);
      } catch (err) {
        throw new FeatureGateError(`invalid value of ${key}=${value}, err: ${(err as Error).message}`);
      }
      settings.set(key, b);
    }
    this.setFromMap(settings);
  }

  /** Explicit settings as `A=true,B=false`, sorted by name (what Kubernetes prints). */
  toString(): string {
    return [...this.explicit]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  }

  /** Help lines `Name=true|false (STAGE - default=x)`, sorted, as Kubernetes' `KnownFeatures()`. */
  knownFeatures(): string[] {
    return [...this.known]
      .filter(([, s]) => s.stage !== 'GA')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, s]) => `${name}=true|false (${s.stage} - default=${s.default})`);
  }

  /** A copy with the same known gates and settings (for tests and per-component forks). */
  deepCopy(): FeatureGate {
    const g = new FeatureGate(this.known);
    for (const [k, v] of this.explicit) g.explicit.set(k, v);
    return g;
  }
}
