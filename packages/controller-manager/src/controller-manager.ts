/**
 * Runs the enabled controllers in one process (model: kube-controller-manager's `StartControllers`): one shared
 * informer factory, one client per controller (its own rate limit of `--api-qps`/`--api-burst`, as client-go's
 * controller client builder gives each), optionally acting as the controller's own ServiceAccount
 * (`system:serviceaccount:system:<name>-controller`, a token from the TokenRequest API), an Event recorder per
 * controller, and a health check per controller.
 */
import { setMaxListeners } from 'node:events';

import { EventKind, isAlreadyExists, isForbidden, isNotFound, NamespaceKind, ServiceAccountKind } from '@platform/api';
import { Clientset, EventRecorder, InformerFactory, RestClient, type RestConfig, TokenBucket } from '@platform/client';
import { type HealthCheck, type Logger, type MetricsRegistry } from '@platform/common';

import { type ControllerContext, type ControllerDefinition } from './controller';

/** The namespace of the controllers' ServiceAccounts and of the leader-election lock. */
export const SYSTEM_NAMESPACE = 'system';

/** What {@link startControllers} needs. */
export interface ControllerManagerConfig {
  /** The controller manager's own client configuration (qps/burst/content type applied). */
  rest: RestConfig;
  controllers: { def: ControllerDefinition; options: unknown }[];
  minResyncPeriodMs: number;
  useServiceAccountCredentials: boolean;
  logger: Logger;
  metrics: MetricsRegistry;
}

/** The running controllers. */
export interface RunningControllers {
  /** One check per controller (`/healthz` `/livez` `/readyz`). */
  checks: HealthCheck[];
  /** Every client the controllers use (to close on shutdown). */
  clients: RestClient[];
  /** Resolves when every controller's `run` has returned (after `signal` aborted). */
  done: Promise<void>;
}

/** Client metrics: request latency by verb and code, rate-limiter wait. */
export class ClientMetrics {
  readonly requests;
  readonly latency;
  readonly limiterWait;

  constructor(m: MetricsRegistry) {
    this.requests = m.counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
    });
    this.latency = m.histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds. Broken down by verb and URL.',
      labelNames: ['verb', 'url'],
      buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512],
    });
    this.limiterWait = m.histogram({
      name: 'rest_client_rate_limiter_duration_seconds',
      help: 'Client side rate limiter latency in seconds. Broken down by verb and URL.',
      labelNames: ['verb', 'url'],
      buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1, 2, 4, 8, 16, 32, 64],
    });
  }

  /** A REST client with its own token bucket, reporting to these metrics. */
  client(config: RestConfig, logger?: Logger): RestClient {
    const host = new URL(config.server).host;
    const bucket = new TokenBucket(config.qps ?? 20, config.burst ?? 30);
    const url = `https://${host}`;
    return new RestClient(config, {
      logger,
      rateLimiter: {
        wait: async (signal) => {
          const t0 = performance.now();
          await bucket.wait(signal);
          this.limiterWait.observe({ verb: '', url }, (performance.now() - t0) / 1000);
        },
        tryAccept: () => bucket.tryAccept(),
      },
      onResponse: (method, code, ms) => {
        this.requests.inc({ code: String(code), method, host });
        this.latency.observe({ verb: method, url }, ms / 1000);
      },
    });
  }
}

/** The ServiceAccount a controller acts as with `--use-service-account-credentials`. */
export function serviceAccountOf(def: { name: string; serviceAccount?: string | false }): string {
  return def.serviceAccount || `${def.name}-controller`;
}

/**
 * Obtains a token for ServiceAccount `sa` in `system`: creates the namespace and the ServiceAccount when missing,
 * then asks the TokenRequest API for a token valid 24 hours. Throws what the API answered.
 */
