/**
 * The scheduler (model: Kubernetes 1.21 `pkg/scheduler/scheduler.go` and `core/generic_scheduler.go`): informers
 * feed the cache (bound pods, nodes) and the queue (pending pods of our profiles); one loop pops a pod, runs the
 * scheduling cycle synchronously on a snapshot (filter, score, select), assumes the pod onto the chosen node, and
 * starts the binding cycle without waiting for it, so the next pod is scheduled while the binding is in flight.
 */
import { setMaxListeners } from 'node:events';

import {
  type ApiObject,
  EventKind,
  NamespaceKind,
  type Node,
  NodeKind,
  PersistentVolumeClaimKind,
  PersistentVolumeKind,
  type Pod,
  PodDisruptionBudgetKind,
  PodKind,
  ServiceKind,
  StorageClassKind,
} from '@platform/api';
import {
  type Clientset,
  type Clock,
  EventRecorder,
  type Indexer,
  InformerFactory,
  isDeletedFinalStateUnknown,
  REAL_CLOCK,
} from '@platform/client';
import { type Logger, NOP_LOGGER } from '@platform/common';

import { SchedulerCache, Snapshot } from './cache/cache';
import { Framework, type ProfilePlugins } from './framework/framework';
import { type NodeInfo, podKey } from './framework/node-info';
import { type Registry } from './framework/registry';
import {
  type ClusterEvent,
  type CycleState,
  errorStatus,
  isSuccess,
  type NodeToStatus,
  type QueuedPodInfo,
  type SchedulerHandle,
  type Status,
  unschedulable,
} from './framework/types';
import {
  callPreemptionExtenders,
  type Extender,
  extenderScores,
  findNodesThatPassExtenders,
} from './extender/http-extender';
import { SchedulerMetrics } from './metrics';
import { inTreeRegistry } from './plugins/registry';
import { SchedulingQueue } from './queue/scheduling-queue';

/** The message prefix of a pod that fits no node. */
export const NO_NODE_AVAILABLE_MSG = '0/%v nodes are available';

/** A pod fits no node: the per-node reasons, summarized as 1.21 does. */
export class FitError extends Error {
  constructor(
    readonly pod: Pod,
    readonly numAllNodes: number,
    readonly statuses: NodeToStatus,
  ) {
    super(fitErrorMessage(numAllNodes, statuses));
  }
}

/** `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had taint {…}, that the pod didn't tolerate.` */
export function fitErrorMessage(numAllNodes: number, statuses: NodeToStatus): string {
  const counts = new Map<string, number>();
  for (const s of statuses.values()) for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort();
  return `0/${numAllNodes} nodes are available: ${parts.join(', ')}.`;
}

/** A profile, resolved: its scheduler name, the plugins of each extension point and their args. */
export interface Profile {
  schedulerName: string;
  plugins: ProfilePlugins;
  pluginConfig: Map<string, unknown>;
}

/** What the scheduler needs. */
export interface SchedulerOptions {
  /** Bindings, status updates, reads. */
  clientset: Clientset;
  /** Events (kube-scheduler gives them a client of their own, so they do not spend the bindings' rate limit). */
  eventClientset?: Clientset;
  profiles: Profile[];
  /** Out-of-tree plugins, merged with the in-tree ones. */
  registry?: Registry;
  percentageOfNodesToScore?: number;
  podInitialBackoffMs?: number;
  podMaxBackoffMs?: number;
  hardPodAffinitySymmetricWeight?: number;
  /** How long an assumed pod whose binding was sent waits for its bound self. */
  assumedPodTtlMs?: number;
  metrics?: SchedulerMetrics;
  logger?: Logger;
  clock?: Clock;
  /** Host name for Events' source. */
  host?: string;
  /**
   * `parallelism`: the batch of nodes filtered before checking whether enough are feasible, and how many
   * preemption victims are deleted at once.
   */
  parallelism?: number;
  /** HTTP extenders, asked after the plugins in the order given. */
  extenders?: Extender[];
}

/** `parallelism` of KubeSchedulerConfiguration v1beta1. */
export const DEFAULT_PARALLELISM = 16;

