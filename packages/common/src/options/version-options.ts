/**
 * `--version` (`--version`, `--version=true`, `--version=raw`, `--version=false`), as Kubernetes' `verflag`.
 * After parsing, `main` calls {@link VersionOptions.printIfRequested} and exits 0 when it returns true.
 */
import { formatRawVersion, formatVersionLine } from '../version/version';

import { type FlagDef, OptionGroupBase } from './flags';
import { FlagValueError, parseBool } from './parsers';

/** What `--version` asked for. */
export type VersionRequest = 'none' | 'line' | 'raw';

/** The `--version` flag (section "Generic"). */
export class VersionOptions extends OptionGroupBase<unknown> {
  request: VersionRequest = 'none';

  /** @param component daemon name without prefix (`apiserver`), printed as `platform-apiserver v0.1.0`. */
  constructor(private readonly component: string) {
    super('Generic');
  }

  protected flagDefs(): FlagDef[] {
    return [
      {
        name: 'version',
        type: 'version[=true]',
        usage: 'Print version information and quit; --version=raw prints every build field',
        defaultText: '',
        noOptDefVal: 'true',
        set: (raw) => {
          if (raw === 'raw') {
            this.request = 'raw';
            return;
          }
          try {
            this.request = parseBool(raw) ? 'line' : 'none';
          } catch {
            throw new FlagValueError(`want true, false or raw, got ${JSON.stringify(raw)}`);
          }
        },
      },
    ];
  }

  /** Writes the version to `out` when asked for; returns true then (the caller exits 0). */
  printIfRequested(out: (text: string) => void = (t) => process.stdout.write(t)): boolean {
    if (this.request === 'none') return false;
    out(`${this.request === 'raw' ? formatRawVersion() : formatVersionLine(this.component)}\n`);
    return true;
  }

  applyTo(): void {}
}
