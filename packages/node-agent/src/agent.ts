/**
 * The node agent of one node (model: kubelet `kubelet.go`): it merges the pod sources (the API watch of pods bound
 * to the node, manifest files, a manifest URL) into one desired set, hands each pod to its worker, relists the
 * runtime every second to notice container changes (model: `pleg/generic.go`), resyncs every pod every
 * `--sync-frequency`, keeps mirror pods for static pods, registers the node, posts its status and renews its Lease.
 */
import { mkdirSync } from 'node:fs';

import { type ApiObject, EventKind, isAlreadyExists, isNotFound, type Node, type Pod, PodKind } from '@platform/api';
import { type Clientset, EventRecorder, InformerFactory, isDeletedFinalStateUnknown } from '@platform/client';
import { type Logger } from '@platform/common';

import { type AgentValues } from './cmd/options';
import { type EvictionManager } from './eviction/eviction-manager';
import {
  capacityOf,
  defaultHostname,
  initialNode,
  LeaseRenewer,
  machineFacts,
  nodeConditions,
  nodeInfo,
  NodeStatusWriter,
  registerNode,
} from './node/node-status';
import { type NodeFacts } from './pods/container-config';
import { ObjectCache } from './pods/objects';
import { PodSyncer } from './pods/pod-syncer';
import { PodWorkers } from './pods/pod-workers';
import { ProbeManager } from './probes/prober';
import { LABEL_POD_UID, type Runtime } from './runtime/runtime';
import { runFileSource } from './sources/file-source';
import { runHttpSource } from './sources/http-source';
import { CONFIG_MIRROR_ANNOTATION, isMirrorPod, isStaticPod } from './sources/static-pod';
import { StatusManager } from './status/status-manager';
import { sleep } from './util/sleep';

/** Everything an agent is built from. */
export interface AgentDeps {
  values: AgentValues;
  runtime: Runtime;
  /** Absent in standalone mode (no `--clientconfig`). */
  clientset?: Clientset;
  /** The client of Events, with its own rate limit (`--event-qps`), as the kubelet's event client. */
  eventClientset?: Clientset;
  log: Logger;
  nodeName: string;
  nodeIp: string;
}

type Source = 'api' | 'file' | 'http';

/**
 * What a pod's sync acts on (model: kubelet `podsDifferSemantically`): its spec, labels, annotations and deletion,
 * whether it is terminal, and the conditions of its readiness gates (set by others). The rest of its status is the
 * agent's own or the scheduler's (PodScheduled).
 */
export function syncKey(pod: Pod): string {
  const m = pod.metadata ?? {};
  const phase = pod.status?.phase;
  const gates = new Set((pod.spec?.readinessGates ?? []).map((g) => g.conditionType));
  return JSON.stringify([
    pod.spec,
    m.labels,
    m.annotations,
    m.deletionTimestamp,
    m.deletionGracePeriodSeconds,
    phase === 'Failed' || phase === 'Succeeded' ? phase : '',
    (pod.status?.conditions ?? []).filter((c) => gates.has(c.type)).map((c) => [c.type, c.status]),
  ]);
}

/** One node's agent. `run` resolves when `signal` aborts and everything stopped. */
export class Agent {
  readonly facts: NodeFacts;
  readonly statuses: StatusManager;
  readonly probes: ProbeManager;
  readonly syncer: PodSyncer;
  readonly workers: PodWorkers<Pod>;
  readonly objects: ObjectCache;
  private readonly desired = new Map<string, { pod: Pod; source: Source }>();
  private readonly sourcePods = new Map<Source, Set<string>>();
  private readonly mirrors = new Map<string, Pod>();
  private readonly admittedRejected = new Set<string>();
  private nodeUid = '';
  private recorder?: EventRecorder;
  eviction?: EvictionManager;
  /** Pods the sources have seen at least once (the `--runonce` wait). */
  readonly seen = new Set<string>();
  private lastState = new Map<string, string>();
  private readonly hostname: string;