/** The least number of nodes examined per pod, however large the cluster (1.21 `minFeasibleNodesToFind`). */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** The least adaptive percentage (1.21 `minFeasibleNodesPercentageToFind`). */
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/** How many feasible nodes to look for among `numAllNodes` (1.21 `numFeasibleNodesToFind`). */
export function numFeasibleNodesToFind(numAllNodes: number, percentageOfNodesToScore = 0): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND || percentageOfNodesToScore >= 100) return numAllNodes;
  let pct = percentageOfNodesToScore;
  if (pct === 0) {
    pct = 50 - Math.trunc(numAllNodes / 125);
    if (pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND) pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
  }
  const n = Math.trunc((numAllNodes * pct) / 100);
  return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : n;
}

/** The pod with its kind: objects decoded from Protobuf lists carry none, and an Event's involvedObject needs it. */
function asPodRef(pod: Pod): ApiObject {
  return (pod.kind ? pod : { ...pod, apiVersion: 'v1', kind: 'Pod' }) as ApiObject;
}

function isAssigned(pod: Pod): boolean {
  return !!pod.spec?.nodeName;
}

function isTerminal(pod: Pod): boolean {
  const ph = pod.status?.phase;
  return ph === 'Succeeded' || ph === 'Failed';
}

function nodeSchedulingPropertiesChanged(old: Node, node: Node): boolean {
  const s = (v: unknown): string => JSON.stringify(v ?? null);
  return (
    !!old.spec?.unschedulable !== !!node.spec?.unschedulable ||
    s(old.status?.allocatable) !== s(node.status?.allocatable) ||
    s(old.metadata?.labels) !== s(node.metadata?.labels) ||
    s(old.spec?.taints) !== s(node.spec?.taints) ||
    s(old.status?.conditions?.map((c) => [c.type, c.status])) !==
      s(node.status?.conditions?.map((c) => [c.type, c.status]))
  );
}

/** The scheduler. */
export class Scheduler {
  readonly cache: SchedulerCache;
  readonly queue: SchedulingQueue;
  readonly snapshot = new Snapshot();
  readonly profiles = new Map<string, Framework>();
  readonly metrics: SchedulerMetrics;
  readonly factory: InformerFactory;
  private readonly recorder: EventRecorder;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly listers = new Map<string, Indexer<ApiObject>>();
  private podIndexer?: Indexer<ApiObject>;
  private nextStartNodeIndex = 0;
  private readonly extenders: readonly Extender[];
  private inFlightBindings = 0;
  /** Aborted when `run`'s signal is: plugins' waits in binding cycles still in flight end. */
  private readonly stopping = new AbortController();
  /** Bindings that failed (tests). */
  bindFailures = 0;

  constructor(private readonly o: SchedulerOptions) {
    this.log = o.logger ?? NOP_LOGGER;
    this.clock = o.clock ?? REAL_CLOCK;
    this.extenders = o.extenders ?? [];
    this.metrics = o.metrics ?? new SchedulerMetrics();
    this.cache = new SchedulerCache({ ttlMs: o.assumedPodTtlMs, clock: this.clock });
    this.factory = new InformerFactory(o.clientset, { minResyncPeriodMs: 0, logger: this.log });
    this.recorder = new EventRecorder({
      events: (o.eventClientset ?? o.clientset).resource(EventKind),
      component: 'default-scheduler',
      host: o.host,
      qps: 0,
      logger: this.log,
    });
    const registry = o.registry ? inTreeRegistry().merge(o.registry) : inTreeRegistry();
    const handle = this.handle();
    const observe = (point: string, status: string, profile: string, seconds: number): void =>
      this.metrics.extensionPointDuration.observe({ extension_point: point, status, profile }, seconds);
    if (o.profiles.length === 0) throw new Error('at least one profile is required');
    for (const p of o.profiles) {
      if (this.profiles.has(p.schedulerName))
        throw new Error(`duplicate profile with scheduler name ${p.schedulerName}`);
      this.profiles.set(
        p.schedulerName,
        new Framework(p.schedulerName, p.plugins, p.pluginConfig, registry, handle, observe),
      );
    }
    const first = this.profiles.values().next().value as Framework;
    const pluginEvents = new Map<string, Set<ClusterEvent>>();
    for (const f of this.profiles.values()) for (const [k, v] of f.pluginEvents()) pluginEvents.set(k, v);
    this.queue = new SchedulingQueue({
      less: first.less,
      clock: this.clock,
      initialBackoffMs: o.podInitialBackoffMs,
      maxBackoffMs: o.podMaxBackoffMs,
      pluginEvents,
      onChange: (c) => this.metrics.setPending(c),
    });
  }

