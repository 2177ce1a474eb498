/**
 * The API server's bootstrap post-start hooks (Document 1's check names), installed on its secure server:
 *
 * - `poststarthook/bootstrap-controller`: system namespaces, the `platform` Service and its Endpoints
 *   (`controller.ts`, `endpoint-reconciler.ts`), and the repair of the service allocations, kept current by a loop;
 *   a pre-shutdown hook takes this server out of the Endpoints;
 * - `poststarthook/rbac/bootstrap-roles`: the default RBAC policy (`rbac.ts`, `rbac-policy.ts`);
 * - `poststarthook/scheduling/bootstrap-system-priority-classes`: the system priority classes;
 * - `poststarthook/start-cluster-authentication-info-controller`: the `extension-apiserver-authentication`
 *   ConfigMap (`authentication-info.ts`).
 *
 * Each hook retries until its first pass succeeds (the store may be slow to answer at start); its check fails
 * ("not finished") until then.
 */
import { RBAC_GROUP } from '@platform/api';
import { type Logger, type SecureServer } from '@platform/common';

import { cidrRange } from '../../registry/core/service/allocator';
import { type Store } from '../../storage/interface';

import { BootstrapController, DEFAULT_BOOTSTRAP_INTERVAL_MS } from './controller';
import {
  DEFAULT_MASTER_LEASE_TTL_SECONDS,
  type EndpointReconciler,
  type EndpointReconcilerType,
  LeaseEndpointReconciler,
  MasterCountEndpointReconciler,
} from './endpoint-reconciler';
import { ensureAuthenticationInfo } from './authentication-info';
import { retryUntilDone, sleep, type StoreLookup } from './objects';
import { ensureSystemPriorityClasses } from './priority-classes';
import { RbacBootstrap, rbacStores } from './rbac';

/** The bootstrap part of the API server's configuration. */
export interface BootstrapConfig {
  /** `--endpoint-reconciler-type`; default `lease`. */
  endpointReconcilerType?: EndpointReconcilerType;
  /** `--apiserver-count` (used by `master-count`); default 1. */
  apiServerCount?: number;
  /** `--platform-service-node-port`; 0 (default): the Service is ClusterIP. */
  platformServiceNodePort?: number;
  /** Time between two passes of the bootstrap controller; default 10 s. */
  intervalMs?: number;
  /** Time between two repair passes of the service allocations; default 3 minutes. */
  repairIntervalMs?: number;
  /** TTL of this server's master lease (lease reconciler); default 15 s. */
  masterLeaseTtlSeconds?: number;
}

/** What the hooks need from the server. */
export interface BootstrapDeps {
  secure: SecureServer;
  lookup: StoreLookup;
  /** The backing store of the Endpoints (the leases live there). */
  leaseStore: Store;
  /** `--store-prefix`. */
  storePrefix: string;
  /** `--service-cluster-ip-range`. */
  serviceClusterIPRange: string;
  /** `--advertise-address`. */
  advertiseAddress: string;
  now: () => number;
  log: Logger;
  config: BootstrapConfig | undefined;
  /** The data of the `extension-apiserver-authentication` ConfigMap (see authentication-info.ts). */
  authenticationInfo?: Record<string, string>;
}

/** The installed bootstrap, for operations and tests. */
export interface Bootstrap {
  controller: BootstrapController;
  /** Undefined when the RBAC group is not served. */
  rbac: RbacBootstrap | undefined;
}

const RBAC_RESOURCES = ['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings'];

/** The cluster IP of the `platform` Service: the first address of the (primary) service range. */
export function platformServiceIP(serviceClusterIPRange: string): string {
  const primary = serviceClusterIPRange.split(',')[0]!.trim();
  return String(cidrRange(primary).valueAt(0));
}

