/**
 * `platform-scheduler`: options → configuration → run (STYLE.md §7). Builds the effective
 * KubeSchedulerConfiguration (the `--config` file, or the defaults with the deprecated flags), serves
 * `/healthz` `/livez` `/readyz` `/metrics` on `--secure-port` (delegated authentication and authorization; the
 * health paths are always allowed) and on the deprecated insecure `--port`, then campaigns for the `scheduler`
 * Lease in `system` and schedules while it leads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';

import { type ConfigMap, ConfigMapKind } from '@platform/api';
import {
  authenticationSetup,
  Clientset,
  delegatedAuth,
  LeaderElector,
  loadClientConfig,
  newResourceLock,
  RestClient,
  type RestConfig,
} from '@platform/client';
import {
  buildCommand,
  CONTROL_PLANE_FEATURES,
  createLogging,
  type DelegatedAuthenticationConfig,
  type DelegatedAuthorizationConfig,
  DelegatedAuthenticationOptions,
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
import { dump as dumpYaml, load as loadYaml } from 'js-yaml';

import { buildConfiguration, leaderElectionOf, profilesOf } from '../config/build';
import { ConfigError, extenderConfigsOf } from '../config/config';
import { HTTPExtender } from '../extender/http-extender';
import { type Policy, parsePolicy } from '../config/policy';
import { SchedulerMetrics } from '../metrics';
import { inTreeRegistry } from '../plugins/registry';
import { Scheduler } from '../scheduler';
import { type SchedulerFlags, SchedulerOptions } from './options';

const NAME = 'platform-scheduler';
const DESCRIPTION =
  'The scheduler is a control plane process which assigns pods to nodes. It determines which nodes are valid placements for each pod in the scheduling queue according to constraints and available resources, ranks each valid node and binds the pod to a suitable node. Multiple different schedulers may be used within a cluster; this one is the reference implementation.';

/** Every option family of the scheduler (also used to generate the reference docs). */
export function schedulerCommand(): {
  cmd: ReturnType<typeof buildCommand>;
  groups: OptionGroup<never>[];
  version: VersionOptions;
  leaderElection: LeaderElectionOptions;
} {
  const version = new VersionOptions('scheduler');
  const leaderElection = new LeaderElectionOptions('scheduler');
  const groups = [
    new SchedulerOptions(),
    new SecureServingOptions(SECURE_SERVING_DEFAULTS.scheduler),
    new DelegatedAuthenticationOptions({ tolerateLookupFailure: true }),
    new DelegatedAuthorizationOptions(),
    leaderElection,
    new FeatureGateOptions(new FeatureGate(CONTROL_PLANE_FEATURES)),
    new LoggingOptions(),
    new MetricsOptions(),
    new ProfilingOptions(),
    version,
  ] as OptionGroup<never>[];
  return { cmd: buildCommand(NAME, DESCRIPTION, groups), groups, version, leaderElection };
}

interface Collected {
  scheduler?: SchedulerFlags;
  secureServing?: SecureServingInfo;
  authentication?: DelegatedAuthenticationConfig;
  authorization?: DelegatedAuthorizationConfig;
  leaderElection?: LeaderElectionConfig;
  logging?: LoggingConfig;
  metrics?: MetricsConfig;
  profiling?: ProfilingConfig;
}

function readPolicy(f: SchedulerFlags): Policy | undefined {
  if (!f.policyConfigFile || (f.policyConfigMap && !f.useLegacyPolicyConfig)) return undefined;
  const text = readFileSync(f.policyConfigFile, 'utf8');
  return parsePolicy(loadYaml(text), f.policyConfigFile);
}