  constructor(readonly d: AgentDeps) {
    const v = d.values;
    this.hostname = defaultHostname(v.hostnameOverride);
    this.facts = {
      nodeName: d.nodeName,
      nodeIp: d.nodeIp,
      rootDir: v.rootDir,
      clusterDns: v.clusterDns,
      clusterDomain: v.clusterDomain,
    };
    this.objects = new ObjectCache(d.clientset);
    this.statuses = new StatusManager(d.clientset, d.log.child('status'));
    if (d.clientset)
      this.recorder = new EventRecorder({
        events: (d.eventClientset ?? d.clientset).resource(EventKind) as never,
        component: 'node-agent',
        host: d.nodeName,
        qps: v.eventQps,
        burst: v.eventBurst,
        logger: d.log.child('events'),
      });
    this.probes = new ProbeManager(d.runtime, (uid, type, name, message) => {
      const pod = this.desired.get(uid)?.pod;
      if (pod && message)
        this.recorder?.event(
          { ...pod, apiVersion: 'v1', kind: 'Pod' },
          'Warning',
          'Unhealthy',
          `${type[0]!.toUpperCase()}${type.slice(1)} probe failed: ${message}`,
        );
      void name;
      this.workers.trigger(uid);
    });
    this.syncer = new PodSyncer({
      runtime: d.runtime,
      facts: this.facts,
      objects: this.objects,
      statuses: this.statuses,
      probes: this.probes,
      ...(this.recorder ? { recorder: this.recorder } : {}),
      log: d.log.child('pods'),
      isStatic: isStaticPod,
      eventTarget: (pod) => (isStaticPod(pod) ? (this.mirrors.get(pod.metadata?.uid ?? '') ?? pod) : pod),
    });
    this.workers = new PodWorkers<Pod>(
      async (uid, pod) => {
        const next = await this.syncer.sync(uid, pod);
        if (!pod) this.workers.forget(uid);
        return next;
      },
      (uid, err) => d.log.info('Error syncing pod; will retry', { uid, err: String(err) }),
    );
  }

  /** The pods the agent runs (for `/pods`). */
  pods(): Pod[] {
    return [...this.desired.values()].map(({ pod }) => {
      const status = this.statuses.get(pod.metadata?.uid ?? '');
      return status ? { ...pod, status } : pod;
    });
  }

  /** The pod of `namespace/name`, if the agent runs it. */
  podByName(namespace: string, name: string): Pod | undefined {
    for (const { pod } of this.desired.values())
      if (pod.metadata?.namespace === namespace && pod.metadata?.name === name) return pod;
    return undefined;
  }

