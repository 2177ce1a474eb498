/**
 * `platform-controller-manager`: options → configuration → run (STYLE.md §7). Every option family (the daemon's,
 * and each controller's own `--concurrent-*-syncs` family from `CONTROLLERS`) validates its values; all problems are
 * printed together and the process exits 1. Then it serves `/healthz` `/livez` `/readyz` `/metrics` on
 * `--secure-port` (delegated authentication and authorization), campaigns for the `controller-manager` lock in
 * `system` (with `--leader-elect`, on any `--leader-elect-resource-lock`) and runs the enabled controllers while it
 * leads. Losing the lease ends the process (exit 1), as Kubernetes' does, so that a supervisor restarts it as a fresh
 * candidate.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import {
  ClientConnectionOptions,
  Clientset,
  LeaderElector,
  loadClientConfig,
  newResourceLock,
  RestClient,
  type RestConfig,
} from '@platform/client';
import {
  CONTROL_PLANE_FEATURES,
  createLogging,
  type DelegatedAuthenticationConfig,
  DelegatedAuthenticationOptions,
  type DelegatedAuthorizationConfig,
  DelegatedAuthorizationOptions,
  FeatureGate,
  FeatureGateOptions,
  type LeaderElectionConfig,
  LeaderElectionOptions,
  type LoggingConfig,
  LoggingOptions,
  type MetricsConfig,
  MetricsOptions,
  MetricsRegistry,
  type OptionGroup,
  parseOrExit,
  type ProfilingConfig,
  ProfilingOptions,
  SECURE_SERVING_DEFAULTS,
  SecureServer,
  SecureServingOptions,
  type SecureServingInfo,
  VersionOptions,
} from '@platform/common';
import { Command } from 'commander';

import { type ControllerDefinition, type ControllerOptions } from '../controller';
import { type RunningControllers, startControllers } from '../controller-manager';
import { CONTROLLERS } from '../controllers';
import { delegatedAuth } from './delegated-auth';
import { LEADER_MIGRATION_FEATURE, validateLeaderMigrationOptions } from './leader-migration';
import {
  flagNamesOf,
  type GenericControllerManagerConfig,
  GenericControllerManagerOptions,
  InertControllerOptions,
  isControllerEnabled,
} from './options';

const NAME = 'platform-controller-manager';
const DESCRIPTION =
  'The controller manager is a daemon that embeds the core control loops. A controller is a control loop that watches the shared state of the cluster through the API server and makes changes attempting to move the current state towards the desired state. Examples of controllers are the replication controller, endpoints controller, namespace controller, and serviceaccounts controller.';

/** Every option family of the controller manager (also used to generate the reference docs). */
export function controllerManagerCommand(): {
  cmd: Command;
  groups: OptionGroup<never>[];
  version: VersionOptions;
  controllerOptions: Map<string, ControllerOptions<unknown> | undefined>;
} {
  const cmd = new Command(NAME).description(DESCRIPTION);
  const version = new VersionOptions('controller-manager');
  const controllerOptions = new Map<string, ControllerOptions<unknown> | undefined>();
  const groups: OptionGroup<never>[] = [
    new GenericControllerManagerOptions() as OptionGroup<never>,
    new ClientConnectionOptions({ qps: 20, burst: 30 }) as OptionGroup<never>,
  ];
  for (const def of CONTROLLERS) {
    const o = def.options?.() as ControllerOptions<unknown> | undefined;
    controllerOptions.set(def.name, o);
    if (o) groups.push(o as OptionGroup<never>);
  }
  groups.push(
    ...([
      new SecureServingOptions(SECURE_SERVING_DEFAULTS.controllerManager),
      new DelegatedAuthenticationOptions({ tolerateLookupFailure: false }),
      new DelegatedAuthorizationOptions(),
      new LeaderElectionOptions('controller-manager'),
      new FeatureGateOptions(new FeatureGate(CONTROL_PLANE_FEATURES)),
      new LoggingOptions(),
      new MetricsOptions(),
      new ProfilingOptions(),
    ] as OptionGroup<never>[]),
  );
  for (const g of groups) g.addFlags(cmd);
  const inert = new InertControllerOptions(flagNamesOf(cmd as unknown as { options: { long?: string }[] }));
  inert.addFlags(cmd);
  groups.push(inert as OptionGroup<never>, version as OptionGroup<never>);
  version.addFlags(cmd);
  return { cmd, groups, version, controllerOptions };
}

interface Collected {
  generic?: GenericControllerManagerConfig;
  client?: RestConfig;
  secureServing?: SecureServingInfo;
  authentication?: DelegatedAuthenticationConfig;
  authorization?: DelegatedAuthorizationConfig;
  leaderElection?: LeaderElectionConfig;
  featureGate?: FeatureGate;
  logging?: LoggingConfig;
  metrics?: MetricsConfig;
  profiling?: ProfilingConfig;
  inert?: string[];
}

/** Loads an optional delegated-auth client configuration; undefined when not given. */
function delegatedClient(file: string, flag: string): Clientset | undefined {
  if (!file) return undefined;
  try {
    return new Clientset(new RestClient({ ...loadClientConfig({ clientConfig: file }), qps: 0 }));
  } catch (err) {
    throw new Error(`--${flag}: ${(err as Error).message}`);
  }
}

