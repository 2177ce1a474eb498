/**
 * The bootstrap controller (model: Kubernetes 1.21 `pkg/controlplane/controller.go`): behind the post-start hook
 * `bootstrap-controller`, it keeps the system namespaces, the `platform` Service in `default` and (through the
 * endpoint reconciler) its Endpoints in existence.
 *
 * - `start()` (the hook) makes one pass over the namespaces and the Service, retrying until the store answers, then
 *   starts the loop and returns.
 * - The loop repeats the pass every `intervalMs` (Kubernetes: 10 s), so a deleted system namespace or Service comes
 *   back. Its Endpoints are reconciled only once the server is ready (`isReady`), as Kubernetes waits for `/readyz`,
 *   so clients are never sent to a server still starting.
 * - `stop()` (at the start of a graceful shutdown) ends the loop and takes this server out of the Endpoints.
 *
 * The Service: ClusterIP (NodePort when `nodePort` ≠ 0), the first IP of the service range, port 443 named
 * `https` targeting the secure port, labels `component: apiserver`, `provider: platform`. An existing Service whose
 * ports or type differ from that is corrected; anything else on it is left as the user set it.
 */
import { type Service, type ServicePort } from '@platform/api';
import { type Logger } from '@platform/common';

import { type RepairReport } from '../../registry/core/service/storage';

import {
  type EndpointPort,
  type EndpointReconciler,
  PLATFORM_SERVICE_NAME,
  PLATFORM_SERVICE_NAMESPACE,
} from './endpoint-reconciler';
import {
  createIfMissing,
  getOrUndefined,
  retryUntilDone,
  sleep,
  type StoreLookup,
  systemContext,
  updateIfNeeded,
} from './objects';

/** The namespaces the bootstrap controller keeps in existence. */
export const SYSTEM_NAMESPACES = ['default', 'system', 'public', 'node-lease'];

/** The port of the `platform` Service. */
export const PLATFORM_SERVICE_PORT = 443;

/** Kubernetes' interval between two passes. */
export const DEFAULT_BOOTSTRAP_INTERVAL_MS = 10_000;

/** What the bootstrap controller is built from. */
export interface BootstrapControllerOptions {
  lookup: StoreLookup;
  now: () => number;
  log: Logger;
  /** The cluster IP of the Service (the first IP of `--service-cluster-ip-range`). */
  serviceIP: string;
  /** `--platform-service-node-port`; 0: a ClusterIP Service. */
  nodePort: number;
  /** This server's address in the Endpoints (`--advertise-address`). */
  advertiseAddress: string;
  /** The secure port (known once the server listens). */
  securePort: () => number;
  /** Undefined with `--endpoint-reconciler-type=none`. */
  reconciler: EndpointReconciler | undefined;
  /** Time between passes. */
  intervalMs: number;
  /** True once the server is ready (every readiness check but this controller's own loop passes). */
  isReady: () => Promise<boolean>;
  /** Time between two repair passes of the service allocations (Kubernetes: 3 minutes). */
  repairIntervalMs?: number;
}

/** Kubernetes' interval between two repair passes of the service IP and node port allocations. */
export const DEFAULT_REPAIR_INTERVAL_MS = 180_000;

/** A Service store that can repair its allocations (registry/core/service/storage.ts). */
interface RepairableServices {
  repairAllocations(ctx: ReturnType<typeof systemContext>): Promise<RepairReport>;
}

function isRepairable(store: unknown): store is RepairableServices {
  return typeof (store as Partial<RepairableServices>).repairAllocations === 'function';
}

/** The bootstrap controller: see the module comment. */
export class BootstrapController {
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private lastRepair = 0;

  constructor(private readonly o: BootstrapControllerOptions) {}

  /** The post-start hook: a first pass over namespaces and Service, then the loop in the background. */
  async start(signal: AbortSignal): Promise<void> {
    const both = AbortSignal.any([signal, this.abort.signal]);
    await retryUntilDone(
      async () => {
        await this.ensureNamespaces();
        await this.ensureService();
        // As Kubernetes runs its repair loops once before serving: allocations agree with the services stored.
        await this.repairServiceAllocations();
      },
      both,
      Math.min(this.o.intervalMs, 1000),
      (err) => this.o.log.warn('Bootstrap controller: first pass failed; retrying', { err }),
    );
    if (!both.aborted) this.loop = this.run(both);
  }

