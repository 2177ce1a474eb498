/**
 * `--simulate-nodes N`: N fake nodes in one process, for scale tests (the idea of kwok). Each node registers,
 * renews its Lease every quarter of the lease duration and posts its status when it changed or every
 * `--node-status-report-frequency`; node i's timers are offset by i/N of the period, so N nodes write at an even
 * rate instead of in bursts. Pods bound to a simulated node run as no-op containers: one status write makes them
 * Running and Ready; a pod being deleted is deleted at once (grace 0). One shared pod watch serves every node.
 * Node addresses are distinct loopback addresses (127.1.x.y); pod IPs are taken from 10.244.0.0/16 per node and
 * are never contacted. Each node serves `/healthz` and `/metrics/resource` on its own address at `--port`
 * (`simulated-servers.ts`), so a metrics server scrapes simulated nodes as it scrapes real ones.
 */
import { isNotFound, type Pod, PodKind } from '@platform/api';
import { type Clientset, type Indexer, InformerFactory, isDeletedFinalStateUnknown } from '@platform/client';
import { type Logger } from '@platform/common';

import { type AgentValues } from '../../cmd/options';
import { sleep } from '../../util/sleep';
import {
  initialNode,
  LeaseRenewer,
  nodeConditions,
  nodeInfo,
  NodeStatusWriter,
  registerNode,
} from '../../node/node-status';
import { SimulatedServers } from './simulated-servers';

/** Settings of the simulated nodes. */
export interface SimulatedNodesOptions {
  clientset: Clientset;
  values: AgentValues;
  log: Logger;
}

interface SimNode {
  index: number;
  name: string;
  ip: string;
  uid: string;
  lease: LeaseRenewer;
  status: NodeStatusWriter;
  nextPodIp: number;
  busy: boolean;
}

/** The index of the shared pod watch by `spec.nodeName`. */
const NODE_INDEX = 'spec.nodeName';