/** Runs the controller manager with `argv` (without node and script). Resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const { cmd, groups, version, controllerOptions } = controllerManagerCommand();
  const outcome = parseOrExit(cmd, groups, argv, version);
  if (outcome.exitCode !== undefined) return outcome.exitCode;
  const collected: Collected = {};
  let authnClient: Clientset | undefined;
  let authzClient: Clientset | undefined;
  try {
    for (const g of groups) await (g as OptionGroup<Collected>).applyTo(collected);
    const migration = validateLeaderMigrationOptions({
      ...(collected.generic as GenericControllerManagerConfig),
      featureEnabled: collected.featureGate?.enabled(LEADER_MIGRATION_FEATURE) ?? false,
    });
    if (migration.length) throw new Error(migration.map((e) => e.message).join('\nError: '));
    authnClient = delegatedClient(collected.authentication?.remoteKubeConfigFile ?? '', 'authentication-clientconfig');
    authzClient = delegatedClient(collected.authorization?.remoteKubeConfigFile ?? '', 'authorization-clientconfig');
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  const generic = collected.generic as GenericControllerManagerConfig;
  const logging = createLogging({ config: collected.logging as LoggingConfig, program: NAME });
  const log = logging.logger;
  for (const flag of collected.inert ?? [])
    log.warn('Option accepted but its controller is not run by this controller manager: it has no effect', {
      option: flag,
    });
  const enabled: { def: ControllerDefinition; options: unknown }[] = [];
  for (const def of CONTROLLERS) {
    if (!isControllerEnabled(def.name, generic.controllers, def.enabledByDefault)) continue;
    enabled.push({ def, options: controllerOptions.get(def.name)?.values() ?? {} });
  }
  const implemented = new Set(CONTROLLERS.map((d) => d.name));
  for (const name of generic.controllers)
    if (name !== '*' && !name.startsWith('-') && !implemented.has(name))
      log.warn('Controller enabled by --controllers is not implemented yet: it does not run', { controller: name });
  if (generic.enableLeaderMigration)
    log.warn('Leader migration is configured but not needed here (one lock, no cloud controllers): it has no effect');

  const metrics = new MetricsRegistry(collected.metrics);
  const leaderGauge = metrics.gauge({
    name: 'leader_election_master_status',
    help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. name is the string used to identify the lease.',
    labelNames: ['name'],
  });
  const le = collected.leaderElection as LeaderElectionConfig;
  leaderGauge.set({ name: le.resourceName }, 0);
  const rest: RestConfig = { ...(collected.client as RestConfig), userAgent: NAME };
  let running: RunningControllers | undefined;
  let leading = !le.leaderElect;
  let server: SecureServer | undefined;
  let lostAt: number | undefined;
  try {
    const serving = collected.secureServing;
    if (serving && serving.port !== 0) {
      server = new SecureServer({
        serving,
        logger: log,
        metrics,
        enableProfiling: collected.profiling?.enableProfiling ?? true,
        logging: { flush: () => logging.flush() },
      });
      server.setFrontHandler(
        delegatedAuth(
          { client: authnClient, config: collected.authentication as DelegatedAuthenticationConfig },
          { client: authzClient, config: collected.authorization as DelegatedAuthorizationConfig },
          log,
        ),
      );
      // One check per enabled controller: healthy until it has started, then as the controller reports.
      for (const { def } of enabled)
        server.health.addHealthChecks({
          name: def.name,
          check: async () => {
            await running?.checks.find((c) => c.name === def.name)?.check();
          },
        });
      server.health.addHealthChecks({
        name: 'leaderElection',
        check: () => {
          if (le.leaderElect && leading && lostAt !== undefined) throw new Error('the lease was lost');
        },
      });
      await server.start();
      log.info('Serving securely', { address: server.address() });
    }
  } catch (err) {
    log.error('Failed to start serving', { error: (err as Error).message });
    await logging.close();
    return 1;
  }
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const runAll = async (signal: AbortSignal): Promise<void> => {
    leading = true;
    leaderGauge.set({ name: le.resourceName }, 1);
    try {
      running = await startControllers(
        {
          rest,
          controllers: enabled,
          minResyncPeriodMs: generic.minResyncPeriodMs,
          useServiceAccountCredentials: generic.useServiceAccountCredentials,
          logger: log,
          metrics,
        },
        signal,
        generic.controllerStartIntervalMs,
      );
      log.info('Started controllers', { controllers: enabled.map((e) => e.def.name) });
      await running.done;
    } catch (err) {
      if (!signal.aborted) {
        log.error('Failed to start the controllers', { error: (err as Error).message });
        stop.abort();
      }
    }
  };
  let code = 0;
  if (!le.leaderElect) {
    await runAll(stop.signal);
  } else {
    const identity = `${hostname()}_${randomUUID()}`;
    const admin = new Clientset(new RestClient(rest));
    const elector = new LeaderElector({
      lock: newResourceLock(admin, le, identity),
      config: le,
      identity,
      logger: log,
      callbacks: {
        onStartedLeading: async (signal) => {
          log.info('Started leading', { identity, lease: `${le.resourceNamespace}/${le.resourceName}` });
          await runAll(signal);
        },
        onStoppedLeading: () => {
          leaderGauge.set({ name: le.resourceName }, 0);
          if (!stop.signal.aborted) {
            lostAt = Date.now();
            log.error('Leader election lost', { identity });
            stop.abort();
          }
        },
      },
    });
    await elector.run(stop.signal);
    admin.rest.close();
    if (lostAt !== undefined) code = 1;
  }
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  await running?.done;
  for (const c of running?.clients ?? []) c.close();
  await server?.shutdown();
  log.info('Shut down', { code });
  await logging.close();
  return code;
}