  /** Ends the loop and takes this server out of the Endpoints. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.o.reconciler?.stopReconciling();
      this.abort.abort();
      await this.loop;
      if (!this.o.reconciler) return;
      try {
        await this.o.reconciler.removeEndpoints(this.o.advertiseAddress, this.endpointPorts());
      } catch (err) {
        this.o.log.error('Bootstrap controller: could not remove this server from the Endpoints', { err });
      }
    })();
    return this.stopping;
  }

  /** Creates the missing system namespaces (nothing when namespaces are not served). */
  async ensureNamespaces(): Promise<void> {
    const namespaces = this.o.lookup('', 'namespaces');
    if (!namespaces) return;
    const ctx = systemContext('', this.o.now);
    for (const name of SYSTEM_NAMESPACES) {
      await createIfMissing(namespaces, ctx, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }

  private servicePorts(): ServicePort[] {
    return [
      {
        name: 'https',
        port: PLATFORM_SERVICE_PORT,
        protocol: 'TCP',
        targetPort: this.o.securePort(),
        ...(this.o.nodePort ? { nodePort: this.o.nodePort } : {}),
      },
    ];
  }

  private serviceType(): 'ClusterIP' | 'NodePort' {
    return this.o.nodePort ? 'NodePort' : 'ClusterIP';
  }

  private endpointPorts(): EndpointPort[] {
    return [{ name: 'https', port: this.o.securePort(), protocol: 'TCP' }];
  }

  /** Creates the `platform` Service, or corrects its ports and type (nothing when services are not served). */
  async ensureService(): Promise<void> {
    const services = this.o.lookup('', 'services');
    if (!services) return;
    const ctx = systemContext(PLATFORM_SERVICE_NAMESPACE, this.o.now);
    const service: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: PLATFORM_SERVICE_NAME,
        namespace: PLATFORM_SERVICE_NAMESPACE,
        labels: { component: 'apiserver', provider: 'platform' },
      },
      spec: {
        type: this.serviceType(),
        clusterIP: this.o.serviceIP,
        ports: this.servicePorts(),
        sessionAffinity: 'None',
      },
    };
    if (!(await getOrUndefined(services, ctx, PLATFORM_SERVICE_NAME))) {
      try {
        if (await createIfMissing(services, ctx, service)) return;
      } catch (err) {
        // Another API server may have created it (its cluster IP is then taken, which fails this create).
        if (!(await getOrUndefined(services, ctx, PLATFORM_SERVICE_NAME))) throw err;
      }
    }
    const wanted = this.servicePorts();
    await updateIfNeeded(services, ctx, PLATFORM_SERVICE_NAME, (obj) => {
      const s = obj as Service;
      const spec = (s.spec ??= {});
      const ports = spec.ports ?? [];
      const portsRight =
        ports.length === wanted.length &&
        ports.every((p, i) => {
          const w = wanted[i]!;
          return (
            p.name === w.name &&
            p.port === w.port &&
            (p.protocol ?? 'TCP') === w.protocol &&
            String(p.targetPort ?? p.port) === String(w.targetPort) &&
            (w.nodePort === undefined || p.nodePort === w.nodePort)
          );
        });
      if (portsRight && (spec.type ?? 'ClusterIP') === this.serviceType()) return undefined;
      spec.type = this.serviceType();
      spec.ports = wanted;
      return s;
    });
  }

  /**
   * One repair pass of the cluster IP and node port allocations (Kubernetes' `repairip` and `repairnodeport`):
   * values services hold but the bitmaps lost are marked again, leaked values are released after three passes, and
   * services holding values outside the configured ranges are reported. Nothing when services are not served.
   */
  async repairServiceAllocations(): Promise<RepairReport | undefined> {
    const services = this.o.lookup('', 'services');
    if (!services || !isRepairable(services)) return undefined;
    const r = await services.repairAllocations(systemContext('', this.o.now));
    this.lastRepair = this.o.now();
    const log = this.o.log;
    if (r.marked.length)
      log.warn('Service allocations: values in use were not marked allocated; repaired', { values: r.marked });
    if (r.released.length) log.info('Service allocations: released leaked values', { values: r.released });
    if (r.outOfRange.length)
      log.warn('Services hold values outside the configured ranges; recreate them to move them', {
        values: r.outOfRange,
      });
    return r;
  }

  /** One pass of the loop; returns whether the server was ready (so the Endpoints were reconciled). */
  private async pass(): Promise<boolean> {
    await this.ensureNamespaces();
    await this.ensureService();
    if (this.o.now() - this.lastRepair >= (this.o.repairIntervalMs ?? DEFAULT_REPAIR_INTERVAL_MS)) {
      await this.repairServiceAllocations();
    }
    if (!this.o.reconciler) return true;
    if (!(await this.o.isReady())) return false;
    await this.o.reconciler.reconcileEndpoints(this.o.advertiseAddress, this.endpointPorts());
    return true;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let ready = true;
      try {
        ready = await this.pass();
      } catch (err) {
        if (signal.aborted) return;
        this.o.log.warn('Bootstrap controller: pass failed; will retry', { err });
      }
      // Until the server is ready, look again soon: the Endpoints should list it as soon as it can serve.
      await sleep(ready ? this.o.intervalMs : Math.min(this.o.intervalMs, 100), signal);
    }
  }
}
