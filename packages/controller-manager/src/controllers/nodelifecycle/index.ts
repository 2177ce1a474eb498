/**
 * The node lifecycle controller (model: Kubernetes 1.21 `pkg/controller/nodelifecycle/`):
 *
 * - taints every node by its conditions with NoSchedule taints (`node.kubernetes.io/not-ready`, `unreachable`,
 *   `memory-pressure`, `disk-pressure`, `pid-pressure`, `network-unavailable`, `unschedulable`), so the scheduler
 *   places no pod on a node that cannot run it; the API server's TaintNodesByCondition admission gives a new node
 *   `not-ready:NoSchedule`, which this removes once the node agent reports Ready;
 * - watches heartbeats (the Ready condition's `lastHeartbeatTime` and the node's Lease in `node-lease`): a node
 *   silent for `--node-monitor-grace-period` (`--node-startup-grace-period` before its first status) gets its
 *   conditions set to Unknown, and its pods are marked not ready;
 * - with `--enable-taint-manager`, a node whose Ready condition is False or Unknown gets the `not-ready` or
 *   `unreachable` NoExecute taint, at `--node-eviction-rate` nodes per second per zone (`--secondary-node-eviction-rate`
 *   when the zone is unhealthy by `--unhealthy-zone-threshold`, 0 in clusters of at most
 *   `--large-cluster-size-threshold` nodes, none while every node of the zone is down), and the pods of a node with a
 *   NoExecute taint they do not tolerate are deleted — at once, or after their `tolerationSeconds`;
 * - without it, the pods of a node not ready for `--pod-eviction-timeout` are deleted.
 */
import {
  type ApiObject,
  isConflict,
  isNotFound,
  type Lease,
  LeaseKind,
  type Node,
  NodeKind,
  type Pod,
  PodKind,
} from '@platform/api';
import { durationFlag, type FlagDef, floatFlag, INT32, intFlag, boolFlag } from '@platform/common';
import { runWorkers, TokenBucket, WorkQueue } from '@platform/client';

import { type ControllerContext, type ControllerDefinition, ControllerOptions } from '../../controller';
import { unwrapTombstone } from '../util/informers';
import { waitForSynced } from '../util/wait-synced';

type Taint = NonNullable<NonNullable<Node['spec']>['taints']>[number];
type Condition = NonNullable<NonNullable<Node['status']>['conditions']>[number];
type Toleration = NonNullable<NonNullable<Pod['spec']>['tolerations']>[number];

/** The values of the node lifecycle controller's options (durations in ms). */
export interface NodeLifecycleConfig {
  enableTaintManager: boolean;
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  unhealthyZoneThreshold: number;
  largeClusterSizeThreshold: number;
  nodeMonitorGracePeriodMs: number;
  nodeMonitorPeriodMs: number;
  nodeStartupGracePeriodMs: number;
  podEvictionTimeoutMs: number;
}

/** Document 2's options of the node lifecycle controller. */
export class NodeLifecycleOptions extends ControllerOptions<NodeLifecycleConfig> {
  private readonly c: NodeLifecycleConfig = {
    enableTaintManager: true,
    nodeEvictionRate: 0.1,
    secondaryNodeEvictionRate: 0.01,
    unhealthyZoneThreshold: 0.55,
    largeClusterSizeThreshold: 50,
    nodeMonitorGracePeriodMs: 40_000,
    nodeMonitorPeriodMs: 5_000,
    nodeStartupGracePeriodMs: 60_000,
    podEvictionTimeoutMs: 5 * 60_000,
  };

  constructor() {
    super('Node lifecycle controller');
  }