export async function serviceAccountToken(
  admin: Clientset,
  sa: string,
  signal?: AbortSignal,
): Promise<{ token: string; expiresAt: number }> {
  try {
    await admin.resource(NamespaceKind).create({ metadata: { name: SYSTEM_NAMESPACE } }, { signal });
  } catch (err) {
    // The API server's bootstrap makes it; the controller manager's own role may not create namespaces.
    if (!isAlreadyExists(err) && !isForbidden(err)) throw err;
  }
  try {
    await admin.resource(ServiceAccountKind, SYSTEM_NAMESPACE).get(sa, { signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await admin
        .resource(ServiceAccountKind, SYSTEM_NAMESPACE)
        .create({ metadata: { name: sa, namespace: SYSTEM_NAMESPACE } }, { signal });
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }
  const tr = (await admin
    .resource(ServiceAccountKind, SYSTEM_NAMESPACE)
    .createSubresource(
      sa,
      'token',
      { apiVersion: 'authentication.platform/v1', kind: 'TokenRequest', spec: { expirationSeconds: 86_400 } } as never,
      { signal },
    )) as {
    status?: { token?: string; expirationTimestamp?: string };
  };
  const token = tr.status?.token;
  if (!token) throw new Error(`the TokenRequest for ServiceAccount ${SYSTEM_NAMESPACE}/${sa} returned no token`);
  return { token, expiresAt: Date.parse(tr.status?.expirationTimestamp ?? '') || Date.now() + 86_400_000 };
}

/**
 * Starts every controller of `config.controllers` (with `startIntervalMs` between them) and then the informers
 * they asked for. Runs until `signal` aborts.
 */
export async function startControllers(
  config: ControllerManagerConfig,
  signal: AbortSignal,
  startIntervalMs = 0,
): Promise<RunningControllers> {
  // Every request and watch of every controller listens on this signal: dozens of informers are no leak.
  setMaxListeners(0, signal);
  const cm = new ClientMetrics(config.metrics);
  const clients: RestClient[] = [];
  const adminRest = cm.client(config.rest, config.logger);
  clients.push(adminRest);
  const admin = new Clientset(adminRest);
  const informerRest = cm.client(config.rest, config.logger);
  clients.push(informerRest);
  const informers = new InformerFactory(new Clientset(informerRest), {
    minResyncPeriodMs: config.minResyncPeriodMs,
    logger: config.logger,
  });
  const health = new Map<string, string | undefined>();
  const checks: HealthCheck[] = [];
  const runs: Promise<void>[] = [];
  for (const { def, options } of config.controllers) {
    if (signal.aborted) break;
    const log = config.logger.child(def.name);
    let rest: RestConfig = config.rest;
    if (config.useServiceAccountCredentials && def.serviceAccount !== false) {
      const { token, expiresAt } = await serviceAccountToken(admin, serviceAccountOf(def), signal);
      rest = {
        server: config.rest.server,
        ca: config.rest.ca,
        insecureSkipTlsVerify: config.rest.insecureSkipTlsVerify,
        tlsServerName: config.rest.tlsServerName,
        contentType: config.rest.contentType,
        qps: config.rest.qps,
        burst: config.rest.burst,
        userAgent: `platform-controller-manager/${serviceAccountOf(def)}`,
        token,
      };
      scheduleTokenRefresh(admin, serviceAccountOf(def), rest, expiresAt, signal, log);
    }
    const rc = cm.client(rest, log);
    clients.push(rc);
    const client = new Clientset(rc);
    health.set(def.name, undefined);
    checks.push({
      name: def.name,
      check: () => {
        const p = health.get(def.name);
        if (p !== undefined) throw new Error(p);
      },
    });
    const ctx: ControllerContext = {
      name: def.name,
      client,
      informers,
      startInformers: () => informers.start(signal),
      // client-go's spam filter as controllers have it in 1.21: per source and object, a burst of 25, then
      // one Event every five minutes (a ReplicaSet creating 1,000 pods records 25 SuccessfulCreate Events).
      recorder: new EventRecorder({
        events: client.resource(EventKind),
        component: `${def.name}-controller`,
        qps: 1 / 300,
        burst: 25,
      }),
      logger: log,
      metrics: config.metrics,
      rootCA: config.rest.ca,
      signal,
      setHealth: (p) => health.set(def.name, p),
    };
    log.info('Starting controller', { controller: def.name });
    runs.push(
      def.run(ctx, options).then(
        () => {
          if (!signal.aborted) health.set(def.name, 'the controller stopped');
        },
        (err: unknown) => {
          health.set(def.name, `the controller failed: ${(err as Error).message ?? String(err)}`);
          log.error('Controller failed', { controller: def.name, error: String(err) });
        },
      ),
    );
    if (startIntervalMs > 0) await new Promise((r) => setTimeout(r, startIntervalMs));
  }
  informers.start(signal);
  const done = Promise.all(runs).then(async () => {
    await informers.shutdown();
  });
  return { checks, clients, done };
}

function scheduleTokenRefresh(
  admin: Clientset,
  name: string,
  rest: RestConfig,
  expiresAt: number,
  signal: AbortSignal,
  log: Logger,
): void {
  // Renew at 80% of the lifetime, as the kubelet does for projected tokens.
  const ms = Math.max(60_000, (expiresAt - Date.now()) * 0.8);
  const t = setTimeout(() => {
    serviceAccountToken(admin, name, signal).then(
      (r) => {
        rest.token = r.token;
        scheduleTokenRefresh(admin, name, rest, r.expiresAt, signal, log);
      },
      (err: unknown) => {
        log.warn('Could not renew the controller token; retrying in a minute', { error: String(err) });
        scheduleTokenRefresh(admin, name, rest, Date.now() + 75_000, signal, log);
      },
    );
  }, ms);
  t.unref();
  signal.addEventListener('abort', () => clearTimeout(t), { once: true });
}
