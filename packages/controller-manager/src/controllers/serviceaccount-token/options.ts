/**
 * `--service-account-private-key-file`, `--concurrent-serviceaccount-token-syncs`, and `--root-ca-file`, which
 * the root CA publisher's family defines (Kubernetes has one flag for both): this family reads the same flag.
 */
import { readFileSync } from 'node:fs';

import { type FlagDef, INT32, intFlag, stringFlag } from '@platform/common';
import { type Command } from 'commander';

import { ControllerOptions } from '../../controller';
import { loadSigningKey } from './token';

/** The values of the token controller's options. */
export interface ServiceAccountTokenConfig {
  /** Empty: the controller does not run (as in 1.21). */
  privateKeyFile: string;
  /** Empty: the CA of the client configuration. */
  rootCAFile: string;
  workers: number;
}

const ROOT_CA_FLAG = 'root-ca-file';

export class ServiceAccountTokenOptions extends ControllerOptions<ServiceAccountTokenConfig> {
  private readonly c: ServiceAccountTokenConfig = { privateKeyFile: '', rootCAFile: '', workers: 5 };

  constructor() {
    super('Service account token controller');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.c;
    return [
      stringFlag(
        'service-account-private-key-file',
        'Filename containing a PEM-encoded private RSA or ECDSA key used to sign service account tokens.',
        c.privateKeyFile,
        (v) => (c.privateKeyFile = v),
      ),
      intFlag(
        'concurrent-serviceaccount-token-syncs',
        'The number of service account token objects that are allowed to sync concurrently. Larger number = more responsive token generation, but more CPU (and network) load',
        c.workers,
        (v) => (c.workers = v),
        { range: INT32, type: 'int32' },
      ),
    ];
  }

  /**
   * Also reads `--root-ca-file`, which the root CA publisher's family defines (and checks): commander announces
   * every parsed option as an `option:<name>` event, whichever family registered it and in whatever order.
   */
  override addFlags(cmd: Command): void {
    super.addFlags(cmd);
    cmd.on(`option:${ROOT_CA_FLAG}`, (v: string) => (this.c.rootCAFile = v));
  }

  protected override validateValues(): Error[] {
    const c = this.c;
    const errs: Error[] = [];
    if (c.workers < 1)
      errs.push(new Error(`--concurrent-serviceaccount-token-syncs must be at least 1, got ${c.workers}`));
    if (c.privateKeyFile) {
      try {
        loadSigningKey(readFileSync(c.privateKeyFile));
      } catch (err) {
        errs.push(
          new Error(`--service-account-private-key-file: cannot use ${c.privateKeyFile}: ${(err as Error).message}`),
        );
      }
    }
    return errs;
  }

  values(): ServiceAccountTokenConfig {
    return { ...this.c };
  }
}
