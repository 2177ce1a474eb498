/** Option families shared by controllers whose only tuning is a count of workers (and perhaps a period). */
import { type FlagDef, INT32, intFlag } from '@platform/common';

import { ControllerOptions } from '../../controller';

/** `--concurrent-<x>-syncs`: how many keys the controller syncs at once. */
export class ConcurrentSyncsOptions extends ControllerOptions<{ workers: number }> {
  private workers: number;

  constructor(
    title: string,
    private readonly flag: string,
    private readonly defaultWorkers: number,
    private readonly what: string,
  ) {
    super(title);
    this.workers = defaultWorkers;
  }

  protected flagDefs(): FlagDef[] {
    return [
      intFlag(
        this.flag,
        `The number of ${this.what} that are allowed to sync concurrently. Larger number = more responsive ${this.what}, but more CPU (and network) load`,
        this.defaultWorkers,
        (v) => (this.workers = v),
        { range: INT32, type: 'int32' },
      ),
    ];
  }

  protected override validateValues(): Error[] {
    return this.workers < 1 ? [new Error(`--${this.flag} must be at least 1, got ${this.workers}`)] : [];
  }

  values(): { workers: number } {
    return { workers: this.workers };
  }
}
