/**
 * `platform-apiserver`: options → configuration → run (STYLE.md §7). Every option family validates its values;
 * all problems are printed together and the process exits 1. A started server runs until SIGTERM or SIGINT, then
 * shuts down gracefully (readiness fails, in-flight requests drain, storage closes). With more than one
 * `--server-processes` (on etcd the default is one per CPU), this process is the primary of that many server
 * processes, each running this same `main` (server-processes.ts).
 */
import { setFlagsFromString } from 'node:v8';

import { Command } from 'commander';
import {
  type CommandIO,
  CONTROL_PLANE_FEATURES,
  createLogging,
  FeatureGate,
  FeatureGateOptions,
  type LoggingConfig,
  LoggingOptions,
  type MetricsConfig,
  MetricsOptions,
  type OptionGroup,
  parseOrExit,
  type ProfilingConfig,
  ProfilingOptions,
  SecureServingOptions,
  type SecureServingInfo,
  VersionOptions,
} from '@platform/common';

import { type Authorizer } from '../auth/authorizer';
import { ApiServer, type ApiServerConfig } from '../server/api-server';
import { defaultAdvertiseAddress } from '../server/bootstrap/advertise-address';
import { type AuditFlagsConfig, AuditOptions, TransportOptions } from './audit-options';
import { type AuthenticationFlagsConfig, AuthenticationOptions } from './authentication-options';
import { AuthorizationOptions } from './authorization-options';
import { AdmissionOptions, type AdmissionFlagsConfig } from './admission-options';
import { type AggregatorFlagsConfig, AggregatorOptions } from './aggregator-options';
import {
  AgentClientOptions,
  type ApiServerFlagsConfig,
  SecurityOptions,
  ServerRunOptions,
  StoreOptions,
} from './options';
import { resolveServerProcesses, runServerProcesses, serverProcessSlot, shutdownRequested } from './server-processes';

const NAME = 'platform-apiserver';
/** How a server process prints its command line's outcome: as the primary does, less the warnings it printed. */
const WORKER_IO: CommandIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => {
    if (!text.startsWith('W ')) process.stderr.write(text);
  },
};

/** Every option family of the API server, registered on `cmd` (also used to generate the reference docs). */
export function apiServerCommand(): { cmd: Command; groups: OptionGroup<never>[]; version: VersionOptions } {
  const cmd = new Command(NAME).description(
    'The API server validates and configures data for the API objects (pods, services, replication controllers, and others), serves the REST operations, and is the front end to the cluster state through which all other components interact.',
  );
  const version = new VersionOptions('apiserver');
  const groups = [
    new ServerRunOptions(),
    new StoreOptions(),
    new SecureServingOptions({ port: 6443, certDir: '/var/run/platform', pairName: 'apiserver', allowDisable: false }),
    new SecurityOptions(),
    new AgentClientOptions(),
    new AdmissionOptions(),
    new AggregatorOptions(),
    new AuthenticationOptions(),
    new AuditOptions(),
    new TransportOptions(),
    new AuthorizationOptions(),
    new FeatureGateOptions(new FeatureGate(CONTROL_PLANE_FEATURES)),
    new LoggingOptions(),
    new MetricsOptions(),
    new ProfilingOptions(),
    version,
  ] as OptionGroup<never>[];
  for (const g of groups) g.addFlags(cmd);
  return { cmd, groups, version };
}

type Collected = ApiServerFlagsConfig &
  AdmissionFlagsConfig &
  AggregatorFlagsConfig &
  AuthenticationFlagsConfig & {
    featureGate?: FeatureGate;
    secureServing?: SecureServingInfo;
    logging?: LoggingConfig;
    metrics?: MetricsConfig;
    profiling?: ProfilingConfig;
    audit?: AuditFlagsConfig['audit'];
    transport?: AuditFlagsConfig['transport'];
    authorizer?: Authorizer;
  };

