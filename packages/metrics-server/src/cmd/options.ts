/**
 * The metrics server's own options (model: metrics-server 0.5 `cmd/metrics-server/app/options`): `--clientconfig`
 * (metrics-server's `--kubeconfig`, as this project names it), `--metric-resolution`, and the node agent client
 * family — metrics-server's `--kubelet-*` options, named `--agent-*` as the API server's are.
 */
import { existsSync } from 'node:fs';

import {
  type FlagDef,
  FlagValueError,
  OptionGroupBase,
  boolFlag,
  durationFlag,
  intFlag,
  stringFlag,
  stringsFlag,
} from '@platform/common';

import { NODE_ADDRESS_TYPES } from '../scraper/address';

/** The values of the metrics server's own flags. */
export interface MetricsServerFlags {
  clientConfig: string;
  /** ms */
  metricResolutionMs: number;
}

/** The values of the node agent client flags. */
export interface AgentClientFlags {
  port: number;
  useNodeStatusPort: boolean;
  preferredAddressTypes: string[];
  insecureTls: boolean;
  certificateAuthority: string;
  clientCertificate: string;
  clientKey: string;
  completelyInsecure: boolean;
}

/** The shortest `--metric-resolution`: below metrics-server's 10 s only for tests and demonstrations. */
export const MIN_METRIC_RESOLUTION_MS = 1000;

/** `--clientconfig` and `--metric-resolution`. */
export class MetricsServerOptions extends OptionGroupBase<{ metricsServer?: MetricsServerFlags }> {
  readonly f: MetricsServerFlags = { clientConfig: '', metricResolutionMs: 60_000 };

  constructor() {
    super('Metrics server');
  }

  protected flagDefs(): FlagDef[] {
    const f = this.f;
    return [
      stringFlag(
        'clientconfig',
        'The path to the client configuration file used to connect to the API server and the node agents.',
        f.clientConfig,
        (v) => (f.clientConfig = v),
      ),
      durationFlag(
        'metric-resolution',
        'The resolution at which the metrics server will retain metrics: how often the node agents are scraped. Usage appears after the second scrape.',
        f.metricResolutionMs,
        (v) => (f.metricResolutionMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const errs: Error[] = [];
    if (this.f.metricResolutionMs < MIN_METRIC_RESOLUTION_MS)
      errs.push(
        new Error(
          `--metric-resolution should be a time duration at least 1s, but value ${this.f.metricResolutionMs}ms provided`,
        ),
      );
    if (!this.f.clientConfig) errs.push(new Error('--clientconfig is required (there is no in-cluster configuration)'));
    else if (!existsSync(this.f.clientConfig))
      errs.push(new Error(`--clientconfig: file ${JSON.stringify(this.f.clientConfig)} does not exist`));
    return errs;
  }

  protected override extraWarnings(): string[] {
    return this.f.metricResolutionMs < 10_000
      ? ['--metric-resolution below 10s scrapes the node agents often: meant for tests and demonstrations']
      : [];
  }

  applyTo(config: { metricsServer?: MetricsServerFlags }): void {
    config.metricsServer = { ...this.f };
  }
}

/** The node agent client flags (metrics-server's `--kubelet-*`). */
export class AgentClientOptions extends OptionGroupBase<{ agentClient?: AgentClientFlags }> {
  readonly f: AgentClientFlags = {
    port: 10250,
    useNodeStatusPort: false,
    preferredAddressTypes: [...NODE_ADDRESS_TYPES],
    insecureTls: false,
    certificateAuthority: '',
    clientCertificate: '',
    clientKey: '',
    completelyInsecure: false,
  };

  constructor() {
    super('Node agent client');
  }

  protected flagDefs(): FlagDef[] {
    const f = this.f;
    return [
      intFlag('agent-port', 'The port to use to connect to node agents.', f.port, (v) => (f.port = v), {
        range: { min: 1, max: 65535 },
      }),
      boolFlag(
        'agent-use-node-status-port',
        'Use the port in the node status (status.daemonEndpoints.kubeletEndpoint.Port). Takes precedence over --agent-port.',
        f.useNodeStatusPort,
        (v) => (f.useNodeStatusPort = v),
      ),
      stringsFlag(
        'agent-preferred-address-types',
        'The priority of node address types to use when determining which address to use to connect to a particular node.',
        f.preferredAddressTypes,
        (v) => (f.preferredAddressTypes = v),
        {
          item: (s) => {
            if (!NODE_ADDRESS_TYPES.includes(s))
              throw new FlagValueError(
                `unknown node address type ${JSON.stringify(s)}: choose from ${NODE_ADDRESS_TYPES.join(', ')}`,
              );
            return s;
          },
        },
      ),
      boolFlag(
        'agent-insecure-tls',
        'Do not verify CA of serving certificates presented by node agents. For testing purposes only.',
        f.insecureTls,
        (v) => (f.insecureTls = v),
      ),
      stringFlag(
        'agent-certificate-authority',
        "Path to the CA to use to validate the node agents' serving certificates.",
        f.certificateAuthority,
        (v) => (f.certificateAuthority = v),
      ),
      stringFlag(
        'agent-client-certificate',
        'Path to a client cert file for TLS. Default: the client certificate of --clientconfig.',
        f.clientCertificate,
        (v) => (f.clientCertificate = v),
      ),
      stringFlag('agent-client-key', 'Path to a client key file for TLS.', f.clientKey, (v) => (f.clientKey = v)),
      boolFlag(
        'deprecated-agent-completely-insecure',
        "DEPRECATED: Do not use any encryption, authorization, or authentication when communicating with the node agent. This is rarely the right option, since it leaves node agent communication completely insecure. If you encounter auth errors, make sure you've enabled token webhook auth on the node agent, and if you're in a test cluster with self-signed node agent certificates, consider using agent-insecure-tls instead.",
        f.completelyInsecure,
        (v) => (f.completelyInsecure = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const f = this.f;
    const errs: Error[] = [];
    for (const [flag, path] of [
      ['agent-certificate-authority', f.certificateAuthority],
      ['agent-client-certificate', f.clientCertificate],
      ['agent-client-key', f.clientKey],
    ] as const)
      if (path && !existsSync(path)) errs.push(new Error(`--${flag}: file ${JSON.stringify(path)} does not exist`));
    if (!f.clientCertificate !== !f.clientKey)
      errs.push(new Error('--agent-client-certificate and --agent-client-key must be given together'));
    if (f.insecureTls && f.certificateAuthority)
      errs.push(new Error('cannot use both --agent-certificate-authority and --agent-insecure-tls'));
    if (f.completelyInsecure && (f.insecureTls || f.certificateAuthority || f.clientCertificate))
      errs.push(
        new Error(
          'cannot use --deprecated-agent-completely-insecure with --agent-insecure-tls, --agent-certificate-authority or --agent-client-certificate',
        ),
      );
    if (f.preferredAddressTypes.length === 0)
      errs.push(new Error('--agent-preferred-address-types must name at least one address type'));
    return errs;
  }

  applyTo(config: { agentClient?: AgentClientFlags }): void {
    config.agentClient = { ...this.f, preferredAddressTypes: [...this.f.preferredAddressTypes] };
  }
}