  protected flagDefs(): FlagDef[] {
    const c = this.c;
    return [
      boolFlag(
        'enable-taint-manager',
        'WARNING: Beta feature. If set to true enables NoExecute Taints and will evict all not-tolerating Pod running on Nodes tainted with this kind of Taints.',
        c.enableTaintManager,
        (v) => (c.enableTaintManager = v),
      ),
      floatFlag(
        'node-eviction-rate',
        'Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.',
        c.nodeEvictionRate,
        (v) => (c.nodeEvictionRate = v),
      ),
      floatFlag(
        'secondary-node-eviction-rate',
        'Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than --large-cluster-size-threshold.',
        c.secondaryNodeEvictionRate,
        (v) => (c.secondaryNodeEvictionRate = v),
      ),
      floatFlag(
        'unhealthy-zone-threshold',
        'Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy.',
        c.unhealthyZoneThreshold,
        (v) => (c.unhealthyZoneThreshold = v),
      ),
      intFlag(
        'large-cluster-size-threshold',
        'Number of nodes from which NodeController treats the cluster as large for the eviction logic purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller.',
        c.largeClusterSizeThreshold,
        (v) => (c.largeClusterSizeThreshold = v),
        { range: INT32, type: 'int32' },
      ),
      durationFlag(
        'node-monitor-grace-period',
        "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than the node agent's nodeStatusUpdateFrequency, where N means number of retries allowed for the node agent to post node status.",
        c.nodeMonitorGracePeriodMs,
        (v) => (c.nodeMonitorGracePeriodMs = v),
      ),
      durationFlag(
        'node-monitor-period',
        'The period for syncing NodeStatus in NodeController.',
        c.nodeMonitorPeriodMs,
        (v) => (c.nodeMonitorPeriodMs = v),
      ),
      durationFlag(
        'node-startup-grace-period',
        'Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.',
        c.nodeStartupGracePeriodMs,
        (v) => (c.nodeStartupGracePeriodMs = v),
      ),
      durationFlag(
        'pod-eviction-timeout',
        'The grace period for deleting pods on failed nodes.',
        c.podEvictionTimeoutMs,
        (v) => (c.podEvictionTimeoutMs = v),
      ),
    ];
  }

  protected override validateValues(): Error[] {
    const c = this.c;
    const errs: Error[] = [];
    for (const [flag, v] of [
      ['node-eviction-rate', c.nodeEvictionRate],
      ['secondary-node-eviction-rate', c.secondaryNodeEvictionRate],
    ] as const)
      if (v < 0) errs.push(new Error(`--${flag} must not be negative, got ${v}`));
    if (c.unhealthyZoneThreshold < 0 || c.unhealthyZoneThreshold > 1)
      errs.push(new Error(`--unhealthy-zone-threshold must be between 0 and 1, got ${c.unhealthyZoneThreshold}`));
    if (c.nodeMonitorPeriodMs <= 0) errs.push(new Error('--node-monitor-period must be greater than 0'));
    return errs;
  }

  values(): NodeLifecycleConfig {
    return { ...this.c };
  }
}

const TAINT_PREFIX = 'node.kubernetes.io/';
export const NOT_READY = `${TAINT_PREFIX}not-ready`;
export const UNREACHABLE = `${TAINT_PREFIX}unreachable`;
const UNSCHEDULABLE = `${TAINT_PREFIX}unschedulable`;
const NODE_LEASE_NAMESPACE = 'node-lease';
/** The conditions a node agent reports, set to Unknown when it falls silent. */
const AGENT_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
/** Condition (type and status) → the NoSchedule taint it calls for (Kubernetes' `nodeConditionToTaintKeyStatusMap`). */
const CONDITION_TAINTS: [type: string, status: string, key: string][] = [
  ['Ready', 'False', NOT_READY],
  ['Ready', 'Unknown', UNREACHABLE],
  ['MemoryPressure', 'True', `${TAINT_PREFIX}memory-pressure`],
  ['DiskPressure', 'True', `${TAINT_PREFIX}disk-pressure`],
  ['NetworkUnavailable', 'True', `${TAINT_PREFIX}network-unavailable`],
  ['PIDPressure', 'True', `${TAINT_PREFIX}pid-pressure`],
];
const CONDITION_TAINT_KEYS = new Set([...CONDITION_TAINTS.map((c) => c[2]), UNSCHEDULABLE]);

function condition(n: Node, type: string): Condition | undefined {
  return n.status?.conditions?.find((c) => c.type === type);
}

/** The NoSchedule taints the node's conditions and `spec.unschedulable` call for. */
export function noScheduleTaintsFor(n: Node): string[] {
  const keys: string[] = [];
  for (const [type, status, key] of CONDITION_TAINTS) if (condition(n, type)?.status === status) keys.push(key);
  if (n.spec?.unschedulable) keys.push(UNSCHEDULABLE);
  return keys;
}

/** The NoExecute taint the Ready condition calls for, if any. */
export function noExecuteTaintFor(n: Node): string | undefined {
  const ready = condition(n, 'Ready')?.status;
  return ready === 'False' ? NOT_READY : ready === 'Unknown' ? UNREACHABLE : undefined;
}

/** Whether `t` tolerates `taint` (Kubernetes' `Toleration.ToleratesTaint`). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  if (!t.key) return false; // an empty key needs Exists
  return (t.value ?? '') === (taint.value ?? '');
}

/**
 * How long a pod may stay on a node with these NoExecute taints (ms): 0 to evict now, Infinity to keep it. The
 * smallest `tolerationSeconds` among the tolerations that tolerate them, counted from each taint's `timeAdded`.
 */