  private handle(): SchedulerHandle {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the handle's methods read the scheduler's state
    const self = this;
    return {
      snapshot: () => self.snapshot,
      nominatedPodsForNode: (n) => self.queue.nominatedPodsForNode(n),
      deletePod: async (pod) => {
        await self.o.clientset.resource(PodKind, pod.metadata?.namespace).delete(pod.metadata?.name ?? '');
      },
      setNominatedNode: async (pod, nodeName) => {
        await self.o.clientset
          .resource(PodKind, pod.metadata?.namespace)
          .patch(
            pod.metadata?.name ?? '',
            'merge',
            { status: { nominatedNodeName: nodeName || null } },
            { subresource: 'status' },
          );
      },
      event: (obj, type, reason, message) => self.recorder.event(asPodRef(obj), type, reason, message),
      bind: async (pod, nodeName) => {
        await self.o.clientset
          .resource(PodKind, pod.metadata?.namespace)
          .createSubresource(pod.metadata?.name ?? '', 'binding', {
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name: pod.metadata?.name, namespace: pod.metadata?.namespace, uid: pod.metadata?.uid },
            target: { kind: 'Node', name: nodeName },
          } as ApiObject);
      },
      lister: (resource) => {
        const ix = self.listers.get(resource);
        return { list: () => ix?.list() ?? [], get: (k: string) => ix?.get(k) };
      },
      clientSet: () => self.o.clientset,
      signal: this.stopping.signal,
      framework: () => self.profiles.values().next().value as Framework,
      hardPodAffinitySymmetricWeight: this.o.hardPodAffinitySymmetricWeight ?? 1,
      parallelism: this.o.parallelism ?? DEFAULT_PARALLELISM,
      preemptionExtenders: (pod, candidates) =>
        callPreemptionExtenders(
          self.extenders,
          pod,
          candidates,
          (n) => self.snapshot.get(n),
          (msg, err) => self.log.warn(msg, { err: String(err) }),
        ),
    };
  }

  private responsible(pod: Pod): boolean {
    return this.profiles.has(pod.spec?.schedulerName || 'default-scheduler');
  }

  /** Registers the informers' handlers. */
  private setUpInformers(): void {
    const pods = this.factory.informerFor(PodKind);
    this.podIndexer = pods.indexer as unknown as Indexer<ApiObject>;
    this.listers.set('pods', this.podIndexer);
    pods.addEventHandler({
      onAdd: (p) => this.podAdded(p as Pod),
      onUpdate: (old, p) => this.podUpdated(old as Pod, p as Pod),
      onDelete: (p) => this.podDeleted((isDeletedFinalStateUnknown(p) ? p.obj : p) as Pod),
    });
    const nodes = this.factory.informerFor(NodeKind);
    nodes.addEventHandler({
      onAdd: (n) => {
        this.cache.addNode(n as Node);
        this.queue.moveAllToActiveOrBackoff('NodeAdd');
      },
      onUpdate: (old, n) => {
        this.cache.updateNode(old as Node, n as Node);
        if (nodeSchedulingPropertiesChanged(old as Node, n as Node)) this.queue.moveAllToActiveOrBackoff('NodeUpdate');
      },
      onDelete: (n) => this.cache.removeNode((isDeletedFinalStateUnknown(n) ? n.obj : n) as Node),
    });
    const extra: [string, Parameters<InformerFactory['informerFor']>[0], ClusterEvent | undefined][] = [
      ['persistentvolumeclaims', PersistentVolumeClaimKind, 'PvcAdd'],
      ['persistentvolumes', PersistentVolumeKind, 'PvAdd'],
      ['services', ServiceKind, 'ServiceChange'],
      ['storageclasses', StorageClassKind, 'StorageClassAdd'],
      ['poddisruptionbudgets', PodDisruptionBudgetKind, undefined],
      ['namespaces', NamespaceKind, undefined],
    ];
    for (const [name, kind, event] of extra) {
      const inf = this.factory.informerFor(kind);
      this.listers.set(name, inf.indexer as unknown as Indexer<ApiObject>);
      if (event) {
        const move = (): void => this.queue.moveAllToActiveOrBackoff(event);
        inf.addEventHandler({ onAdd: move, onUpdate: move, onDelete: move });
      }
    }
  }

  private podAdded(pod: Pod): void {
    if (isTerminal(pod)) return;
    if (isAssigned(pod)) {
      this.cache.addPod(pod);
      this.queue.assignedPodAdded(pod);
    } else if (this.responsible(pod)) this.queue.add(pod);
  }

  private podUpdated(old: Pod, pod: Pod): void {
    if (isTerminal(pod)) {
      this.podDeleted(pod);
      return;
    }
    if (isAssigned(pod)) {
      if (!isAssigned(old)) {
        this.queue.delete(old);
        this.cache.addPod(pod);
      } else this.cache.updatePod(old, pod);
      this.queue.assignedPodAdded(pod, 'AssignedPodUpdate');
      return;
    }
    if (!this.responsible(pod)) {
      if (this.responsible(old)) this.queue.delete(old);
      return;
    }
    if (this.cache.isAssumedPod(pod)) return; // its binding is on the way
    this.queue.update(old, pod);
  }

  private podDeleted(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    for (const f of this.profiles.values()) f.rejectWaitingPod(uid);
    if (isAssigned(pod) || this.cache.getPod(pod)) {
      this.cache.removePod(pod);
      this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
    }
    this.queue.delete(pod);
  }

  /** Runs until `signal` aborts: informers, timers and the scheduling loop. */
  async run(signal: AbortSignal): Promise<void> {
    setMaxListeners(100, signal); // one per informer and watch
    this.setUpInformers();
    this.factory.start(signal);
    if (!(await this.factory.waitForCacheSync(signal))) return;
    this.log.info('Scheduler caches synced', { profiles: [...this.profiles.keys()] });
    const timers = [
      setInterval(() => this.queue.flushBackoffCompleted(), 1000),
      setInterval(() => this.queue.flushUnschedulableLeftover(), 30_000),
      setInterval(() => {
        for (const p of this.cache.cleanupAssumedPods()) this.log.warn('Assumed pod expired', { pod: podKey(p) });
      }, 1000),
    ];
    const onAbort = (): void => {
      this.queue.close();
      this.stopping.abort();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      let n = 0;
      for (;;) {
        const p = this.queue.tryPop() ?? (await this.queue.pop());
        if (!p || signal.aborted) break;
        try {
          const r = this.scheduleOne(p);
          if (r) await r;
        } catch (err) {
          this.log.error('Scheduling cycle failed', { pod: podKey(p.pod), err });
        }
        // Let the informers, timers and bindings in between cycles.
        if (++n % 4 === 0 || this.inFlightBindings > 256) await new Promise((r) => setImmediate(r));
      }
    } finally {
      for (const t of timers) clearInterval(t);
      signal.removeEventListener('abort', onAbort);
      this.stopping.abort();
      this.queue.close();
      await this.recorder.flush();
    }
  }

  /**
   * One scheduling cycle for a popped pod: synchronous, unless extenders are configured (their HTTP calls are
   * awaited; the loop runs no other cycle meanwhile).
   */
  scheduleOne(p: QueuedPodInfo): void | Promise<void> {
    const pod = p.pod;
    const fwk = this.profiles.get(pod.spec?.schedulerName || 'default-scheduler');
    if (!fwk) return;
    if (pod.metadata?.deletionTimestamp || this.cache.isAssumedPod(pod)) return;
    const start = performance.now();
    const cycle = this.queue.schedulingCycle;
    const state = fwk.newCycleState();
    this.cache.updateSnapshot(this.snapshot);
    if (this.extenders.length)
      return this.schedulePodWithExtenders(fwk, state, pod).then(
        (host) => this.assumeAndBind(fwk, state, p, host, cycle, start),
        (err) => this.scheduleFailed(fwk, state, p, err, cycle, start),
      );
    let host: string;
    try {
      host = this.schedulePod(fwk, state, pod);
    } catch (err) {
      this.scheduleFailed(fwk, state, p, err, cycle, start);
      return;
    }
    this.assumeAndBind(fwk, state, p, host, cycle, start);
  }

  private scheduleFailed(
    fwk: Framework,
    state: CycleState,
    p: QueuedPodInfo,
    err: unknown,
    cycle: number,
    start: number,
  ): void {
    if (err instanceof FitError) {
      p.unschedulablePlugins = new Set([...err.statuses.values()].map((s) => s.plugin).filter((x) => x));
      void this.handleFitError(fwk, state, p, err, cycle, start);
    } else {
      this.metrics.scheduleAttempts.inc({ result: 'error', profile: fwk.profileName });
      this.recordFailure(fwk, p, err as Error, 'SchedulerError', '', cycle);
    }
  }

  /** Assumes the pod on `host`, runs Reserve and Permit, and starts the binding cycle. */
  private assumeAndBind(
    fwk: Framework,
    state: CycleState,
    p: QueuedPodInfo,
    host: string,
    cycle: number,
    start: number,
  ): void {
    const pod = p.pod;
    this.metrics.schedulingAlgorithmDuration.observe({}, (performance.now() - start) / 1000);
    const assumed = { ...pod, spec: { ...pod.spec, nodeName: host } } as Pod;
    try {
      this.cache.assumePod(assumed);
    } catch (err) {
      this.recordFailure(fwk, p, err as Error, 'SchedulerError', '', cycle);
      return;
    }
    const rs = fwk.runReservePlugins(state, assumed, host);
    if (!isSuccess(rs)) {
      fwk.runUnreservePlugins(state, assumed, host);
      this.cache.forgetPod(assumed);
      this.metrics.scheduleAttempts.inc({ result: 'error', profile: fwk.profileName });
      this.recordFailure(fwk, p, new Error((rs as Status).message()), 'SchedulerError', '', cycle);
      return;
    }
    const permit = fwk.runPermitPlugins(state, assumed, host);
    if (permit.status && permit.status.code !== 'Wait') {
      fwk.runUnreservePlugins(state, assumed, host);
      this.cache.forgetPod(assumed);
      const unsched = permit.status.isUnschedulable();
      this.metrics.scheduleAttempts.inc({ result: unsched ? 'unschedulable' : 'error', profile: fwk.profileName });
      this.recordFailure(
        fwk,
        p,
        new Error(permit.status.message()),
        unsched ? 'Unschedulable' : 'SchedulerError',
        '',
        cycle,
      );
      return;
    }
    this.inFlightBindings++;
    void this.bindingCycle(fwk, state, p, assumed, host, cycle, start).finally(() => this.inFlightBindings--);
  }

  /** PreFilter and Filter: the nodes that fit, and why the others do not. */
  private findFeasible(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
  ): { all: readonly NodeInfo[]; feasible: NodeInfo[]; statuses: NodeToStatus } {
    const all = this.snapshot.list();
    if (all.length === 0) throw new Error('no nodes available to schedule pods');
    const pre = fwk.runPreFilterPlugins(state, pod);
    if (pre.status) {
      if (!pre.status.isUnschedulable()) throw new Error(pre.status.message());
      const statuses: NodeToStatus = new Map();
      for (const n of all) statuses.set(n.name, pre.status);
      throw new FitError(pod, all.length, statuses);
    }
    return { all, ...this.findNodesThatPassFilters(fwk, state, pod, all, pre.result?.nodeNames) };
  }

  /** PreScore and Score: the plugins' weighted totals per node. */
  private scoreNodes(fwk: Framework, state: CycleState, pod: Pod, feasible: readonly NodeInfo[]): number[] {
    const ps = fwk.runPreScorePlugins(state, pod, feasible);
    if (!isSuccess(ps)) throw new Error((ps as Status).message());
    const { totals, status } = fwk.runScorePlugins(state, pod, feasible);
    if (!isSuccess(status)) throw new Error((status as Status).message());
    return totals;
  }

  private schedulePod(fwk: Framework, state: CycleState, pod: Pod): string {
    const { all, feasible, statuses } = this.findFeasible(fwk, state, pod);
    if (feasible.length === 0) throw new FitError(pod, all.length, statuses);
    if (feasible.length === 1) return (feasible[0] as NodeInfo).name;
    return this.selectHost(feasible, this.scoreNodes(fwk, state, pod, feasible));
  }

  /** {@link schedulePod} with the extenders' filters after the plugins' and their scores added to the plugins'. */
  private async schedulePodWithExtenders(fwk: Framework, state: CycleState, pod: Pod): Promise<string> {
    const { all, feasible: fit, statuses } = this.findFeasible(fwk, state, pod);
    const feasible = await findNodesThatPassExtenders(
      this.extenders,
      pod,
      fit,
      (name, reason) => statuses.set(name, unschedulable(...(statuses.get(name)?.reasons ?? []), reason)),
      (msg, err) => this.log.warn(msg, { pod: podKey(pod), err: String(err) }),
    );
    if (feasible.length === 0) throw new FitError(pod, all.length, statuses);
    if (feasible.length === 1) return (feasible[0] as NodeInfo).name;
    const totals = this.scoreNodes(fwk, state, pod, feasible);
    const ext = await extenderScores(this.extenders, pod, feasible);
    for (let i = 0; i < feasible.length; i++)
      totals[i] = (totals[i] as number) + (ext.get((feasible[i] as NodeInfo).name) ?? 0);
    return this.selectHost(feasible, totals);
  }

  private findNodesThatPassFilters(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    all: readonly NodeInfo[],
    only?: Set<string>,
  ): { feasible: NodeInfo[]; statuses: NodeToStatus } {
    const want = numFeasibleNodesToFind(all.length, this.o.percentageOfNodesToScore ?? 0);
    const feasible: NodeInfo[] = [];
    const statuses: NodeToStatus = new Map();
    const n = all.length;
    // Nodes are checked in batches of `parallelism`, as 1.21's workers each finish the node they hold when enough
    // feasible nodes are found: what a cycle examines (and where the next starts) is the same as there.
    const batch = this.o.parallelism ?? DEFAULT_PARALLELISM;
    let processed = 0;
    while (processed < n && feasible.length < want) {
      const end = Math.min(n, processed + batch);
      for (; processed < end; processed++) {
        const node = all[(this.nextStartNodeIndex + processed) % n] as NodeInfo;
        if (only && !only.has(node.name)) continue;
        const s = fwk.runFilterPluginsWithNominatedPods(state, pod, node);
        if (!s || s.code === 'Success') feasible.push(node);
        else if (s.code === 'Error') throw new Error(s.message());
        else statuses.set(node.name, s);
      }
    }
    if (feasible.length > want) {
      // As in 1.21, the feasible nodes past `want` are neither kept nor counted as processed.
      processed -= feasible.length - want;
      feasible.length = want;
    }
    this.nextStartNodeIndex = (this.nextStartNodeIndex + processed) % n;
    return { feasible, statuses };
  }

  /** The node with the highest score; ties broken at random (reservoir sampling). */
  private selectHost(nodes: readonly NodeInfo[], totals: readonly number[]): string {
    let best = 0;
    let max = totals[0] as number;
    let ties = 1;
    for (let i = 1; i < nodes.length; i++) {
      const t = totals[i] as number;
      if (t > max) {
        max = t;
        best = i;
        ties = 1;
      } else if (t === max) {
        ties++;
        if (Math.random() * ties < 1) best = i;
      }
    }
    return (nodes[best] as NodeInfo).name;
  }

  private async handleFitError(
    fwk: Framework,
    state: CycleState,
    p: QueuedPodInfo,
    err: FitError,
    cycle: number,
    start: number,
  ): Promise<void> {
    let nominated = '';
    if (fwk.postFilter.length) {
      const r = await fwk.runPostFilterPlugins(state, p.pod, err.statuses);
      if (isSuccess(r.status)) nominated = r.nominatedNodeName ?? '';
      const pre = fwk.plugins.get('DefaultPreemption') as { lastVictims?: number } | undefined;
      if (pre) {
        this.metrics.preemptionAttempts.inc();
        if (nominated) this.metrics.preemptionVictims.observe({}, pre.lastVictims ?? 0);
      }
    }
    this.metrics.scheduleAttempts.inc({ result: 'unschedulable', profile: fwk.profileName });
    this.metrics.e2eSchedulingDuration.observe(
      { result: 'unschedulable', profile: fwk.profileName },
      (performance.now() - start) / 1000,
    );
    this.recordFailure(fwk, p, err, 'Unschedulable', nominated, cycle);
  }

  private async bindingCycle(
    fwk: Framework,
    state: CycleState,
    p: QueuedPodInfo,
    assumed: Pod,
    host: string,
    cycle: number,
    start: number,
  ): Promise<void> {
    const fail = (s: Status | undefined, what: string): void => {
      fwk.runUnreservePlugins(state, assumed, host);
      this.cache.forgetPod(assumed);
      this.bindFailures++;
      const unsched = !what && !!s?.isUnschedulable();
      this.metrics.scheduleAttempts.inc({ result: unsched ? 'unschedulable' : 'error', profile: fwk.profileName });
      this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
      const message = what ? `${what}: ${s?.message() ?? ''}` : (s?.message() ?? '');
      this.recordFailure(fwk, p, new Error(message), unsched ? 'Unschedulable' : 'SchedulerError', '', cycle);
    };
    // A pod a Permit plugin holds waits here, still assumed, until it is allowed, rejected or timed out.
    const permit = await fwk.waitOnPermit(assumed);
    if (!isSuccess(permit)) return fail(permit, '');
    const pre = await fwk.runPreBindPlugins(state, assumed, host);
    if (!isSuccess(pre)) return fail(pre, 'running PreBind plugin');
    const b = await this.bind(fwk, state, assumed, host);
    if (!isSuccess(b)) return fail(b, 'binding rejected');
    this.cache.finishBinding(assumed);
    const seconds = (performance.now() - start) / 1000;
    this.metrics.scheduleAttempts.inc({ result: 'scheduled', profile: fwk.profileName });
    this.metrics.e2eSchedulingDuration.observe({ result: 'scheduled', profile: fwk.profileName }, seconds);
    this.metrics.podSchedulingAttempts.observe({}, p.attempts);
    const ns = assumed.metadata?.namespace ?? '';
    this.recorder.event(
      asPodRef(assumed),
      'Normal',
      'Scheduled',
      `Successfully assigned ${ns}/${assumed.metadata?.name ?? ''} to ${host}`,
    );
    fwk.runPostBindPlugins(state, assumed, host);
  }

  /** The first interested binder extender binds the pod (1.21 `extendersBinding`); else the Bind plugins. */
  private async bind(fwk: Framework, state: CycleState, pod: Pod, host: string): Promise<Status | undefined> {
    const binder = this.extenders.find((e) => e.isBinder() && e.isInterested(pod));
    if (!binder) return fwk.runBindPlugins(state, pod, host);
    try {
      await binder.bind(pod, host);
      return undefined;
    } catch (err) {
      return errorStatus(err);
    }
  }

  /**
   * A failed attempt: the FailedScheduling Event, the pod back in the queue (unless it was deleted or bound
   * meanwhile), and its PodScheduled condition (and nominated node) through `pods/status`.
   */
  private recordFailure(
    fwk: Framework,
    p: QueuedPodInfo,
    err: Error,
    reason: 'Unschedulable' | 'SchedulerError',
    nominatedNode: string,
    cycle: number,
  ): void {
    const pod = p.pod;
    const message = err.message;
    this.log.v(2).info('Unable to schedule pod', { pod: podKey(pod), reason, message });
    this.recorder.event(asPodRef(pod), 'Warning', 'FailedScheduling', message);
    const cached = this.podIndexer?.get(podKey(pod)) as Pod | undefined;
    if (!cached || isAssigned(cached)) return;
    p.pod = cached;
    this.queue.addUnschedulableIfNotPresent(p, cycle);
    if (nominatedNode) this.queue.nominate(cached, nominatedNode);
    void this.updatePodCondition(fwk, cached, reason, message, nominatedNode);
  }

  private async updatePodCondition(
    _fwk: Framework,
    pod: Pod,
    reason: string,
    message: string,
    nominatedNode: string,
  ): Promise<void> {
    const cur = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    const same = cur && cur.status === 'False' && cur.reason === reason && cur.message === message;
    if (same && (!nominatedNode || pod.status?.nominatedNodeName === nominatedNode)) return;
    const now = new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    const cond = {
      type: 'PodScheduled',
      status: 'False',
      reason,
      message,
      lastProbeTime: null,
      lastTransitionTime: cur && cur.status === 'False' ? cur.lastTransitionTime : now,
    };
    const status: Record<string, unknown> = { conditions: [cond] };
    if (nominatedNode) status.nominatedNodeName = nominatedNode;
    try {
      await this.o.clientset
        .resource(PodKind, pod.metadata?.namespace)
        .patch(pod.metadata?.name ?? '', 'strategic', { status }, { subresource: 'status' });
    } catch (err) {
      this.log.v(2).info('Failed to update the pod condition', { pod: podKey(pod), err: String(err) });
    }
  }
}