  /** Evicts a pod (eviction manager): it is killed with `graceSeconds` and its phase becomes Failed/Evicted. */
  evict(pod: Pod, message: string, graceSeconds: number): void {
    const uid = pod.metadata?.uid ?? '';
    const cur = this.desired.get(uid);
    if (!cur) return;
    const evicted: Pod = {
      ...cur.pod,
      spec: { ...cur.pod.spec!, terminationGracePeriodSeconds: graceSeconds },
      status: { ...(this.statuses.get(uid) ?? cur.pod.status ?? {}), phase: 'Failed', reason: 'Evicted', message },
    };
    this.desired.set(uid, { ...cur, pod: evicted });
    this.recorder?.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'Evicted', message);
    this.workers.update(uid, evicted);
  }

  /** Active (not terminal) pods. */
  activePods(): Pod[] {
    return [...this.desired.values()]
      .map(({ pod }) => pod)
      .filter((p) => !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''))
      .filter((p) => !['Succeeded', 'Failed'].includes(this.statuses.get(p.metadata?.uid ?? '')?.phase ?? ''));
  }

  /** Pod capacity of the node. */
  maxPods(): number {
    const v = this.d.values;
    return v.podsPerCore > 0 ? Math.min(v.maxPods, v.podsPerCore * machineFacts(v.rootDir).cpus) : v.maxPods;
  }

  /** Replaces the set of pods of one source. */
  /** Whether a source has given its pods at least once (`--runonce` waits for the local ones). */
  sourceSeen(source: Source): boolean {
    return this.sourcePods.has(source);
  }

  setSourcePods(source: Source, pods: Pod[]): void {
    const uids = new Set<string>();
    for (const p of pods) {
      const uid = p.metadata?.uid ?? '';
      uids.add(uid);
      this.upsert(source, p);
    }
    for (const uid of this.sourcePods.get(source) ?? []) if (!uids.has(uid)) this.remove(source, uid);
    this.sourcePods.set(source, uids);
  }

  private upsert(source: Source, pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const prev = this.desired.get(uid);
    this.seen.add(uid);
    if (source !== 'api' || !prev) {
      // Static pods keep their first-seen annotation; an unchanged manifest is no update.
      if (prev && JSON.stringify(prev.pod.spec) === JSON.stringify(pod.spec)) return;
    }
    if (!prev && source === 'api' && !this.admit(pod)) return;
    const terminal = (p: Pod): boolean => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';
    // A pod this agent made terminal (evicted) stays so until the API has caught up.
    if (prev && terminal(prev.pod) && !terminal(pod)) pod = { ...pod, status: prev.pod.status };
    if (prev && source === 'api' && syncKey(prev.pod) === syncKey(pod)) {
      // Only what the agent itself writes changed (mostly its own status write coming back through the watch): the
      // pod is kept for the next sync, which would do nothing now (kubelet: a RECONCILE, not an UPDATE). One sync
      // fewer per status write, each a full read of the pod's sandboxes and containers from the runtime.
      this.desired.set(uid, { pod, source });
      this.workers.record(uid, pod);
      return;
    }
    this.desired.set(uid, { pod, source });
    const set = this.sourcePods.get(source) ?? new Set();
    set.add(uid);
    this.sourcePods.set(source, set);
    this.workers.update(uid, pod);
    if (source !== 'api') void this.ensureMirror(pod);
  }

  private remove(source: Source, uid: string): void {
    const cur = this.desired.get(uid);
    if (!cur || cur.source !== source) return;
    this.desired.delete(uid);
    this.sourcePods.get(source)?.delete(uid);
    this.workers.update(uid, undefined);
    if (source !== 'api') void this.deleteMirror(cur.pod);
  }

  /** Pod admission (model: `canAdmitPod`): the node's pod capacity. A rejected pod is marked Failed. */
  private admit(pod: Pod): boolean {
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return true;
    const active = [...this.desired.values()].filter(
      ({ pod: p }) => !['Succeeded', 'Failed'].includes(this.statuses.get(p.metadata?.uid ?? '')?.phase ?? ''),
    ).length;
    if (active < this.maxPods()) return true;
    const uid = pod.metadata?.uid ?? '';
    if (this.admittedRejected.has(uid)) return false;
    this.admittedRejected.add(uid);
    const message = "Node didn't have enough resource: pods";
    this.recorder?.event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'OutOfpods', message);
    this.statuses.set(pod, { phase: 'Failed', reason: 'OutOfpods', message, conditions: [] }, false);
    return false;
  }

  private async ensureMirror(pod: Pod): Promise<void> {
    const cs = this.d.clientset;
    if (!cs) return;
    const m = pod.metadata ?? {};
    const hash = m.annotations?.['kubernetes.io/config.hash'] ?? m.uid ?? '';
    const pods = cs.resource(PodKind, m.namespace ?? 'default');
    const mirror: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: m.name,
        namespace: m.namespace,
        labels: m.labels,
        annotations: { ...(m.annotations ?? {}), [CONFIG_MIRROR_ANNOTATION]: hash },
        ...(this.nodeUid
          ? {
              ownerReferences: [
                { apiVersion: 'v1', kind: 'Node', name: this.d.nodeName, uid: this.nodeUid, controller: true },
              ],
            }
          : {}),
      },
      spec: pod.spec,
    } as Pod;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const created = (await pods.create(mirror as Pod & ApiObject)) as Pod;
        this.mirrors.set(m.uid ?? '', created);
        this.statuses.resend(m.uid ?? '');
        return;
      } catch (err) {
        if (!isAlreadyExists(err)) {
          this.d.log.info('Failed creating a mirror pod', { pod: m.name, err: String(err) });
          return;
        }
        const existing = (await pods.get(m.name ?? '').catch(() => undefined)) as Pod | undefined;
        if (existing && existing.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION] === hash) {
          this.mirrors.set(m.uid ?? '', existing);
          return;
        }
        // An outdated mirror pod or a regular pod of the same name: replaced (as the kubelet does).
        await pods.delete(m.name ?? '', { gracePeriodSeconds: 0 }).catch(() => undefined);
      }
    }
  }

  private async deleteMirror(pod: Pod): Promise<void> {
    const cs = this.d.clientset;
    this.mirrors.delete(pod.metadata?.uid ?? '');
    if (!cs) return;
    await cs
      .resource(PodKind, pod.metadata?.namespace ?? 'default')
      .delete(pod.metadata?.name ?? '', { gracePeriodSeconds: 0 })
      .catch((err: unknown) => {
        if (!isNotFound(err)) this.d.log.info('Failed deleting a mirror pod', { err: String(err) });
      });
  }

  /** Runs until `signal` aborts. Resolves once every loop stopped. */
  async run(signal: AbortSignal): Promise<void> {
    const v = this.d.values;
    mkdirSync(v.rootDir, { recursive: true });
    await this.d.runtime.start?.(signal);
    this.syncer.idScheme = (await this.d.runtime.version()).runtimeName;
    const loops: Promise<void>[] = [];
    const cs = this.d.clientset;
    if (cs) {
      loops.push(this.statuses.run(signal));
      if (v.registerNode) loops.push(this.nodeLoop(cs, signal));
      loops.push(this.apiSource(cs, signal));
    }
    if (v.podManifestPath)
      runFileSource(
        v.podManifestPath,
        this.d.nodeName,
        v.fileCheckFrequency,
        (pods) => this.setSourcePods('file', pods),
        this.d.log,
        signal,
      );
    if (v.manifestUrl)
      runHttpSource(
        v.manifestUrl,
        v.manifestUrlHeader,
        this.d.nodeName,
        v.httpCheckFrequency,
        (pods) => this.setSourcePods('http', pods),
        this.d.log,
        signal,
      );
    loops.push(this.relistLoop(signal));
    loops.push(this.resyncLoop(signal));
    if (this.eviction) loops.push(this.eviction.run(signal));
    await Promise.all(loops);
    this.workers.close();
    this.probes.close();
    await this.recorder?.flush?.();
    await this.d.runtime.close?.();
  }

  private async apiSource(cs: Clientset, signal: AbortSignal): Promise<void> {
    const factory = new InformerFactory(cs, {
      tweakListOptions: () => ({ fieldSelector: `spec.nodeName=${this.d.nodeName}` }),
      logger: this.d.log.child('informers'),
    });
    const pods = factory.informerFor(PodKind);
    const onPod = (p: Pod): void => {
      if (isMirrorPod(p)) return;
      this.upsert('api', p);
    };
    pods.addEventHandler({
      onAdd: (p) => onPod(p as Pod),
      onUpdate: (_o, p) => onPod(p as Pod),
      onDelete: (p) => {
        const pod = (isDeletedFinalStateUnknown(p) ? p.obj : p) as Pod;
        if (isMirrorPod(pod)) {
          // A deleted mirror pod is recreated while its static pod runs.
          for (const { pod: sp, source } of this.desired.values())
            if (
              source !== 'api' &&
              sp.metadata?.name === pod.metadata?.name &&
              sp.metadata?.namespace === pod.metadata?.namespace
            )
              void this.ensureMirror(sp);
          return;
        }
        this.remove('api', pod.metadata?.uid ?? '');
      },
    });
    factory.start(signal);
    await factory.shutdown();
  }

  /**
   * The runtime relist: a pod whose containers changed state is synced. A change the pod's last sync saw already
   * (the container it just started) needs no sync; one that a running sync of the pod may still see is looked at
   * again on the next relist rather than forcing a second sync right after it.
   */
  private async relistLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const now = new Map<string, string>();
        for (const c of await this.d.runtime.listContainers())
          now.set(c.id, `${c.labels[LABEL_POD_UID] ?? ''}|${c.state}`);
        const changed = new Set<string>();
        const next = new Map(now);
        const consider = (id: string, uid: string, state: string | undefined): void => {
          if (state !== undefined && this.syncer.saw(uid, id, state)) return;
          if (!this.workers.busy(uid)) changed.add(uid);
          else if (this.lastState.has(id)) next.set(id, this.lastState.get(id)!);
          else next.delete(id);
        };
        for (const [id, s] of now) {
          const [uid, state] = s.split('|') as [string, string];
          if (this.lastState.get(id) !== s) consider(id, uid, state);
        }
        for (const [id, s] of this.lastState) if (!now.has(id)) consider(id, s.split('|')[0]!, undefined);
        this.lastState = next;
        for (const uid of changed) if (uid) this.workers.trigger(uid);
      } catch (err) {
        this.d.log.info('Runtime relist failed', { err: String(err) });
      }
      await sleep(1000, signal);
    }
  }

  private async resyncLoop(signal: AbortSignal): Promise<void> {
    let last = Date.now();
    while (!signal.aborted) {
      await sleep(Math.min(this.d.values.syncFrequency, 5000), signal);
      // Static pods whose mirror pod could not be created yet (API down, node not registered) try again.
      for (const { pod, source } of this.desired.values())
        if (source !== 'api' && !this.mirrors.has(pod.metadata?.uid ?? '')) await this.ensureMirror(pod);
      if (Date.now() - last < this.d.values.syncFrequency) continue;
      last = Date.now();
      for (const uid of this.workers.uids()) this.workers.trigger(uid);
    }
  }

  /** The node status for this node. */
  async nodeStatus(): Promise<NonNullable<Node['status']>> {
    const v = this.d.values;
    const m = machineFacts(v.rootDir);
    const { capacity, allocatable } = capacityOf({
      ...m,
      maxPods: v.maxPods,
      podsPerCore: v.podsPerCore,
      systemReserved: v.systemReserved,
      platformReserved: v.platformReserved,
      evictionHard: v.evictionHard,
      ignoreEviction: v.experimentalAllocatableIgnoreEviction,
    });
    const rt = this.d.runtime;
    const version = await rt.version();
    const rs = await rt.status().catch(() => ({ conditions: [] }));
    const notReady = rs.conditions.filter((c) => c.type === 'RuntimeReady' && !c.status);
    const pressure = this.eviction?.pressure() ?? { memory: false, disk: false, pid: false };
    const maxImages = v.nodeStatusMaxImages;
    const images = (await rt.listImages().catch(() => []))
      .sort((a, b) => b.size - a.size)
      .slice(0, maxImages < 0 ? undefined : maxImages)
      .map((i) => ({ names: [...i.repoDigests, ...i.repoTags], sizeBytes: i.size }));
    return {
      capacity,
      allocatable,
      conditions: nodeConditions({
        ready: notReady.length === 0,
        notReadyMessage: `container runtime is down: ${notReady.map((c) => c.message ?? c.reason).join(', ')}`,
        memoryPressure: pressure.memory,
        diskPressure: pressure.disk,
        pidPressure: pressure.pid,
      }),
      addresses: [
        { type: 'InternalIP', address: this.d.nodeIp },
        { type: 'Hostname', address: this.hostname },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: v.port } },
      nodeInfo: nodeInfo(`${version.runtimeName}://${version.runtimeVersion}`),
      images,
    } as NonNullable<Node['status']>;
  }

  private async nodeLoop(cs: Clientset, signal: AbortSignal): Promise<void> {
    const v = this.d.values;
    const log = this.d.log.child('node');
    const node = initialNode({
      nodeName: this.d.nodeName,
      nodeIp: this.d.nodeIp,
      hostname: this.hostname,
      labels: v.nodeLabels,
      taints: v.registerWithTaints,
      unschedulable: !v.registerSchedulable,
      providerId: v.providerId,
      podCidr: v.podCidr,
      port: v.port,
    });
    let delay = 100;
    while (!signal.aborted) {
      try {
        this.nodeUid = await registerNode(cs, node, log);
        break;
      } catch (err) {
        log.info('Unable to register node with API server', { err: String(err) });
        await sleep(delay, signal);
        delay = Math.min(delay * 2, 7000);
      }
    }
    const writer = new NodeStatusWriter(cs, this.d.nodeName, v.nodeStatusReportFrequency);
    const lease = new LeaseRenewer(cs, this.d.nodeName, v.nodeLeaseDurationSeconds, () => this.nodeUid);
    const statusLoop = async (): Promise<void> => {
      let first = true;
      while (!signal.aborted) {
        try {
          await writer.post(await this.nodeStatus(), first);
          first = false;
        } catch (err) {
          if (isNotFound(err)) {
            // The node object was deleted: register again.
            this.nodeUid = await registerNode(cs, node, log).catch(() => this.nodeUid);
            writer.reset();
          } else log.info('Error updating node status, will retry', { err: String(err) });
        }
        await sleep(v.nodeStatusUpdateFrequency, signal);
      }
    };
    const leaseLoop = async (): Promise<void> => {
      const period = (v.nodeLeaseDurationSeconds * 1000) / 4;
      while (!signal.aborted) {
        try {
          await lease.renew();
        } catch (err) {
          log.info('Failed to renew the node lease', { err: String(err) });
          await sleep(Math.min(period, 1000), signal);
          continue;
        }
        await sleep(period, signal);
      }
    };
    await Promise.all([statusLoop(), leaseLoop()]);
  }
}