export function evictionDelay(pod: Pod, taints: Taint[], now: number): number {
  let delay = Infinity;
  for (const taint of taints) {
    const matching = (pod.spec?.tolerations ?? []).filter((t) => tolerates(t, taint));
    if (matching.length === 0) return 0;
    const seconds = matching.map((t) => t.tolerationSeconds).filter((s): s is number => s !== undefined && s !== null);
    if (seconds.length === 0) continue;
    const added = taint.timeAdded ? Date.parse(taint.timeAdded) : now;
    const until = added + Math.max(0, Math.min(...seconds)) * 1000;
    delay = Math.min(delay, Math.max(0, until - now));
  }
  return delay;
}

/** What the controller remembers of a node's health (Kubernetes' `nodeHealthData`). */
interface NodeHealth {
  /** When the node last showed a sign of life (ms). */
  probe: number;
  heartbeat?: string;
  transition?: string;
  leaseRenew?: string;
  /** When its Ready condition stopped being True (ms), for --pod-eviction-timeout. */
  notReadySince?: number;
}

function zoneOf(n: Node): string {
  const l = n.metadata?.labels ?? {};
  const region = l['topology.kubernetes.io/region'] ?? l['failure-domain.beta.kubernetes.io/region'] ?? '';
  const zone = l['topology.kubernetes.io/zone'] ?? l['failure-domain.beta.kubernetes.io/zone'] ?? '';
  return `${region}:\x00:${zone}`;
}

