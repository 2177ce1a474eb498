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
import { type TLSSocket } from 'node:tls';

import { type ConfigMap, ConfigMapKind, LeaseKind, SubjectAccessReviewKind, TokenReviewKind } from '@platform/api';
import { Clientset, LeaderElector, loadClientConfig, RestClient } from '@platform/client';
import {
  buildCommand,
  CONTROL_PLANE_FEATURES,
  createLogging,
  type DelegatedAuthorizationConfig,
  DelegatedAuthenticationOptions,
  DelegatedAuthorizationOptions,
  FeatureGate,
  FeatureGateOptions,
  type LeaderElectionConfig,
  LeaderElectionOptions,
  type LoggingConfig,
  LoggingOptions,
  type Logger,
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

/**
 * Delegated authorization of the secure port: the always-allowed paths pass; any other request needs a bearer
 * token the API server accepts (TokenReview) for a user allowed to GET the path (SubjectAccessReview).
 */
function delegatedAuth(clientset: Clientset, authz: DelegatedAuthorizationConfig, log: Logger) {
  const allowed = new Set(authz.alwaysAllowPaths);
  const cache = new Map<string, { ok: boolean; until: number }>();
  return (
    req: { url?: string; method?: string; headers: Record<string, unknown>; socket: unknown },
    res: { statusCode: number; end: (b?: string) => void; setHeader: (k: string, v: string) => void },
    next: () => void,
  ): void => {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (!(req.socket as TLSSocket).encrypted || allowed.has(path)) return next();
    const auth = String(req.headers.authorization ?? '');
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!token) {
      res.statusCode = 401;
      res.end('Unauthorized\n');
      return;
    }
    const key = `${token}\0${path}`;
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) {
      if (hit.ok) return next();
      res.statusCode = 403;
      res.end('Forbidden\n');
      return;
    }
    void (async () => {
      try {
        const tr = (await clientset.resource(TokenReviewKind).create({ spec: { token } } as never)) as {
          status?: { authenticated?: boolean; user?: { username?: string; groups?: string[]; uid?: string } };
        };
        if (!tr.status?.authenticated) {
          cache.set(key, { ok: false, until: Date.now() + 10_000 });
          res.statusCode = 401;
          res.end('Unauthorized\n');
          return;
        }
        const u = tr.status.user ?? {};
        const sar = (await clientset.resource(SubjectAccessReviewKind).create({
          spec: {
            user: u.username,
            groups: u.groups,
            uid: u.uid,
            nonResourceAttributes: { path, verb: (req.method ?? 'GET').toLowerCase() },
          },
        } as never)) as { status?: { allowed?: boolean } };
        const ok = !!sar.status?.allowed;
        cache.set(key, { ok, until: Date.now() + (ok ? authz.allowCacheTTLMs : authz.denyCacheTTLMs) });
        if (ok) return next();
        res.statusCode = 403;
        res.end(`Forbidden: user "${u.username ?? ''}" cannot get path "${path}"\n`);
      } catch (err) {
        log.warn('Delegated authentication or authorization failed', { err: String(err) });
        res.statusCode = 500;
        res.end('Internal Server Error\n');
      }
    })();
  };
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
  try {
    const cc = config.clientConnection;
    const loaded = loadClientConfig({ clientConfig: cc.kubeconfig || undefined, master: f.master || undefined });
    const rc = { ...loaded, contentType: cc.contentType, qps: cc.qps, burst: cc.burst, userAgent: NAME };
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
  let insecure: Server | undefined;
  try {
    const serving = collected.secureServing as SecureServingInfo | undefined;
    if (serving && serving.port !== 0) {
      server = new SecureServer({
        serving,
        logger: log,
        metrics: metricsRegistry,
        enableProfiling: config.enableProfiling,
        logging: { flush: () => logging.flush() },
      });
      server.setFrontHandler(
        delegatedAuth(clientset, collected.authorization as DelegatedAuthorizationConfig, log) as never,
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
    const insecureAddr = config.healthzBindAddress;
    if (insecureAddr && !f.config ? f.port !== 0 : !!insecureAddr) {
      const m = /^(.*):(\d+)$/.exec(insecureAddr) as RegExpExecArray;
      const host = (m[1] as string).replace(/^\[|\]$/g, '') || '0.0.0.0';
      const port = Number(m[2]);
      if (server) {
        const app = server.app;
        insecure = createHttpServer((req, res) => app(req, res));
        await new Promise<void>((resolve, reject) => {
          insecure?.once('error', reject);
          insecure?.listen(port, host, () => resolve());
        });
        log.warn('Serving insecurely (deprecated --port)', { address: `${host}:${port}` });
      }
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
      leases: new Clientset(leaderElectionRest).resource(LeaseKind, le.resourceNamespace),
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
  insecure?.close();
  await server?.shutdown();
  rest.close();
  eventRest.close();
  leaderElectionRest.close();
  for (const e of extenders) e.close();
  log.info('Shut down', { code });
  await logging.close();
  return code;
}