async function readPolicyConfigMap(f: SchedulerFlags, clientset: Clientset): Promise<Policy | undefined> {
  if (!f.policyConfigMap || f.useLegacyPolicyConfig) return undefined;
  const ns = f.policyConfigMapNamespace || 'system';
  const cm = (await clientset.resource(ConfigMapKind, ns).get(f.policyConfigMap)) as ConfigMap;
  const text = cm.data?.['policy.cfg'];
  if (text === undefined)
    throw new ConfigError(`configmap ${ns}/${f.policyConfigMap}`, [
      'missing policy config map value at key "policy.cfg"',
    ]);
  return parsePolicy(loadYaml(text), `configmap ${ns}/${f.policyConfigMap}`);
}

/** A client of a delegated-auth client configuration; undefined when the option is empty. */
function delegatedClient(file: string, flag: string): Clientset | undefined {
  if (!file) return undefined;
  try {
    return new Clientset(new RestClient({ ...loadClientConfig({ clientConfig: file }), qps: 0 }));
  } catch (err) {
    throw new Error(`--${flag}: ${(err as Error).message}`);
  }
}

/** Runs the scheduler with `argv` (without node and script). Resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const { cmd, groups, version, leaderElection } = schedulerCommand();
  const outcome = parseOrExit(cmd, groups, argv, version);
  if (outcome.exitCode !== undefined) return outcome.exitCode;
  const collected: Collected = {};
  try {
    for (const g of groups) await (g as OptionGroup<Collected>).applyTo(collected);
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  const f = collected.scheduler as SchedulerFlags;
  const registry = inTreeRegistry();
  let eff;
  try {
    eff = buildConfiguration(f, collected.leaderElection ?? leaderElection.config, registry, readPolicy(f));
    if (f.writeConfigTo) {
      writeFileSync(f.writeConfigTo, dumpYaml(eff.config, { noRefs: true }));
      process.stdout.write(`Wrote configuration to: ${f.writeConfigTo}\n`);
      return 0;
    }
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  const logging = createLogging({ config: collected.logging as LoggingConfig, program: NAME });
  const log = logging.logger;
  const config = eff.config;
  // Three clients with a rate limiter each, as 1.21's createClients: bindings and status writes get the whole
  // --api-qps; Events and the Lease renewals do not spend it.
  let rest: RestClient;
  let eventRest: RestClient;
  let leaderElectionRest: RestClient;
  let restConfig: RestConfig;
  try {
    const cc = config.clientConnection;
    const loaded = loadClientConfig({ clientConfig: cc.kubeconfig || undefined, master: f.master || undefined });
    const rc = { ...loaded, contentType: cc.contentType, qps: cc.qps, burst: cc.burst, userAgent: NAME };
    restConfig = rc;
    rest = new RestClient(rc);
    eventRest = new RestClient(rc);
    leaderElectionRest = new RestClient(rc);
  } catch (err) {
    log.error('Failed to create the API client', { err });
    await logging.close();
    return 1;
  }
  const clientset = new Clientset(rest);
  let profiles;
  try {
    const cmPolicy = await readPolicyConfigMap(f, clientset);
    if (cmPolicy) eff = buildConfiguration(f, collected.leaderElection ?? leaderElection.config, registry, cmPolicy);
    profiles = profilesOf(eff, registry);
  } catch (err) {
    log.error('Invalid scheduler configuration', { err: (err as Error).message });
    await logging.close();
    return 1;
  }
  let extenders: HTTPExtender[];
  try {
    extenders = extenderConfigsOf(config).map((c) => new HTTPExtender(c));
  } catch (err) {
    log.error('Invalid scheduler extender', { err: (err as Error).message });
    await logging.close();
    return 1;
  }
  const metricsRegistry = new MetricsRegistry(collected.metrics);
  const metrics = new SchedulerMetrics(metricsRegistry);
  const scheduler = new Scheduler({
    clientset,
    eventClientset: new Clientset(eventRest),
    profiles,
    percentageOfNodesToScore: config.percentageOfNodesToScore,
    parallelism: config.parallelism,
    podInitialBackoffMs: config.podInitialBackoffSeconds * 1000,
    podMaxBackoffMs: config.podMaxBackoffSeconds * 1000,
    hardPodAffinitySymmetricWeight: eff.hardPodAffinitySymmetricWeight,
    extenders,
    metrics,
    logger: log,
    host: hostname(),
  });
  const stop = new AbortController();
  let leading = false;
  let server: SecureServer | undefined;
  const insecure: Server[] = [];
  try {
    const serving = collected.secureServing as SecureServingInfo | undefined;
    if (serving && serving.port !== 0) {
      // Token and access reviews go through clients of their own (the delegated client configurations, else the
      // scheduler's), so they never wait behind bindings for --api-qps.
      const authnConfig = collected.authentication as DelegatedAuthenticationConfig;
      const authzConfig = collected.authorization as DelegatedAuthorizationConfig;
      const lookup = delegatedClient(authnConfig.remoteKubeConfigFile, 'authentication-clientconfig');
      const own = (): Clientset => new Clientset(new RestClient({ ...restConfig, qps: 0 }));
      const authzClient = delegatedClient(authzConfig.remoteKubeConfigFile, 'authorization-clientconfig') ?? own();
      const authn = await authenticationSetup(authnConfig, (p) => readFileSync(p, 'utf8'), lookup, log);
      const clientCA = [authn.clientCA, authn.requestHeader.ca].filter((x) => x.trim()).join('\n');
      server = new SecureServer({
        serving: clientCA ? { ...serving, clientCA } : serving,
        logger: log,
        metrics: metricsRegistry,
        enableProfiling: config.enableProfiling,
        logging: { flush: () => logging.flush() },
      });
      server.setFrontHandler(
        delegatedAuth(authn, lookup ?? own(), { client: authzClient, config: authzConfig }, log) as never,
      );
      server.health.addReadyzChecks({
        name: 'leaderElection',
        check: () => {
          if (config.leaderElection.leaderElect && !leading) return;
        },
      });
      await server.start();
      log.info('Serving securely', { address: server.address() });
    }
    // healthzBindAddress and metricsBindAddress (the same address unless the configuration file splits them).
    const insecureAddrs = new Set([config.healthzBindAddress, config.metricsBindAddress].filter((a) => a));
    for (const addr of server ? insecureAddrs : []) {
      const m = /^(.*):(\d+)$/.exec(addr) as RegExpExecArray;
      const host = (m[1] as string).replace(/^\[|\]$/g, '') || '0.0.0.0';
      const port = Number(m[2]);
      const app = (server as SecureServer).app;
      const plain = createHttpServer((req, res) => app(req, res));
      await new Promise<void>((resolve, reject) => {
        plain.once('error', reject);
        plain.listen(port, host, () => resolve());
      });
      insecure.push(plain);
      log.warn('Serving insecurely (deprecated --port)', { address: `${host}:${port}` });
    }
  } catch (err) {
    log.error('Failed to start serving', { err });
    await logging.close();
    return 1;
  }
  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  let code = 0;
  const le = leaderElectionOf(config);
  if (!le.leaderElect) {
    leading = true;
    await scheduler.run(stop.signal);
  } else {
    const identity = `${hostname()}_${randomUUID()}`;
    let lost = false;
    const elector = new LeaderElector({
      lock: newResourceLock(new Clientset(leaderElectionRest), le, identity),
      config: le,
      identity,
      logger: log,
      callbacks: {
        onStartedLeading: async (signal) => {
          leading = true;
          log.info('Started leading', { identity });
          await scheduler.run(signal);
        },
        onStoppedLeading: () => {
          leading = false;
          if (!stop.signal.aborted) {
            lost = true;
            log.error('Leader election lost');
            stop.abort();
          }
        },
      },
    });
    await elector.run(stop.signal);
    if (lost) code = 1;
  }
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  for (const plain of insecure) plain.close();
  await server?.shutdown();
  rest.close();
  eventRest.close();
  leaderElectionRest.close();
  for (const e of extenders) e.close();
  log.info('Shut down', { code });
  await logging.close();
  return code;
}
