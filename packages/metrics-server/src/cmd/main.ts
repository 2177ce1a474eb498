/**
 * `platform-metrics-server`: options → configuration → run (STYLE.md §7), as metrics-server 0.5 is Kubernetes'
 * (renamed). Lists and watches Nodes and Pods through the client library, scrapes every node agent's
 * `/metrics/resource` each `--metric-resolution` (the first round at start), keeps the last two points of every node
 * and container, and serves the `metrics.platform/v1beta1` resource metrics API on `--secure-port` with delegated
 * authentication and authorization (as an extension API server behind the aggregation layer), beside `/healthz`
 * `/livez` `/readyz` and `/metrics`.
 *
 * Health: `metadata-informer-sync` (all three: the Node and Pod informers have synced), `metric-collection-timely`
 * (`/livez`, `/healthz`: a scrape round started within 1.5 resolutions and 5 s) and `metric-storage-ready` (`/readyz`:
 * some node or pod has metrics, that is, two rounds have passed).
 */
import { readFileSync } from 'node:fs';

import { type Node, NodeKind, type Pod, PodKind } from '@platform/api';
import {
  authenticationSetup,
  Clientset,
  delegatedAuth,
  InformerFactory,
  loadClientConfig,
  NAMESPACE_INDEX,
  RestClient,
  type RestConfig,
} from '@platform/client';
import {
  buildCommand,
  createLogging,
  type DelegatedAuthenticationConfig,
  DelegatedAuthenticationOptions,
  type DelegatedAuthorizationConfig,
  DelegatedAuthorizationOptions,
  type LoggingConfig,
  LoggingOptions,
  type Logger,
  type MetricsConfig,
  MetricsOptions,
  MetricsRegistry,
  namedCheck,
  type OptionGroup,
  parseOrExit,
  type ProfilingConfig,
  ProfilingOptions,
  SecureServer,
  SecureServingOptions,
  type SecureServingInfo,
  VersionOptions,
} from '@platform/common';

import { accessAttributes, denyAsStatus, metricsApiHandler } from '../api/metrics-api';
import { ServerMetrics } from '../metrics';
import { type ScraperConfig, Scraper } from '../scraper/scraper';
import { MetricsStorage } from '../storage/storage';
import { type AgentClientFlags, AgentClientOptions, type MetricsServerFlags, MetricsServerOptions } from './options';

const NAME = 'platform-metrics-server';
const DESCRIPTION =
  'The metrics server collects resource metrics (CPU and memory) from the node agents and exposes them in the API server through the metrics.platform/v1beta1 API (aggregation layer), for the horizontal pod autoscaler and `kubectl top`. It is not meant for monitoring: it keeps only the last two readings of every node and container.';

/** The secure serving defaults of metrics-server: port 443 and a self-signed pair in its certificate directory. */
export const METRICS_SERVER_SERVING = {
  port: 443,
  certDir: 'apiserver.local.config/certificates',
  pairName: 'apiserver',
  alternateIPs: ['127.0.0.1'],
};

/** Every option family of the metrics server (also used to generate the reference docs). */
export function metricsServerCommand(): {
  cmd: ReturnType<typeof buildCommand>;
  groups: OptionGroup<never>[];
  version: VersionOptions;
} {
  const version = new VersionOptions('metrics-server');
  const groups = [
    new MetricsServerOptions(),
    new AgentClientOptions(),
    new SecureServingOptions(METRICS_SERVER_SERVING),
    new DelegatedAuthenticationOptions(),
    new DelegatedAuthorizationOptions(),
    new LoggingOptions(),
    new MetricsOptions(),
    new ProfilingOptions(),
    version,
  ] as OptionGroup<never>[];
  return { cmd: buildCommand(NAME, DESCRIPTION, groups), groups, version };
}

interface Collected {
  metricsServer?: MetricsServerFlags;
  agentClient?: AgentClientFlags;
  secureServing?: SecureServingInfo;
  authentication?: DelegatedAuthenticationConfig;
  authorization?: DelegatedAuthorizationConfig;
  logging?: LoggingConfig;
  metrics?: MetricsConfig;
  profiling?: ProfilingConfig;
}