/** Registers the bootstrap post-start hooks and the pre-shutdown hook. Call before the server starts. */
export function installBootstrap(d: BootstrapDeps): Bootstrap {
  const c = d.config ?? {};
  const endpoints = d.lookup('', 'endpoints');
  const slices = d.lookup('discovery.platform', 'endpointslices');
  let reconciler: EndpointReconciler | undefined;
  // Without served Endpoints (`--runtime-config`) there is nothing to reconcile.
  switch (endpoints ? (c.endpointReconcilerType ?? 'lease') : 'none') {
    case 'lease':
      reconciler = new LeaseEndpointReconciler(
        endpoints!,
        d.leaseStore,
        `${d.storePrefix}/masterleases/`,
        c.masterLeaseTtlSeconds ?? DEFAULT_MASTER_LEASE_TTL_SECONDS,
        d.now,
        slices,
      );
      break;
    case 'master-count':
      reconciler = new MasterCountEndpointReconciler(endpoints!, c.apiServerCount ?? 1, d.now, slices);
      break;
    case 'none':
      reconciler = undefined;
      break;
  }
  const secure = d.secure;
  const port = (): number => secure.address().port;
  const controller = new BootstrapController({
    lookup: d.lookup,
    now: d.now,
    log: d.log,
    serviceIP: platformServiceIP(d.serviceClusterIPRange),
    nodePort: c.platformServiceNodePort ?? 0,
    advertiseAddress: d.advertiseAddress,
    securePort: port,
    reconciler,
    intervalMs: c.intervalMs ?? DEFAULT_BOOTSTRAP_INTERVAL_MS,
    ...(c.repairIntervalMs !== undefined ? { repairIntervalMs: c.repairIntervalMs } : {}),
    isReady: async () => {
      for (const check of secure.health.readyz) {
        try {
          await check.check();
        } catch {
          return false;
        }
      }
      return true;
    },
  });
  const retryMs = Math.min(c.intervalMs ?? DEFAULT_BOOTSTRAP_INTERVAL_MS, 1000);
  secure.addPostStartHook('bootstrap-controller', (signal) => controller.start(signal));
  // As in Kubernetes, the RBAC and scheduling hooks exist only when their groups are served (`--runtime-config`).
  const rbacServed = RBAC_RESOURCES.every((r) => d.lookup(RBAC_GROUP, r)) && d.lookup('', 'namespaces');
  const rbac = rbacServed ? new RbacBootstrap(rbacStores(d.lookup), d.now) : undefined;
  if (rbac) {
    secure.addPostStartHook('rbac/bootstrap-roles', (signal) =>
      retryUntilDone(
        async () => {
          const r = await rbac.reconcile();
          if (r.created.length || r.updated.length)
            d.log.info('Reconciled the default RBAC policy', { created: r.created.length, updated: r.updated.length });
        },
        signal,
        retryMs,
        (err) => d.log.warn('Reconciling the default RBAC policy failed; retrying', { err }),
      ),
    );
  }
  if (d.lookup('scheduling.platform', 'priorityclasses')) {
    secure.addPostStartHook('scheduling/bootstrap-system-priority-classes', (signal) =>
      retryUntilDone(
        async () => {
          for (const name of await ensureSystemPriorityClasses(d.lookup, d.now))
            d.log.info('Created a system priority class', { name });
        },
        signal,
        retryMs,
        (err) => d.log.warn('Creating the system priority classes failed; retrying', { err }),
      ),
    );
  }
  if (d.lookup('', 'configmaps')) {
    const publish = (): Promise<void> => ensureAuthenticationInfo(d.lookup, d.now, d.authenticationInfo ?? {});
    secure.addPostStartHook('start-cluster-authentication-info-controller', async (signal) => {
      await retryUntilDone(publish, signal, retryMs, (err) =>
        d.log.warn('Publishing the authentication information failed; retrying', { err }),
      );
      // Kept so: what was changed or deleted is put back at the next pass.
      void (async () => {
        while (!signal.aborted) {
          await sleep(c.intervalMs ?? DEFAULT_BOOTSTRAP_INTERVAL_MS, signal);
          if (signal.aborted) return;
          await publish().catch((err: unknown) =>
            d.log.warn('Publishing the authentication information failed; will retry', { err }),
          );
        }
      })();
    });
  }
  secure.addPreShutdownHook('bootstrap-controller', () => controller.stop());
  return { controller, rbac };
}
