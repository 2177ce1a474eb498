/**
 * The admission options of `platform-apiserver` (model: apiserver `pkg/server/options/admission.go` and
 * kube-apiserver's plugin options): which plugins run (`--enable-admission-plugins`,
 * `--disable-admission-plugins`, Document 2's default set otherwise), their configuration file
 * (`--admission-control-config-file`), the DefaultTolerationSeconds settings, and the client certificate the server
 * presents to admission webhooks (`--proxy-client-cert-file`, `--proxy-client-key-file`).
 *
 * An unknown plugin name, a plugin both enabled and disabled, an unreadable or malformed configuration file, or
 * only one of the client certificate pair stops the start with an error saying which.
 */
import { readFileSync } from 'node:fs';

import { type FlagDef, intFlag, OptionGroupBase, stringFlag, stringsFlag } from '@platform/common';

import { readAdmissionConfigFile } from '../admission/config';
import { enabledPlugins } from '../admission/registry';
import { type AdmissionConfig } from '../admission/server-admission';

/** What the admission options fill in. */
export interface AdmissionFlagsConfig {
  admission?: AdmissionConfig;
}

/** `--enable-admission-plugins` and the rest of the admission family. */
export class AdmissionOptions extends OptionGroupBase<AdmissionFlagsConfig> {
  enable: string[] = [];
  disable: string[] = [];
  configFile = '';
  defaultNotReadyTolerationSeconds = 300;
  defaultUnreachableTolerationSeconds = 300;
  proxyClientCertFile = '';
  proxyClientKeyFile = '';

  constructor() {
    super('Admission');
  }

  protected flagDefs(): FlagDef[] {
    return [
      stringsFlag(
        'enable-admission-plugins',
        `admission plugins that should be enabled in addition to default enabled ones. Comma-delimited list of admission plugins; the order of plugins in this flag does not matter.`,
        this.enable,
        (v) => (this.enable = v),
      ),
      stringsFlag(
        'disable-admission-plugins',
        'admission plugins that should be disabled although they are in the default enabled plugins list. Comma-delimited list of admission plugins; the order of plugins in this flag does not matter.',
        this.disable,
        (v) => (this.disable = v),
      ),
      stringFlag(
        'admission-control-config-file',
        'File with admission control configuration.',
        this.configFile,
        (v) => (this.configFile = v),
      ),
      intFlag(
        'default-not-ready-toleration-seconds',
        'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.',
        this.defaultNotReadyTolerationSeconds,
        (v) => (this.defaultNotReadyTolerationSeconds = v),
        { range: { min: 0 } },
      ),
      intFlag(
        'default-unreachable-toleration-seconds',
        'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.',
        this.defaultUnreachableTolerationSeconds,
        (v) => (this.defaultUnreachableTolerationSeconds = v),
        { range: { min: 0 } },
      ),
      stringFlag(
        'proxy-client-cert-file',
        'Client certificate used to prove the identity of the aggregator or apiserver when it must call out during a request. This includes proxying requests to a user api-server and calling out to webhook admission plugins.',
        this.proxyClientCertFile,
        (v) => (this.proxyClientCertFile = v),
      ),
      stringFlag(
        'proxy-client-key-file',
        'Private key for the client certificate used to prove the identity of the aggregator or apiserver when it must call out during a request. This includes proxying requests to a user api-server and calling out to webhook admission plugins.',
        this.proxyClientKeyFile,
        (v) => (this.proxyClientKeyFile = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    try {
      enabledPlugins(this.enable, this.disable);
    } catch (err) {
      errs.push(new Error(`--enable-admission-plugins/--disable-admission-plugins: ${(err as Error).message}`));
    }
    if (!this.proxyClientCertFile !== !this.proxyClientKeyFile) {
      errs.push(new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together'));
    }
    return errs;
  }

  applyTo(config: AdmissionFlagsConfig): void {
    const read = (file: string, flag: string): string => {
      try {
        return readFileSync(file, 'utf8');
      } catch (err) {
        throw new Error(`${flag}: cannot read ${file}: ${(err as Error).message}`);
      }
    };
    config.admission = {
      plugins: enabledPlugins(this.enable, this.disable),
      ...(this.configFile ? { configs: readAdmissionConfigFile(this.configFile) } : {}),
      settings: {
        defaultNotReadyTolerationSeconds: this.defaultNotReadyTolerationSeconds,
        defaultUnreachableTolerationSeconds: this.defaultUnreachableTolerationSeconds,
        boundServiceAccountTokenVolume: true,
        ...(this.proxyClientCertFile
          ? {
              proxyClientCert: {
                cert: read(this.proxyClientCertFile, '--proxy-client-cert-file'),
                key: read(this.proxyClientKeyFile, '--proxy-client-key-file'),
              },
            }
          : {}),
      },
    };
  }
}