/** Runs the API server with `argv` (without node and script). Resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const { cmd, groups, version } = apiServerCommand();
  // One of several server processes: the primary has printed the command line's warnings already.
  const slot = serverProcessSlot();
  const stopRequested = shutdownRequested();
  const outcome = parseOrExit(cmd, groups, argv, version, slot === undefined ? undefined : WORKER_IO);
  if (outcome.exitCode !== undefined) return outcome.exitCode;
  const collected: Collected = {};
  let processes: number | undefined = slot === undefined ? undefined : 1;
  try {
    for (const g of groups) {
      await (g as OptionGroup<Collected>).applyTo(collected);
      // Decided as soon as the store is known (the first families), before certificates are generated, say.
      if (processes === undefined && collected.storage && collected.serverProcesses !== undefined)
        processes = resolveServerProcesses(collected.serverProcesses, collected.storage);
    }
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  const logging = createLogging({ config: collected.logging as LoggingConfig, program: NAME });
  const log = logging.logger;
  if (slot === undefined)
    for (const flag of collected.inert ?? [])
      log.warn('Option accepted but not implemented yet: it has no effect', { option: flag });
  if (processes !== undefined && processes > 1) {
    collected.storage?.encryption?.close();
    const code = await runServerProcesses({ processes, argv, log });
    await logging.close();
    return code;
  }
  const serving: SecureServingInfo = {
    ...(collected.secureServing as SecureServingInfo),
    ...(collected.clientCA ? { clientCA: collected.clientCA } : {}),
  };
  const config: ApiServerConfig = {
    serving,
    logger: log,
    storage: collected.storage as ApiServerConfig['storage'],
    watchCache: collected.watchCache as ApiServerConfig['watchCache'],
    limits: collected.limits as ApiServerConfig['limits'],
    eventTtlSeconds: collected.eventTtlSeconds ?? 3600,
    advertiseAddress: defaultAdvertiseAddress(collected.advertiseAddress ?? '', serving.bindAddress),
    enableProfiling: collected.profiling?.enableProfiling ?? true,
    shutdownDelayMs: collected.shutdownDelayMs ?? 0,
    livezGracePeriodMs: collected.livezGracePeriodMs ?? 0,
    goawayChance: collected.goawayChance ?? 0,
    logging: { flush: () => logging.flush() },
    ...(collected.bootstrap ? { bootstrap: collected.bootstrap } : {}),
    serverSideApply: collected.featureGate?.enabled('ServerSideApply') ?? true,
    // Several processes share the port: one still starting must not answer before it is ready.
    ...(slot !== undefined ? { holdRequestsUntilReady: true } : {}),
    // Priority and fairness replaces max-in-flight when the option and the APIPriorityAndFairness gate are both on.
    priorityAndFairness:
      (collected.priorityAndFairness ?? true) && (collected.featureGate?.enabled('APIPriorityAndFairness') ?? true),
    kubernetesClientCompatibility: collected.kubernetesClientCompatibility ?? true,
    ...(collected.services ? { services: collected.services } : {}),
    ...(collected.runtimeConfig ? { runtimeConfig: collected.runtimeConfig } : {}),
    ...(collected.agentClient ? { agentClient: collected.agentClient } : {}),
    // The BoundServiceAccountTokenVolume gate decides how the ServiceAccount plugin mounts tokens.
    ...(collected.admission
      ? {
          admission: {
            ...collected.admission,
            settings: {
              ...collected.admission.settings,
              boundServiceAccountTokenVolume: collected.featureGate?.enabled('BoundServiceAccountTokenVolume') ?? true,
            },
          },
        }
      : {}),
    ...(collected.authentication ? { authentication: collected.authentication } : {}),
    ...(collected.aggregator ? { aggregator: collected.aggregator } : {}),
    ...(collected.audit ? { audit: collected.audit } : {}),
    ...(collected.transport ? { transport: collected.transport } : {}),
    ...(collected.authorizer ? { security: { authorizer: collected.authorizer } } : {}),
  };
  let server: ApiServer;
  try {
    server = await ApiServer.create(config);
    await server.start();
  } catch (err) {
    log.error('Failed to start the API server', { err });
    await logging.close();
    return 1;
  }
  if (slot !== undefined) {
    server.secure.metrics
      .gauge({
        name: 'apiserver_server_process_info',
        help: 'The server process that answers: its slot among the --server-processes and its process id.',
        labelNames: ['process', 'pid'],
      })
      .set({ process: String(slot), pid: String(process.pid) }, 1);
  }
  const stopped = new Promise<void>((resolve) => server.secure.addShutdownHook('exit', () => resolve()));
  server.secure.installSignalHandlers();
  void stopRequested.then(() => server.shutdown());
  await stopped;
  log.info('Shut down cleanly');
  await logging.close();
  return 0;
}

// Run as a script (a server process forked from sources; the command is bin/platform-apiserver).
if (require.main === module) {
  setFlagsFromString('--heap-growing-percent=50'); // as bin/platform-apiserver sets it
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
