/**
 * `--profiling` and `--contention-profiling` ("Debugging" flags). Profiling serves `/debug/pprof/` (CPU profiles
 * through the inspector, heap snapshots); Node has no lock-contention profile, so `--contention-profiling` is
 * accepted for compatibility and only recorded.
 */
import { type FlagDef, OptionGroupBase, boolFlag } from './flags';

/** Values of the debugging flags. */
export interface ProfilingConfig {
  enableProfiling: boolean;
  enableContentionProfiling: boolean;
}

/** Per-daemon defaults and deprecations (the scheduler: contention on and both flags deprecated). */
export interface ProfilingDefaults {
  profiling?: boolean;
  contentionProfiling?: boolean;
  profilingDeprecated?: string;
  contentionProfilingDeprecated?: string;
}

/** The debugging option family. */
export class ProfilingOptions extends OptionGroupBase<{ profiling?: ProfilingConfig }> {
  enableProfiling: boolean;
  enableContentionProfiling: boolean;

  constructor(private readonly defaults: ProfilingDefaults = {}) {
    super('Debugging');
    this.enableProfiling = defaults.profiling ?? true;
    this.enableContentionProfiling = defaults.contentionProfiling ?? false;
  }

  protected flagDefs(): FlagDef[] {
    const d = this.defaults;
    return [
      boolFlag(
        'contention-profiling',
        'Enable lock contention profiling, if profiling is enabled (accepted for compatibility: Node.js has no lock contention profile)',
        this.enableContentionProfiling,
        (v) => (this.enableContentionProfiling = v),
        d.contentionProfilingDeprecated !== undefined ? { deprecated: d.contentionProfilingDeprecated } : {},
      ),
      boolFlag(
        'profiling',
        'Enable profiling via web interface host:port/debug/pprof/',
        this.enableProfiling,
        (v) => (this.enableProfiling = v),
        d.profilingDeprecated !== undefined ? { deprecated: d.profilingDeprecated } : {},
      ),
    ];
  }

  applyTo(config: { profiling?: ProfilingConfig }): void {
    config.profiling = {
      enableProfiling: this.enableProfiling,
      enableContentionProfiling: this.enableContentionProfiling,
    };
  }
}