function nowRfc3339(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Hosts the simulated nodes. */
export class SimulatedNodes {
  readonly nodes = new Map<string, SimNode>();
  private readonly pending = new Map<string, Pod>();
  private wake?: () => void;
  private podIndex?: Indexer<Pod>;
  /** The servers of the nodes' addresses, while they run. */
  servers?: SimulatedServers;
  /** Pod status writes and deletes sent. */
  podWrites = 0;

  constructor(private readonly o: SimulatedNodesOptions) {
    const v = o.values;
    for (let i = 0; i < v.simulateNodes; i++) {
      const name = `${v.simulateNodePrefix}-${i}`;
      const ip = `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
      const node: SimNode = {
        index: i,
        name,
        ip,
        uid: '',
        lease: undefined as unknown as LeaseRenewer,
        status: new NodeStatusWriter(o.clientset, name, v.nodeStatusReportFrequency),
        nextPodIp: 1,
        busy: false,
      };
      node.lease = new LeaseRenewer(o.clientset, name, v.nodeLeaseDurationSeconds, () => node.uid);
      this.nodes.set(name, node);
    }
  }

  /** The pods bound to a simulated node, from the shared pod watch (none before its first list). */
  podsOf(nodeName: string): Pod[] {
    return this.podIndex?.byIndex(NODE_INDEX, nodeName) ?? [];
  }

  /** Lease and status writes sent so far. */
  nodeWrites(): number {
    let n = 0;
    for (const s of this.nodes.values()) n += s.lease.writes + s.status.writes;
    return n;
  }

  private statusOf(n: SimNode): Parameters<NodeStatusWriter['post']>[0] {
    const v = this.o.values;
    const pods = String(v.maxPods);
    return {
      capacity: { cpu: '32', memory: '263830100Ki', 'ephemeral-storage': '1055762868Ki', pods },
      allocatable: { cpu: '32', memory: '263727700Ki', 'ephemeral-storage': '972991057538', pods },
      conditions: nodeConditions({ ready: true, memoryPressure: false, diskPressure: false, pidPressure: false }),
      addresses: [
        { type: 'InternalIP', address: n.ip },
        { type: 'Hostname', address: n.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: v.port } },
      nodeInfo: nodeInfo('simulated://0.1.0'),
    } as Parameters<NodeStatusWriter['post']>[0];
  }

  /** Runs every node until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const v = this.o.values;
    const cs = this.o.clientset;
    const log = this.o.log;
    const list = [...this.nodes.values()];
    // Registration, 32 at a time.
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(32, list.length) }, async () => {
        while (next < list.length && !signal.aborted) {
          const n = list[next++]!;
          const node = initialNode({
            nodeName: n.name,
            nodeIp: n.ip,
            hostname: n.name,
            labels: new Map([...v.nodeLabels, ['type', 'simulated']]),
            taints: v.registerWithTaints,
            unschedulable: !v.registerSchedulable,
            providerId: '',
            podCidr: '',
            port: v.port,
          });
          for (let attempt = 0; !signal.aborted; attempt++) {
            try {
              n.uid = await registerNode(cs, node, log);
              await n.status.post(this.statusOf(n), true);
              break;
            } catch (err) {
              if (attempt % 10 === 0) log.info('Unable to register simulated node', { node: n.name, err: String(err) });
              await sleep(Math.min(5000, 200 * 2 ** Math.min(attempt, 5)), signal);
            }
          }
        }
      }),
    );
    log.info('Simulated nodes registered', { count: list.length });
    if (v.enableServer && v.port > 0 && !signal.aborted) {
      this.servers = new SimulatedServers({
        values: v,
        clientset: cs,
        log,
        nodes: new Map(list.map((n) => [n.ip, n.name])),
        podsOf: (name) => this.podsOf(name),
      });
      const served = await this.servers.start();
      log.info('Simulated nodes serving', { count: served, port: v.port });
      signal.addEventListener('abort', () => void this.servers?.stop(), { once: true });
    }
    const leasePeriod = (v.nodeLeaseDurationSeconds * 1000) / 4;
    const heartbeat = async (): Promise<void> => {
      // One loop for all nodes: node i renews at offset i/N of the period.
      const start = Date.now();
      let round = 0;
      while (!signal.aborted) {
        for (const n of list) {
          if (signal.aborted) return;
          const at = start + round * leasePeriod + (n.index * leasePeriod) / list.length;
          const wait = at - Date.now();
          if (wait > 0) await sleep(wait, signal);
          // A node whose previous heartbeat is still in flight (a slow server) skips this one: two renewals of one
          // Lease at once would conflict.
          if (n.busy) continue;
          n.busy = true;
          void n.lease
            .renew()
            .catch((err: unknown) => log.info('Failed to renew a simulated lease', { node: n.name, err: String(err) }))
            .then(() => n.status.post(this.statusOf(n)))
            .catch((err: unknown) => {
              if (isNotFound(err)) n.status.reset();
            })
            .finally(() => (n.busy = false));
        }
        round++;
      }
    };
    await Promise.all([heartbeat(), this.podLoop(signal), this.podWriter(signal)]);
  }

  private podLoop(signal: AbortSignal): Promise<void> {
    const factory = new InformerFactory(this.o.clientset, {
      tweakListOptions: () => ({ fieldSelector: 'spec.nodeName!=' }),
      logger: this.o.log.child('informers'),
    });
    const pods = factory.informerFor(PodKind);
    pods.addIndexers({ [NODE_INDEX]: (p) => [p.spec?.nodeName ?? ''] });
    this.podIndex = pods.indexer as Indexer<Pod>;
    const consider = (p: Pod): void => {
      if (!this.nodes.has(p.spec?.nodeName ?? '')) return;
      if (p.metadata?.deletionTimestamp !== undefined || !this.isReady(p)) {
        const key = `${p.metadata?.namespace}/${p.metadata?.name}`;
        this.pending.set(key, p);
        this.wake?.();
      }
    };
    pods.addEventHandler({
      onAdd: (p) => consider(p as Pod),
      onUpdate: (_o, p) => consider(p as Pod),
      onDelete: (p) => {
        const pod = (isDeletedFinalStateUnknown(p) ? p.obj : p) as Pod;
        this.pending.delete(`${pod.metadata?.namespace}/${pod.metadata?.name}`);
      },
    });
    factory.start(signal);
    return factory.shutdown();
  }

  private isReady(p: Pod): boolean {
    const phase = p.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return true;
    return phase === 'Running' && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  }

  private async podWriter(signal: AbortSignal): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    signal.addEventListener('abort', () => this.wake?.(), { once: true });
    while (!signal.aborted) {
      if (this.pending.size === 0 || inFlight.size >= 16) {
        await new Promise<void>((r) => {
          this.wake = r;
          if (inFlight.size > 0) void Promise.race(inFlight).then(() => r());
        });
        this.wake = undefined;
        continue;
      }
      const [key, pod] = this.pending.entries().next().value as [string, Pod];
      this.pending.delete(key);
      const p = this.syncPod(pod).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.allSettled(inFlight);
  }

  private async syncPod(p: Pod): Promise<void> {
    const pods = this.o.clientset.resource(PodKind, p.metadata?.namespace ?? 'default');
    const name = p.metadata?.name ?? '';
    try {
      if (p.metadata?.deletionTimestamp !== undefined) {
        await pods.delete(name, { gracePeriodSeconds: 0, preconditions: { uid: p.metadata.uid } } as never);
        this.podWrites++;
        return;
      }
      const node = this.nodes.get(p.spec?.nodeName ?? '')!;
      const ts = nowRfc3339();
      const podIp = p.status?.podIP ?? `10.244.${node.index % 256}.${(node.nextPodIp++ % 250) + 2}`;
      const cond = (type: string): Record<string, unknown> => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: ts,
      });
      const status = {
        phase: 'Running',
        conditions: [cond('Initialized'), cond('Ready'), cond('ContainersReady'), cond('PodScheduled')],
        hostIP: node.ip,
        podIP: podIp,
        podIPs: [{ ip: podIp }],
        startTime: p.status?.startTime ?? ts,
        ...((p.spec?.initContainers ?? []).length > 0
          ? {
              initContainerStatuses: (p.spec?.initContainers ?? []).map((c) => ({
                name: c.name,
                state: {
                  terminated: {
                    exitCode: 0,
                    reason: 'Completed',
                    startedAt: ts,
                    finishedAt: ts,
                    containerID: `simulated://${p.metadata?.uid}-${c.name}`,
                  },
                },
                lastState: {},
                ready: true,
                restartCount: 0,
                image: c.image ?? '',
                imageID: `simulated://${c.image ?? ''}`,
                containerID: `simulated://${p.metadata?.uid}-${c.name}`,
              })),
            }
          : {}),
        containerStatuses: (p.spec?.containers ?? []).map((c) => ({
          name: c.name,
          state: { running: { startedAt: ts } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: c.image ?? '',
          imageID: `simulated://${c.image ?? ''}`,
          containerID: `simulated://${p.metadata?.uid}-${c.name}`,
          started: true,
        })),
        qosClass: 'BestEffort',
      };
      await pods.patch(name, 'merge', { status }, { subresource: 'status' });
      this.podWrites++;
    } catch (err) {
      if (!isNotFound(err)) this.o.log.info('Failed to update a simulated pod', { pod: name, err: String(err) });
    }
  }
}
