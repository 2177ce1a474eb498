/**
 * The client connection option family of the daemons that talk to the API server (Document 2, controller manager
 * options; Document 3 for the scheduler and node agent): `--clientconfig`, `--master`, `--api-content-type`,
 * `--api-qps`, `--api-burst`. Defaults differ per daemon (`--api-burst` is 30 for the controller manager, 100 for
 * the scheduler, 10 for the node agent), so the daemon passes its own.
 */
import {
  isProtobufMediaType,
  JSON_MEDIA_TYPE,
  KUBERNETES_PROTOBUF_MEDIA_TYPE,
  PROTOBUF_MEDIA_TYPE,
} from '@platform/api';
import { type FlagDef, OptionGroupBase, floatFlag, intFlag, stringFlag } from '@platform/common';

import { DEFAULT_CLIENT_SETTINGS, loadClientConfig, type RestConfig } from '../config/client-config';

/** The values of the family. */
export interface ClientConnectionConfig {
  clientConfig: string;
  master: string;
  contentType: string;
  qps: number;
  burst: number;
}

/** The client connection option family. `applyTo` loads the client configuration file. */
export class ClientConnectionOptions extends OptionGroupBase<{ client?: RestConfig }> {
  readonly config: ClientConnectionConfig;

  constructor(defaults: Partial<Pick<ClientConnectionConfig, 'qps' | 'burst'>> = {}) {
    super('Client connection');
    this.config = {
      clientConfig: '',
      master: '',
      contentType: DEFAULT_CLIENT_SETTINGS.contentType,
      qps: defaults.qps ?? DEFAULT_CLIENT_SETTINGS.qps,
      burst: defaults.burst ?? DEFAULT_CLIENT_SETTINGS.burst,
    };
  }

  protected flagDefs(): FlagDef[] {
    const c = this.config;
    return [
      stringFlag(
        'clientconfig',
        'Path to a client configuration file (kubeconfig format) with authorization and master location information.',
        c.clientConfig,
        (v) => (c.clientConfig = v),
      ),
      stringFlag(
        'master',
        'The address of the API server (overrides any value in the client configuration).',
        c.master,
        (v) => (c.master = v),
      ),
      stringFlag(
        'api-content-type',
        'Content type of requests sent to the API server.',
        c.contentType,
        (v) => (c.contentType = v),
      ),
      floatFlag('api-qps', 'QPS to use while talking with the API server.', c.qps, (v) => (c.qps = v)),
      intFlag('api-burst', 'Burst to use while talking with the API server.', c.burst, (v) => (c.burst = v), {
        type: 'int32',
      }),
    ];
  }

  protected override validateValues(): Error[] {
    const c = this.config;
    const errs: Error[] = [];
    if (!isProtobufMediaType(c.contentType) && c.contentType !== JSON_MEDIA_TYPE)
      errs.push(
        new Error(
          `--api-content-type: unsupported content type ${JSON.stringify(c.contentType)}: want ${PROTOBUF_MEDIA_TYPE}, ${KUBERNETES_PROTOBUF_MEDIA_TYPE} or ${JSON_MEDIA_TYPE}`,
        ),
      );
    if (!(c.qps >= 0)) errs.push(new Error(`--api-qps must not be negative, got ${c.qps}`));
    if (c.qps > 0 && c.burst < 1) errs.push(new Error(`--api-burst must be at least 1 when --api-qps is above 0`));
    if (!c.clientConfig && !c.master) errs.push(new Error('one of --clientconfig or --master is required'));
    return errs;
  }

  /** Loads the client configuration; throws `ClientConfigError` naming the file and field when it is wrong. */
  applyTo(config: { client?: RestConfig }): void {
    const c = this.config;
    const loaded = loadClientConfig({ clientConfig: c.clientConfig || undefined, master: c.master || undefined });
    config.client = { ...loaded, contentType: c.contentType, qps: c.qps, burst: c.burst };
  }
}