async function run(ctx: ControllerContext, o: NodeLifecycleConfig): Promise<void> {
  const nodes = ctx.informers.informerFor(NodeKind);
  const pods = ctx.informers.informerFor(PodKind);
  const leases = ctx.informers.informerFor(LeaseKind);
  const nodeClient = ctx.client.resource(NodeKind);
  const signal = ctx.signal;
  const health = new Map<string, NodeHealth>();
  /** Keys: `taint/<node>` (its taints follow its conditions), `evict/<node>` (its pods against its taints). */
  const queue = new WorkQueue<string>({ name: 'node_lifecycle_controller', metrics: ctx.metrics });
  const limiters = new Map<string, { bucket: TokenBucket; rate: number }>();
  signal.addEventListener('abort', () => queue.shutDown(), { once: true });

  const enqueueNode = (n: ApiObject): void => {
    const name = n.metadata?.name ?? '';
    queue.add(`taint/${name}`);
    queue.add(`evict/${name}`);
  };
  nodes.addEventHandler({
    onAdd: enqueueNode,
    onUpdate: (_old, n) => enqueueNode(n),
    onDelete: (n) => health.delete(unwrapTombstone(n).metadata?.name ?? ''),
  });
  pods.addEventHandler({
    onAdd: (p) => {
      if (p.spec?.nodeName) queue.add(`evict/${p.spec.nodeName}`);
    },
    onUpdate: (old, p) => {
      if (p.spec?.nodeName && p.spec.nodeName !== old.spec?.nodeName) queue.add(`evict/${p.spec.nodeName}`);
    },
  });

  /** Rewrites the node's taints by `change` (on the cached object's resourceVersion); false when nothing changed. */
  const updateTaints = async (name: string, change: (taints: Taint[]) => Taint[]): Promise<void> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const n = attempt === 0 ? nodes.indexer.get(name) : await nodeClient.get(name, { signal });
      if (!n) return;
      const before = n.spec?.taints ?? [];
      const after = change(before);
      if (sameTaints(before, after)) return;
      try {
        await nodeClient.update({ ...n, spec: { ...n.spec, taints: after } }, { signal });
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err)) throw err;
      }
    }
    throw new Error(`could not update the taints of node ${name}: conflicts`);
  };

  const syncNoScheduleTaints = async (name: string): Promise<void> => {
    const n = nodes.indexer.get(name);
    if (!n) return;
    const want = new Set(noScheduleTaintsFor(n));
    await updateTaints(name, (taints) => {
      const kept = taints.filter(
        (t) => !(t.effect === 'NoSchedule' && CONDITION_TAINT_KEYS.has(t.key) && !want.has(t.key)),
      );
      for (const key of want)
        if (!kept.some((t) => t.key === key && t.effect === 'NoSchedule')) kept.push({ key, effect: 'NoSchedule' });
      return kept;
    });
  };

  /** The zone's eviction rate now (nodes per second). */
  const zoneRate = (zone: string): number => {
    const inZone = nodes.indexer.list().filter((n) => zoneOf(n) === zone);
    const notReady = inZone.filter((n) => condition(n, 'Ready')?.status !== 'True').length;
    if (inZone.length > 0 && notReady === inZone.length) return 0; // full disruption: evict nothing
    if (notReady >= 3 && notReady / inZone.length >= o.unhealthyZoneThreshold)
      return nodes.indexer.list().length > o.largeClusterSizeThreshold ? o.secondaryNodeEvictionRate : 0;
    return o.nodeEvictionRate;
  };
  /** Whether the zone's rate lets one more node be tainted (or emptied) now; else when to try again (ms). */
  const admit = (n: Node): number => {
    const zone = zoneOf(n);
    const rate = zoneRate(zone);
    if (rate <= 0) return o.nodeMonitorPeriodMs;
    let l = limiters.get(zone);
    if (!l || l.rate !== rate) {
      l = { bucket: new TokenBucket(rate, 1), rate };
      limiters.set(zone, l);
    }
    return l.bucket.tryAccept() ? 0 : Math.ceil(1000 / rate);
  };

  const deletePod = async (p: Pod, reason: string): Promise<void> => {
    const ns = p.metadata?.namespace ?? '';
    const pname = p.metadata?.name ?? '';
    ctx.recorder.event(p, 'Normal', reason, `Marking for deletion Pod ${ns}/${pname}`);
    try {
      await ctx.client.resource(PodKind, ns).delete(pname, { preconditions: { uid: p.metadata?.uid }, signal });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  };

  const podsOn = (node: string): Pod[] =>
    pods.indexer.list().filter((p) => p.spec?.nodeName === node && !p.metadata?.deletionTimestamp);

  const syncEviction = async (name: string): Promise<void> => {
    const n = nodes.indexer.get(name);
    if (!n) return;
    if (o.enableTaintManager) {
      // The NoExecute taint follows the Ready condition, at the zone's rate when it is added.
      const want = noExecuteTaintFor(n);
      const has = (n.spec?.taints ?? []).filter(
        (t) => t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE),
      );
      if (want && !has.some((t) => t.key === want)) {
        const wait = admit(n);
        if (wait > 0) {
          queue.addAfter(`evict/${name}`, wait);
          return;
        }
        await updateTaints(name, (taints) => [
          ...taints.filter((t) => !(t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE))),
          { key: want, effect: 'NoExecute', timeAdded: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
        ]);
        return; // the update comes back through the informer
      }
      if (!want && has.length > 0) {
        await updateTaints(name, (taints) =>
          taints.filter((t) => !(t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE))),
        );
        return;
      }
      // The taint manager: pods that do not tolerate the node's NoExecute taints go, now or after their time.
      const noExecute = (n.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
      if (noExecute.length === 0) return;
      const now = Date.now();
      let next = Infinity;
      for (const p of podsOn(name)) {
        const delay = evictionDelay(p, noExecute, now);
        if (delay === 0) await deletePod(p, 'TaintManagerEviction');
        else next = Math.min(next, delay);
      }
      if (next < Infinity) queue.addAfter(`evict/${name}`, next + 50);
      return;
    }
    // Without the taint manager: the pods of a node not ready for --pod-eviction-timeout go.
    const h = health.get(name);
    if (h?.notReadySince === undefined) return;
    const due = h.notReadySince + o.podEvictionTimeoutMs - Date.now();
    if (due > 0) {
      queue.addAfter(`evict/${name}`, due + 50);
      return;
    }
    const wait = admit(n);
    if (wait > 0) {
      queue.addAfter(`evict/${name}`, wait);
      return;
    }
    const victims = podsOn(name);
    if (victims.length > 0) ctx.recorder.event(n, 'Normal', 'DeletingAllPods', `Deleting all Pods from Node ${name}.`);
    for (const p of victims) await deletePod(p, 'NodeControllerEviction');
  };

  /** Marks the pods of a node that went silent as not ready (Kubernetes' `MarkPodsNotReady`). */
  const markPodsNotReady = async (name: string): Promise<void> => {
    for (const p of podsOn(name)) {
      const conds = p.status?.conditions ?? [];
      const ready = conds.find((c) => c.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const status = {
        ...p.status,
        conditions: conds.map((c) =>
          c.type === 'Ready' ? { ...c, status: 'False' as const, lastTransitionTime: now } : c,
        ),
      };
      try {
        await ctx.client.resource(PodKind, p.metadata?.namespace ?? '').updateStatus({ ...p, status }, { signal });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err))
          ctx.logger.warn('Could not mark a pod not ready', {
            pod: `${p.metadata?.namespace}/${p.metadata?.name}`,
            error: String(err),
          });
      }
    }
  };

  /** One pass over every node's heartbeats (Kubernetes' `monitorNodeHealth`). */
  const monitor = async (): Promise<void> => {
    for (const n of nodes.indexer.list()) {
      if (signal.aborted) return;
      // The time of this node's check, not of the pass's start: the writes for silent nodes before it can take
      // seconds, and a heartbeat seen now stamped with the pass's start would look that much older at the next
      // pass (1.21 takes the time per node too). At 1,000 nodes with 100 silent, it marked live nodes Unknown.
      const now = Date.now();
      const name = n.metadata?.name ?? '';
      const ready = condition(n, 'Ready');
      const lease: Lease | undefined = leases.indexer.get(`${NODE_LEASE_NAMESPACE}/${name}`);
      let h = health.get(name);
      const created = n.metadata?.creationTimestamp ? Date.parse(n.metadata.creationTimestamp) : now;
      if (!h) {
        h = {
          probe: ready ? now : created,
          heartbeat: ready?.lastHeartbeatTime,
          transition: ready?.lastTransitionTime,
        };
        health.set(name, h);
      }
      if (ready && (ready.lastHeartbeatTime !== h.heartbeat || ready.lastTransitionTime !== h.transition)) {
        h.probe = now;
        h.heartbeat = ready.lastHeartbeatTime;
        h.transition = ready.lastTransitionTime;
      }
      const renew = lease?.spec?.renewTime;
      if (renew && renew !== h.leaseRenew) {
        if (h.leaseRenew !== undefined || Date.parse(renew) > now - o.nodeMonitorGracePeriodMs) h.probe = now;
        h.leaseRenew = renew;
      }
      if (ready?.status === 'True') h.notReadySince = undefined;
      else if (h.notReadySince === undefined) h.notReadySince = now;

      const grace = ready ? o.nodeMonitorGracePeriodMs : o.nodeStartupGracePeriodMs;
      if (now - h.probe <= grace) continue;
      // Silent too long: every condition the agent reports becomes Unknown.
      const stamp = new Date(now).toISOString().replace(/\.\d+Z$/, 'Z');
      const conds = [...(n.status?.conditions ?? [])];
      let changed = false;
      for (const type of AGENT_CONDITIONS) {
        const i = conds.findIndex((c) => c.type === type);
        if (i < 0) {
          conds.push({
            type,
            status: 'Unknown',
            reason: 'NodeStatusNeverUpdated',
            message: 'Node agent never posted node status.',
            lastHeartbeatTime: n.metadata?.creationTimestamp,
            lastTransitionTime: stamp,
          });
          changed = true;
        } else if (conds[i]!.status !== 'Unknown') {
          conds[i] = {
            ...conds[i]!,
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            message: 'Node agent stopped posting node status.',
            lastTransitionTime: stamp,
          };
          changed = true;
        }
      }
      if (!changed) continue;
      try {
        await nodeClient.updateStatus({ ...n, status: { ...n.status, conditions: conds } }, { signal });
        ctx.recorder.event(n, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        await markPodsNotReady(name);
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err) && !signal.aborted)
          ctx.logger.warn('Could not update the status of a silent node', { node: name, error: String(err) });
      }
    }
  };

  const sync = async (key: string): Promise<void> => {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    const name = key.slice(slash + 1);
    if (kind === 'taint') await syncNoScheduleTaints(name);
    else await syncEviction(name);
  };

  if (!(await waitForSynced(signal, [nodes, pods, leases]))) return;
  const monitorLoop = (async () => {
    while (!signal.aborted) {
      await monitor().catch((err: unknown) => ctx.logger.error('Node health pass failed', { error: String(err) }));
      await sleep(o.nodeMonitorPeriodMs, signal);
    }
  })();
  await runWorkers(queue, 2, sync, (key, err) => {
    if (!signal.aborted) ctx.logger.warn('Sync failed; requeued', { key, error: String(err) });
  });
  await monitorLoop;
}

function sameTaints(a: Taint[], b: Taint[]): boolean {
  return (
    a.length === b.length &&
    a.every((t, i) => t.key === b[i]!.key && t.effect === b[i]!.effect && (t.value ?? '') === (b[i]!.value ?? ''))
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The `nodelifecycle` controller. */
export const nodeLifecycleController: ControllerDefinition<NodeLifecycleConfig> = {
  name: 'nodelifecycle',
  enabledByDefault: true,
  serviceAccount: 'node-controller',
  options: () => new NodeLifecycleOptions(),
  run,
};