/** A client of a client configuration file; `flag` names the option in errors. */
function clientOf(file: string, flag: string): RestClient {
  try {
    return new RestClient({ ...loadClientConfig({ clientConfig: file }), qps: 0, userAgent: NAME });
  } catch (err) {
    throw new Error(`--${flag}: ${(err as Error).message}`);
  }
}

/** How the node agents are reached: the agent client options over the client configuration's credentials. */
export function scraperConfig(a: AgentClientFlags, rest: RestConfig, resolutionMs: number): ScraperConfig {
  const read = (p: string): Buffer => readFileSync(p);
  const ownCert = a.clientCertificate ? { cert: read(a.clientCertificate), key: read(a.clientKey) } : undefined;
  const tokenFile = rest.tokenFile;
  return {
    port: a.port,
    useNodeStatusPort: a.useNodeStatusPort,
    preferredAddressTypes: a.preferredAddressTypes,
    ...(a.certificateAuthority ? { ca: read(a.certificateAuthority) } : {}),
    insecureSkipTlsVerify: a.insecureTls,
    completelyInsecure: a.completelyInsecure,
    ...(ownCert ?? (rest.cert && rest.key ? { cert: rest.cert, key: rest.key } : {})),
    // A client certificate of the options replaces the configuration's credentials, as metrics-server's.
    token: ownCert
      ? undefined
      : tokenFile
        ? () => {
            try {
              return readFileSync(tokenFile, 'utf8').trim();
            } catch {
              return rest.token;
            }
          }
        : () => rest.token,
    // metrics-server: a scrape may take 90% of the resolution.
    timeoutMs: Math.floor(resolutionMs * 0.9),
  };
}

/** Scrapes every `resolutionMs` until `signal` aborts; the first round at once. */
async function collect(
  o: {
    scraper: Scraper;
    storage: MetricsStorage;
    nodes: () => Node[];
    resolutionMs: number;
    metrics: ServerMetrics;
    onTickStart: (at: number) => void;
    log: Logger;
  },
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    const start = Date.now();
    o.onTickStart(start);
    const round = await o.scraper.scrape(o.nodes(), signal);
    if (signal.aborted) return;
    o.storage.store(round.batches);
    const points = o.storage.points();
    o.metrics.storagePoints.set({ type: 'node' }, points.node);
    o.metrics.storagePoints.set({ type: 'container' }, points.container);
    o.metrics.tickDuration.observe({}, (Date.now() - start) / 1000);
    o.log.v(2).info('Scrape finished', {
      nodes: round.batches.size,
      failed: round.errors.size,
      durationMs: Date.now() - start,
    });
    const wait = Math.max(0, start + o.resolutionMs - Date.now());
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, wait);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** Runs the metrics server with `argv` (without node and script). Resolves with the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const { cmd, groups, version } = metricsServerCommand();
  const outcome = parseOrExit(cmd, groups, argv, version);
  if (outcome.exitCode !== undefined) return outcome.exitCode;
  const collected: Collected = {};
  try {
    for (const g of groups) await (g as OptionGroup<Collected>).applyTo(collected);
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  const f = collected.metricsServer as MetricsServerFlags;
  const logging = createLogging({ config: collected.logging as LoggingConfig, program: NAME });
  const log = logging.logger;
  const fail = async (msg: string, err: unknown): Promise<number> => {
    log.error(msg, { err: (err as Error).message ?? String(err) });
    await logging.close();
    return 1;
  };

  let restConfig: RestConfig;
  let rest: RestClient;
  let scraper: Scraper;
  const metricsRegistry = new MetricsRegistry(collected.metrics);
  const metrics = new ServerMetrics(metricsRegistry);
  try {
    restConfig = { ...loadClientConfig({ clientConfig: f.clientConfig }), qps: 0, userAgent: NAME };
    rest = new RestClient(restConfig);
    scraper = new Scraper(
      scraperConfig(collected.agentClient as AgentClientFlags, restConfig, f.metricResolutionMs),
      log.child('scraper'),
      metrics,
    );
  } catch (err) {
    return fail('Failed to create the clients', err);
  }
  const clientset = new Clientset(rest);
  const factory = new InformerFactory(clientset, { logger: log });
  const nodeInformer = factory.informerFor(NodeKind);
  const podInformer = factory.informerFor(PodKind);
  const storage = new MetricsStorage();
  const stop = new AbortController();
  /** When the last scrape round started (0: none yet). */
  let lastTickStart = 0;

  let server: SecureServer | undefined;
  const extra: RestClient[] = [];
  try {
    const serving = collected.secureServing as SecureServingInfo | undefined;
    if (serving) {
      // Token and access reviews: the delegated client configurations, else the metrics server's own (it runs
      // in the cluster it serves, as metrics-server with its in-cluster configuration).
      const authnConfig = collected.authentication as DelegatedAuthenticationConfig;
      const authzConfig = collected.authorization as DelegatedAuthorizationConfig;
      const own = (): RestClient => new RestClient({ ...restConfig, qps: 0 });
      const authnRest = authnConfig.remoteKubeConfigFile
        ? clientOf(authnConfig.remoteKubeConfigFile, 'authentication-clientconfig')
        : own();
      const authzRest = authzConfig.remoteKubeConfigFile
        ? clientOf(authzConfig.remoteKubeConfigFile, 'authorization-clientconfig')
        : own();
      extra.push(authnRest, authzRest);
      const lookup = authnConfig.skipLookup ? undefined : new Clientset(authnRest);
      const authn = await authenticationSetup(authnConfig, (p) => readFileSync(p, 'utf8'), lookup, log);
      const clientCA = [authn.clientCA, authn.requestHeader.ca].filter((x) => x.trim()).join('\n');
      server = new SecureServer({
        serving: clientCA ? { ...serving, clientCA } : serving,
        logger: log,
        metrics: metricsRegistry,
        enableProfiling: collected.profiling?.enableProfiling ?? true,
        logging: { flush: () => logging.flush() },
      });
      server.setFrontHandler(
        delegatedAuth(authn, new Clientset(authnRest), { client: new Clientset(authzRest), config: authzConfig }, log, {
          attributesOf: accessAttributes,
          deny: denyAsStatus,
        }) as never,
      );
      server.health.addHealthChecks(
        namedCheck('metadata-informer-sync', () => {
          if (!nodeInformer.hasSynced() || !podInformer.hasSynced()) throw new Error('informers not synced');
        }),
      );
      // metrics-server fails this when no round started within 1.5 resolutions; 5 s more here, so that a
      // short resolution on a busy machine (an event loop held up for a moment) is not a failure.
      server.health.addLivezChecks(
        namedCheck('metric-collection-timely', () => {
          if (lastTickStart && Date.now() - lastTickStart > 1.5 * f.metricResolutionMs + 5000)
            throw new Error("metric collection didn't finish on time");
        }),
      );
      server.health.addReadyzChecks(
        namedCheck('metric-storage-ready', () => {
          if (!storage.ready()) throw new Error('no metrics to serve');
        }),
      );
      server.app.use(
        metricsApiHandler({
          storage,
          nodes: () => nodeInformer.indexer.list() as Node[],
          node: (name) => nodeInformer.indexer.get(name) as Node | undefined,
          pods: (ns) => (ns ? podInformer.indexer.byIndex(NAMESPACE_INDEX, ns) : podInformer.indexer.list()) as Pod[],
          pod: (ns, name) => podInformer.indexer.get(`${ns}/${name}`) as Pod | undefined,
        }),
      );
      await server.start();
      log.info('Serving securely', { address: server.address() });
    }
  } catch (err) {
    rest.close();
    for (const r of extra) r.close();
    return fail('Failed to start serving', err);
  }

  const onSignal = (): void => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  factory.start(stop.signal);
  const synced = await factory.waitForCacheSync(stop.signal);
  if (synced) {
    log.info('Informers synced; scraping', { resolution: f.metricResolutionMs });
    await collect(
      {
        scraper,
        storage,
        nodes: () => nodeInformer.indexer.list() as Node[],
        resolutionMs: f.metricResolutionMs,
        metrics,
        onTickStart: (at) => (lastTickStart = at),
        log,
      },
      stop.signal,
    );
  }
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  await server?.shutdown();
  await factory.shutdown();
  scraper.close();
  rest.close();
  for (const r of extra) r.close();
  log.info('Shut down');
  await logging.close();
  return 0;
}
